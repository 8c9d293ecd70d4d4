import Foundation
import StrataQuery

extension ManagedObjectContext {
    // MARK: - Fetching

    /// Fetches what a request describes: managed objects (registered, uniqued: an object already registered
    /// is returned as it is in memory, never overwritten by the store's values), object IDs, dictionaries or
    /// the count, as ``FetchRequest/resultType`` says.
    ///
    /// Stores evaluate the predicate on their rows without making objects for rows that do not match; with
    /// ``FetchRequest/includesPendingChanges`` (the default) unsaved inserts that match are added, deleted
    /// objects removed and updated objects matched on their current values, in memory. Such a fetch first calls
    /// ``processPendingChanges()``, as Core Data's does, so that delete rules have run.
    ///
    /// For example:
    /// ```swift
    /// let request = FetchRequest<Employee>(entityName: "Employee")
    /// try request.setPredicate(format: "salary BETWEEN {%d, %d}", 100_000, 101_800)
    /// let employees = try context.fetch(request)
    /// ```
    ///
    /// - Parameter request: what to fetch.
    /// - Returns: the results, in the request's order.
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``, ``ObjectGraphError/storage(_:)``,
    ///   ``FetchRequestError`` for options that do not go together, `PredicateEvaluationError` when the
    ///   predicate or a sort key cannot be evaluated.
    public func fetch<Result>(_ request: FetchRequest<Result>) throws -> [Result] {
        checkConfinement()
        let entity = try fetchEntity(of: request)
        // As in Core Data, a fetch that sees pending changes first ends the event (delete rules run).
        if request.includesPendingChanges, request.resultType != .dictionary { try processPendingChanges() }
        switch request.resultType {
        case .managedObject:
            return Self.cast(try objects(for: request, entity: entity), to: Result.self)
        case .managedObjectID:
            return try matches(
                of: request, entity: entity, kind: .objectIDs, includesPendingChanges: request.includesPendingChanges
            ).map { Self.cast($0.id, to: Result.self) }
        case .dictionary:
            let dictionaries = try dictionaries(for: request, entity: entity)
            if Result.self == [String: Any].self {
                return dictionaries.map { Self.cast($0.compactMapValues(\.objectValue), to: Result.self) }
            }
            return dictionaries.map { Self.cast($0, to: Result.self) }
        case .count:
            return [Self.cast(try count(for: request), to: Result.self)]
        }
    }

    /// How many results ``fetch(_:)`` would return (for a count or dictionary request: how many objects
    /// match), without making objects: a store counts without decoding rows, and one that needs no
    /// predicate answers from the count it keeps.
    ///
    /// - Throws: what ``fetch(_:)`` throws.
    public func count<Result>(for request: FetchRequest<Result>) throws -> Int {
        checkConfinement()
        let entity = try fetchEntity(of: request)
        if request.resultType == .dictionary {
            return try fetch(request).count
        }
        if request.includesPendingChanges { try processPendingChanges() }
        let stores = searchedStores(of: request)
        let pending = request.includesPendingChanges && hasPendingChanges(concerning: entity, request)
        guard stores.count == 1, !pending else {
            return try matches(
                of: request, entity: entity, kind: .objectIDs, includesPendingChanges: request.includesPendingChanges
            ).count
        }
        var storeRequest = StoreFetchRequest(entity: entity)
        storeRequest.includesSubentities = request.includesSubentities
        storeRequest.predicate = request.predicate
        storeRequest.fetchOffset = request.fetchOffset
        storeRequest.fetchLimit = request.fetchLimit
        storeRequest.resultKind = .count
        return try stores[0].fetch(storeRequest).count
    }

