import Foundation

/// One transaction of a store's persistent history as the store keeps it: object changes named by entity and
/// row, and tombstone values. The Strata store encodes it as a row of `store.history` (FORMAT.md §6.8); the
/// in-memory store keeps it as it is. Its number (the token) is the store's business.
package struct HistoryRecord: Sendable {
    package struct Change: Sendable {
        var type: PersistentHistoryChange.ChangeType
        package var entity: EntityDescription
        package var rowID: UInt64
        /// For an update: the changed properties' names.
        var keys: [String] = []
        /// For a delete: the preserved values, by attribute name.
        var tombstone: [String: AttributeValue] = [:]
    }

    /// When the transaction committed.
    package var timestamp: Date
    var author: String?
    var contextName: String?
    package var changes: [Change] = []

    /// The record of a save: its inserts (with the row IDs the store gave them), updates and deletes (with the
    /// tombstones the store read from the deleted rows, in delete order).
    package init(
        _ changes: StoreChanges, insertedRowIDs: InsertedRowIDs, tombstones: [[String: AttributeValue]],
        timestamp: Date = Date()
    ) {
        self.timestamp = timestamp
        author = changes.transactionAuthor
        contextName = changes.contextName
        for (index, rowID) in insertedRowIDs.enumerated() {
            self.changes.append(Change(type: .insert, entity: changes.inserts.entity(at: index), rowID: rowID))
        }
        for update in changes.updates {
            self.changes.append(
                Change(type: .update, entity: update.entity, rowID: update.rowID, keys: update.changedKeys))
        }
        for (index, delete) in changes.deletes.enumerated() {
            self.changes.append(
                Change(
                    type: .delete, entity: delete.entity, rowID: delete.rowID,
                    tombstone: index < tombstones.count ? tombstones[index] : [:]))
        }
    }

    init(timestamp: Date, author: String?, contextName: String?, changes: [Change]) {
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.changes = changes
    }

    /// The attributes whose values a deleted object of `entity` leaves in history.
    package static func tombstoneAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.persistentAttributes.filter(\.preservesValueInHistoryOnDeletion)
    }

    /// The tombstone of a deleted row's values (by storage index).
    package static func tombstone(of entity: EntityDescription, values: [AttributeValue?]) -> [String: AttributeValue] {
        var tombstone: [String: AttributeValue] = [:]
        for attribute in tombstoneAttributes(of: entity) {
            if let index = attribute.storageIndex, index < values.count, let value = values[index] {
                tombstone[attribute.name] = value
            }
        }
        return tombstone
    }

    /// The record as the public transaction of store `store`, numbered `number`.
    package func transaction(store: UUID, number: UInt64) -> PersistentHistoryTransaction {
        let token = PersistentHistoryToken(storeIdentifier: store, transactionNumber: number)
        return PersistentHistoryTransaction(
            token: token, timestamp: timestamp, author: author, contextName: contextName,
            changes: changes.map { change in
                PersistentHistoryChange(
                    changeType: change.type,
                    changedObjectID: ManagedObjectID(
                        entity: change.entity, storeIdentifier: store, rowID: change.rowID),
                    updatedProperties: change.type == .update ? Set(change.keys) : nil,
                    tombstone: change.type == .delete ? change.tombstone : nil)
            })
    }
}

/// Which transactions of its history a store returns (``PersistentStore/fetchHistory(_:)``).
public struct HistoryQuery: Sendable {
    /// Only transactions numbered above this (0: from the first).
    public var afterNumber: UInt64 = 0
    /// Only transactions committed after this.
    public var afterDate: Date?
    /// Only transactions of this author.
    public var author: String?

    /// A query; every parameter narrows it.
    public init(afterNumber: UInt64 = 0, afterDate: Date? = nil, author: String? = nil) {
        self.afterNumber = afterNumber
        self.afterDate = afterDate
        self.author = author
    }

    package func matches(_ record: HistoryRecord, number: UInt64) -> Bool {
        number > afterNumber && (afterDate.map { record.timestamp > $0 } ?? true)
            && (author.map { record.author == $0 } ?? true)
    }
}
