import Foundation

/// One optimistic-locking conflict of a failed save (Core Data's `NSMergeConflict`): an object the save
/// updated or deleted whose row changed, or was deleted, in the store since the context read it.
///
/// A conflict names the object by ID, as errors must be `Sendable` and managed objects are not: right after
/// the failed save the object is still registered, and held, by the context, so
/// ``ManagedObjectContext/registeredObject(for:)`` returns it. Its changes are intact: resolve the conflict
/// (refresh it with `mergeChanges: true`, set values, or choose a ``MergePolicy``) and save again.
///
/// For example:
/// ```swift
/// do {
///     try context.save()
/// } catch ObjectGraphError.mergeConflicts(let conflicts) {
///     for conflict in conflicts {
///         print(conflict.changedKeys, conflict.cachedSnapshot, conflict.persistedSnapshot ?? "deleted")
///         let object = context.registeredObject(for: conflict.objectID)!
///         try context.refresh(object, mergeChanges: true)
///     }
///     try context.save()
/// }
/// ```
///
/// ## Topics
/// - ``objectID``
/// - ``isDeletion``
/// - ``changedKeys``
/// - ``objectSnapshot``
/// - ``cachedSnapshot``
/// - ``persistedSnapshot``
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// The conflicting object.
    public var objectID: ManagedObjectID
    /// Whether the object was deleted in the context (else it was updated).
    public var isDeletion: Bool
    /// The persistent properties (attributes and relationships) the object changed since it was read; empty
    /// for a deletion.
    public var changedKeys: Set<String>
    /// The object's own state, as the save would have written it; nil for a deletion.
    public var objectSnapshot: ObjectSnapshot?
    /// The state the context last read from the store (its committed values) and its version: what the save
    /// expected to find.
    public var cachedSnapshot: ObjectSnapshot
    /// The row as the store now has it, with its version; nil when the row was deleted (Core Data's new
    /// version 0).
    public var persistedSnapshot: ObjectSnapshot?

    /// Creates a conflict.
    ///
    /// - Parameters:
    ///   - objectID: the conflicting object.
    ///   - isDeletion: whether the object was deleted in the context.
    ///   - changedKeys: the persistent properties the object changed.
    ///   - objectSnapshot: the object's state, nil for a deletion.
    ///   - cachedSnapshot: the state the context last read.
    ///   - persistedSnapshot: the store's state, nil when the row is gone.
    public init(
        objectID: ManagedObjectID, isDeletion: Bool, changedKeys: Set<String>, objectSnapshot: ObjectSnapshot?,
        cachedSnapshot: ObjectSnapshot, persistedSnapshot: ObjectSnapshot?
    ) {
        self.objectID = objectID
        self.isDeletion = isDeletion
        self.changedKeys = changedKeys
        self.objectSnapshot = objectSnapshot
        self.cachedSnapshot = cachedSnapshot
        self.persistedSnapshot = persistedSnapshot
    }

    /// E.g. `x-strata://…/Employee/p1 updated (salary) read at v1, store has v2 {…}`.
    public var description: String {
        let change = isDeletion ? "deleted" : "updated (\(changedKeys.sorted().joined(separator: ", ")))"
        let store = persistedSnapshot.map { "store has \($0)" } ?? "row deleted in the store"
        return "\(objectID) \(change), read at \(cachedSnapshot), \(store)"
    }
}