    /// Runs a fetch request in the stores only: no object is registered, no row cached, pending changes
    /// are ignored. Managed-object requests return their objects' IDs.
    ///
    /// - Parameter request: what to fetch.
    /// - Returns: the IDs, dictionaries or count.
    /// - Throws: what ``fetch(_:)`` throws.
    public func execute<Result>(_ request: FetchRequest<Result>) throws -> FetchResult {
        let entity = try fetchEntity(of: request)
        switch request.resultType {
        case .managedObject, .managedObjectID:
            return .objectIDs(
                try matches(of: request, entity: entity, kind: .objectIDs, includesPendingChanges: false).map(\.id))
        case .dictionary:
            return .dictionaries(try dictionaries(for: request, entity: entity))
        case .count:
            let saved = request.includesPendingChanges
            request.includesPendingChanges = false
            defer { request.includesPendingChanges = saved }
            return .count(try count(for: request))
        }
    }

    // MARK: - Managed objects

    /// The objects of a managed-object request: registered (a fault or filled), prefetched as asked.
    func objects<Result>(
        for request: FetchRequest<Result>, entity: EntityDescription, isCancelled: (@Sendable () -> Bool)? = nil
    ) throws -> [ManagedObject] {
        let idsOnly = !request.includesPropertyValues || request.fetchBatchSize > 0
        // Faults keep the rows of the first results only (``PersistentStoreCoordinator/fetchRowCacheLimit``);
        // objects to fill need every row.
        let rowLimit = request.returnsObjectsAsFaults ? coordinator.fetchRowCacheLimit : nil
        let kind: StoreFetchRequest.ResultKind = idsOnly ? .objectIDs : .rows
        let populate = !request.returnsObjectsAsFaults
        var objects: [ManagedObject] = []
        if let (result, store) = try soleStoreResult(
            of: request, entity: entity, kind: kind, rowLimit: rowLimit, isCancelled: isCancelled)
        {
            // The usual fetch: the store's results become objects as they are, with no array of matches between
            // (each match copied its ID and row in and out: about 500 instructions a result, W4b.graph).
            objects = self.objects(for: result, of: store, populate: populate)
        } else {
            let found = try matches(
                of: request, entity: entity, kind: kind, includesPendingChanges: request.includesPendingChanges,
                rowLimit: rowLimit, isCancelled: isCancelled)
            // Room for every result at once: grown one insert at a time, the registry was rehashed about
            // log2(results) times during a fetch.
            registry.reserveCapacity(registry.count + found.count)
            // The rows of new objects go into the row cache together, under one lock.
            var rows = RowCache.Batch(coordinator.rowCache, expected: found.count)
            // A loop rather than `map`: the batch, captured `inout` by a closure, was checked for exclusive access at
            // run time on every result.
            objects.reserveCapacity(found.count)
            for match in found { objects.append(object(for: match, populate: populate, caching: &rows)) }
            rows.record()
        }
        // Core Data's batched array: firing one fault of a batch fills the batch with one store query.
        if request.fetchBatchSize > 0, request.includesPropertyValues {
            makeFaultBatches(objects, size: request.fetchBatchSize)
        }
        try prefetch(request.relationshipKeyPathsForPrefetching, of: objects)
        return objects
    }

    /// The registered objects of one store's results, in their order, as ``object(for:populate:caching:)`` makes
    /// each: the rows of new objects go into the row cache together.
    private func objects(for result: StoreFetchResult, of store: StoreIdentity, populate: Bool) -> [ManagedObject] {
        let count = result.references.count
        registry.reserveCapacity(registry.count + count)
        var rows = RowCache.Batch(coordinator.rowCache, expected: count)
        var objects: [ManagedObject] = []
        objects.reserveCapacity(count)
        // The rows of the first results (``StoreFetchRequest/rowLimit``), then IDs alone.
        let withRows = min(result.rows.count, count)
        for offset in 0..<withRows {
            let reference = result.references[offset]
            let id = ManagedObjectID(entity: reference.entity, store: store, rowID: reference.rowID)
            objects.append(object(for: id, row: result.rows[offset], populate: populate, caching: &rows))
        }
        for offset in withRows..<count {
            let reference = result.references[offset]
            let id = ManagedObjectID(entity: reference.entity, store: store, rowID: reference.rowID)
            objects.append(object(with: id))
        }
        rows.record()
        return objects
    }

