import Foundation

/// Where a coordinator keeps rows: the Strata store (a directory, on the storage engine) or an
/// in-memory store. The coordinator and contexts never know which one they talk to.
///
/// Stores are shared by every context of a coordinator, from any thread: implementations are
/// thread-safe. Every method names rows by their hierarchy's table (the root entity) and row ID.
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's identity, part of every permanent object ID it hands out.
    var identifier: UUID { get }
    /// What kind of store this is.
    var type: PersistentStoreType { get }
    /// Metadata kept with the store (the model's version hash among it).
    var metadata: [String: String] { get }

    /// Replaces the application's keys of the metadata; the store's own keys keep their values
    /// (``PersistentStoreCoordinator/setMetadata(_:for:)``).
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the metadata cannot be written.
    func setMetadata(_ metadata: [String: String]) throws

    /// The row, or nil when it does not exist (or belongs to an entity outside `entity`'s hierarchy).
    ///
    /// - Parameters:
    ///   - rowID: the row's ID in the table of `entity`'s hierarchy.
    ///   - entity: the entity asked for; the row's own entity must be it or one of its subentities.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the row cannot be read or decoded.
    func row(_ rowID: UInt64, of entity: EntityDescription) throws -> StoredRow?

    /// The rows of several row IDs of `entity`'s hierarchy, read together (the rows of a batch of faults): in
    /// increasing row-ID order, without the rows that do not exist or belong to an entity outside `entity`'s
    /// hierarchy below it. A default implementation asks ``fetch(_:)`` for them (one query); the Strata store reads
    /// them in one walk of its table's tree.
    ///
    /// - Parameters:
    ///   - rowIDs: row IDs in the table of `entity`'s hierarchy, in any order.
    ///   - entity: the entity asked for; each row's own entity must be it or one of its subentities.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when a row cannot be read or decoded.
    func rows(withIDs rowIDs: [UInt64], of entity: EntityDescription) throws -> [(rowID: UInt64, row: StoredRow)]

    /// Reads the rows of several row IDs of `entity`'s hierarchy together, as ``rows(withIDs:of:)`` does, and hands
    /// each to `body` with its position in `rowIDs` as it is read: no array of the rows is made. A default
    /// implementation matches what ``rows(withIDs:of:)`` returns; the Strata store calls `body` from its walk.
    ///
    /// - Parameters:
    ///   - rowIDs: row IDs in the table of `entity`'s hierarchy, in increasing order; a row ID given more than once
    ///     is read once, for its first position.
    ///   - entity: the entity asked for; each row's own entity must be it or one of its subentities.
    ///   - body: called with the position in `rowIDs` of each row that exists and is of `entity` or one of its
    ///     subentities, and the row, in increasing row-ID order. The row is given up to `body` (`consuming`), which
    ///     keeps it without a copy.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when a row cannot be read or decoded, or what `body` throws.
    func forEachRow(
        withIDs rowIDs: [UInt64], of entity: EntityDescription,
        _ body: (_ position: Int, _ row: consuming StoredRow) throws -> Void
    ) throws

    /// Every row of `entity` (and of its subentities when asked), in row-ID order.
    ///
    /// - Parameters:
    ///   - entity: the entity to list.
    ///   - includesSubentities: whether rows of `entity`'s subentities are included.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when a row cannot be read or decoded.
    func rows(of entity: EntityDescription, includesSubentities: Bool) throws -> [(rowID: UInt64, row: StoredRow)]

    /// Answers a query without making objects: the rows (or IDs, values, or the count) of an entity that
    /// match a predicate, sorted and windowed as the request says. Stores evaluate predicates with
    /// StrataQuery, on their rows as stored, so that every store and the in-memory evaluation of managed
    /// objects agree.
    ///
    /// - Parameter request: the entity, predicate, sort keys, window and result kind.
    /// - Returns: what ``StoreFetchRequest/resultKind`` asks for, in result order.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the store cannot be read; `PredicateEvaluationError`
    ///   when the predicate cannot be evaluated on a row; `CancellationError` when
    ///   ``StoreFetchRequest/isCancelled`` says so.
    func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult

    /// The bytes of a binary value kept outside its row (``StoredRow/externalReferences``).
    /// - Throws: ``ObjectGraphError/storage(_:)`` when it cannot be read (a missing blob is corruption).
    func externalData(_ reference: UInt64) throws -> Data

    /// The objects `source` relates to through a to-many relationship, as saved: in the relationship's
    /// order when it is ordered, else by row ID. Reads link entries or index entries, never the related rows.
    ///
    /// - Parameters:
    ///   - relationship: a to-many relationship of `source`'s entity.
    ///   - source: a saved object of this store.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the store cannot be read.
    func relatedObjects(
        through relationship: RelationshipDescription, of source: StoredReference
    ) throws -> [StoredReference]

    /// Reserves `count` row IDs in `entity`'s table for objects that get permanent IDs before their save.
    ///
    /// - Parameters:
    ///   - entity: the entity whose hierarchy's table reserves the IDs.
    ///   - count: how many IDs to reserve, at least 1.
    /// - Returns: `count` row IDs no insert will be given, in increasing order.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the reservation cannot be written.
    func allocateRowIDs(for entity: EntityDescription, count: Int) throws -> [UInt64]

    /// The rows that hold `values` in the attributes of a uniqueness constraint: rows of the constraint's
    /// entity and its subentities, in row-ID order. A default implementation scans
    /// ``rows(of:includesSubentities:)``; the Strata store looks the values up in the constraint's index.
    ///
    /// - Parameters:
    ///   - constraint: a uniqueness constraint of the store's model.
    ///   - values: one non-nil value per constrained attribute, in the constraint's order.
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the store cannot be read.
    func rows(
        matching constraint: UniquenessConstraint, values: [AttributeValue]
    ) throws -> [(rowID: UInt64, row: StoredRow)]

    /// Checks that every update and delete still finds the row version it expects, without writing.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)``.
    func checkConflicts(_ changes: StoreChanges) throws

    /// Applies one save atomically: all of it or, when it throws, none of it.
    ///
    /// A context's save hands its inserted objects, and each insert's entry is made from its object as the store
    /// reads it (``StoreChanges/Inserts``): a store reads the inserts during this call, on the calling thread, writes
    /// each as it goes and keeps none of them; what the context needs afterwards is in the result. (The Strata store
    /// also hands each written row record to its object as it goes, which holds it in place of its values: the
    /// context completes that when the store returns and undoes it when the store throws.)
    ///
    /// - Returns: the inserts' row IDs (``InsertedRowIDs``), the updated rows' new versions, and the values written
    ///   outside their rows.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)`` when a row's version is not the expected one.
    func save(_ changes: StoreChanges) throws -> StoreSaveResult

    /// Whether saves record a transaction in the store's persistent history.
    var recordsPersistentHistory: Bool { get }

    /// The history transactions a query wants, oldest first (empty when the store records no history).
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the history cannot be read.
    func fetchHistory(_ query: HistoryQuery) throws -> [PersistentHistoryTransaction]

    /// Deletes the history transactions numbered below `number`, or committed before `date`.
    ///
    /// - Returns: how many were deleted.
    /// - Throws: ``ObjectGraphError/storage(_:)``.
    func deleteHistory(beforeNumber number: UInt64?, beforeDate date: Date?) throws -> Int

    /// The token of the newest history transaction, nil when there is none.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)``.
    func currentHistoryToken() throws -> PersistentHistoryToken?

    /// Rows read from the underlying storage so far (the row cache's misses land here): a test hook.
    var rowReads: Int { get }

    /// Releases the store's resources; the coordinator calls it when the store is removed.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the store cannot be closed cleanly.
    func close() throws
}

