import Foundation
import StrataLock

/// A persistent store that keeps rows in memory: for tests, and for users who want no file.
/// It behaves like the Strata store in every way a context can see, save for surviving the process.
public final class InMemoryStore: PersistentStore, RowCacheSharing {
    struct Table {
        var rows: [UInt64: StoredRow] = [:]
        var nextRowID: UInt64 = 1
    }

    /// One side of a join-table relationship of one source row.
    struct LinkKey: Hashable {
        let relationship: ObjectIdentifier
        let source: UInt64
    }

    struct State {
        var tables: [ObjectIdentifier: Table] = [:]
        /// Members of to-manys kept in join tables (in order), by relationship and source row.
        var links: [LinkKey: [StoredReference]] = [:]
        var rowReads = 0
        /// Persistent history, oldest first, and the next transaction's number.
        var history: [(number: UInt64, record: HistoryRecord)] = []
        var nextHistoryNumber: UInt64 = 1
    }

    /// A random identifier chosen when the store is created: a new one for every instance.
    public let identifier = UUID()
    /// Always ``PersistentStoreType/inMemory``.
    public var type: PersistentStoreType { .inMemory }
    /// The store's type, UUID and the model's version hash (see ``PersistentStoreMetadataKey``).
    public var metadata: [String: String] { metadataStorage.current }
    let metadataStorage: StoreMetadata
    let state = Lock(State())
    /// The row caches of the coordinators the store was added to (one store object may serve several).
    package let rowCacheGroup = RowCacheGroup()

    /// Whether saves record persistent history.
    let recordsHistory: Bool

    /// Creates an empty store for `model`.
    ///
    /// - Parameters:
    ///   - model: the model whose version hash the store's metadata records.
    ///   - recordsPersistentHistory: whether every save records a transaction in the store's persistent history.
    public init(model: ManagedObjectModel, recordsPersistentHistory: Bool = false) {
        recordsHistory = recordsPersistentHistory
        metadataStorage = StoreMetadata([
            PersistentStoreMetadataKey.storeType: PersistentStoreType.inMemory.description,
            PersistentStoreMetadataKey.storeUUID: identifier.uuidString,
            PersistentStoreMetadataKey.modelVersionHash: model.versionHash,
        ])
    }