    /// The registered object of a match: the pending object, the registered one, or a new one from the row
    /// (a fault, or filled) or from the ID alone (a fault whose row is not cached).
    func object(for match: FetchMatch, populate: Bool) -> ManagedObject {
        if let object = match.object { return object }
        if let row = match.row { return object(for: match.id, row: row, populate: populate) }
        return object(with: match.id)
    }

    /// ``object(for:populate:)``, with the row of a new object added to `rows` for the caller to cache.
    func object(for match: FetchMatch, populate: Bool, caching rows: inout RowCache.Batch) -> ManagedObject {
        if let object = match.object { return object }
        if let row = match.row { return object(for: match.id, row: row, populate: populate, caching: &rows) }
        return object(with: match.id)
    }

    /// Whether unsaved inserts, updates or deletes of the request's entities exist.
    func hasPendingChanges<Result>(concerning entity: EntityDescription, _ request: FetchRequest<Result>) -> Bool {
        func includes(_ candidate: EntityDescription) -> Bool {
            request.includesSubentities ? candidate.isKind(of: entity) : candidate === entity
        }
        return inserted.objects.contains { includes($0.entity) } || updated.values.contains { includes($0.entity) }
            || deleted.values.contains { includes($0.entity) } || parent?.hasChanges == true
    }

    /// The request's entity, after checking that its options go together.
    func fetchEntity<Result>(of request: FetchRequest<Result>) throws -> EntityDescription {
        guard let entity = coordinator.model.entity(named: request.entityName) else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        if request.resultType != .dictionary {
            if request.propertiesToGroupBy != nil {
                throw FetchRequestError.requiresDictionaryResults(option: "propertiesToGroupBy")
            }
            if request.havingPredicate != nil {
                throw FetchRequestError.requiresDictionaryResults(option: "havingPredicate")
            }
            if request.propertiesToFetch?.contains(where: { if case .expression = $0 { true } else { false } }) == true
            {
                throw FetchRequestError.requiresDictionaryResults(option: "an expression in propertiesToFetch")
            }
        } else if request.havingPredicate != nil, request.propertiesToGroupBy?.isEmpty ?? true {
            throw FetchRequestError.havingRequiresGroupBy
        }
        return entity
    }

    /// Objects as the request's result type, each class checked once: ``cast(_:to:)`` for each object boxed it in an
    /// `Any` and cast it back in unspecialized code (1,300 instructions a result).
    static func cast<Result>(_ objects: [ManagedObject], to type: Result.Type) -> [Result] {
        // A protocol or an existential is not laid out as a class reference: each object is cast.
        guard Result.self is ManagedObject.Type else { return objects.map { cast($0, to: Result.self) } }
        var results: [Result] = []
        results.reserveCapacity(objects.count)
        var checked: ObjectIdentifier?
        for object in objects {
            // A fetch's objects are mostly of one class: a class seen before is known to be a `Result`.
            let objectClass = ObjectIdentifier(Swift.type(of: object))
            if objectClass != checked {
                results.append(cast(object, to: Result.self))
                checked = objectClass
            } else {
                results.append(unsafeBitCast(object, to: Result.self))
            }
        }
        return results
    }

    static func cast<Result>(_ value: Any, to type: Result.Type) -> Result {
        guard let typed = value as? Result else {
            if let object = value as? ManagedObject {
                preconditionFailure(
                    "\(object.entity.name) objects are \(Swift.type(of: object)), not \(Result.self): register the class"
                )
            }
            preconditionFailure(
                "a fetch request of \(Result.self) returns \(Swift.type(of: value)): set its resultType")
        }
        return typed
    }

    // MARK: - Prefetching

    /// Fills the objects at each relationship key path of `objects`: step by step, the related objects of
    /// every object are gathered (to-ones from the cached rows, to-manys through the store's indexes), and
    /// those not yet filled are read with one store query per store and entity hierarchy.
    func prefetch(_ keyPaths: [String], of objects: [ManagedObject]) throws {
        for keyPath in keyPaths {
            var current = objects
            for step in keyPath.split(separator: ".") {
                var next: [ManagedObject] = []
                var seen = Set<ObjectIdentifier>()
                for object in current {
                    guard let relationship = object.entity.relationshipsByName[String(step)] else {
                        throw FetchRequestError.unknownKeyPath(keyPath, entity: object.entity.name)
                    }
                    let related =
                        relationship.isToMany
                        ? try object.toManyValue(relationship).objects
                        : try object.toOneValue(relationship).map { [$0] } ?? []
                    for member in related where seen.insert(ObjectIdentifier(member)).inserted { next.append(member) }
                }
                try fill(next.filter { $0.isFault })
                current = next
            }
        }
    }