/// The kinds of persistent store: the two of this module, and stores of other modules.
public enum PersistentStoreType: Sendable, Equatable, CustomStringConvertible {
    /// A Strata store: a directory on disk, crash-safe, on the StrataStorage engine.
    case strata
    /// Rows in memory only, gone when the store is removed.
    case inMemory
    /// A store of another module, by the name its metadata records (the PostgreSQL store of module
    /// `StrataPostgres` is `custom("PostgreSQL")`). The coordinator adds it as it is
    /// (`coordinator.addPersistentStore(store)`).
    case custom(String)

    /// The type's name as recorded in store metadata: `Strata` or `InMemory`.
    public var description: String {
        switch self {
        case .strata: "Strata"
        case .inMemory: "InMemory"
        case .custom(let name): name
        }
    }
}

/// Metadata keys every store records.
public enum PersistentStoreMetadataKey {
    /// The key of the store's type, ``PersistentStoreType/description`` (`Strata` or `InMemory`).
    public static let storeType = "StoreType"
    /// The key of the store's UUID as a string: the ``PersistentStore/identifier`` in every object ID it issues.
    public static let storeUUID = "StoreUUID"
    /// The key of the ``ManagedObjectModel/versionHash`` of the model the store was created with. A Strata
    /// store refuses to open with a model of another hash.
    public static let modelVersionHash = "ModelVersionHash"
    /// The key of the version hashes of the models a store was written with before its current one, oldest
    /// first, comma-separated: what each migration added.
    public static let modelVersionHistory = "ModelVersionHistory"
}
