/// Where a context's work runs (Core Data's `NSManagedObjectContextConcurrencyType`).
///
/// Whatever the type, ``ManagedObjectContext/perform(_:)``, ``ManagedObjectContext/performAndWait(_:)`` and
/// ``ManagedObjectContext/perform(schedule:_:)`` run work where the context may be used, so code written for
/// Core Data's queue rules ports without restructuring.
public enum ManagedObjectContextConcurrencyType: Sendable, Hashable {
    /// The context belongs to the thread or task that uses it (``ManagedObjectContext/init(coordinator:)``;
    /// Core Data's deprecated confinement type). `perform` runs its work at once on the calling thread.
    case confinement
    /// The context has a private serial queue; use it only inside `perform` and `performAndWait`.
    case privateQueue
    /// The context belongs to the main queue (the main actor).
    case mainQueue
}

extension ManagedObjectContext {
    /// When ``ManagedObjectContext/perform(schedule:_:)`` runs its work (Core Data's
    /// `NSManagedObjectContext.ScheduledTaskType`).
    public enum ScheduledTaskType: Sendable, Hashable {
        /// At once when the caller already runs on the context's queue, else queued.
        case immediate
        /// Always queued behind the work already scheduled.
        case enqueued
    }
}