    /// Fills faults with their rows, one store query per store and entity hierarchy.
    func fill(_ faults: [ManagedObject]) throws {
        var groups: [[ObjectIdentifier]: [ManagedObject]] = [:]
        for fault in faults where !fault.objectID.isTemporaryID {
            let store = try coordinator.store(for: fault.objectID)
            groups[[ObjectIdentifier(store), ObjectIdentifier(fault.entity.rootEntity)], default: []].append(fault)
        }
        for members in groups.values {
            let store = try coordinator.store(for: members[0].objectID)
            var request = StoreFetchRequest(entity: members[0].entity.rootEntity)
            request.rowIDs = members.map { $0.objectID.rowID! }
            let result = try store.fetch(request)
            var rows = RowCache.Batch(coordinator.rowCache, expected: result.rows.count)
            for (reference, row) in zip(result.references, result.rows) {
                let id = ManagedObjectID(
                    entity: reference.entity, storeIdentifier: store.identifier, rowID: reference.rowID)
                _ = object(for: id, row: row, populate: true, caching: &rows)
            }
            rows.record()
        }
    }
}

extension ManagedObjectContext {
    /// Reads the rows of faults into the coordinator's row cache, one store read per store and entity hierarchy
    /// (``PersistentStore/forEachRow(withIDs:of:_:)``: the Strata store reads them in one walk of its table's tree,
    /// handing each row over as it decodes it), without filling them: each fault holds its row's entry from then on,
    /// as a fetched fault does, and fills from it when it fires. Faults that hold a row already are not read again; a
    /// fault whose row is gone gets none (it finds out when it fires).
    ///
    /// - Parameters:
    ///   - faults: the faults, grouped by store and hierarchy as they were added (``FaultGroups/add(_:)``).
    ///   - batch: the to-many's batch of `faults`, which keeps each row read for its fault
    ///     (``FaultBatch/row(for:in:)``), or nil.
    func cacheRows(of faults: FaultGroups, keepingRowsIn batch: FaultBatch? = nil) throws {
        let groups = faults.groups
        let keeping = batch != nil
        for var group in groups {
            guard let store = coordinator.persistentStore(for: group.store.uuid) else {
                throw ObjectGraphError.unknownStore(group.store.uuid)
            }
            group.sortByRowID()
            let (rowIDs, members) = (group.rowIDs, group.members)
            // The rows found and their row IDs, as the store decodes them (no matching pass), then recorded in the
            // group's one table at once: `members` holds their objects meanwhile, so no ``RowCache/Batch`` (a key
            // and a retained object a row, its table found again for each) is needed.
            // Optional: the batch takes each row out for its member (``FaultBatch/row(for:in:)``).
            var rows: [StoredRow?] = []
            var found: [UInt64] = []
            rows.reserveCapacity(rowIDs.count)
            found.reserveCapacity(rowIDs.count)
            // The objects whose rows `batch` keeps, by identity (no retain), at the rows' positions.
            var kept: [ObjectIdentifier] = []
            if batch != nil { kept.reserveCapacity(rowIDs.count) }
            var failure: (any Error)?
            do {
                try store.forEachRow(withIDs: rowIDs, of: group.root) { position, row in
                    rows.append(row)
                    found.append(rowIDs[position])
                    members[position].holdsCachedRow = true
                    if keeping { kept.append(ObjectIdentifier(members[position])) }
                }
            } catch {
                failure = error
            }
            // Recorded even when the read failed part way: the members marked as holding their rows do.
            let (generation, date) = coordinator.rowCache.storeRetaining(
                rows, rowIDs: found, store: group.store.uuid, root: group.root)
            batch?.keep(rows, of: kept, generation: generation, at: date)
            if let failure { throw failure }
        }
    }
}

