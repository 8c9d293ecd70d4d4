import Foundation
import StrataLock
import Synchronization

/// Connects contexts to persistent stores: it holds the model, the stores and the row cache they share.
///
/// One coordinator serves any number of contexts on any threads. Add a Strata store (a directory) or an
/// in-memory store; several at once are allowed, and an inserted object goes to the first store
/// (or the one ``ManagedObjectContext/assign(_:to:)`` names).
///
/// Several coordinators may have one store, as Core Data's may open one SQLite file: coordinators that add a
/// Strata store of the same directory share its storage engine (and the lock that serializes its writes), each
/// with its own row cache; a save through one is seen by the others' contexts after a refresh or a merge
/// (``ManagedObjectContext/mergeChanges(fromContextDidSave:)``), and optimistic locking detects conflicts
/// between them as between contexts of one coordinator.
///
/// For example:
/// ```swift
/// let coordinator = PersistentStoreCoordinator(model: model)
/// try coordinator.addPersistentStore(.strata(directory: "/var/lib/app/company"))
/// let context = ManagedObjectContext(coordinator: coordinator)
/// ```
public final class PersistentStoreCoordinator: Sendable {
    /// How to make a store.
    public enum StoreDescription: Sendable {
        /// A Strata store in a directory (created when missing), with engine settings.
        case strata(directory: String, configuration: StrataStoreConfiguration = StrataStoreConfiguration())
        /// An in-memory store.
        case inMemory
    }

    /// The model every store and context of the coordinator uses; stores record its version hash.
    public let model: ManagedObjectModel
    let rowCache = RowCache()
    /// The contexts that merge every save of this coordinator's other contexts.
    let saveBroadcaster = SaveBroadcaster()
    private let stores = Lock<[any PersistentStore]>([])
    private let fetchRowCacheLimitValue = Atomic<Int>(PersistentStoreCoordinator.defaultFetchRowCacheLimit)

    /// The default ``fetchRowCacheLimit``: 32,768 rows, a few megabytes of cached rows per fetch.
    public static let defaultFetchRowCacheLimit = 32_768

    /// How many of a fetch's results at most keep their rows in the row cache when the fetch returns faults
    /// (``FetchRequest/returnsObjectsAsFaults``, ``FetchRequest/includesPropertyValues``):
    /// ``defaultFetchRowCacheLimit`` unless set.
    ///
    /// The first results in the fetch's order fill from the cached rows when they fire. The others are registered
    /// as faults that hold no row, as ``ManagedObjectContext/object(with:)`` makes them: each one that fires reads
    /// its row from the store then, as it is committed at that moment. So a fetch of a million faults holds a
    /// million objects, not a million rows as well (about 140 bytes more a fault). To walk a large result, give
    /// the request a ``FetchRequest/fetchBatchSize``: its faults fire a batch at a time. A fetch that fills its
    /// objects (``FetchRequest/returnsObjectsAsFaults`` off) reads every row whatever the limit.
    public var fetchRowCacheLimit: Int {
        get { fetchRowCacheLimitValue.load(ordering: .relaxed) }
        set {
            precondition(newValue >= 0, "fetchRowCacheLimit cannot be negative")
            fetchRowCacheLimitValue.store(newValue, ordering: .relaxed)
        }
    }

    /// Creates a coordinator with no store yet; add one with ``addPersistentStore(_:)->_``
    /// before saving.
    ///
    /// - Parameter model: the model of every object the coordinator's contexts manage.
    public init(model: ManagedObjectModel) {
        self.model = model
    }

    /// The stores, in the order they were added.
    public var persistentStores: [any PersistentStore] { stores.withLock { $0 } }

    /// Opens (or creates) a store and adds it.
    /// A Strata store written with another model is migrated first when its configuration's
    /// ``StrataStoreConfiguration/migration`` asks for it (lightweight migration, ``MappingModel``); a migration a
    /// crash interrupted is finished or discarded before the store opens.
    ///
    /// - Throws: ``ObjectGraphError/incompatibleModel(storeHash:modelHash:)`` when the store was written with
    ///   another model and no source models were given; ``MigrationError`` when they were and the store cannot be
    ///   migrated (or migration was not requested); ``ObjectGraphError/storage(_:)`` when the engine cannot open it.
    @discardableResult
    public func addPersistentStore(_ description: StoreDescription) throws -> any PersistentStore {
        let store: any PersistentStore
        switch description {
        case .strata(let directory, let configuration):
            try StoreMigrator.recover(directory: directory, fileSystem: configuration.fileSystem)
            do {
                store = try StrataStore(directory: directory, model: model, configuration: configuration)
            } catch ObjectGraphError.incompatibleModel(let storeHash, _)
                where !configuration.migration.sourceModels.isEmpty
            {
                try migrate(directory: directory, storeHash: storeHash, options: configuration)
                store = try StrataStore(directory: directory, model: model, configuration: configuration)
            }
        case .inMemory:
            store = InMemoryStore(model: model)
        }
        addPersistentStore(store)
        return store
    }

