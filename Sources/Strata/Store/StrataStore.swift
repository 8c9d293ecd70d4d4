import Foundation
import StrataFormat
import StrataIO
import StrataLock
import StrataStorage
import Synchronization

/// How a ``StrataStore`` opens its engine.
public struct StrataStoreConfiguration: Sendable {
    /// The storage engine's settings (durability, page size, blob threshold, ...).
    public var storage: StoreConfiguration
    /// Whether a store written with another model is migrated when it is opened (default: never).
    public var migration = MigrationOptions()

    /// Creates a configuration.
    ///
    /// - Parameter storage: the storage engine's settings; the engine's defaults when omitted.
    public init(storage: StoreConfiguration = StoreConfiguration()) {
        self.storage = storage
    }

    /// Whether every save records a transaction in the store's persistent history (Core Data's
    /// `NSPersistentHistoryTrackingKey`; default false). Once a store has history, it keeps recording it.
    public var recordsPersistentHistory = false

    /// How often the store looks for commits other processes made, so that its remote-change observers hear of
    /// them even while this process neither reads nor writes (Core Data's
    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`); nil (the default): only when this process reads
    /// or writes. Each look costs one 32-byte read when nothing changed.
    public var remoteChangePollingInterval: Duration? = nil

    /// The file-system seam the store and its migrations go through: POSIX, or an in-memory one whose crash images
    /// the migration's crash-point tests open.
    var fileSystem: any FileSystem = PosixFileSystem()
}

/// The persistent store on the Strata storage engine: a directory on disk.
///
/// Each entity hierarchy is one engine table named after its root entity (`entity.<Root>`), as Core Data's
/// SQLite store puts a hierarchy in its root's table: objects of every entity of the hierarchy share one
/// row-ID space, so a row ID alone names an object of the hierarchy, and fetching a parent entity reads one
/// table. Each row is a `RowRecord` whose header names the concrete entity and the row's version. Binary
/// values of attributes that allow external storage and reach the engine's blob threshold go to blob
/// segments; the row keeps the blob's ID.
///
/// The table `store.metadata` holds the store's UUID and the model's version hash; opening the store with a
/// model of another hash fails with ``ObjectGraphError/incompatibleModel(storeHash:modelHash:)``.
public final class StrataStore: PersistentStore, RowCacheSharing {
    /// The store's UUID, created with the store and kept in its metadata: the same on every open.
    public let identifier: UUID
    /// Always ``PersistentStoreType/strata``.
    public var type: PersistentStoreType { .strata }
    /// The metadata read from (or, for a new store, written to) the `store.metadata` table: the store's
    /// type, UUID and model version hash (see ``PersistentStoreMetadataKey``).
    public var metadata: [String: String] { metadataStorage.current }
    let metadataStorage: StoreMetadata
    /// The storage engine under the store: shared with the other Strata stores open on the same directory in
    /// this process (one per coordinator), whose saves it serializes.
    public let engine: Store
    /// The store's directory, as given.
    let directory: String
    /// The file system the store's directory is on.
    let fileSystem: any FileSystem
    /// The row caches of the coordinators with a store on this engine.
    package let rowCacheGroup: RowCacheGroup
    let model: ManagedObjectModel
    private let tables: [ObjectIdentifier: TableID]
    /// The root entity of each entity table, for forgetting rows other processes changed.
    let rootEntitiesByTable: [TableID: EntityDescription]
    let remoteChangeObservers = Lock<[RemoteChangeObservation: @Sendable (PersistentStoreRemoteChange) -> Void]>([:])
    /// The timer of ``StrataStoreConfiguration/remoteChangePollingInterval``, cancelled at close.
    let remoteChangePoller = Lock<RemoteChangePoller?>(nil)
    /// What hands the engine's reports of other processes' commits to the store: attached at the end of the
    /// initializer, detached in `deinit`.
    private let externalCommitRelay = ExternalCommitRelay()
    /// The join tables of relationships kept in them, by table name.
    let joinTables: [String: TableID]
    /// The secondary indexes relationships are read through, by name (``relationshipIndexes(of:)``).
    let indexes: [String: IndexID]
    private let coders: [ObjectIdentifier: RowCoder]
    /// The coders by entity ID (a row names its entity by number): an array, read for every decoded row.
    private let codersByEntityID: [RowCoder?]
    /// Whether an entity's rows give index keys a value could make too long (an indexed attribute, a uniqueness
    /// constraint, a fetch index), by entity ID: an update of some fields of another's row checks no key.
    private let keysIndexesByEntityID: [Bool]
    let entitiesByID: [UInt16: EntityDescription]
    /// The `store.history` table, when the store records persistent history.
    let historyTable: TableID?
    let reads = Atomic<Int>(0)
    let examined = Atomic<Int>(0)
    let writes = Atomic<Int>(0)

    static let metadataTable = "store.metadata"
    static func tableName(for root: EntityDescription) -> String { "entity." + root.name }

    /// Opens (or creates) the store in `directory` for `model`.
    ///
    /// A new store gets its metadata (a new UUID and the model's version hash) and one engine table per
    /// root entity; an existing one gets tables for root entities it does not have yet.
    ///
    /// - Parameters:
    ///   - directory: the store's directory; created when missing unless the configuration forbids it.
    ///   - model: the model of every object the store holds.
    ///   - configuration: how to open the storage engine.
    /// - Throws: ``ObjectGraphError/incompatibleModel(storeHash:modelHash:)`` when the store was created with a
    ///   model of another version hash; ``ObjectGraphError/storage(_:)`` when the engine cannot open the
    ///   store (`StorageError.storeLocked`, `StorageError.storeNotFound`, ...) or its
    ///   metadata is damaged.
    public init(directory: String, model: ManagedObjectModel, configuration: StrataStoreConfiguration) throws {
        do {
            (engine, rowCacheGroup) = try OpenEngines.shared.open(
                directory, configuration: configuration.storage, fileSystem: configuration.fileSystem)
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
        self.directory = directory
        self.fileSystem = configuration.fileSystem
        self.model = model
        var coders: [ObjectIdentifier: RowCoder] = [:]
        var entitiesByID: [UInt16: EntityDescription] = [:]
        for entity in model.entities {
            coders[ObjectIdentifier(entity)] = RowCoder(entity: entity)
            entitiesByID[entity.entityID] = entity
        }
        self.coders = coders
        self.entitiesByID = entitiesByID
        var codersByEntityID = [RowCoder?](repeating: nil, count: Int(entitiesByID.keys.max() ?? 0) + 1)
        var keysIndexesByEntityID = [Bool](repeating: false, count: codersByEntityID.count)
        for (id, entity) in entitiesByID {
            codersByEntityID[Int(id)] = coders[ObjectIdentifier(entity)]
            keysIndexesByEntityID[Int(id)] =
                entity.persistentAttributes.contains { $0.isIndexed } || !entity.uniquenessConstraints.isEmpty
                || !entity.indexes.isEmpty
        }
        self.codersByEntityID = codersByEntityID
        self.keysIndexesByEntityID = keysIndexesByEntityID
        do {
            let snapshot = engine.snapshot()
            var stored: [String: String] = [:]
            if let table = snapshot.table(named: Self.metadataTable), let bytes = try snapshot.row(RowID(1), in: table)
            {
                stored = try Self.decodeMetadata(bytes)
            }
            if let hash = stored[PersistentStoreMetadataKey.modelVersionHash], hash != model.versionHash {
                throw ObjectGraphError.incompatibleModel(storeHash: hash, modelHash: model.versionHash)
            }
            let roots = model.entities.filter { $0.superentity == nil }
            let joinTableNames = Self.joinTableNames(of: model)
            let indexSpecs =
                Self.relationshipIndexes(of: model) + Self.attributeIndexes(of: model)
                + Self.uniquenessIndexes(of: model) + Self.fetchIndexes(of: model)
            let created = try engine.write {
                txn -> ([String: String], [ObjectIdentifier: TableID], [String: TableID], [String: IndexID], TableID?)
                in
                var metadata = stored
                // Another process may have created the store since the snapshot: the transaction sees its metadata.
                if metadata.isEmpty, let table = txn.table(named: Self.metadataTable) {
                    guard let bytes = try txn.row(RowID(1), in: table) else {
                        throw StorageError.corruption(
                            file: Self.metadataTable, offset: 1, reason: "the store's metadata row is missing")
                    }
                    metadata = try Self.decodeMetadata(bytes)
                    if let hash = metadata[PersistentStoreMetadataKey.modelVersionHash], hash != model.versionHash {
                        throw ObjectGraphError.incompatibleModel(storeHash: hash, modelHash: model.versionHash)
                    }
                }
                if metadata.isEmpty {
                    metadata = [
                        PersistentStoreMetadataKey.storeType: PersistentStoreType.strata.description,
                        PersistentStoreMetadataKey.storeUUID: UUID().uuidString,
                        PersistentStoreMetadataKey.modelVersionHash: model.versionHash,
                    ]
                    let table = try txn.createTable(named: Self.metadataTable)
                    try txn.insert(Self.encodeMetadata(metadata), into: table)
                }
                // For `strata fsck`: where each relationship is kept (RelationshipLayout.swift).
                try Self.recordRelationshipLayout(of: model, in: &metadata, txn: txn)
                var tables: [ObjectIdentifier: TableID] = [:]
                for root in roots {
                    tables[ObjectIdentifier(root)] =
                        try txn.table(named: Self.tableName(for: root))
                        ?? txn.createTable(named: Self.tableName(for: root))
                }
                let history =
                    try txn.table(named: Self.historyTableName)
                    ?? (configuration.recordsPersistentHistory ? txn.createTable(named: Self.historyTableName) : nil)
                var joinTables: [String: TableID] = [:]
                for name in joinTableNames {
                    joinTables[name] = try txn.table(named: name) ?? txn.createTable(named: name)
                }
                // Fetch indexes of an earlier model version that this one no longer declares.
                let current = Set(indexSpecs.map(\.name))
                for name in snapshot.indexNames where name.hasPrefix(Self.fetchIndexPrefix) && !current.contains(name) {
                    if let stale = txn.index(named: name) { try txn.dropIndex(stale) }
                }
                var indexes: [String: IndexID] = [:]
                for spec in indexSpecs {
                    guard let table = txn.table(named: spec.table) else {
                        throw StorageError.corruption(file: spec.table, offset: 0, reason: "the table is missing")
                    }
                    indexes[spec.name] =
                        try txn.index(named: spec.name)
                        ?? txn.createIndex(named: spec.name, on: table, fields: spec.fields, entityIDs: spec.entityIDs)
                }
                return (metadata, tables, joinTables, indexes, history)
            }
            self.joinTables = created.2
            self.indexes = created.3
            self.historyTable = created.4
            metadataStorage = StoreMetadata(created.0)
            let metadata = created.0
            var tables: [ObjectIdentifier: TableID] = [:]
            for entity in model.entities {
                tables[ObjectIdentifier(entity)] = created.1[ObjectIdentifier(entity.rootEntity)]
            }
            self.tables = tables
            var rootEntitiesByTable: [TableID: EntityDescription] = [:]
            for root in roots { rootEntitiesByTable[created.1[ObjectIdentifier(root)]!] = root }
            self.rootEntitiesByTable = rootEntitiesByTable
            guard let identifier = UUID(uuidString: metadata[PersistentStoreMetadataKey.storeUUID] ?? "") else {
                throw ObjectGraphError.storage(
                    .corruption(file: Self.metadataTable, offset: 1, reason: "the store's UUID is missing or malformed")
                )
            }
            self.identifier = identifier
        } catch let error as ObjectGraphError {
            try? OpenEngines.shared.close(engine, directory: directory, fileSystem: configuration.fileSystem)
            throw error
        } catch let error as StorageError {
            try? OpenEngines.shared.close(engine, directory: directory, fileSystem: configuration.fileSystem)
            throw ObjectGraphError.storage(error)
        }
        // Through a relay, not a `[weak self]` closure: a weak reference would give the store a side table
        // (``ExternalCommitRelay``).
        let relay = externalCommitRelay
        relay.attach(self)
        engine.onExternalCommits { commits in relay.relay(commits) }
        if let interval = configuration.remoteChangePollingInterval { startPollingForRemoteChanges(every: interval) }
    }

    deinit {
        externalCommitRelay.detach()
        remoteChangePoller.withLock { $0?.cancel() }
    }

    // MARK: - Metadata

    /// Replaces the application's keys of the metadata (the store's own keys stay), rewriting the metadata row
    /// in a transaction of its own.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)``: `StorageError.invalidArgument` for a key or value longer than
    ///   65,535 UTF-8 bytes (nothing is written), or an engine failure.
    public func setMetadata(_ metadata: [String: String]) throws {
        try writeMetadata(try metadataStorage.replacing(with: metadata))
    }

    /// The metadata of the store in `directory`, read without opening it for writing and without a model (Core
    /// Data's `metadataForPersistentStore(ofType:at:)`): its type, UUID, the version hash of its model and, after
    /// migrations, of the models before it (``PersistentStoreMetadataKey``).
    ///
    /// - Parameter directory: the store's directory.
    /// - Returns: the metadata; empty for a store of the engine alone (no object graph was ever saved in it).
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the engine cannot read the store.
    public static func metadataForPersistentStore(at directory: String) throws -> [String: String] {
        do {
            let store = try ReadOnlyStore.open(at: directory)
            defer { store.close() }
            let snapshot = store.snapshot()
            guard let table = snapshot.table(named: metadataTable), let bytes = try snapshot.row(RowID(1), in: table)
            else { return [:] }
            return try decodeMetadata(bytes)
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
    }

    /// Records the version hashes of the models the store was written with before its current one (after a
    /// migration), in the metadata row.
    func recordModelVersionHistory(_ history: String) throws {
        var stored = metadata
        stored[PersistentStoreMetadataKey.modelVersionHistory] = history
        try writeMetadata(stored)
    }

    /// Rewrites the metadata row in a transaction of its own, then what readers of ``metadata`` see.
    private func writeMetadata(_ metadata: [String: String]) throws {
        do {
            try engine.write { txn in
                guard let table = txn.table(named: Self.metadataTable) else {
                    throw StorageError.corruption(file: Self.metadataTable, offset: 0, reason: "the table is missing")
                }
                try txn.update(RowID(1), in: table, to: Self.encodeMetadata(metadata))
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
        metadataStorage.set(metadata)
    }

    /// `count:u32 (keyLength:u16 key valueLength:u16 value)*`, UTF-8.
    static func encodeMetadata(_ metadata: [String: String]) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeUInt32LE(UInt32(metadata.count))
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            for text in [key, value] {
                let utf8 = Array(text.utf8)
                writer.writeUInt16LE(UInt16(utf8.count))
                writer.writeBytes(utf8)
            }
        }
        return writer.take()
    }

    static func decodeMetadata(_ bytes: [UInt8]) throws -> [String: String] {
        do {
            return try bytes.withUnsafeBytes { (buffer) throws(FormatError) -> [String: String] in
                var reader = ByteReader(buffer)
                let count = Int(try reader.readUInt32LE())
                guard count <= reader.remaining / 4 else { throw FormatError.invalidField("metadata count \(count)") }
                var result: [String: String] = [:]
                for _ in 0..<count {
                    let key = try reader.readUTF8(Int(try reader.readUInt16LE()))
                    result[key] = try reader.readUTF8(Int(try reader.readUInt16LE()))
                }
                return result
            }
        } catch {
            throw StorageError.corruption(file: metadataTable, offset: 0, reason: "store metadata: \(error)")
        }
    }

    // MARK: - Rows

    func table(for entity: EntityDescription) -> TableID { tables[ObjectIdentifier(entity)]! }

    /// Decodes a row held in an array (see the overload on the row's bytes where they lie).
    func decode(_ bytes: [UInt8], rowID: UInt64, as entity: EntityDescription) throws -> StoredRow? {
        try bytes.withUnsafeBytes { try decode($0, held: bytes, rowID: rowID, as: entity) }
    }

    /// Decodes a row; nil when its entity is not `entity` or below it. A row of an entity that keeps its rows as
    /// records (``EntityDescription/keepsRowsAsRecords``) is checked and kept as its bytes (copied from `bytes`
    /// unless `held` is the same bytes in an array already), its fields decoded when read; another's values are
    /// decoded now. Values kept outside the row stay references either way.
    func decode(
        _ bytes: UnsafeRawBufferPointer, held: [UInt8]? = nil, rowID: UInt64, as entity: EntityDescription
    ) throws -> StoredRow? {
        do {
            let header = try RowRecord.Header.decode(bytes)
            let position = Int(header.entityID)
            // The coder is used where it lies in the array: a copy of it (`if let`) retained its three references
            // and released them again, twice a row.
            guard position < codersByEntityID.count, codersByEntityID[position] != nil,
                codersByEntityID[position]!.entity.rootIdentifier == entity.rootIdentifier
            else {
                throw FormatError.invalidField(
                    "row \(rowID) names entity \(header.entityID), not of \(entity.rootEntity.name)")
            }
            let concrete = codersByEntityID[position]!.entity
            guard concrete.isKind(of: entity) else {
                // A row of another entity of the hierarchy: its fields checked as any row's, its values not made.
                _ = try RowRecord.decodeAll(bytes)
                return nil
            }
            if concrete.keepsRowsAsRecords {
                let referencesBlobs = try codersByEntityID[position]!.checkRow(bytes, header: header)
                return StoredRow(
                    entity: concrete, version: header.rowVersion, checkedRecord: held ?? Array(bytes),
                    referencesBlobs: referencesBlobs)
            }
            let decoded = try codersByEntityID[position]!.decodeRow(bytes, header: header)
            return StoredRow(
                entity: concrete, version: header.rowVersion, values: decoded.values, references: decoded.references,
                externalReferences: decoded.external)
        } catch let error as FormatError {
            throw ObjectGraphError.storage(
                .corruption(file: Self.tableName(for: entity.rootEntity), offset: rowID, reason: "\(error)"))
        } catch let error as RowCodingError {
            throw ObjectGraphError.storage(
                .corruption(file: Self.tableName(for: entity.rootEntity), offset: rowID, reason: "\(error)"))
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
    }

    /// Reads and decodes a row as the engine's newest commit has it (``StrataStorage/Store/row(_:in:)``, no snapshot
    /// made for it), with its blobs read back in.
    ///
    /// - Returns: the row, or nil when it does not exist or its entity is not `entity` or one of its subentities.
    /// - Throws: ``ObjectGraphError/storage(_:)`` for an engine failure, or with
    ///   `StorageError.corruption` when the row or a blob it references cannot be decoded.
    public func row(_ rowID: UInt64, of entity: EntityDescription) throws -> StoredRow? {
        reads.add(1, ordering: .relaxed)
        let bytes: [UInt8]?
        do { bytes = try engine.row(RowID(rowID), in: table(for: entity)) } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        }
        guard let bytes else { return nil }
        return try decode(bytes, rowID: rowID, as: entity)
    }

    /// Reads rows of `entity`'s hierarchy in one snapshot and one walk of its table's tree (``forEachRow(withIDs:of:_:)``).
    ///
    /// - Returns: the rows that exist and are of `entity` or one of its subentities, in increasing row-ID order.
    /// - Throws: ``ObjectGraphError/storage(_:)`` for an engine failure or an undecodable row.
    public func rows(withIDs rowIDs: [UInt64], of entity: EntityDescription) throws -> [(rowID: UInt64, row: StoredRow)]
    {
        var sorted = rowIDs
        sorted.sort()
        var rows: [(rowID: UInt64, row: StoredRow)] = []
        rows.reserveCapacity(sorted.count)
        try forEachRow(withIDs: sorted, of: entity) { position, row in rows.append((sorted[position], row)) }
        return rows
    }

    /// Reads rows of `entity`'s hierarchy in one snapshot and one walk of its table's tree (rows in increasing order
    /// share the descent: a row in the leaf of the one before needs none), decoding each where it lies and handing it
    /// to `body` there.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` for an engine failure or an undecodable row, or what `body` throws.
    public func forEachRow(
        withIDs rowIDs: [UInt64], of entity: EntityDescription,
        _ body: (_ position: Int, _ row: consuming StoredRow) throws -> Void
    ) throws {
        let snapshot = engine.snapshot()
        var read = 0
        defer { reads.add(read, ordering: .relaxed) }
        do {
            // The engine calls back once per row ID, in the order given: the position is the count of calls.
            var position = -1
            var previous: UInt64?
            try snapshot.forEachRow(rowIDs.map(RowID.init), in: table(for: entity)) { id, bytes in
                position += 1
                // Duplicates were given twice: read once.
                defer { previous = id.rawValue }
                guard let bytes, previous != id.rawValue else { return true }
                read += 1
                if let row = try decode(bytes, rowID: id.rawValue, as: entity) { try body(position, row) }
                return true
            }
        } catch let error as StorageError { throw ObjectGraphError.storage(error) }
    }

