import Foundation
import StrataFormat
import StrataStorage

/// Persistent history in the Strata store: one row of `store.history` per save, written in the save's engine
/// transaction; the row ID is the transaction's number (FORMAT.md §6.8).
extension StrataStore {
    static let historyTableName = "store.history"

    /// Whether saves record persistent history (the store was opened with
    /// ``StrataStoreConfiguration/recordsPersistentHistory``, or has history already).
    public var recordsPersistentHistory: Bool { historyTable != nil }

    /// Whether a deleted row of `entity`'s hierarchy may leave a tombstone (some entity of it keeps attributes in
    /// tombstones): only then does a delete decode the row's fields for it.
    func keepsTombstones(of entity: EntityDescription) -> Bool {
        entity.rootEntity.allEntitiesInHierarchyBelow.contains { !HistoryRecord.tombstoneAttributes(of: $0).isEmpty }
    }

    /// The tombstone of a row about to be deleted, made from its bytes where the delete finds it.
    func tombstone(of bytes: UnsafeRawBufferPointer, delete: StoreChanges.Delete) throws -> [String: AttributeValue] {
        do {
            let (header, fields) = try RowRecord.decodeAll(bytes)
            guard let entity = entitiesByID[header.entityID] else { return [:] }
            var tombstone: [String: AttributeValue] = [:]
            for attribute in HistoryRecord.tombstoneAttributes(of: entity) {
                // A value kept in a blob is not copied into history.
                guard let position = attribute.fieldIndex, position < fields.count,
                    case let field = fields[position], field.tag != .blobReference,
                    let value = try RowCoder.value(from: field, of: attribute)
                else { continue }
                tombstone[attribute.name] = value
            }
            return tombstone
        } catch {
            throw StorageError.corruption(
                file: Self.tableName(for: delete.entity.rootEntity), offset: delete.rowID, reason: "\(error)")
        }
    }

    /// Appends the save's history row.
    func recordHistory(
        _ changes: StoreChanges, insertedRowIDs: InsertedRowIDs, tombstones: [[String: AttributeValue]],
        in table: TableID,
        txn: WriteTransaction
    ) throws {
        let record = HistoryRecord(changes, insertedRowIDs: insertedRowIDs, tombstones: tombstones)
        guard !record.changes.isEmpty else { return }
        do {
            _ = try txn.insert(try record.encoded(), into: table)
        } catch let error as RowCodingError {
            throw ObjectGraphError.transformationFailed(key: "", reason: "history tombstone: \(error)")
        }
    }

    /// The transactions a query wants, oldest first, from one snapshot.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the history cannot be read or a row does not decode.
    public func fetchHistory(_ query: HistoryQuery) throws -> [PersistentHistoryTransaction] {
        guard let historyTable else { return [] }
        var found: [PersistentHistoryTransaction] = []
        do {
            let snapshot = engine.snapshot()
            let start = query.afterNumber == .max ? nil : RowID(query.afterNumber + 1)
            guard start != nil else { return [] }
            try snapshot.forEachRow(in: historyTable, from: start) { id, bytes in
                let record = try self.decodeHistory(Array(bytes), number: id.rawValue)
                if query.matches(record, number: id.rawValue) {
                    found.append(record.transaction(store: identifier, number: id.rawValue))
                }
                return true
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
        return found
    }

    private func decodeHistory(_ bytes: [UInt8], number: UInt64) throws -> HistoryRecord {
        do {
            return try HistoryRecord.decode(bytes, entities: entitiesByID)
        } catch {
            throw StorageError.corruption(file: Self.historyTableName, offset: number, reason: "\(error)")
        }
    }

    /// Deletes the transactions numbered below `number` or committed before `date`, in one transaction.
    ///
    /// - Returns: how many were deleted.
    /// - Throws: ``ObjectGraphError/storage(_:)``.
    public func deleteHistory(beforeNumber number: UInt64?, beforeDate date: Date?) throws -> Int {
        guard let historyTable else { return 0 }
        do {
            return try engine.write { txn in
                var doomed: [RowID] = []
                try txn.forEachRow(in: historyTable) { id, bytes in
                    if let number {
                        guard id.rawValue < number else { return false }
                        doomed.append(id)
                    } else if let date {
                        let record = try self.decodeHistory(Array(bytes), number: id.rawValue)
                        guard record.timestamp < date else { return false }
                        doomed.append(id)
                    }
                    return true
                }
                for id in doomed { try txn.delete(id, from: historyTable) }
                return doomed.count
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
    }

    /// The token of the newest transaction, or nil when the history is empty.
    public func currentHistoryToken() throws -> PersistentHistoryToken? {
        guard let historyTable else { return nil }
        var last: UInt64?
        do {
            try engine.snapshot().forEachRow(in: historyTable, reverse: true) { id, _ in
                last = id.rawValue
                return false
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
        return last.map { PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
    }
}