/// The faults whose rows ``ManagedObjectContext/cacheRows(of:keepingRowsIn:)`` reads, grouped by store and entity
/// hierarchy as they are added: a to-many's batch adds its members as it finds them, with no array of them in
/// between (each member was retained into one and released again, about 100 instructions a member, W4c.graph).
struct FaultGroups {
    /// Usually one: a to-many's members are all of one store and hierarchy.
    fileprivate private(set) var groups: [FaultGroup] = []
    /// How many faults were added (those left out included).
    private(set) var count = 0
    /// Room for how many faults the first group makes.
    private let capacity: Int
    // The group of the fault before, and its entity, compared through these (a hierarchy's root is looked up only
    // when the entity changes).
    private var current = -1
    // Identities, not references: a fault's unowned store made strong to be compared was retained and released (an
    // eighth of adding it, W4c.graph).
    private var currentStore: ObjectIdentifier?
    private var currentEntity: ObjectIdentifier?

    /// Groups for up to `capacity` faults (more may be added).
    init(capacity: Int) { self.capacity = capacity }

    /// Adds `fault`, a fault, to its group: left out when it holds a row already or has a temporary ID.
    mutating func add(_ fault: ManagedObject) {
        count += 1
        // The ID's fields read in place: a copy of the ID retained and released its entity.
        guard !fault.holdsCachedRow, !fault.objectID.isTemporaryID else { return }
        if ObjectIdentifier(fault.objectID.store) != currentStore
            || ObjectIdentifier(fault.objectID.entity) != currentEntity
        {
            enterGroup(of: fault.objectID)
        }
        groups[current].append(fault, rowID: fault.objectID.number)
    }

    /// Makes the group of `id`'s store and hierarchy the current one, made if there is none yet.
    private mutating func enterGroup(of id: ManagedObjectID) {
        let root = id.entity.rootEntity
        if let index = groups.firstIndex(where: { $0.store === id.store && $0.root === root }) {
            current = index
        } else {
            // Usually the only group: room for every fault at once.
            groups.append(FaultGroup(store: id.store, root: root, capacity: capacity))
            current = groups.count - 1
        }
        (currentStore, currentEntity) = (ObjectIdentifier(id.store), ObjectIdentifier(id.entity))
    }
}

/// The faults of one store and entity hierarchy that ``ManagedObjectContext/cacheRows(of:keepingRowsIn:)`` reads
/// together: their row IDs in one array, as the store takes them, and the faults at the same positions.
private struct FaultGroup {
    let store: StoreIdentity
    let root: EntityDescription
    private(set) var rowIDs: [UInt64] = []
    private(set) var members: [ManagedObject] = []

    init(store: StoreIdentity, root: EntityDescription, capacity: Int) {
        (self.store, self.root) = (store, root)
        rowIDs.reserveCapacity(capacity)
        members.reserveCapacity(capacity)
    }

    mutating func append(_ fault: ManagedObject, rowID: UInt64) {
        rowIDs.append(rowID)
        members.append(fault)
    }

    /// Puts the faults in increasing row-ID order, as the store reads them (a to-many's usually are already).
    mutating func sortByRowID() {
        guard !rowIDs.indices.dropFirst().allSatisfy({ rowIDs[$0 - 1] < rowIDs[$0] }) else { return }
        let order = rowIDs.indices.sorted { rowIDs[$0] < rowIDs[$1] }
        (rowIDs, members) = (order.map { rowIDs[$0] }, order.map { members[$0] })
    }
}

/// What ``ManagedObjectContext/execute(_:)-(FetchRequest<Result>)`` returns: the stores' answer, with no
/// object registered.
public enum FetchResult: Sendable {
    /// The matching objects' IDs, in the request's order.
    case objectIDs([ManagedObjectID])
    /// Dictionary results.
    case dictionaries([[String: QueryValue]])
    /// The number of matches.
    case count(Int)
}