    /// Scans the hierarchy's table in one snapshot and decodes the rows of `entity` (and of its
    /// subentities when `includesSubentities` is true), in row-ID order. Rows of other entities are
    /// skipped after reading only their header.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` for an engine failure or an undecodable row.
    public func rows(
        of entity: EntityDescription, includesSubentities: Bool
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        let snapshot = engine.snapshot()
        let wanted = Set((includesSubentities ? entity.allEntitiesInHierarchyBelow : [entity]).map(\.entityID))
        var matches: [(UInt64, [UInt8])] = []
        do {
            try snapshot.forEachRow(in: table(for: entity)) { id, bytes in
                // Read the header only to skip rows of other entities of the hierarchy.
                if let header = try? RowRecord.Header.decode(bytes), !wanted.contains(header.entityID) { return true }
                matches.append((id.rawValue, Array(bytes)))
                return true
            }
        } catch let error as StorageError { throw ObjectGraphError.storage(error) }
        reads.add(matches.count, ordering: .relaxed)
        return try matches.compactMap { rowID, bytes in
            try decode(bytes, rowID: rowID, as: entity).map { (rowID: rowID, row: $0) }
        }
    }

    /// Reserves the next `count` row IDs of `entity`'s table in an engine transaction of its own, so the
    /// reservation is durable like any commit. `count` must be positive (a precondition of the engine).
    ///
    /// - Returns: `count` consecutive row IDs, in increasing order.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the transaction fails.
    public func externalData(_ reference: UInt64) throws -> Data {
        do {
            guard let bytes = try engine.snapshot().readBlob(BlobID(reference)) else {
                throw StorageError.corruption(
                    file: "blobs", offset: reference, reason: "a row references missing blob \(reference)")
            }
            return Data(bytes)
        } catch let error as StorageError { throw ObjectGraphError.storage(error) }
    }

