/// Faults that a fetch with a ``FetchRequest/fetchBatchSize`` returned together (Core Data's batched array):
/// firing any of them fills every fault of the batch with one store query, so that walking the results of a
/// fetch of 100,000 objects in batches of 100 costs 1,000 queries, not 100,000.
///
/// A batch names its members by ID and finds those still alive in their context's registry (a `weak` reference
/// would give every member a side table, which slows each retain and release of it); each member holds its batch
/// until it fires (or the batch fires through another member), so a batch lives as long as one of its unfired
/// faults does.
final class FaultBatch {
    private var members: [ManagedObjectID]

    /// Makes a batch of `faults` and attaches it to each.
    init(_ faults: [ManagedObject]) {
        members = faults.map(\.objectID)
        for fault in faults { fault.faultBatch = self }
    }

    /// Detaches the batch from every member still registered in `context` and returns those that are still faults.
    func takeFaults(in context: ManagedObjectContext) -> [ManagedObject] {
        let alive = members.compactMap { context.registeredObject(for: $0) }
        members = []
        for object in alive where object.faultBatch === self { object.faultBatch = nil }
        return alive.filter(\.isFault)
    }
}

extension ManagedObjectContext {
    /// Groups the faults among a fetch's results into batches of `size`, in result order (see ``FaultBatch``).
    /// Only a context on the coordinator batches: a child context's faults read through its parent.
    func makeFaultBatches(_ objects: [ManagedObject], size: Int) {
        guard parent == nil, size > 0 else { return }
        var start = objects.startIndex
        while start < objects.endIndex {
            let end = Swift.min(start + size, objects.endIndex)
            let faults = objects[start..<end].filter { $0.isFault && !$0.objectID.isTemporaryID }
            if faults.count > 1 { _ = FaultBatch(faults) }
            start = end
        }
    }
}