    /// Replaces the application's keys of the metadata (the store's own keys stay).
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` for a key or value longer than 65,535 UTF-8 bytes, as the
    ///   Strata store refuses it.
    public func setMetadata(_ metadata: [String: String]) throws {
        metadataStorage.set(try metadataStorage.replacing(with: metadata))
    }

    static func key(_ entity: EntityDescription) -> ObjectIdentifier { ObjectIdentifier(entity.rootEntity) }

    /// The row, or nil when it does not exist or its entity is not `entity` or one of its subentities.
    /// Counts one read in ``rowReads``.
    ///
    /// - Throws: never.
    public func row(_ rowID: UInt64, of entity: EntityDescription) throws -> StoredRow? {
        state.withLock { state in
            state.rowReads += 1
            guard let row = state.tables[Self.key(entity)]?.rows[rowID], row.entity.isKind(of: entity) else {
                return nil
            }
            return row
        }
    }

    /// Every row of `entity` (and of its subentities when `includesSubentities` is true), in row-ID
    /// order. Counts every row of the hierarchy's table in ``rowReads``.
    ///
    /// - Throws: never.
    public func rows(
        of entity: EntityDescription, includesSubentities: Bool
    ) throws -> [(rowID: UInt64, row: StoredRow)] {
        state.withLock { state in
            let rows = state.tables[Self.key(entity)]?.rows ?? [:]
            state.rowReads += rows.count
            return rows.filter { includesSubentities ? $0.value.entity.isKind(of: entity) : $0.value.entity === entity }
                .sorted { $0.key < $1.key }
                .map { (rowID: $0.key, row: $0.value) }
        }
    }

    /// Reserves the next `count` row IDs of `entity`'s hierarchy; no insert will be given them.
    ///
    /// - Returns: `count` consecutive row IDs, in increasing order.
    /// - Throws: never. A negative `count` is a precondition failure.
    /// An in-memory store keeps every value in its rows: it never hands out external references.
    public func externalData(_ reference: UInt64) throws -> Data {
        throw ObjectGraphError.storage(.corruption(file: "memory", offset: reference, reason: "no external data here"))
    }

    /// The objects `source` relates to through a to-many, as saved.
    ///
    /// - Throws: never.
    public func relatedObjects(
        through relationship: RelationshipDescription, of source: StoredReference
    ) throws -> [StoredReference] {
        state.withLock { state in Self.relatedObjects(through: relationship, of: source, in: state) }
    }

    static func relatedObjects(
        through relationship: RelationshipDescription, of source: StoredReference, in state: State
    ) -> [StoredReference] {
        switch relationship.storage {
        case .foreignKey:
            return []
        case .inverseForeignKey(let inverse):
            let rows = state.tables[key(relationship.destinationEntity)]?.rows ?? [:]
            return rows.filter { _, row in
                row.entity.isKind(of: inverse.entity) && row.references[inverse.toOneIndex!]?.rowID == source.rowID
            }
            .keys.sorted().map { StoredReference(entity: rows[$0]!.entity, rowID: $0) }
        case .joinTable:
            return state.links[LinkKey(relationship: ObjectIdentifier(relationship), source: source.rowID)] ?? []
        }
    }

    public func allocateRowIDs(for entity: EntityDescription, count: Int) throws -> [UInt64] {
        state.withLock { state in
            var table = state.tables[Self.key(entity)] ?? Table()
            let first = table.nextRowID
            table.nextRowID += UInt64(count)
            state.tables[Self.key(entity)] = table
            return (0..<UInt64(count)).map { first + $0 }
        }
    }

    /// Checks every update's and every versioned delete's expected version against the stored rows,
    /// without changing anything.
    ///
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)`` listing every object whose row has
    ///   another version or, for an update, no longer exists.
    public func checkConflicts(_ changes: StoreChanges) throws {
        try state.withLock { state in try conflicts(changes, in: state) }
    }

    private func conflicts(_ changes: StoreChanges, in state: State) throws {
        var conflicts: [ManagedObjectID] = []
        for update in changes.updates
        where state.tables[Self.key(update.entity)]?.rows[update.rowID]?.version != update.expectedVersion {
            conflicts.append(ManagedObjectID(entity: update.entity, storeIdentifier: identifier, rowID: update.rowID))
        }
        for delete in changes.deletes {
            let current = state.tables[Self.key(delete.entity)]?.rows[delete.rowID]?.version
            if let expected = delete.expectedVersion, current != expected {
                conflicts.append(
                    ManagedObjectID(entity: delete.entity, storeIdentifier: identifier, rowID: delete.rowID))
            }
        }
        guard conflicts.isEmpty else { throw ObjectGraphError.optimisticLockingConflict(conflicts) }
    }

    /// Applies the changes atomically: every expected version is checked before anything is written.
    ///
    /// Inserts get their version (1 unless an import keeps another) and their reserved row ID or the table's next
    /// one; updates get their expected version plus one; an unversioned delete of a row that is already gone does
    /// nothing.
    ///
    /// - Returns: the inserted rows' IDs and the updated rows' new versions.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)``, with nothing changed.
    public func save(_ changes: StoreChanges) throws -> StoreSaveResult {
        let result = try write(changes)
        // Other coordinators this store was added to forget the rows this save changed.
        rowCacheGroup.invalidate(changes, store: identifier)
        return result
    }

    /// The rows' changes of ``save(_:)``.
    private func write(_ changes: StoreChanges) throws -> StoreSaveResult {
        try state.withLock { state in
            // Check every expectation before changing anything: a save is all or nothing.
            try conflicts(changes, in: state)
            let tombstones = recordsHistory ? Self.tombstones(of: changes.deletes, in: state) : []
            var result = StoreSaveResult()
            // Every row ID first (without making the inserts' entries): rows may name rows inserted after them.
            for index in changes.inserts.indices {
                let entity = changes.inserts.entity(at: index)
                var table = state.tables[Self.key(entity)] ?? Table()
                let rowID = changes.inserts.rowID(at: index) ?? table.nextRowID
                table.nextRowID = max(table.nextRowID, rowID + 1)
                state.tables[Self.key(entity)] = table
                result.insertedRowIDs.append(rowID)
            }
            func resolve(_ references: [ObjectReference?]) -> [StoredReference?] {
                references.map { $0?.resolved(in: changes, insertedRowIDs: result.insertedRowIDs) }
            }
            for (insert, rowID) in zip(changes.inserts, result.insertedRowIDs) {
                state.tables[Self.key(insert.entity)]!.rows[rowID] = StoredRow(
                    entity: insert.entity, version: insert.version, values: insert.values,
                    references: insert.references.isEmpty ? nil : resolve(insert.references))
            }
            for update in changes.updates {
                let version = update.expectedVersion + 1
                state.tables[Self.key(update.entity)]!.rows[update.rowID] = StoredRow(
                    entity: update.entity, version: version, values: update.values,
                    references: update.references.isEmpty ? nil : resolve(update.references))
                result.updatedVersions.append(version)
            }
            for links in changes.links {
                let source = links.source.resolved(in: changes, insertedRowIDs: result.insertedRowIDs)
                let key = LinkKey(relationship: ObjectIdentifier(links.relationship), source: source.rowID)
                let members = links.members.map { $0.resolved(in: changes, insertedRowIDs: result.insertedRowIDs) }
                state.links[key] = members.isEmpty ? nil : members
            }
            for delete in changes.deletes {
                state.tables[Self.key(delete.entity)]?.rows[delete.rowID] = nil
                Self.removeLinks(of: delete, from: &state)
            }
            if recordsHistory {
                let record = HistoryRecord(changes, insertedRowIDs: result.insertedRowIDs, tombstones: tombstones)
                if !record.changes.isEmpty {
                    state.history.append((state.nextHistoryNumber, record))
                    state.nextHistoryNumber += 1
                }
            }
            return result
        }
    }

    /// Rows read so far by ``row(_:of:)`` and ``rows(of:includesSubentities:)``: a test hook.
    /// Removes a deleted row's links: its own join-table memberships and its place in other rows' (a link
    /// row of a join table is shared by both sides, so deleting it removes both).
    private static func removeLinks(of delete: StoreChanges.Delete, from state: inout State) {
        for relationship in delete.entity.relationships where relationship.isToMany {
            guard case .joinTable = relationship.storage else { continue }
            state.links[LinkKey(relationship: ObjectIdentifier(relationship), source: delete.rowID)] = nil
        }
        let root = delete.entity.rootEntity
        for key in Array(state.links.keys) {
            state.links[key]!.removeAll { $0.rowID == delete.rowID && $0.entity.rootEntity === root }
            if state.links[key]!.isEmpty { state.links[key] = nil }
        }
    }

    public var rowReads: Int { state.withLock { $0.rowReads } }

    /// Does nothing: the rows live as long as the store object.
    ///
    /// - Throws: never.
    public func close() throws {}
}
