import Foundation
import StrataQuery

/// One result of a fetch before it becomes what the request returns: a row from a store, or a pending
/// object of the context, with what orders it among the others.
struct FetchMatch {
    /// The object's ID (temporary for an unsaved insert).
    var id: ManagedObjectID
    /// The row, when the store returned it.
    var row: StoredRow?
    /// The row's version, when the store returned it.
    var version: UInt64 = 0
    /// The pending object itself.
    var object: ManagedObject?
    /// The values of the request's sort keys.
    var sortValues: [QueryValue] = []
    /// Row order: the store's position then the row ID; unsaved inserts after every store, in insertion order.
    var position: (store: Int, row: UInt64)

    /// Whether `self` comes before `other` by the sort keys, then by row order.
    func precedes(_ other: FetchMatch, by keys: [SortKey]) -> Bool {
        if !keys.isEmpty {
            switch keys.compare(values: sortValues, other.sortValues) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: break
            }
        }
        return position < other.position
    }
}

extension ManagedObjectContext {
    /// The matches of a request across every store, with the context's pending changes folded in when
    /// the request includes them, sorted and windowed.
    ///
    /// When nothing pending concerns the entity and there is one store, the store applies the window itself
    /// (it can stop reading early); otherwise every store returns all its matches with their sort values and
    /// the window is applied here. With `rowLimit`, each store returns the rows of that many of its matches at
    /// most (``StoreFetchRequest/rowLimit``): the others come without one.
    func matches<Result>(
        of request: FetchRequest<Result>, entity: EntityDescription, kind: StoreFetchRequest.ResultKind,
        includesPendingChanges: Bool, rowLimit: Int? = nil, isCancelled: (@Sendable () -> Bool)? = nil
    ) throws -> [FetchMatch] {
        let stores = searchedStores(of: request)
        func includes(_ candidate: EntityDescription) -> Bool {
            request.includesSubentities ? candidate.isKind(of: entity) : candidate === entity
        }
        var changed = Set<ManagedObjectID>()
        var pendingObjects: [ManagedObject] = []
        if includesPendingChanges {
            for object in updated.values where includes(object.entity) {
                changed.insert(object.objectID)
                pendingObjects.append(object)
            }
            for object in deleted.values where includes(object.entity) { changed.insert(object.objectID) }
            pendingObjects += inserted.objects.filter { includes($0.entity) }
            // A child context sees its ancestors' unsaved changes, through its own objects.
            let ancestors = ancestorsPendingChanges()
            for id in ancestors.deleted where includes(id.entity) { changed.insert(id) }
            for id in ancestors.changed where includes(id.entity) && !changed.contains(id) {
                changed.insert(id)
                let object = object(with: id)
                if !object.isDeleted { pendingObjects.append(object) }
            }
        }
        let merges = stores.count > 1 || !changed.isEmpty || !pendingObjects.isEmpty
        let storeRequest = self.storeRequest(
            of: request, entity: entity, kind: kind, merges: merges, rowLimit: rowLimit, isCancelled: isCancelled)
        var matches: [FetchMatch] = []
        for (index, store) in stores.enumerated() {
            let result = try store.fetch(storeRequest)
            matches.reserveCapacity(matches.count + result.references.count)
            let identity = StoreIdentity.interned(store.identifier)
            for (offset, reference) in result.references.enumerated() {
                let id = ManagedObjectID(entity: reference.entity, store: identity, rowID: reference.rowID)
                if merges, changed.contains(id) { continue }
                matches.append(
                    FetchMatch(
                        id: id, row: offset < result.rows.count ? result.rows[offset] : nil,
                        version: result.versions[offset],
                        sortValues: result.sortValues.isEmpty ? [] : result.sortValues[offset],
                        position: (index, reference.rowID)))
            }
        }
        guard merges else { return matches }
        for object in pendingObjects where isInSearchedStores(object, stores: stores, request: request) {
            if let predicate = request.predicate, !(try predicate.evaluate(with: object)) { continue }
            let position = fetchPosition(of: object, among: stores)
            var sortValues: [QueryValue] = []
            for key in request.sortKeys { sortValues.append(try key.value(of: object)) }
            matches.append(FetchMatch(id: object.objectID, object: object, sortValues: sortValues, position: position))
        }
        let keys = request.sortKeys
        matches.sort { $0.precedes($1, by: keys) }
        var window = matches.dropFirst(min(request.fetchOffset, matches.count))
        if request.fetchLimit > 0 { window = window.prefix(request.fetchLimit) }
        return Array(window)
    }
}

