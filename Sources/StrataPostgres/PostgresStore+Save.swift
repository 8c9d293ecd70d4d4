#if Postgres
import Foundation
import PostgresNIO
import Strata

extension PostgresStore {
    /// Checks every update's and versioned delete's expected version against the rows as they are now.
    ///
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)`` listing every object whose row has another
    ///   version or no longer exists; ``PostgresStoreError``.
    public func checkConflicts(_ changes: StoreChanges) throws {
        var expected: [ObjectIdentifier: [(entity: EntityDescription, rowID: UInt64, version: UInt64)]] = [:]
        for update in changes.updates {
            expected[ObjectIdentifier(update.entity.rootEntity), default: []].append(
                (update.entity, update.rowID, update.expectedVersion))
        }
        for delete in changes.deletes {
            guard let version = delete.expectedVersion else { continue }
            expected[ObjectIdentifier(delete.entity.rootEntity), default: []].append(
                (delete.entity, delete.rowID, version))
        }
        guard !expected.isEmpty else { return }
        var conflicts: [ManagedObjectID] = []
        try withConnection { connection in
            for rows in expected.values {
                var statement = PostgresStatement()
                let ids = statement.bind(rows.map { Int64(bitPattern: $0.rowID) })
                let result = try connection.run(
                    "SELECT strata_row_id, strata_version FROM \(schema.table(of: rows[0].entity)) "
                        + "WHERE strata_row_id = ANY(\(ids))", statement.binds, logger: logger)
                var versions: [UInt64: UInt64] = [:]
                for row in result.rows {
                    let (rowID, version) = try row.decode((Int64, Int64).self)
                    versions[UInt64(rowID)] = UInt64(version)
                }
                for row in rows where versions[row.rowID] != row.version {
                    conflicts.append(ManagedObjectID(entity: row.entity, storeIdentifier: identifier, rowID: row.rowID))
                }
            }
        }
        guard conflicts.isEmpty else { throw ObjectGraphError.optimisticLockingConflict(conflicts) }
    }

    /// Applies a save as one PostgreSQL transaction: all of it, or nothing.
    ///
    /// Inserts take their row IDs from their table's sequence (or keep the ones reserved earlier); every UPDATE
    /// and versioned DELETE names the version it expects (`WHERE strata_version = ...`), so a row another
    /// process changed since it was read is a conflict whatever the timing; a conflict rolls back the whole
    /// transaction. Join-table memberships are written as differences; external binary values go to
    /// `strata_external`, and the replaced ones are deleted. The transaction ends with a `NOTIFY` that other
    /// processes' stores hear once it commits.
    ///
    /// - Returns: the inserted rows' IDs and the updated rows' new versions.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)`` (nothing written);
    ///   ``PostgresStoreError/connectionLost(reason:)``, ``PostgresStoreError/serializationFailure(attempts:message:)``
    ///   (after the configured tries), ``PostgresStoreError/uniquenessViolation(constraint:detail:)``,
    ///   ``PostgresStoreError/unsupportedValue(entity:attribute:reason:)``: each with nothing written.
    public func save(_ changes: StoreChanges) throws -> StoreSaveResult {
        guard !changes.isEmpty else {
            return StoreSaveResult()
        }
        let result = try inTransaction { connection in try write(changes, connection: connection) }
        rowCacheGroup.invalidate(changes, store: identifier)
        return result
    }

    private func write(_ changes: StoreChanges, connection: PostgresConnection) throws -> StoreSaveResult {
        var result = StoreSaveResult()
        // Every insert's row ID first: rows and links of this save may name the rows it inserts. The inserts'
        // entries are not made for it (a context's are made from its objects as they are read).
        var pending: [ObjectIdentifier: (entity: EntityDescription, count: Int)] = [:]
        for index in changes.inserts.indices where changes.inserts.rowID(at: index) == nil {
            let entity = changes.inserts.entity(at: index)
            pending[ObjectIdentifier(entity.rootEntity), default: (entity, 0)].count += 1
        }
        var nextRowIDs: [ObjectIdentifier: IndexingIterator<[UInt64]>] = [:]
        for (key, tableInserts) in pending {
            nextRowIDs[key] = try self.nextRowIDs(tableInserts.count, for: tableInserts.entity, connection: connection)
                .makeIterator()
        }
        for index in changes.inserts.indices {
            result.insertedRowIDs.append(
                changes.inserts.rowID(at: index)
                    ?? nextRowIDs[ObjectIdentifier(changes.inserts.entity(at: index).rootEntity)]!.next()!)
        }
        let insertedRowIDs = result.insertedRowIDs
        func resolve(_ reference: ObjectReference?) -> StoredReference? {
            reference?.resolved(in: changes, insertedRowIDs: insertedRowIDs)
        }
        let tombstones =
            configuration.recordsPersistentHistory ? try tombstones(of: changes.deletes, connection: connection) : []

        // Inserts: one multi-row INSERT per entity (a batch insert is one statement), split only where a
        // statement would pass PostgreSQL's 65,535 parameters.
        var explicitMaxima: [ObjectIdentifier: (entity: EntityDescription, rowID: UInt64)] = [:]
        var pendingInserts: [ObjectIdentifier: PendingInsert] = [:]
        func flush(_ key: ObjectIdentifier) throws {
            guard let pending = pendingInserts[key], !pending.rows.isEmpty else { return }
            try connection.run(
                "INSERT INTO \(pending.table) (\(pending.columns.joined(separator: ", "))) VALUES "
                    + pending.rows.joined(separator: ", "), pending.statement.binds, logger: logger)
            pendingInserts[key]!.rows = []
            pendingInserts[key]!.statement = PostgresStatement()
        }
        for (index, insert) in changes.inserts.enumerated() {
            let rowID = insertedRowIDs[index]
            if insert.rowID != nil {
                let key = ObjectIdentifier(insert.entity.rootEntity)
                if rowID > explicitMaxima[key]?.rowID ?? 0 { explicitMaxima[key] = (insert.entity, rowID) }
            }
            let group = ObjectIdentifier(insert.entity)
            var statement = pendingInserts[group]?.statement ?? PostgresStatement()
            var columns = ["strata_row_id", "strata_entity", "strata_version"]
            var values = [
                statement.bind(Int64(bitPattern: rowID)), String(insert.entity.entityID),
                statement.bind(Int64(bitPattern: insert.version)),
            ]
            var external: [Int: UInt64] = [:]
            try appendAttributes(
                of: insert.entity, insert.values, to: &columns, &values, external: &external, &statement,
                connection: connection)
            for relationship in insert.entity.toOneRelationships {
                let reference = insert.references.isEmpty ? nil : resolve(insert.references[relationship.toOneIndex!])
                let (id, entityColumn) = schema.columns(relationship)
                columns += [id, entityColumn]
                values += referenceValues(reference, &statement)
            }
            if pendingInserts[group] == nil {
                pendingInserts[group] = PendingInsert(table: schema.table(of: insert.entity), columns: columns)
            }
            pendingInserts[group]!.statement = statement
            pendingInserts[group]!.rows.append("(" + values.joined(separator: ", ") + ")")
            if statement.binds.count > 60_000 - columns.count { try flush(group) }
            if !external.isEmpty { result.insertedExternalReferences[index] = external }
        }
        for group in pendingInserts.keys { try flush(group) }
        // Row IDs chosen outside the sequence (an import's): the sequence moves past them.
        for (entity, rowID) in explicitMaxima.values {
            var statement = PostgresStatement()
            let maximum = statement.bind(Int64(bitPattern: rowID))
            let sequence = schema.sequence(of: entity)
            try connection.run(
                "SELECT setval(\(schema.sequenceLiteral(of: entity)), \(maximum)) "
                    + "WHERE \(maximum) > (SELECT last_value FROM \(sequence))", statement.binds, logger: logger)
        }

        // Updates: one multi-row UPDATE per entity (a batch update is one statement), each row matched with the
        // version it expects; a row not updated is a conflict.
        var conflicts: [ManagedObjectID] = []
        var pendingUpdates: [PendingUpdate.Key: PendingUpdate] = [:]
        func flushUpdates(_ key: PendingUpdate.Key) throws {
            guard let pending = pendingUpdates[key], !pending.rows.isEmpty else { return }
            let names = (0..<(pending.columns.count + 2)).map { "c\($0)" }
            let assignments = pending.columns.enumerated().map { "\($0.element) = v.c\($0.offset + 2)" }
            let updated = try connection.run(
                """
                UPDATE \(pending.table) AS t SET \(assignments.joined(separator: ", ")) \
                FROM (VALUES \(pending.rows.joined(separator: ", "))) AS v(\(names.joined(separator: ", "))) \
                WHERE t.strata_row_id = v.c0 AND t.strata_version = v.c1 RETURNING t.strata_row_id
                """, pending.statement.binds, logger: logger)
            var written = Set<UInt64>()
            for row in updated.rows { written.insert(UInt64(try row.decode(Int64.self))) }
            for (entity, rowID) in pending.targets where !written.contains(rowID) {
                conflicts.append(ManagedObjectID(entity: entity, storeIdentifier: identifier, rowID: rowID))
            }
            pendingUpdates[key]!.rows = []
            pendingUpdates[key]!.targets = []
            pendingUpdates[key]!.statement = PostgresStatement()
        }
        for update in changes.updates {
            let key = PendingUpdate.Key(entity: ObjectIdentifier(update.entity), references: !update.references.isEmpty)
            var statement = pendingUpdates[key]?.statement ?? PostgresStatement()
            let version = update.expectedVersion + 1
            var columns = ["strata_version"]
            var values = [
                statement.bind(Int64(bitPattern: update.rowID)),
                statement.bind(Int64(bitPattern: update.expectedVersion)),
                statement.bind(Int64(bitPattern: version)),
            ]
            var external: [Int: UInt64] = [:]
            let externalAttributes = update.entity.persistentAttributes.filter(PostgresSchema.isExternal)
            if !externalAttributes.isEmpty {
                try deleteExternalValues(of: update.entity, rowID: update.rowID, connection: connection)
            }
            try appendAttributes(
                of: update.entity, update.values, to: &columns, &values, external: &external, &statement,
                connection: connection)
            if !update.references.isEmpty {
                for relationship in update.entity.toOneRelationships {
                    let (id, entityColumn) = schema.columns(relationship)
                    columns += [id, entityColumn]
                    values += referenceValues(resolve(update.references[relationship.toOneIndex!]), &statement)
                }
            }
            if pendingUpdates[key] == nil {
                pendingUpdates[key] = PendingUpdate(table: schema.table(of: update.entity), columns: columns)
            }
            pendingUpdates[key]!.statement = statement
            pendingUpdates[key]!.rows.append("(" + values.joined(separator: ", ") + ")")
            pendingUpdates[key]!.targets.append((update.entity, update.rowID))
            if statement.binds.count > 60_000 - values.count { try flushUpdates(key) }
            result.updatedVersions.append(version)
            result.updatedExternalReferences.append(external)
        }
        for key in pendingUpdates.keys { try flushUpdates(key) }

        // Join-table memberships, as differences.
        for links in changes.links {
            guard case .joinTable(let side) = links.relationship.storage else { continue }
            try writeLinks(
                source: links.source.resolved(in: changes, insertedRowIDs: insertedRowIDs), side: side,
                members: links.members.map { $0.resolved(in: changes, insertedRowIDs: insertedRowIDs) },
                connection: connection)
        }

        // Deletes: one DELETE per table (a batch delete is one statement), each row with the version it expects;
        // their join-table links go with them (ON DELETE CASCADE).
        var deletesByTable: [ObjectIdentifier: [StoreChanges.Delete]] = [:]
        for delete in changes.deletes {
            deletesByTable[ObjectIdentifier(delete.entity.rootEntity), default: []].append(delete)
        }
        for deletes in deletesByTable.values {
            let entity = deletes[0].entity.rootEntity
            let table = schema.table(of: entity)
            var statement = PostgresStatement()
            let ids = statement.bind(deletes.map { Int64(bitPattern: $0.rowID) })
            // -1: no version expected (the object was deleted as a fault, never read).
            let versions = statement.bind(deletes.map { $0.expectedVersion.map { Int64(bitPattern: $0) } ?? -1 })
            let externalColumns = entity.allEntitiesInHierarchyBelow.flatMap { entity in
                entity.persistentAttributes.filter { PostgresSchema.isExternal($0) && $0.entity === entity }
            }.map { "t." + schema.column($0) }
            if !externalColumns.isEmpty {
                var external = PostgresStatement()
                let rows = external.bind(deletes.map { Int64(bitPattern: $0.rowID) })
                try connection.run(
                    """
                    DELETE FROM \(schema.externalTable) WHERE id IN (SELECT unnest(ARRAY[\(externalColumns.joined(separator: ", "))]) \
                    FROM \(table) t WHERE t.strata_row_id = ANY(\(rows)))
                    """, external.binds, logger: logger)
            }
            let deleted = try connection.run(
                """
                DELETE FROM \(table) t USING unnest(\(ids), \(versions)) AS d(id, version) \
                WHERE t.strata_row_id = d.id AND (d.version = -1 OR t.strata_version = d.version) \
                RETURNING t.strata_row_id
                """, statement.binds, logger: logger)
            var gone = Set<UInt64>()
            for row in deleted.rows { gone.insert(UInt64(try row.decode(Int64.self))) }
            for delete in deletes where delete.expectedVersion != nil && !gone.contains(delete.rowID) {
                conflicts.append(
                    ManagedObjectID(entity: delete.entity, storeIdentifier: identifier, rowID: delete.rowID))
            }
        }
        // A conflict throws, and the transaction is rolled back: nothing of the save remains.
        guard conflicts.isEmpty else { throw ObjectGraphError.optimisticLockingConflict(conflicts) }

        var historyNumber: UInt64?
        if configuration.recordsPersistentHistory {
            historyNumber = try recordHistory(
                changes, insertedRowIDs: insertedRowIDs, tombstones: tombstones, connection: connection)
        }
        try notify(changes, insertedRowIDs: insertedRowIDs, historyNumber: historyNumber, connection: connection)
        return result
    }

    /// The two values of a to-one's columns (row ID, entity ID), bound.
    /// The attribute columns of a row being written and their bound values; binary values kept outside the row are
    /// stored first and named by their IDs (`external`, by storage index).
    private func appendAttributes(
        of entity: EntityDescription, _ rowValues: [AttributeValue?], to columns: inout [String],
        _ values: inout [String], external: inout [Int: UInt64], _ statement: inout PostgresStatement,
        connection: PostgresConnection
    ) throws {
        for attribute in entity.persistentAttributes {
            let value = rowValues[attribute.storageIndex!]
            columns.append(schema.column(attribute))
            if PostgresSchema.isExternal(attribute) {
                let id = try storeExternal(value, of: attribute, connection: connection)
                if let id { external[attribute.storageIndex!] = id }
                values.append(id.map { statement.bind(Int64(bitPattern: $0)) } ?? statement.bindNull("bigint"))
            } else {
                values.append(try statement.bind(value, of: attribute))
            }
        }
    }

    private func referenceValues(_ reference: StoredReference?, _ statement: inout PostgresStatement) -> [String] {
        guard let reference else { return [statement.bindNull("bigint"), statement.bindNull("smallint")] }
        return [statement.bind(Int64(bitPattern: reference.rowID)), "\(reference.entity.entityID)::smallint"]
    }

    /// Writes a binary value into `strata_external`; nil for nil.
    private func storeExternal(
        _ value: AttributeValue?, of attribute: AttributeDescription, connection: PostgresConnection
    ) throws -> UInt64? {
        guard let value else { return nil }
        guard case .data(let data) = value else {
            throw PostgresStoreError.unsupportedValue(
                entity: attribute.entity.name, attribute: attribute.name, reason: "\(value) is not binary data")
        }
        var statement = PostgresStatement()
        let bytes = statement.bindBytes(Array(data))
        let result = try connection.run(
            "INSERT INTO \(schema.externalTable) (bytes) VALUES (\(bytes)) RETURNING id", statement.binds,
            logger: logger)
        return UInt64(try result.rows[0].decode(Int64.self))
    }

    /// Rows of one entity waiting for their multi-row INSERT.
    private struct PendingInsert {
        var table: String
        var columns: [String]
        var statement = PostgresStatement()
        var rows: [String] = []
    }

    /// Rows of one entity waiting for their multi-row UPDATE.
    private struct PendingUpdate {
        /// Updates of one entity, with or without their to-ones.
        struct Key: Hashable {
            var entity: ObjectIdentifier
            var references: Bool
        }

        var table: String
        var columns: [String]
        var statement = PostgresStatement()
        var rows: [String] = []
        var targets: [(entity: EntityDescription, rowID: UInt64)] = []
    }

    /// Deletes the external binary values a row refers to.
    private func deleteExternalValues(
        of entity: EntityDescription, rowID: UInt64, connection: PostgresConnection
    ) throws {
        let columns = entity.persistentAttributes.filter(PostgresSchema.isExternal).map { "t." + schema.column($0) }
        guard !columns.isEmpty else { return }
        var statement = PostgresStatement()
        let id = statement.bind(Int64(bitPattern: rowID))
        try connection.run(
            """
            DELETE FROM \(schema.externalTable) WHERE id IN (SELECT unnest(ARRAY[\(columns.joined(separator: ", "))]) \
            FROM \(schema.table(of: entity)) t WHERE t.strata_row_id = \(id))
            """, statement.binds, logger: logger)
    }

    /// Makes `source`'s links of one join-table side exactly `members`: links to others are deleted, new ones
    /// inserted (at the end of the member's inverse order), and for an ordered side each position set.
    private func writeLinks(
        source: StoredReference, side: JoinTableSide, members: [StoredReference], connection: PostgresConnection
    ) throws {
        let table = schema.joinTable(side)
        let columns = PostgresSchema.joinColumns(side)
        let sourceEntityColumn = side.isOwnerSide ? "owner_entity" : "member_entity"
        let otherPosition = side.isOwnerSide ? "member_position" : "owner_position"
        var statement = PostgresStatement()
        let sourceID = statement.bind(Int64(bitPattern: source.rowID))
        let memberIDs = statement.bind(members.map { Int64(bitPattern: $0.rowID) })
        try connection.run(
            "DELETE FROM \(table) WHERE \(columns.source) = \(sourceID) AND NOT (\(columns.member) = ANY(\(memberIDs)))",
            statement.binds, logger: logger)
        guard !members.isEmpty else { return }
        var insert = PostgresStatement()
        let insertSource = insert.bind(Int64(bitPattern: source.rowID))
        let ids = insert.bind(members.map { Int64(bitPattern: $0.rowID) })
        let entities = insert.bind(members.map { Int16(bitPattern: $0.entity.entityID) })
        try connection.run(
            """
            INSERT INTO \(table) AS j (\(columns.source), \(columns.member), \(sourceEntityColumn), \
            \(columns.memberEntity), \(columns.position), \(otherPosition)) \
            SELECT \(insertSource), u.id, \(source.entity.entityID)::smallint, u.entity, u.position - 1, \
            COALESCE((SELECT max(o.\(otherPosition)) + 1 FROM \(table) o WHERE o.\(columns.member) = u.id), 0) \
            FROM unnest(\(ids), \(entities)) WITH ORDINALITY AS u(id, entity, position) \
            ON CONFLICT (owner_id, member_id) DO UPDATE SET \(columns.position) = EXCLUDED.\(columns.position) \
            WHERE j.\(columns.position) IS DISTINCT FROM EXCLUDED.\(columns.position)
            """, insert.binds, logger: logger)
    }
}
#endif
