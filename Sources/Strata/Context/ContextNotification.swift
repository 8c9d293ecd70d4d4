import Foundation

/// What a context tells its observers (Core Data's context notifications). Only object IDs travel in
/// them, so they are `Sendable` and may be handed to another context's thread, e.g. for
/// ``ManagedObjectContext/mergeChanges(fromContextDidSave:)``.
public enum ContextNotification: Sendable {
    /// Objects changed since the last notification (``ManagedObjectContext/processPendingChanges()``, which
    /// ``ManagedObjectContext/save()`` also runs): Core Data's objects-did-change.
    case objectsDidChange(ObjectChanges)
    /// A save is about to start.
    case willSave
    /// A save wrote its changes: the inserted objects' permanent IDs, the updated and the deleted ones.
    case didSave(ContextSave)
}

/// The objects of an objects-did-change notification.
public struct ObjectChanges: Sendable, Equatable {
    /// Objects inserted (temporary IDs until saved).
    public var inserted: Set<ManagedObjectID> = []
    /// Objects whose properties changed.
    public var updated: Set<ManagedObjectID> = []
    /// Objects deleted.
    public var deleted: Set<ManagedObjectID> = []
    /// Objects that took new values from their store (refresh, merge).
    public var refreshed: Set<ManagedObjectID> = []
    /// Objects that left the context because their rows are gone (a merged deletion).
    public var invalidated: Set<ManagedObjectID> = []

    /// No objects.
    public init() {}

    /// Whether no object is named.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && invalidated.isEmpty
    }
}

/// The objects a save wrote (Core Data's did-save `userInfo`): what another context merges.
public struct ContextSave: Sendable, Equatable {
    /// The inserted objects, by their permanent IDs.
    public var inserted: Set<ManagedObjectID>
    /// The updated objects.
    public var updated: Set<ManagedObjectID>
    /// The deleted objects.
    public var deleted: Set<ManagedObjectID>

    /// A save of these objects, e.g. one learnt from another process or a batch request.
    public init(
        inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [], deleted: Set<ManagedObjectID> = []
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}

/// A registration made by ``ManagedObjectContext/addObserver(_:)``; pass it to
/// ``ManagedObjectContext/removeObserver(_:)`` to stop.
public struct ContextObservation: Hashable, Sendable {
    let id: UUID
}