    public func allocateRowIDs(for entity: EntityDescription, count: Int) throws -> [UInt64] {
        guard count > 0 else { return [] }
        do {
            let first = try engine.write { txn in try txn.reserveRowIDs(count, in: table(for: entity)) }
            return (0..<UInt64(count)).map { first.rawValue + $0 }
        } catch let error as StorageError { throw ObjectGraphError.storage(error) }
    }

    /// Checks every update's and every versioned delete's expected version against a snapshot of the
    /// engine, without writing. ``save(_:)`` checks again inside its transaction.
    ///
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)`` listing every object whose row has
    ///   another version or no longer exists; ``ObjectGraphError/storage(_:)`` when a row cannot be read.
    public func checkConflicts(_ changes: StoreChanges) throws {
        let snapshot = engine.snapshot()
        var conflicts: [ManagedObjectID] = []
        do {
            for update in changes.updates {
                let current = try snapshot.row(RowID(update.rowID), in: table(for: update.entity))
                if try current.map({ try RowRecord.Header.decode($0).rowVersion }) != update.expectedVersion {
                    conflicts.append(
                        ManagedObjectID(entity: update.entity, storeIdentifier: identifier, rowID: update.rowID))
                }
            }
            for delete in changes.deletes {
                guard let expected = delete.expectedVersion else { continue }
                let current = try snapshot.row(RowID(delete.rowID), in: table(for: delete.entity))
                if try current.map({ try RowRecord.Header.decode($0).rowVersion }) != expected {
                    conflicts.append(
                        ManagedObjectID(entity: delete.entity, storeIdentifier: identifier, rowID: delete.rowID))
                }
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        } catch {
            throw ObjectGraphError.storage(.corruption(file: "store", offset: 0, reason: "\(error)"))
        }
        guard conflicts.isEmpty else { throw ObjectGraphError.optimisticLockingConflict(conflicts) }
    }

    /// Applies the changes in one engine transaction: all of them or, when it throws, none.
    ///
    /// Every expected version is checked before anything is inserted (a deleted row's where the delete finds it, an
    /// updated row's where the update finds it: one descent a row), and a conflict names every conflicting row and
    /// writes nothing. Inserts get their ``StoreChanges/Insert/version`` (1 unless an
    /// import keeps a source row's version); updates get their expected version
    /// plus one. Binary values of attributes that allow external storage and reach the engine's blob threshold
    /// are stored as blobs; the blobs of replaced values and of deleted rows are deleted with them.
    ///
    /// - Returns: the inserted rows' IDs and the updated rows' new versions.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)``; ``ObjectGraphError/storage(_:)`` for an
    ///   engine failure or a stored row that does not decode; ``ObjectGraphError/transformationFailed(key:reason:)``
    ///   when a value cannot be encoded as a row.
    public func save(_ changes: StoreChanges) throws -> StoreSaveResult {
        let result = try write(changes)
        // Other coordinators on this engine forget the rows this save changed.
        rowCacheGroup.invalidate(changes, store: identifier)
        return result
    }

    /// The engine transaction of ``save(_:)``.
    private func write(_ changes: StoreChanges) throws -> StoreSaveResult {
        do {
            return try engine.write { txn in
                // Each deleted row in one descent: the delete shows it (its version, its blobs, its tombstone) where
                // it finds it, before it goes.
                var conflicts: [ManagedObjectID] = []
                var tombstones: [[String: AttributeValue]] = []
                if historyTable != nil { tombstones.reserveCapacity(changes.deletes.count) }
                for delete in changes.deletes {
                    let keepsTombstone = historyTable != nil && keepsTombstones(of: delete.entity)
                    var version: UInt64?
                    var blobs: [Int: UInt64] = [:]
                    var tombstone: [String: AttributeValue] = [:]
                    try txn.delete(RowID(delete.rowID), from: table(for: delete.entity)) { bytes in
                        let decoded = try RowRecord.blobReferences(in: bytes)
                        version = decoded.header.rowVersion
                        blobs = decoded.blobs
                        if keepsTombstone { tombstone = try self.tombstone(of: bytes, delete: delete) }
                    }
                    writes.add(1, ordering: .relaxed)
                    if historyTable != nil { tombstones.append(tombstone) }
                    if let expected = delete.expectedVersion, version != expected {
                        conflicts.append(
                            ManagedObjectID(entity: delete.entity, storeIdentifier: identifier, rowID: delete.rowID))
                    }
                    // In field order, as the fields were walked before.
                    if !blobs.isEmpty {
                        for (_, blob) in blobs.sorted(by: { $0.key < $1.key }) { try txn.deleteBlob(BlobID(blob)) }
                    }
                }

                var result = StoreSaveResult()
                // A row that names a row inserted in this save needs that row's ID before it is encoded: then
                // every insert gets its ID up front (one reservation per table), planned in the result's runs. The
                // inserts' entries are not made for it (a context's are made from its objects as the loop below
                // reads them, and dropped once written).
                let inserts = changes.inserts
                let namesInserts =
                    changes.updates.indices.contains { changes.updates[$0].namesInsertedObjects }
                    || inserts.indices.contains { inserts.namesInserts(at: $0) }
                if namesInserts {
                    // By table, the last entity's at hand: a save's inserts come in runs of a few entities.
                    var tables: [(table: TableID, count: Int, next: UInt64)] = []
                    var last: (entity: EntityDescription, slot: Int)?
                    func slot(of entity: EntityDescription) -> Int {
                        if let last, last.entity === entity { return last.slot }
                        let table = table(for: entity)
                        let slot =
                            tables.firstIndex { $0.table == table }
                            ?? {
                                tables.append((table, 0, 0))
                                return tables.count - 1
                            }()
                        last = (entity, slot)
                        return slot
                    }
                    for index in inserts.indices where inserts.rowID(at: index) == nil {
                        tables[slot(of: inserts.entity(at: index))].count += 1
                    }
                    for position in tables.indices where tables[position].count > 0 {
                        tables[position].next =
                            try txn.reserveRowIDs(tables[position].count, in: tables[position].table).rawValue
                    }
                    for index in inserts.indices {
                        if let rowID = inserts.rowID(at: index) {
                            result.insertedRowIDs.append(rowID)
                        } else {
                            let position = slot(of: inserts.entity(at: index))
                            result.insertedRowIDs.append(tables[position].next)
                            tables[position].next += 1
                        }
                    }
                }
                let planned = result.insertedRowIDs
                func resolve(_ references: [ObjectReference?]) -> [StoredReference?] {
                    references.map { $0?.resolved(in: changes, insertedRowIDs: planned) }
                }

                // Each updated row checked and written in one descent (a separate read of its version and blobs
                // was 3,300 instructions an object in W7.graph). Every version is still checked before anything is
                // inserted, and the conflict names every conflicting object: after the first conflict, or a value
                // that cannot be written, the rest are only checked, and the throw rolls back what was written.
                // A save that may store blobs for its updates (a value of an attribute that allows external
                // storage) reads every updated row first, as before: no blob is stored for a save that a conflict
                // stops, and an unchanged blob is compared where it lies.
                var updateConflicts: [ManagedObjectID] = []
                var oldBlobs: [[Int: UInt64]]?
                let mayStoreBlobs = changes.updates.indices.contains { index in
                    changes.updates[index].entity.externalStorageIndexes.contains {
                        changes.updates[index].writtenValue(atStorageIndex: $0) != nil
                    }
                }
                if mayStoreBlobs {
                    var blobs: [[Int: UInt64]] = []
                    blobs.reserveCapacity(changes.updates.count)
                    for update in changes.updates {
                        let current = try txn.row(RowID(update.rowID), in: table(for: update.entity))
                        let decoded = try current.map { try RowRecord.blobReferences($0) }
                        if decoded?.header.rowVersion != update.expectedVersion {
                            updateConflicts.append(
                                ManagedObjectID(
                                    entity: update.entity, storeIdentifier: identifier, rowID: update.rowID))
                        }
                        blobs.append(decoded?.blobs ?? [:])
                    }
                    oldBlobs = blobs
                }
                var failure: (any Error)?
                result.updatedVersions.reserveCapacity(changes.updates.count)
                result.updatedExternalReferences.reserveCapacity(changes.updates.count)
                result.updatedRows.reserveCapacity(changes.updates.count)
                // Each update read where it lies in the list (a copy of one retained and released its eight references),
                // its table looked up when its entity is not the last one's.
                var lastTable: (entity: ObjectIdentifier, table: TableID)?
                for index in changes.updates.indices {
                    let entity = ObjectIdentifier(changes.updates[index].entity)
                    if lastTable?.entity != entity { lastTable = (entity, table(for: changes.updates[index].entity)) }
                    let table = lastTable!.table
                    let row = RowID(changes.updates[index].rowID)
                    let expectedVersion = changes.updates[index].expectedVersion
                    let outcome: UpdateOutcome
                    if !conflicts.isEmpty || !updateConflicts.isEmpty || failure != nil {
                        // Checked already.
                        if oldBlobs != nil { break }
                        let version = try txn.row(row, in: table).map { try RowRecord.Header.decode($0).rowVersion }
                        outcome = version == expectedVersion ? .checked : .conflict
                    } else if oldBlobs == nil, let changed = changes.updates[index].changedFields {
                        // Only the changed fields encoded; the to-ones resolved only when they changed.
                        outcome = try write(
                            changes.updates[index], changed: changed,
                            references: changed.references ? resolve(changes.updates[index].references) : nil,
                            to: row, in: table, txn: txn)
                    } else {
                        outcome = try write(
                            changes.updates[index], references: resolve(changes.updates[index].references), to: row,
                            in: table, previousBlobs: oldBlobs?[index], txn: txn)
                    }
                    switch outcome {
                    case .written(let external, let written):
                        writes.add(1, ordering: .relaxed)
                        result.updatedExternalReferences.append(external)
                        result.updatedVersions.append(expectedVersion + 1)
                        result.updatedRows.append(written)
                    case .checked: break
                    case .conflict:
                        updateConflicts.append(
                            ManagedObjectID(
                                entity: changes.updates[index].entity, storeIdentifier: identifier, rowID: row.rawValue)
                        )
                    case .failed(let error): failure = error
                    }
                }
                // The updates' conflicts first, then the deletes', as they were checked before.
                guard updateConflicts.isEmpty && conflicts.isEmpty else {
                    throw ObjectGraphError.optimisticLockingConflict(updateConflicts + conflicts)
                }
                if let failure { throw failure }

                // Each insert's entry made, encoded, written and dropped in turn; what the context needs of it
                // afterwards is its row ID (a run's worth) and, rarely, its values written outside the row. A
                // context's object takes its row as it is written, in place of its values (`Inserts.written`): the
                // row is what the row cache and the object keep after the save, and its bytes are the ones encoded
                // here (a million rows handed back in the result would all be held on top of the objects' values
                // until the save returned).
                let takesRows = inserts.takesWrittenRows
                for index in inserts.indices {
                    let insert = inserts[index]
                    let (bytes, external) = try encode(
                        insert.values, references: resolve(insert.references), of: insert.entity,
                        version: insert.version,
                        previousBlobs: [:], txn: txn)
                    if !external.isEmpty { result.insertedExternalReferences[index] = external }
                    let table = table(for: insert.entity)
                    if namesInserts {
                        try txn.insert(bytes, into: table, at: RowID(planned[index]))
                    } else if let rowID = insert.rowID {
                        try txn.insert(bytes, into: table, at: RowID(rowID))
                        result.insertedRowIDs.append(rowID)
                    } else {
                        result.insertedRowIDs.append(try txn.insert(bytes, into: table).rawValue)
                    }
                    writes.add(1, ordering: .relaxed)
                    if takesRows, external.isEmpty, let row = writtenRow(bytes, of: insert) {
                        inserts.written(row, at: index)
                    }
                }
                for links in changes.links {
                    guard case .joinTable(let side) = links.relationship.storage else { continue }
                    try writeLinks(
                        of: links.source.resolved(in: changes, insertedRowIDs: result.insertedRowIDs), side: side,
                        members: links.members.map { $0.resolved(in: changes, insertedRowIDs: result.insertedRowIDs) },
                        txn: txn)
                }
                // The deleted rows' links go after the links written above, as they did with their rows.
                for delete in changes.deletes {
                    try deleteLinks(of: StoredReference(entity: delete.entity, rowID: delete.rowID), txn: txn)
                }
                if let historyTable {
                    try recordHistory(
                        changes, insertedRowIDs: result.insertedRowIDs, tombstones: tombstones, in: historyTable,
                        txn: txn)
                }
                return result
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        } catch let error as FormatError {
            throw ObjectGraphError.storage(.corruption(file: "store", offset: 0, reason: "\(error)"))
        } catch let error as RowCodingError {
            throw ObjectGraphError.transformationFailed(key: "", reason: "\(error)")
        }
    }

    /// What writing one update came to.
    private enum UpdateOutcome {
        /// The row was rewritten; the blob of each value written outside it, by storage index; the row as a fetch
        /// reads it, when it was made from its changed fields (nil otherwise).
        case written([Int: UInt64], StoredRow?)
        /// The row has the expected version, and was not written (the save throws).
        case checked
        /// The row has another version, or is gone.
        case conflict
        /// The new row could not be made (a value that does not encode, or is too long for an index).
        case failed(any Error)
    }

    /// An updated row whose stored version is not the one expected: stops the rewrite with nothing changed.
    private struct VersionMismatch: Error {}

    /// Writes an updated row's new values. Without `previousBlobs`, the row's version is checked, and the row
    /// replaced, in the update's one descent (no new value goes outside the row; the blobs of the old one are deleted
    /// after it); with them (the row was read and checked before), the new row is made first, since that reads and
    /// stores blobs through the transaction.
    private func write(
        _ update: StoreChanges.Update, references: [StoredReference?], to row: RowID, in table: TableID,
        previousBlobs: [Int: UInt64]?, txn: WriteTransaction
    ) throws -> UpdateOutcome {
        let version = update.expectedVersion + 1
        if let previousBlobs {
            let encoded: (bytes: [UInt8], external: [Int: UInt64])
            do {
                encoded = try encode(
                    update.values, references: references, of: update.entity, version: version,
                    previousBlobs: previousBlobs, txn: txn)
            } catch { return .failed(error) }
            try txn.update(row, in: table, to: encoded.bytes)
            return .written(encoded.external, nil)
        }
        let bytes: [UInt8]
        do {
            bytes = RowRecord.encode(
                entityID: update.entity.entityID, rowVersion: version,
                fields: try fields(for: update.values, references: references, of: update.entity))
        } catch { return .failed(error) }
        var found = false
        var oldBlobs: [Int: UInt64] = [:]
        do {
            try txn.update(row, in: table) { old, new in
                found = true
                let decoded = try RowRecord.blobReferences(in: old)
                guard decoded.header.rowVersion == update.expectedVersion else { throw VersionMismatch() }
                oldBlobs = decoded.blobs
                new.append(contentsOf: bytes)
            }
        } catch is VersionMismatch {
            return .conflict
        } catch StorageError.rowNotFound where !found {
            return .conflict
        }
        // In field order, as the fields were walked before.
        for (_, blob) in oldBlobs.sorted(by: { $0.key < $1.key }) { try txn.deleteBlob(BlobID(blob)) }
        return .written([:], nil)
    }

    /// Writes an update made from its object's row record (``StoreChanges/Update/changedFields``), in the update's one
    /// descent: the row's version checked where the update finds it, then the row rewritten from its own bytes with
    /// the changed fields alone encoded (the others neither decoded nor encoded: W7.graph's salary update decoded and
    /// encoded all six fields). No value goes outside the row (the save's updates would store no blob); a replaced
    /// field's blob, if it had one, is deleted after it.
    ///
    /// - Returns: the outcome, with the row as written, checked as a fetch checks it, for its object to settle onto.
    private func write(
        _ update: StoreChanges.Update, changed: StoreChanges.Update.ChangedFields, references: [StoredReference?]?,
        to row: RowID, in table: TableID, txn: WriteTransaction
    ) throws -> UpdateOutcome {
        let coder = codersByEntityID[Int(update.entity.entityID)]!
        let replacements: [(position: Int, field: RowRecord.Field)]
        do {
            replacements = try coder.fields(replacing: changed.values, of: update.valueSlots, references: references)
            try checkIndexedValues(replacing: replacements, in: changed.record, of: update.entity)
        } catch { return .failed(error) }
        let entityID = update.entity.entityID
        let fieldCount = update.entity.storedFields.count
        var found = false
        var oldBlobs: [UInt64] = []
        var bytes: [UInt8] = []
        // Whether the row was the object's record byte for byte: its copied fields are then checked already.
        var wasRecord = false
        do {
            try txn.update(row, in: table) { old, new in
                found = true
                let header = try RowRecord.Header.decode(old)
                guard header.rowVersion == update.expectedVersion else { throw VersionMismatch() }
                guard header.fieldCount == fieldCount else {
                    throw FormatError.invalidField(
                        "row \(row.rawValue) has \(header.fieldCount) fields, not \(fieldCount)")
                }
                for (position, _) in replacements {
                    let span = try header.span(ofField: position, in: old)
                    // Safe: a span holds its field's tag, and lies within old.
                    guard old[span.lowerBound] == RowRecord.Tag.blobReference.rawValue,
                        case .blobReference(let blob) = try RowRecord.field(at: position, in: old, header: header)
                    else { continue }
                    oldBlobs.append(blob)
                }
                bytes = try RowRecord.encode(
                    entityID: entityID, rowVersion: update.expectedVersion + 1, replacing: replacements, in: old,
                    header: header)
                new.append(contentsOf: bytes)
                wasRecord = changed.record.record!.withUnsafeBytes { record in
                    record.count == old.count && memcmp(record.baseAddress!, old.baseAddress!, old.count) == 0
                }
            }
        } catch is VersionMismatch {
            return .conflict
        } catch StorageError.rowNotFound where !found {
            return .conflict
        }
        for blob in oldBlobs { try txn.deleteBlob(BlobID(blob)) }
        return .written([:], writtenRow(bytes, of: update, changed: changed, coder: coder, wasRecord: wasRecord))
    }

    /// The row an update of changed fields wrote, checked as a read would check it, for its object and the row cache to
    /// hold as a fetch would give it: only its replaced fields when the rest are the object's record (`wasRecord`),
    /// else every field. Nil for a row the check refuses (a value its field cannot hold back, which validation let
    /// through): it was written as a whole update's would be, and its object settles onto its values.
    private func writtenRow(
        _ bytes: [UInt8], of update: StoreChanges.Update, changed: StoreChanges.Update.ChangedFields, coder: RowCoder,
        wasRecord: Bool
    ) -> StoredRow? {
        guard wasRecord else { return try? decode(bytes, rowID: update.rowID, as: update.entity) }
        guard
            let referencesBlobs = try? bytes.withUnsafeBytes({ buffer in
                try coder.checkReplacedFields(
                    buffer, header: try RowRecord.Header.decode(buffer), changed: changed.values,
                    references: changed.references)
            })
        else { return nil }
        return StoredRow(
            entity: update.entity, version: update.expectedVersion + 1, checkedRecord: bytes,
            referencesBlobs: referencesBlobs)
    }

    /// The row an insert wrote, checked as a read would check it (``RowCoder/checkRow(_:header:)``), for its object
    /// and the row cache to hold as a fetch would give it: nil for an entity whose rows are not kept as records, and
    /// for a row the check refuses (a value its field cannot hold back, which validation let through) or that
    /// references a blob (its object settles onto its values).
    private func writtenRow(_ bytes: [UInt8], of insert: StoreChanges.Insert) -> StoredRow? {
        let entity = insert.entity
        guard entity.keepsRowsAsRecords,
            let referencesBlobs = try? bytes.withUnsafeBytes({ buffer in
                try codersByEntityID[Int(entity.entityID)]!.checkRow(
                    buffer, header: try RowRecord.Header.decode(buffer))
            }), !referencesBlobs
        else { return nil }
        return StoredRow(entity: entity, version: insert.version, checkedRecord: bytes, referencesBlobs: false)
    }

    /// A row's fields for `values`, each value checked against the indexes that take it.
    private func fields(
        for values: [AttributeValue?], references: [StoredReference?], of entity: EntityDescription
    ) throws -> [RowRecord.Field] {
        let fields = try coders[ObjectIdentifier(entity)]!.fields(for: values, references: references)
        try checkIndexedValues(fields, of: entity)
        return fields
    }

    /// Encodes a row; long binary values of attributes that allow external storage become blobs. A blob of
    /// the previous version is kept when the value did not change, and deleted when it did.
    /// - Parameter previousBlobs: the blobs the previous version's fields name, by field index (empty for a new row).
    /// - Returns: the row, and the blob of each value written outside it, by storage index.
    private func encode(
        _ values: [AttributeValue?], references: [StoredReference?], of entity: EntityDescription, version: UInt64,
        previousBlobs: [Int: UInt64], txn: WriteTransaction
    ) throws -> (bytes: [UInt8], external: [Int: UInt64]) {
        var external: [Int: UInt64] = [:]
        var fields = try fields(for: values, references: references, of: entity)
        for (index, attribute) in entity.persistentAttributes.enumerated() {
            let position = attribute.fieldIndex!
            let oldBlob = previousBlobs.isEmpty ? nil : previousBlobs[position]
            guard attribute.allowsExternalBinaryDataStorage, case .bytes(let bytes) = fields[position],
                engine.configuration.shouldStoreAsBlob(length: bytes.count)
            else {
                if let oldBlob { try txn.deleteBlob(BlobID(oldBlob)) }
                continue
            }
            if let oldBlob, try txn.readBlob(BlobID(oldBlob)) == bytes {
                fields[position] = .blobReference(oldBlob)
                external[index] = oldBlob
                continue
            }
            if let oldBlob { try txn.deleteBlob(BlobID(oldBlob)) }
            let blob = try txn.storeBlob(bytes).rawValue
            fields[position] = .blobReference(blob)
            external[index] = blob
        }
        return (RowRecord.encode(entityID: entity.entityID, rowVersion: version, fields: fields), external)
    }

    /// Refuses values whose key in an attribute index (`attr.…`) or a uniqueness index (`unique.…`) would be
    /// longer than the engine's index pages take (`PageFormat.maximumIndexEntry(pageSize:)` less the row ID:
    /// 998 bytes at 4 KiB pages), with an error that names the attribute, before anything is written.
    private func checkIndexedValues(_ fields: [RowRecord.Field], of entity: EntityDescription) throws {
        try checkIndexedValues(of: entity, changing: { _ in true }, field: { fields[$0] })
    }

    /// ``checkIndexedValues(_:of:)`` for an update of some fields of `record` (``write(_:changed:references:to:in:txn:)``):
    /// only the keys of indexes with a replaced field are checked (the others' are the row's, checked when written),
    /// their other parts read from `record`.
    private func checkIndexedValues(
        replacing replacements: [(position: Int, field: RowRecord.Field)], in record: StoredRow,
        of entity: EntityDescription
    ) throws {
        guard keysIndexesByEntityID[Int(entity.entityID)], let bytes = record.record else { return }
        try checkIndexedValues(
            of: entity, changing: { position in replacements.contains { $0.position == position } },
            field: { position in
                if let replacement = replacements.first(where: { $0.position == position }) { return replacement.field }
                return try RowRecord.field(at: position, in: bytes)
            })
    }

    /// Checks the keys of `entity`'s indexes that `changing` says have a changed field, with each field given by
    /// `field` (by position in the row).
    private func checkIndexedValues(
        of entity: EntityDescription, changing: (Int) -> Bool, field: (Int) throws -> RowRecord.Field
    ) throws {
        let limit = PageFormat.maximumIndexEntry(pageSize: engine.pageSize) - 8
        func check(_ attributes: [AttributeDescription]) throws {
            try check(attributes.map { $0.fieldIndex! }, key: attributes.map(\.name).joined(separator: "+"))
        }
        func check(_ fieldIndexes: [Int], key: String) throws {
            guard fieldIndexes.contains(where: changing) else { return }
            // Only variable-length values can grow past the limit.
            let parts = try fieldIndexes.map(field)
            guard
                parts.contains(where: {
                    if case .string = $0 {
                        true
                    } else if case .bytes = $0 {
                        true
                    } else if case .uri = $0 {
                        true
                    } else {
                        false
                    }
                })
            else { return }
            let length = IndexKey.encode(parts).count
            guard length <= limit else {
                throw ObjectGraphError.valueTooLongForIndex(entity: entity.name, key: key, length: length, limit: limit)
            }
        }
        for attribute in entity.persistentAttributes where attribute.isIndexed { try check([attribute]) }
        for constraint in entity.uniquenessConstraints { try check(constraint.attributes) }
        for index in entity.indexes {
            try check(index.elements.map(\.fieldIndex), key: index.elements.map(\.propertyName).joined(separator: "+"))
        }
    }

    /// Rows (entity rows and join-table links) written to the engine by saves so far: a test hook.
    public var rowWrites: Int { writes.load(ordering: .relaxed) }

    /// Rows that queries (``fetch(_:)``) examined so far, matching or not: a test hook that shows whether an
    /// index narrowed a query.
    public var rowsExamined: Int { examined.load(ordering: .relaxed) }

    /// Rows read from the engine so far by ``row(_:of:)`` and ``rows(of:includesSubentities:)``: a test hook.
    public var rowReads: Int { reads.load(ordering: .relaxed) }

    /// Closes the storage engine, which checkpoints first unless an earlier write failure forbids it; while
    /// another store (of another coordinator) is open on the same engine, the engine stays open for it.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the final checkpoint or closing fails.
    public func close() throws {
        remoteChangePoller.withLock { poller in
            poller?.cancel()
            poller = nil
        }
        do { try OpenEngines.shared.close(engine, directory: directory, fileSystem: fileSystem) } catch let error
            as StorageError
        {
            throw ObjectGraphError.storage(error)
        }
    }
}