extension ManagedObjectContext {
    /// What each store is asked for a request: with `merges`, every match with its sort values (the window is applied
    /// after the merge); without, the window too (the store can stop reading early).
    func storeRequest<Result>(
        of request: FetchRequest<Result>, entity: EntityDescription, kind: StoreFetchRequest.ResultKind, merges: Bool,
        rowLimit: Int?, isCancelled: (@Sendable () -> Bool)?
    ) -> StoreFetchRequest {
        var storeRequest = StoreFetchRequest(entity: entity)
        storeRequest.includesSubentities = request.includesSubentities
        storeRequest.predicate = request.predicate
        storeRequest.sortKeys = request.sortKeys
        storeRequest.resultKind = kind
        storeRequest.rowLimit = rowLimit
        storeRequest.isCancelled = isCancelled
        if merges {
            storeRequest.returnsSortValues = !request.sortKeys.isEmpty
        } else {
            storeRequest.fetchOffset = request.fetchOffset
            storeRequest.fetchLimit = request.fetchLimit
        }
        return storeRequest
    }

    /// The one store's answer to a request when nothing needs merging into it: the request searches one store and,
    /// when it includes pending changes, none concerns its entities (``hasPendingChanges(concerning:_:)``, which
    /// errs towards true). The store applies the sort and the window. Nil when the stores' matches must be merged
    /// (``matches(of:entity:kind:includesPendingChanges:rowLimit:isCancelled:)``).
    func soleStoreResult<Result>(
        of request: FetchRequest<Result>, entity: EntityDescription, kind: StoreFetchRequest.ResultKind,
        rowLimit: Int?, isCancelled: (@Sendable () -> Bool)?
    ) throws -> (result: StoreFetchResult, store: StoreIdentity)? {
        let stores = searchedStores(of: request)
        guard stores.count == 1, !(request.includesPendingChanges && hasPendingChanges(concerning: entity, request))
        else { return nil }
        let storeRequest = self.storeRequest(
            of: request, entity: entity, kind: kind, merges: false, rowLimit: rowLimit, isCancelled: isCancelled)
        return (try stores[0].fetch(storeRequest), StoreIdentity.interned(stores[0].identifier))
    }
}

extension ManagedObjectContext {
    /// Where an object falls in row order, which orders what the sort keys find equal: its store's position
    /// then its row ID; unsaved inserts after every store, in insertion order. A fetch and a fetched results
    /// controller order by it alike.
    func fetchPosition(of object: ManagedObject, among stores: [any PersistentStore]) -> (store: Int, row: UInt64) {
        if object.isInserted { return (Int.max, object.insertionSequence) }
        let store = stores.firstIndex { $0.identifier == object.objectID.storeIdentifier } ?? Int.max - 1
        return (store, object.objectID.rowID ?? 0)
    }
}

extension ManagedObjectContext {
    /// The stores a request searches: its ``FetchRequest/affectedStores`` in the coordinator's order, or every
    /// store.
    func searchedStores<Result>(of request: FetchRequest<Result>) -> [any PersistentStore] {
        let stores = coordinator.persistentStores
        guard let affected = request.affectedStores else { return stores }
        return stores.filter { store in affected.contains { $0 === store } }
    }

    /// Whether a pending object belongs to a searched store: a saved object by its ID, an insert by the store it
    /// will be saved in.
    func isInSearchedStores<Result>(
        _ object: ManagedObject, stores: [any PersistentStore], request: FetchRequest<Result>
    ) -> Bool {
        guard request.affectedStores != nil else { return true }
        let store: (any PersistentStore)?
        if let identifier = object.objectID.storeIdentifier {
            store = coordinator.persistentStore(for: identifier)
        } else {
            store = assignedStores[ObjectIdentifier(object)] ?? (try? coordinator.defaultStore(for: object.entity))
        }
        return store.map { store in stores.contains { $0 === store } } ?? false
    }
}
