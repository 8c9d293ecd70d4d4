import Foundation

/// The results of a fetch with a ``FetchRequest/fetchBatchSize``: every result's ID is known up front, and
/// objects are loaded a batch at a time, the batch around the index you access, filled with one store
/// query per batch. Only the few most recently used batches are kept (``retainedBatchCount``); older ones
/// are released, so that iterating a million results keeps a bounded number of objects and cached rows
/// alive (objects you keep elsewhere stay alive, as always).
///
/// Like its context and objects, a results collection belongs to one thread.
///
/// For example:
/// ```swift
/// let request = FetchRequest<Employee>(entityName: "Employee")
/// request.fetchBatchSize = 100
/// for employee in try context.fetchBatched(request) { total += employee.salary }
/// ```
public final class BatchedFetchResults<Element>: RandomAccessCollection {
    /// A result as the collection keeps it: a stored row's place, or an unsaved object.
    enum Entry {
        case stored(entity: EntityDescription, rowID: UInt64, store: Int)
        case pending(ManagedObject)
    }

    /// The context the objects are registered in.
    public let context: ManagedObjectContext
    /// How many results each batch holds.
    public let batchSize: Int
    /// How many batches stay loaded (default 3): the least recently used one is released past this.
    public var retainedBatchCount = 3
    /// Batches loaded so far: a test hook.
    public private(set) var batchLoads = 0

    private let entries: [Entry]
    private let stores: [UUID]
    private let populates: Bool
    private var batches: [Int: [ManagedObject]] = [:]
    private var recent: [Int] = []

    init(context: ManagedObjectContext, entries: [Entry], stores: [UUID], batchSize: Int, populates: Bool) {
        self.context = context
        self.entries = entries
        self.stores = stores
        self.batchSize = batchSize
        self.populates = populates
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of results.
    public var endIndex: Int { entries.count }

    /// The result at `index`, loading its batch when it is not loaded.
    ///
    /// A batch whose rows cannot be read gives faults (firing one throws the reason).
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < entries.count, "index \(index) out of 0..<\(entries.count)")
        let batch = index / batchSize
        let objects = batches[batch] ?? load(batch)
        touch(batch)
        return ManagedObjectContext.cast(objects[index - batch * batchSize], to: Element.self)
    }

    /// The ID of the result at `index`, without loading anything.
    public func objectID(at index: Int) -> ManagedObjectID {
        switch entries[index] {
        case .stored(let entity, let rowID, let store):
            ManagedObjectID(entity: entity, storeIdentifier: stores[store], rowID: rowID)
        case .pending(let object): object.objectID
        }
    }

    /// The indexes of the batches loaded now, least recently used first: a test hook.
    public var loadedBatches: [Int] { recent }

    private func touch(_ batch: Int) {
        if recent.last == batch { return }
        recent.removeAll { $0 == batch }
        recent.append(batch)
        while recent.count > Swift.max(1, retainedBatchCount) { batches[recent.removeFirst()] = nil }
    }

    private func load(_ batch: Int) -> [ManagedObject] {
        batchLoads += 1
        let range = (batch * batchSize)..<Swift.min(entries.count, (batch + 1) * batchSize)
        var objects: [ManagedObject] = []
        objects.reserveCapacity(range.count)
        for index in range {
            switch entries[index] {
            case .pending(let object): objects.append(object)
            case .stored: objects.append(context.object(with: objectID(at: index)))
            }
        }
        // One store query per store and hierarchy fills every fault of the batch; a failure leaves faults.
        if populates { try? context.fill(objects.filter { $0.isFault }) }
        batches[batch] = objects
        return objects
    }
}

extension ManagedObjectContext {
    /// Fetches a managed-object request's IDs, and returns a collection that loads the objects in batches of
    /// ``FetchRequest/fetchBatchSize`` (100 when the request has none) as you access them.
    ///
    /// No row is read by the fetch unless the predicate or sort keys need it; each batch is one store
    /// query. Pending changes are folded in as by ``fetch(_:)``.
    ///
    /// - Parameter request: a request with the managed-object result type.
    /// - Returns: the results.
    /// - Throws: what ``fetch(_:)`` throws; ``FetchRequestError/requiresDictionaryResults(option:)`` is not
    ///   thrown, but any other result type is a precondition failure.
    public func fetchBatched<Result>(_ request: FetchRequest<Result>) throws -> BatchedFetchResults<Result> {
        precondition(request.resultType == .managedObject, "batched results are managed objects")
        let entity = try fetchEntity(of: request)
        let found = try matches(
            of: request, entity: entity, kind: .objectIDs, includesPendingChanges: request.includesPendingChanges)
        let stores = coordinator.persistentStores.map(\.identifier)
        let entries: [BatchedFetchResults<Result>.Entry] = found.map { match in
            if let object = match.object, object.objectID.isTemporaryID || object.isInserted { return .pending(object) }
            return .stored(
                entity: match.id.entity, rowID: match.id.rowID!,
                store: stores.firstIndex(of: match.id.storeIdentifier!) ?? 0)
        }
        return BatchedFetchResults(
            context: self, entries: entries, stores: stores,
            batchSize: request.fetchBatchSize > 0 ? request.fetchBatchSize : 100,
            populates: request.includesPropertyValues)
    }
}
