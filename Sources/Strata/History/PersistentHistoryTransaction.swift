import Foundation

/// One save (or batch request) as a store's persistent history recorded it (Core Data's
/// `NSPersistentHistoryTransaction`): who saved, when, and which objects it inserted, updated and deleted.
public struct PersistentHistoryTransaction: Sendable {
    /// The transaction's place in its store's history.
    public let token: PersistentHistoryToken
    /// When the save committed.
    public let timestamp: Date
    /// The saving context's ``ManagedObjectContext/transactionAuthor``.
    public let author: String?
    /// The saving context's ``ManagedObjectContext/name``.
    public let contextName: String?
    /// The objects the save changed: inserts, updates, then deletes.
    public let changes: [PersistentHistoryChange]

    /// The store whose history it is.
    public var storeIdentifier: UUID { token.storeIdentifier }

    /// The transaction as a save to merge (Core Data's `objectIDNotification()`): hand it to
    /// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
    public func objectIDNotification() -> ContextSave {
        var save = ContextSave()
        for change in changes {
            switch change.changeType {
            case .insert: save.inserted.insert(change.changedObjectID)
            case .update: save.updated.insert(change.changedObjectID)
            case .delete: save.deleted.insert(change.changedObjectID)
            }
        }
        return save
    }
}

/// What a transaction did to one object (Core Data's `NSPersistentHistoryChange`).
public struct PersistentHistoryChange: Sendable {
    /// How the object changed (Core Data's `NSPersistentHistoryChangeType`).
    public enum ChangeType: Int, Sendable, Hashable {
        /// The object was inserted.
        case insert = 0
        /// The object was updated.
        case update = 1
        /// The object was deleted.
        case delete = 2
    }

    /// How the object changed.
    public let changeType: ChangeType
    /// The object.
    public let changedObjectID: ManagedObjectID
    /// For an update, the names of the properties it changed (attributes and relationships); nil otherwise.
    public let updatedProperties: Set<String>?
    /// For a delete, the values of the attributes that preserve their value in history on deletion
    /// (``Attribute/preservesValueInHistoryOnDeletion``), by name; nil otherwise. Nil values are left out.
    public let tombstone: [String: AttributeValue]?
}
