#if Postgres
import Foundation
import Logging
import PostgresNIO
import Strata
import StrataLock
import Synchronization

/// A persistent store on PostgreSQL: the same object graph, contexts and fetch requests as the Strata store,
/// with the data in a server database that several processes (app servers) share.
///
/// The store creates its schema from the model on first use (tables per inheritance hierarchy, foreign keys,
/// join tables, unique and fetch indexes: ``PostgresSchema``) and records the model's version hash in it; a
/// model of another hash is refused with ``ObjectGraphError/incompatibleModel(storeHash:modelHash:)``, as the
/// Strata store refuses one. Row IDs come from one sequence per table; each row has a version column that every
/// UPDATE checks (optimistic locking across processes); a save is one PostgreSQL transaction, tried again on a
/// serialization failure or deadlock and otherwise applied whole or not at all.
///
/// For example:
/// ```swift
/// let coordinator = PersistentStoreCoordinator(model: model)
/// try coordinator.addPersistentStore(.postgres(PostgresStoreConfiguration(host: "db", username: "app")))
/// let context = ManagedObjectContext(coordinator: coordinator)
/// ```
///
/// Other processes' saves reach this process through `LISTEN`/`NOTIFY`: the store forgets the rows they changed
/// in its coordinators' row caches and calls its remote-change observers (``addRemoteChangeObserver(_:)``); with
/// ``PostgresStoreConfiguration/recordsPersistentHistory`` their transactions are in the persistent history.
///
/// ## Topics
/// - ``PostgresStoreConfiguration``
/// - ``PostgresStoreError``
public final class PostgresStore: PersistentStore, RowCacheSharing {
    /// The store's UUID, kept in its metadata table: the same for every process that opens the schema.
    public let identifier: UUID
    /// `custom("PostgreSQL")`.
    public var type: PersistentStoreType { .custom(Self.typeName) }
    /// The store's type, UUID and the model's version hash, and the application's keys.
    public var metadata: [String: String] { metadataStorage.current }
    /// The configuration the store was opened with.
    public let configuration: PostgresStoreConfiguration

    static let typeName = "PostgreSQL"
    let metadataStorage: StoreMetadata
    /// The row caches of every coordinator of this process with a store on the same schema (as coordinators
    /// of one Strata store directory share their engine's): a save forgets its rows in all of them at once;
    /// other processes' saves arrive through `NOTIFY`.
    package let rowCacheGroup: RowCacheGroup
    let model: ManagedObjectModel
    let schema: PostgresSchema
    let pool: PostgresConnectionPool
    let entitiesByID: [UInt16: EntityDescription]
    let selectLists: [ObjectIdentifier: SelectList]
    let logger: Logger
    let reads = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    /// Written into every notification this store sends, so that it ignores its own.
    let instanceToken = UUID().uuidString
    let remoteChangeObservers = Lock<[RemoteChangeObservation: @Sendable (PersistentStoreRemoteChange) -> Void]>([:])
    let listener = Lock<RemoteChangeListener?>(nil)

    /// Where each value of a hierarchy's rows is in the result of its `SELECT` list.
    struct SelectList: Sendable {
        /// The columns, ready for `SELECT` (`strata_row_id, strata_entity, strata_version, ...`).
        var sql: String
        /// By attribute: its position in the list.
        var attributes: [ObjectIdentifier: Int]
        /// By to-one: the positions of its row-ID and entity-ID columns.
        var toOnes: [ObjectIdentifier: (id: Int, entity: Int)]
    }

