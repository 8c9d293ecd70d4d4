#if Postgres
import Foundation
import PostgresNIO
import Strata

extension PostgresStore {
    /// Whether saves record persistent history (``PostgresStoreConfiguration/recordsPersistentHistory``).
    public var recordsPersistentHistory: Bool { configuration.recordsPersistentHistory }

    /// The deleted rows' values that persistent history keeps (attributes that preserve their value on deletion).
    func tombstones(
        of deletes: [StoreChanges.Delete], connection: PostgresConnection
    ) throws -> [[String: AttributeValue]] {
        try deletes.map { delete in
            let hierarchy = delete.entity.rootEntity.allEntitiesInHierarchyBelow
            guard hierarchy.contains(where: { !HistoryRecord.tombstoneAttributes(of: $0).isEmpty }) else { return [:] }
            var statement = PostgresStatement()
            let id = statement.bind(Int64(bitPattern: delete.rowID))
            let result = try connection.run(
                "SELECT \(selectLists[ObjectIdentifier(delete.entity.rootEntity)]!.sql) "
                    + "FROM \(schema.table(of: delete.entity)) t WHERE t.strata_row_id = \(id)", statement.binds,
                logger: logger)
            guard let row = try decodeRows(result, root: delete.entity.rootEntity).first?.row else { return [:] }
            return HistoryRecord.tombstone(of: row.entity, values: row.values)
        }
    }

    /// Writes the save's history record; returns its transaction number.
    func recordHistory(
        _ changes: StoreChanges, insertedRowIDs: InsertedRowIDs, tombstones: [[String: AttributeValue]],
        connection: PostgresConnection
    ) throws -> UInt64? {
        let record = HistoryRecord(changes, insertedRowIDs: insertedRowIDs, tombstones: tombstones)
        guard !record.changes.isEmpty else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try record.encoded()
        } catch {
            throw ObjectGraphError.transformationFailed(key: "", reason: "history tombstone: \(error)")
        }
        var statement = PostgresStatement()
        let placeholder = statement.bindBytes(bytes)
        let result = try connection.run(
            "INSERT INTO \(schema.historyTable) (record) VALUES (\(placeholder)) RETURNING number", statement.binds,
            logger: logger)
        return UInt64(try result.rows[0].decode(Int64.self))
    }

    /// The history transactions the query wants, oldest first (empty when the store records none).
    ///
    /// - Throws: ``PostgresStoreError``.
    public func fetchHistory(_ query: HistoryQuery) throws -> [PersistentHistoryTransaction] {
        guard recordsPersistentHistory, query.afterNumber < UInt64(Int64.max) else { return [] }
        var statement = PostgresStatement()
        let after = statement.bind(Int64(query.afterNumber))
        let result = try withConnection {
            try $0.run(
                "SELECT number, record FROM \(schema.historyTable) WHERE number > \(after) ORDER BY number",
                statement.binds, logger: logger)
        }
        var found: [PersistentHistoryTransaction] = []
        for row in result.rows {
            let (number, buffer) = try row.decode((Int64, ByteBuffer).self)
            let record: HistoryRecord
            do {
                record = try HistoryRecord.decode(Array(buffer: buffer), entities: entitiesByID)
            } catch {
                throw PostgresStoreError.corruptRow(table: "strata_history", rowID: UInt64(number), reason: "\(error)")
            }
            if query.matches(record, number: UInt64(number)) {
                found.append(record.transaction(store: identifier, number: UInt64(number)))
            }
        }
        return found
    }

    /// Deletes the history transactions numbered below `number`, or committed before `date`.
    ///
    /// - Returns: how many were deleted.
    /// - Throws: ``PostgresStoreError``.
    public func deleteHistory(beforeNumber number: UInt64?, beforeDate date: Date?) throws -> Int {
        guard recordsPersistentHistory else { return 0 }
        if let number {
            var statement = PostgresStatement()
            let limit = statement.bind(Int64(clamping: number))
            return try inTransaction { connection in
                try connection.run(
                    "DELETE FROM \(schema.historyTable) WHERE number < \(limit)", statement.binds, logger: logger
                ).metadata.rows ?? 0
            }
        }
        guard let date else { return 0 }
        // The timestamp is inside the record: the oldest records go, up to the first one at or after `date`.
        let doomed = try fetchHistory(HistoryQuery()).prefix { $0.timestamp < date }.map(\.token.transactionNumber)
        guard let last = doomed.last else { return 0 }
        return try deleteHistory(beforeNumber: last + 1, beforeDate: nil)
    }

    /// The token of the newest history transaction, nil when there is none.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func currentHistoryToken() throws -> PersistentHistoryToken? {
        guard recordsPersistentHistory else { return nil }
        let result = try withConnection {
            try $0.run("SELECT max(number) FROM \(schema.historyTable)", logger: logger)
        }
        guard let number = try result.rows.first?.decode(Int64?.self) else { return nil }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: UInt64(number))
    }
}
#endif