    /// Migrates the store at `directory`, written with the model of hash `storeHash`, to ``model``, step by step:
    /// a custom mapping from the store's current version when the options have one, else the inferred mapping to
    /// ``model`` (throwing before anything is written when it cannot be inferred); each step runs
    /// ``StoreMigrator``.
    private func migrate(directory: String, storeHash: String, options configuration: StrataStoreConfiguration) throws {
        let options = configuration.migration
        try options.forEachStep(from: storeHash, to: model) { source, mapping in
            let migrator = StoreMigrator(
                directory: directory, source: source, destination: mapping.destinationModel, mapping: mapping,
                configuration: configuration)
            try migrator.migrate(progress: options.progress)
        }
    }

    /// Adds a store made elsewhere (it must have been made for this coordinator's model). An
    /// ``InMemoryStore`` may be added to several coordinators, as one Strata store directory may: a save
    /// through one coordinator is seen by the others' contexts after a refresh or a merge.
    public func addPersistentStore(_ store: any PersistentStore) {
        (store as? any RowCacheSharing)?.rowCacheGroup.attach(rowCache)
        stores.withLock { $0.append(store) }
    }

    /// Removes a store and closes it. Objects of its rows become inaccessible.
    ///
    /// - Throws: what the store's ``PersistentStore/close()`` throws (``ObjectGraphError/storage(_:)`` for a
    ///   Strata store whose final checkpoint fails); the store is removed even then.
    public func removePersistentStore(_ store: any PersistentStore) throws {
        stores.withLock { $0.removeAll { $0 === store } }
        (store as? any RowCacheSharing)?.rowCacheGroup.detach(rowCache)
        rowCache.invalidate(store: store.identifier)
        try store.close()
    }

    /// The store with this identifier.
    public func persistentStore(for identifier: UUID) -> (any PersistentStore)? {
        stores.withLock { $0.first { $0.identifier == identifier } }
    }

    /// The store new objects of `entity` go to: the first one.
    func defaultStore(for entity: EntityDescription) throws -> any PersistentStore {
        guard let store = stores.withLock({ $0.first }) else { throw ObjectGraphError.noStore(entity: entity.name) }
        return store
    }

    func store(for id: ManagedObjectID) throws -> any PersistentStore {
        guard let identifier = id.storeIdentifier else { throw ObjectGraphError.noStore(entity: id.entity.name) }
        guard let store = persistentStore(for: identifier) else { throw ObjectGraphError.unknownStore(identifier) }
        return store
    }

    /// The metadata of a store.
    public func metadata(for store: any PersistentStore) -> [String: String] { store.metadata }

    /// The object ID a URI names (``ManagedObjectID/uriRepresentation()``); permanent IDs only.
    ///
    /// - Throws: ``ObjectGraphError/invalidURI(_:)`` when the URI is not of the `x-strata` form, names a
    ///   temporary ID, an entity the model does not have, or a store the coordinator does not have.
    public func managedObjectID(forURIRepresentation uri: URL) throws -> ManagedObjectID {
        guard uri.scheme == "x-strata", let host = uri.host, let store = UUID(uuidString: host) else {
            throw ObjectGraphError.invalidURI(uri)
        }
        let parts = uri.path.split(separator: "/")
        guard parts.count == 2, let entity = model.entity(named: String(parts[0])), parts[1].hasPrefix("p"),
            let rowID = UInt64(parts[1].dropFirst()), persistentStore(for: store) != nil
        else { throw ObjectGraphError.invalidURI(uri) }
        return ManagedObjectID(entity: entity, storeIdentifier: store, rowID: rowID)
    }

    // MARK: - Rows

    /// The row of a permanent ID: from the row cache when it holds one no older than `maximumAge`, else from
    /// the store (which refreshes the cache). `retaining`: the caller's object will hold the cached row (see
    /// ``RowCache``).
    func row(for id: ManagedObjectID, maximumAge: TimeInterval?, retaining: Bool) throws -> StoredRow? {
        let key = RowCache.Key(id)
        if let row = rowCache.row(for: key, maximumAge: maximumAge, retaining: retaining) { return row }
        let row = try store(for: id).row(id.rowID!, of: id.entity)
        if let row { rowCache.store(row, for: key, retaining: retaining) }
        return row
    }

    /// Statistics of the row cache: entries (one per ID some context holds), hits and misses.
    public var rowCacheStatistics: (entries: Int, cachedRows: Int, hits: Int, misses: Int) {
        let (hits, misses) = rowCache.counters
        return (rowCache.count, rowCache.cachedRowCount, hits, misses)
    }
}