    /// Opens the store in `configuration.schema`, creating its tables on first use.
    ///
    /// - Parameters:
    ///   - model: the model of every object the store keeps.
    ///   - configuration: the server, role, database and schema.
    /// - Throws: ``ObjectGraphError/incompatibleModel(storeHash:modelHash:)`` when the schema was made for another
    ///   model; ``PostgresStoreError/connectionLost(reason:)`` when the server cannot be reached;
    ///   ``PostgresStoreError/schemaMismatch(schema:reason:)`` when the schema is not a Strata store's.
    public init(model: ManagedObjectModel, configuration: PostgresStoreConfiguration) throws {
        self.model = model
        self.configuration = configuration
        logger = configuration.logger
        schema = PostgresSchema(name: configuration.schema, model: model)
        pool = PostgresConnectionPool(configuration: configuration)
        var entitiesByID: [UInt16: EntityDescription] = [:]
        for entity in model.entities { entitiesByID[entity.entityID] = entity }
        self.entitiesByID = entitiesByID
        var selectLists: [ObjectIdentifier: SelectList] = [:]
        for root in model.entities where root.superentity == nil {
            var columns = ["strata_row_id", "strata_entity", "strata_version"]
            var attributes: [ObjectIdentifier: Int] = [:]
            var toOnes: [ObjectIdentifier: (id: Int, entity: Int)] = [:]
            for entity in root.allEntitiesInHierarchyBelow {
                for attribute in entity.persistentAttributes where attribute.entity === entity {
                    attributes[ObjectIdentifier(attribute)] = columns.count
                    let column = schema.column(attribute)
                    columns.append(
                        attribute.type == .decimal && !PostgresSchema.isExternal(attribute) ? "\(column)::text" : column
                    )
                }
                for relationship in entity.toOneRelationships where relationship.entity === entity {
                    let (id, entityColumn) = schema.columns(relationship)
                    toOnes[ObjectIdentifier(relationship)] = (columns.count, columns.count + 1)
                    columns.append(id)
                    columns.append(entityColumn)
                }
            }
            selectLists[ObjectIdentifier(root)] = SelectList(
                sql: columns.map { "t.\($0)" }.joined(separator: ", "), attributes: attributes, toOnes: toOnes)
        }
        self.selectLists = selectLists
        rowCacheGroup = Self.rowCacheGroup(for: configuration)
        let stored: [String: String]
        do {
            stored = try Self.createOrCheckSchema(
                schema: schema, model: model, pool: pool, configuration: configuration)
        } catch {
            pool.close()
            throw error
        }
        metadataStorage = StoreMetadata(stored)
        guard let identifier = UUID(uuidString: stored[PersistentStoreMetadataKey.storeUUID] ?? "") else {
            pool.close()
            throw PostgresStoreError.schemaMismatch(
                schema: configuration.schema, reason: "the store's UUID is missing from strata_metadata")
        }
        self.identifier = identifier
        if configuration.observesRemoteChanges {
            do {
                try startListening()
            } catch {
                pool.close()
                throw error
            }
        }
    }

    deinit {
        stopListening()
        pool.close()
    }

