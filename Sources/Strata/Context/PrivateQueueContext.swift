import Dispatch

/// A context confined to a private serial queue (Core Data's private-queue concurrency type): any thread or
/// task may hand it work, and the work runs one piece at a time on its queue, where the context and its
/// objects may be used.
///
/// The context itself never leaves the queue: ``perform(_:)`` and ``performAndWait(_:)`` pass it to the
/// closure. Pass ``ManagedObjectID``s (which are `Sendable`) in and out, never managed objects.
///
/// For example:
/// ```swift
/// let background = PrivateQueueContext(coordinator: coordinator)
/// let id = try await background.perform { context in
///     let ada = Employee(context: context)
///     ada.name = "Ada"
///     try context.save()
///     return ada.objectID
/// }
/// ```
public final class PrivateQueueContext: Sendable {
    /// The coordinator of the context.
    public let coordinator: PersistentStoreCoordinator
    private let queue: DispatchQueue
    // Safety: the context is created on the queue and used only inside closures that run on it.
    private nonisolated(unsafe) let context: ManagedObjectContext

    /// Makes a context on a private serial queue.
    ///
    /// - Parameters:
    ///   - coordinator: the context's coordinator.
    ///   - name: the context's ``ManagedObjectContext/name`` (also the queue's label).
    ///   - undo: whether the context keeps an undo manager (Core Data's private contexts have none by default).
    public init(coordinator: PersistentStoreCoordinator, name: String? = nil, undo: Bool = false) {
        self.coordinator = coordinator
        let queue = ManagedObjectContext.makePrivateQueue(label: "strata.context." + (name ?? "private"))
        self.queue = queue
        self.context = queue.sync {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.name = name
            context.ownerQueue = queue
            context.concurrencyType = .privateQueue
            if !undo { context.undoManager = nil }
            return context
        }
    }

    /// Runs `body` on the context's queue and returns its result (Core Data's `perform`, async form).
    /// Calls queue up in order; each runs alone, and ends with ``ManagedObjectContext/processPendingChanges()``
    /// (the end of the event) as Core Data's does.
    ///
    /// - Throws: what `body` throws.
    public func perform<Value: Sendable>(
        _ body: @escaping @Sendable (ManagedObjectContext) throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(
                    with: Swift.Result<Value, any Error> {
                        // The end of the event, as Core Data's perform ends one.
                        defer { try? self.context.processPendingChanges() }
                        return try body(self.context)
                    })
            }
        }
    }

    /// Schedules `body` on the context's queue and returns at once (Core Data's `perform` with a block); it
    /// ends with ``ManagedObjectContext/processPendingChanges()``.
    public func schedule(_ body: @escaping @Sendable (ManagedObjectContext) -> Void) {
        queue.async {
            body(self.context)
            // The end of the event, as Core Data's perform ends one.
            try? self.context.processPendingChanges()
        }
    }

    /// Runs `body` on the context's queue and waits for it (Core Data's `performAndWait`). Called from the
    /// queue itself, it runs `body` at once instead of deadlocking.
    ///
    /// - Throws: what `body` throws.
    public func performAndWait<Value>(_ body: (ManagedObjectContext) throws -> Value) rethrows -> Value {
        if context.isOnOwnerQueue { return try body(context) }
        return try queue.sync { try body(context) }
    }

    /// Schedules `body` on the context's queue and returns at once (Core Data's `perform(_:)` with a block):
    /// the same as ``schedule(_:)``, under Core Data's name.
    public func perform(_ body: @escaping @Sendable (ManagedObjectContext) -> Void) {
        schedule(body)
    }
}

extension ManagedObjectContext {
    /// A context for the main actor (Core Data's main-queue concurrency type): use it on the main actor only;
    /// debug builds check that every save and fetch runs on the main queue.
    ///
    /// - Parameter coordinator: the context's coordinator.
    @MainActor
    public static func mainQueue(coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator)
    }

    /// In debug builds, stops the program when a queue-confined context is used off its queue.
    @inline(__always)
    func checkConfinement() {
        #if DEBUG
        if let ownerQueue { dispatchPrecondition(condition: .onQueue(ownerQueue)) }
        #endif
    }
}
