/// Faults made together, whose rows are read together: the first of them to fire reads the rows of every fault
/// of the batch with one store query, so that walking 100,000 faults in batches of 100 costs 1,000 queries, not
/// 100,000.
///
/// Two kinds of fault are batched:
/// - a fetch with a ``FetchRequest/fetchBatchSize`` (Core Data's batched array): firing one fault of a batch fills
///   every fault of it (``Filling/objects``);
/// - the members of a to-many read from the store (``ManagedObject`` relationship faults): firing one member reads
///   the rows of the unread members of its batch into the coordinator's row cache, where they wait for their own
///   faults to fire (``Filling/rows``). Those members stay faults: nothing is filled, awoken or notified until
///   touched, as in Core Data; only the store is asked once instead of once a member. Each member holds its cached
///   row from then on, as a fetched fault does, and the context's ``ManagedObjectContext/stalenessInterval`` still
///   decides whether a cached row may fill it.
///
/// A batch holds its members without retaining them (each member holds its batch until it fires, or the batch
/// fires through another member, so a batch lives as long as one of its unfired faults does). Not with `weak`
/// references either, which would give every member a side table and slow each retain and release of it: a
/// member going away while it still names the batch takes itself out (``forget(_:)``, from its `deinit`), so every
/// member the batch still lists is alive, and firing the batch finds its members without a registry lookup each.
final class FaultBatch {
    /// What firing one member does to the others.
    enum Filling {
        /// Fills them (a batched fetch).
        case objects
        /// Caches their rows, leaving them faults (the members of a to-many).
        case rows
    }

    /// A member, not retained: it takes itself out before it goes (see the type's documentation).
    private struct Member {
        unowned(unsafe) let object: ManagedObject
    }

    private var members: [Member?]
    let filling: Filling

    /// Makes a batch of `faults` and attaches it to each (taking a fault out of the batch it was in, if any).
    init(_ faults: [ManagedObject], filling: Filling = .objects) {
        members = faults.map { Member(object: $0) }
        self.filling = filling
        for fault in faults {
            fault.faultBatch?.forget(fault)
            fault.faultBatch = self
        }
    }

    /// Takes `object` out of the batch: it goes away, or joins another batch.
    func forget(_ object: ManagedObject) {
        if let index = members.firstIndex(where: { $0?.object === object }) { members[index] = nil }
    }

    /// Detaches the batch from every member and returns those that are still faults registered in `context`.
    func takeFaults(in context: ManagedObjectContext) -> [ManagedObject] {
        var faults: [ManagedObject] = []
        faults.reserveCapacity(members.count)
        for case let member? in members {
            let object = member.object
            guard object.faultBatch === self else { continue }
            object.faultBatch = nil
            if object.isFault, object.managedObjectContext === context { faults.append(object) }
        }
        members = []
        return faults
    }
}

extension ManagedObjectContext {
    /// How many members of a to-many one batch holds (see ``FaultBatch``): the rows read when one of them fires.
    static let relationshipFaultBatchSize = 100

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

    /// Groups the members of a to-many just read from the store (in its order: by row ID unless it is ordered) into
    /// batches of ``relationshipFaultBatchSize`` whose rows are read together (``FaultBatch/Filling/rows``). Members
    /// with a row already (filled objects, fetched faults) or in a batch already are left out. Only a context on the
    /// coordinator batches (a child context's faults read through its parent), and only when it may fill faults
    /// from the row cache (a ``stalenessInterval`` of 0 sends every fault to the store).
    func makeRelationshipFaultBatches(_ members: [ManagedObject]) {
        guard parent == nil, stalenessInterval != 0, members.count > 1 else { return }
        var batch: [ManagedObject] = []
        batch.reserveCapacity(Swift.min(members.count, Self.relationshipFaultBatchSize))
        for member in members
        where member.isFault && !member.holdsCachedRow && member.faultBatch == nil && !member.objectID.isTemporaryID {
            batch.append(member)
            if batch.count == Self.relationshipFaultBatchSize {
                _ = FaultBatch(batch, filling: .rows)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if batch.count > 1 { _ = FaultBatch(batch, filling: .rows) }
    }
}