    /// Creates the schema's tables when the metadata table is missing, or checks the model's version hash
    /// against the one recorded; either way under an advisory lock, so that processes starting together create
    /// it once.
    private static func createOrCheckSchema(
        schema: PostgresSchema, model: ManagedObjectModel, pool: PostgresConnectionPool,
        configuration: PostgresStoreConfiguration
    ) throws -> [String: String] {
        let logger = configuration.logger
        return try pool.withConnection { connection in
            try connection.run("BEGIN", logger: logger)
            do {
                var statement = PostgresStatement()
                let lockKey = statement.bind("strata:" + schema.name)
                try connection.run(
                    "SELECT pg_advisory_xact_lock(hashtext(\(lockKey)))", statement.binds, logger: logger)
                var check = PostgresStatement()
                let name = check.bind(schema.metadataTable)
                let exists = try connection.run("SELECT to_regclass(\(name)) IS NOT NULL", check.binds, logger: logger)
                var metadata: [String: String] = [:]
                if try exists.rows.first?.makeRandomAccess()[0].decode(Bool.self) == true {
                    for row in try connection.run("SELECT key, value FROM \(schema.metadataTable)", logger: logger).rows
                    {
                        let (key, value) = try row.decode((String, String).self)
                        metadata[key] = value
                    }
                }
                if let hash = metadata[PersistentStoreMetadataKey.modelVersionHash], hash != model.versionHash {
                    throw ObjectGraphError.incompatibleModel(storeHash: hash, modelHash: model.versionHash)
                }
                if !metadata.isEmpty, metadata[PersistentStoreMetadataKey.storeType] != typeName {
                    throw PostgresStoreError.schemaMismatch(
                        schema: schema.name, reason: "strata_metadata names no PostgreSQL store of Strata")
                }
                for sql in schema.creationStatements(recordsHistory: configuration.recordsPersistentHistory) {
                    try connection.run(sql, logger: logger)
                }
                if metadata.isEmpty {
                    metadata = [
                        PersistentStoreMetadataKey.storeType: typeName,
                        PersistentStoreMetadataKey.storeUUID: UUID().uuidString,
                        PersistentStoreMetadataKey.modelVersionHash: model.versionHash,
                    ]
                    try writeMetadata(metadata, schema: schema, connection: connection, logger: logger)
                }
                try connection.run("COMMIT", logger: logger)
                return metadata
            } catch {
                _ = try? connection.run("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    private static func writeMetadata(
        _ metadata: [String: String], schema: PostgresSchema, connection: PostgresConnection, logger: Logger
    ) throws {
        try connection.run("DELETE FROM \(schema.metadataTable)", logger: logger)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            var statement = PostgresStatement()
            let keyPlaceholder = statement.bind(key)
            let valuePlaceholder = statement.bind(value)
            try connection.run(
                "INSERT INTO \(schema.metadataTable) (key, value) VALUES (\(keyPlaceholder), \(valuePlaceholder))",
                statement.binds, logger: logger)
        }
    }

    /// Replaces the application's keys of the metadata (the store's own keys stay), in the metadata table.
    ///
    /// - Throws: ``PostgresStoreError``; ``ObjectGraphError/storage(_:)`` for a key or value over 65,535 bytes.
    public func setMetadata(_ metadata: [String: String]) throws {
        let merged = try metadataStorage.replacing(with: metadata)
        try inTransaction { connection in
            try Self.writeMetadata(merged, schema: schema, connection: connection, logger: logger)
        }
        metadataStorage.set(merged)
    }

    private final class WeakGroup: @unchecked Sendable {
        // Guarded by `sharedGroups`' lock.
        weak var group: RowCacheGroup?
    }

    private static let sharedGroups = Lock<[String: WeakGroup]>([:])

    /// The row-cache group of the stores of this process on the same server, database and schema.
    private static func rowCacheGroup(for configuration: PostgresStoreConfiguration) -> RowCacheGroup {
        let key =
            "\(configuration.endpoint)|\(configuration.database ?? configuration.username)|\(configuration.schema)"
        return sharedGroups.withLock { groups in
            groups = groups.filter { $0.value.group != nil }
            if let group = groups[key]?.group { return group }
            let group = RowCacheGroup()
            let box = WeakGroup()
            box.group = group
            groups[key] = box
            return group
        }
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back when it throws.
    /// A serialization failure or deadlock runs it again, up to ``PostgresStoreConfiguration/maximumSaveAttempts``
    /// times; a connection that turns out broken before the transaction began is replaced once. A connection lost
    /// during `COMMIT` leaves the outcome to be found out (``resolveCommit(_:reason:)``): the transaction is
    /// reported committed or failed, never "maybe".
    ///
    /// - Throws: what `body` throws; ``PostgresStoreError/serializationFailure(attempts:message:)`` after the last
    ///   try; ``PostgresStoreError/connectionLost(reason:)`` (nothing committed);
    ///   ``PostgresStoreError/commitOutcomeUnknown(transactionID:reason:)``.
    func inTransaction<T>(
        isolation: String = "READ COMMITTED", _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        let attempts = max(1, configuration.maximumSaveAttempts)
        var lastMessage = ""
        var replacedBrokenConnection = false
        var attempt = 1
        while attempt <= attempts {
            let outcome: TransactionOutcome<T> = try pool.withConnection { connection in
                do {
                    try connection.run("BEGIN ISOLATION LEVEL \(isolation)", logger: logger)
                } catch PostgresStoreError.connectionLost(let reason) where !replacedBrokenConnection {
                    // A pooled connection the server closed since its last use (a restart): nothing began.
                    replacedBrokenConnection = true
                    try? connection.close().wait()
                    logger.info("PostgreSQL: a pooled connection was broken (\(reason)); trying a new one")
                    return .newConnection
                }
                do {
                    let result = try body(connection)
                    let identity = try transactionIdentity(connection)
                    configuration.beforeCommit?(connection)
                    do {
                        try connection.run("COMMIT", logger: logger)
                    } catch PostgresStoreError.connectionLost(let reason) {
                        return .commitOutcomeUnknown(result, identity, reason)
                    }
                    return .done(result)
                } catch PostgresStoreError.serializationFailure(_, let message) {
                    _ = try? connection.run("ROLLBACK", logger: logger)
                    return .serializationFailure(message)
                } catch {
                    _ = try? connection.run("ROLLBACK", logger: logger)
                    throw error
                }
            }
            switch outcome {
            case .done(let result):
                return result
            case .commitOutcomeUnknown(let result, let identity, let reason):
                try resolveCommit(identity, reason: reason)
                return result
            case .serializationFailure(let message):
                lastMessage = message
                logger.info("PostgreSQL: a transaction met a serialization failure (try \(attempt) of \(attempts))")
                attempt += 1
            case .newConnection:
                continue
            }
        }
        throw PostgresStoreError.serializationFailure(attempts: attempts, message: lastMessage)
    }

    private enum TransactionOutcome<T> {
        case done(T)
        case commitOutcomeUnknown(T, TransactionIdentity, String)
        case serializationFailure(String)
        case newConnection
    }

    /// Runs `body` (reads only) on a pooled connection, outside any transaction (each statement sees the
    /// database as of its start). A connection the server closed since its last use (a restart) is replaced once.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try pool.withConnection(body)
        } catch PostgresStoreError.connectionLost(let reason) {
            logger.info("PostgreSQL: a read lost its connection (\(reason)); trying once on a new one")
            return try pool.withConnection(body)
        }
    }

    // MARK: - Rows

    /// The rows of a query on a hierarchy's table, decoded, with their row IDs.
    func decodeRows(
        _ result: PostgresQueryResult, root: EntityDescription, wanted: EntityDescription? = nil,
        includesSubentities: Bool = true, countsReads: Bool = true
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        let list = selectLists[ObjectIdentifier(root.rootEntity)]!
        let table = schema.tableName(of: root)
        var rows: [(rowID: UInt64, row: StoredRow)] = []
        rows.reserveCapacity(result.rows.count)
        for row in result.rows {
            let cells = row.makeRandomAccess()
            let rowID: UInt64
            let entityID: Int16
            let version: Int64
            do {
                rowID = UInt64(try cells[0].decode(Int64.self))
                entityID = try cells[1].decode(Int16.self)
                version = try cells[2].decode(Int64.self)
            } catch {
                throw PostgresStoreError.corruptRow(table: table, rowID: 0, reason: "\(error)")
            }
            guard let entity = entitiesByID[UInt16(truncatingIfNeeded: entityID)], entity.rootEntity === root.rootEntity
            else {
                throw PostgresStoreError.corruptRow(
                    table: table, rowID: rowID, reason: "entity \(entityID) is not of \(root.rootEntity.name)")
            }
            if let wanted, !(includesSubentities ? entity.isKind(of: wanted) : entity === wanted) { continue }
            var values: [AttributeValue?] = []
            values.reserveCapacity(entity.persistentAttributes.count)
            var external: [Int: UInt64] = [:]
            for attribute in entity.persistentAttributes {
                let cell = cells[list.attributes[ObjectIdentifier(attribute)]!]
                if PostgresSchema.isExternal(attribute) {
                    if cell.bytes != nil {
                        external[attribute.storageIndex!] = UInt64(try decodeInteger(cell, table, rowID))
                    }
                    values.append(nil)
                } else {
                    values.append(try cell.attributeValue(of: attribute, table: table, rowID: rowID))
                }
            }
            var references: [StoredReference?] = []
            for relationship in entity.toOneRelationships {
                let (idIndex, entityIndex) = list.toOnes[ObjectIdentifier(relationship)]!
                guard cells[idIndex].bytes != nil else {
                    references.append(nil)
                    continue
                }
                let target = try decodeInteger(cells[idIndex], table, rowID)
                let targetEntity = Int16(truncatingIfNeeded: try decodeInteger(cells[entityIndex], table, rowID))
                guard let destination = entitiesByID[UInt16(truncatingIfNeeded: targetEntity)] else {
                    throw PostgresStoreError.corruptRow(
                        table: table, rowID: rowID, reason: "\(relationship.name) names entity \(targetEntity)")
                }
                references.append(StoredReference(entity: destination, rowID: UInt64(target)))
            }
            var stored = StoredRow(entity: entity, version: UInt64(version), values: values, references: references)
            stored.externalReferences = external
            rows.append((rowID, stored))
        }
        if countsReads { reads.add(rows.count, ordering: .relaxed) }
        return rows
    }

    private func decodeInteger(_ cell: PostgresCell, _ table: String, _ rowID: UInt64) throws -> Int64 {
        do {
            return try cell.decode(Int64.self)
        } catch {
            throw PostgresStoreError.corruptRow(table: table, rowID: rowID, reason: "\(cell.columnName): \(error)")
        }
    }

    /// `strata_entity IN (...)` for the rows of `entity` (and its subentities when asked).
    func entityCondition(_ entity: EntityDescription, includesSubentities: Bool, alias: String = "t") -> String {
        let entities = includesSubentities ? entity.allEntitiesInHierarchyBelow : [entity]
        return "\(alias).strata_entity IN (\(entities.map { String($0.entityID) }.joined(separator: ", ")))"
    }

    /// The row, or nil when it does not exist or is of an entity outside `entity`'s hierarchy below it.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func row(_ rowID: UInt64, of entity: EntityDescription) throws -> StoredRow? {
        try rows(withIDs: [rowID], of: entity).first?.row
    }

    /// The rows with these IDs (those that exist, of `entity` or below), in row-ID order: one query for all of them
    /// (``PersistentStore/rows(withIDs:of:)``, what a batch of faults reads).
    ///
    /// - Throws: ``PostgresStoreError``.
    public func rows(
        withIDs rowIDs: [UInt64], of entity: EntityDescription
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        var statement = PostgresStatement()
        let ids = statement.bind(rowIDs.map { Int64(bitPattern: $0) })
        let sql = """
            SELECT \(selectLists[ObjectIdentifier(entity.rootEntity)]!.sql) FROM \(schema.table(of: entity)) t \
            WHERE t.strata_row_id = ANY(\(ids)) AND \(entityCondition(entity, includesSubentities: true)) \
            ORDER BY t.strata_row_id
            """
        let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
        return try decodeRows(result, root: entity.rootEntity)
    }

    /// Every row of `entity` (and of its subentities when asked), in row-ID order.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func rows(
        of entity: EntityDescription, includesSubentities: Bool
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        let sql = """
            SELECT \(selectLists[ObjectIdentifier(entity.rootEntity)]!.sql) FROM \(schema.table(of: entity)) t \
            WHERE \(entityCondition(entity, includesSubentities: includesSubentities)) ORDER BY t.strata_row_id
            """
        let result = try withConnection { try $0.run(sql, logger: logger) }
        return try decodeRows(result, root: entity.rootEntity)
    }

    /// The rows holding `values` in a uniqueness constraint's attributes, found through its unique index.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func rows(
        matching constraint: UniquenessConstraint, values: [AttributeValue]
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        var statement = PostgresStatement()
        var conditions = [entityCondition(constraint.entity, includesSubentities: true)]
        for (attribute, value) in zip(constraint.attributes, values) {
            conditions.append("t.\(schema.column(attribute)) = \(try statement.bind(value, of: attribute))")
        }
        let sql = """
            SELECT \(selectLists[ObjectIdentifier(constraint.entity.rootEntity)]!.sql) \
            FROM \(schema.table(of: constraint.entity)) t WHERE \(conditions.joined(separator: " AND ")) \
            ORDER BY t.strata_row_id
            """
        let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
        return try decodeRows(result, root: constraint.entity.rootEntity)
    }

    /// A binary value kept in `strata_external`.
    ///
    /// - Throws: ``PostgresStoreError/corruptRow(table:rowID:reason:)`` when it is missing.
    public func externalData(_ reference: UInt64) throws -> Data {
        var statement = PostgresStatement()
        let id = statement.bind(Int64(bitPattern: reference))
        let result = try withConnection {
            try $0.run("SELECT bytes FROM \(schema.externalTable) WHERE id = \(id)", statement.binds, logger: logger)
        }
        guard let cell = result.rows.first?.makeRandomAccess()[0] else {
            throw PostgresStoreError.corruptRow(
                table: "strata_external", rowID: reference, reason: "the external value is missing")
        }
        do {
            return Data(buffer: try cell.decode(ByteBuffer.self))
        } catch {
            throw PostgresStoreError.corruptRow(table: "strata_external", rowID: reference, reason: "\(error)")
        }
    }

    /// The members of a to-many as saved: in the relationship's order when it is ordered, else by row ID.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func relatedObjects(
        through relationship: RelationshipDescription, of source: StoredReference
    ) throws -> [StoredReference] {
        var statement = PostgresStatement()
        let sourceID = statement.bind(Int64(bitPattern: source.rowID))
        let sql: String
        switch relationship.storage {
        case .foreignKey:
            return []
        case .inverseForeignKey(let inverse):
            let (id, _) = schema.columns(inverse)
            sql = """
                SELECT t.strata_row_id, t.strata_entity FROM \(schema.table(of: relationship.destinationEntity)) t \
                WHERE t.\(id) = \(sourceID) AND \(entityCondition(inverse.entity, includesSubentities: true)) \
                ORDER BY t.strata_row_id
                """
        case .joinTable(let side):
            let columns = PostgresSchema.joinColumns(side)
            let order = relationship.isOrdered ? "\(columns.position), \(columns.member)" : columns.member
            sql = """
                SELECT \(columns.member), \(columns.memberEntity) FROM \(schema.joinTable(side)) \
                WHERE \(columns.source) = \(sourceID) ORDER BY \(order)
                """
        }
        let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
        return try result.rows.map { row in
            let (rowID, entityID) = try row.decode((Int64, Int16).self)
            guard let entity = entitiesByID[UInt16(truncatingIfNeeded: entityID)] else {
                throw PostgresStoreError.corruptRow(
                    table: relationship.name, rowID: UInt64(rowID), reason: "entity \(entityID) is not in the model")
            }
            return StoredReference(entity: entity, rowID: UInt64(rowID))
        }
    }

    /// Reserves `count` row IDs from the hierarchy's sequence.
    ///
    /// - Throws: ``PostgresStoreError``.
    public func allocateRowIDs(for entity: EntityDescription, count: Int) throws -> [UInt64] {
        precondition(count >= 0, "a negative count of row IDs")
        guard count > 0 else { return [] }
        let result = try withConnection { try self.nextRowIDs(count, for: entity, connection: $0) }
        return result
    }

    func nextRowIDs(_ count: Int, for entity: EntityDescription, connection: PostgresConnection) throws -> [UInt64] {
        var statement = PostgresStatement()
        let countPlaceholder = statement.bind(Int64(count))
        let result = try connection.run(
            "SELECT nextval(\(schema.sequenceLiteral(of: entity))) FROM generate_series(1, \(countPlaceholder))",
            statement.binds, logger: logger)
        return try result.rows.map { UInt64(try $0.decode(Int64.self)) }.sorted()
    }

    /// Rows read from the database so far: rows asked for one by one or by table, and the rows fetches return
    /// (``StoreFetchRequest/ResultKind/rows``), as the other stores count them: a test hook.
    public var rowReads: Int { reads.load(ordering: .relaxed) }

    /// Rows that fetch requests received from the database so far: every candidate SQL returned, before the
    /// parts of a predicate left to memory filter them and before a sort or window done here: a test hook that
    /// shows what SQL decided.
    public var rowsReceived: Int { received.load(ordering: .relaxed) }

    /// Stops listening and closes the connections.
    ///
    /// - Throws: never.
    public func close() throws {
        stopListening()
        pool.close()
    }
}

extension PostgresStore {
    /// Drops a store's schema with everything in it (Core Data's `destroyPersistentStore`): its tables, rows,
    /// history and metadata. Stores open on it elsewhere fail from then on.
    ///
    /// - Parameter configuration: the server and the schema to drop.
    /// - Throws: ``PostgresStoreError``.
    public static func destroyPersistentStore(configuration: PostgresStoreConfiguration) throws {
        let pool = PostgresConnectionPool(configuration: configuration)
        defer { pool.close() }
        try pool.withConnection { connection in
            _ = try connection.run(
                "DROP SCHEMA IF EXISTS \(PostgresSchema.quote(configuration.schema)) CASCADE",
                logger: configuration.logger)
        }
    }
}

extension PersistentStoreType {
    /// The type of a ``PostgresStore``: `custom("PostgreSQL")`.
    public static var postgres: PersistentStoreType { .custom(PostgresStore.typeName) }
}
#endif
