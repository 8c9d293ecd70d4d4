import CPrefetch
import Foundation

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
///
/// A to-many's batch keeps the rows it read (``row(for:in:)``): each member it read stays in the batch until it
/// fires, and then loads the row the batch kept for it instead of looking it up in the row cache again (a search
/// under the cache's lock, a third of what firing such a member cost), as long as the row cache has changed no
/// entry's row since the batch recorded its rows there (``RowCache/generation``) and the rows are not older than
/// the context's ``ManagedObjectContext/stalenessInterval``: then the cache's entry holds the very row the batch
/// kept. Otherwise the member fires through the row cache as before. Those rows' members are known by identity only,
/// never read through: a member that goes away unfired leaves its row there until the batch goes.
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
        let reference: Unmanaged<ManagedObject>

        init(object: ManagedObject) { reference = .passUnretained(object) }

        var object: ManagedObject { reference.takeUnretainedValue() }

        /// Runs `body` with the member, neither retained nor released around it (a retain and a release a member of
        /// each walk of a batch's members, W4c.graph): the member is alive (it takes itself out before it goes), and
        /// nothing a walk does lets it go.
        @inline(__always)
        func withObject<Result>(_ body: (ManagedObject) -> Result) -> Result {
            reference._withUnsafeGuaranteedRef(body)
        }
    }

    // The properties are `@exclusivity(unchecked)`: a batch is confined to its context's thread, as its members are.
    @exclusivity(unchecked) private var members: [Member?]
    let filling: Filling
    /// Whether the rows of a to-many's batch were read (``Filling/rows``); the members left are those read.
    @exclusivity(unchecked) private var isRead = false
    /// The rows read, and at the same positions the identities of their objects (compared, never read through). A
    /// row is taken out (left nil) when its member loads it: each member loads its row once, and a row moved to it
    /// needs no retain now and no release when the batch goes.
    @exclusivity(unchecked) private var readRows: [StoredRow?] = []
    @exclusivity(unchecked) private var readObjects: [ObjectIdentifier] = []
    /// The addresses of the rows' records (``StoredRow/recordAddress``), taken while the rows were at hand: hints
    /// only, never read through.
    @exclusivity(unchecked) private var readRecordAddresses: [UnsafeRawPointer?] = []
    /// Where each object of ``readObjects`` is (members fire in any order: a to-many's set is walked in hash order).
    @exclusivity(unchecked) private var readPositions = MemberPositions()
    /// The row cache's ``RowCache/generation`` once the rows were recorded there, and when they were read.
    @exclusivity(unchecked) private var readGeneration: UInt64 = 0
    @exclusivity(unchecked) private var readAt = Date.distantPast

    /// Makes a batch of `faults` and attaches it to each (taking a fault out of the batch it was in, if any).
    init(_ faults: [ManagedObject], filling: Filling = .objects) {
        members = faults.map { Member(object: $0) }
        self.filling = filling
        for fault in faults {
            fault.faultBatch?.forget(fault)
            fault.faultBatch = self
        }
    }

    /// Makes a to-many's batch (``Filling/rows``) of `members`, faults in no batch yet, and attaches it to each.
    private init(rowsOf members: [Member?]) {
        self.members = members
        filling = .rows
        for case let member? in members { member.withObject { $0.faultBatch = self } }
    }

    /// Takes `object` out of the batch: it goes away, or joins another batch. (A batch that read its rows lists no
    /// members: its rows' objects are compared by identity only, and no object joins it.)
    func forget(_ object: ManagedObject) {
        if let index = members.firstIndex(where: { $0?.object === object }) { members[index] = nil }
    }

    /// The row `object`, a member of this to-many's batch (``Filling/rows``) firing in `context`, loads: the one the
    /// batch read for it, or nil when it must fire through the row cache (not read, or the cache changed a row since,
    /// or the row is older than the context's staleness interval). The first member to fire reads the rows of every
    /// member still a fault in `context` (a failure leaves them to fire one by one, reporting what is wrong). Takes
    /// `object` out of the batch.
    func row(for object: ManagedObject, in context: ManagedObjectContext) -> StoredRow? {
        precondition(filling == .rows, "only a to-many's batch keeps rows")
        if !isRead { read(in: context) }
        object.faultBatch = nil
        guard object.holdsCachedRow, let index = readPositions.position(of: ObjectIdentifier(object), in: readObjects),
            context.rowCache.generation == readGeneration
        else { return nil }
        let maximumAge = context.stalenessInterval
        if maximumAge >= 0, Date().timeIntervalSince(readAt) > maximumAge { return nil }
        // Read a while ago (members fire in the set's order, not the batch's): its record's first lines are asked for
        // now and arrive while the member's state is made. Through its address alone: reading the row's record
        // here (its count, its reference count) waited for the very lines the hint asks for.
        if let address = readRecordAddresses[index] {
            // From the array's count, just before its elements, through the record's header and first fields.
            cprefetch_read(address - 16)
            cprefetch_read(address + 48)
        }
        return readRows[index].take()
    }

    /// Reads the rows of the members still faults registered in `context`, keeping them; members that are not are
    /// taken out.
    private func read(in context: ManagedObjectContext) {
        isRead = true
        var faults = FaultGroups(capacity: members.count)
        for index in members.indices {
            // Members were made together, mostly long before the first of them fires: each is hinted a few
            // members ahead of being read (its fields are two cold cache lines).
            if index + Self.membersHintedAhead < members.count, let ahead = members[index + Self.membersHintedAhead] {
                let fields = ahead.reference.toOpaque()
                cprefetch_read(fields)
                cprefetch_read(fields + 64)
            }
            guard let member = members[index] else { continue }
            let object = member.object
            guard object.faultBatch === self else { continue }
            if object.isFault, object.managedObjectContext === context {
                faults.add(object)
            } else {
                object.faultBatch = nil
            }
        }
        members = []
        guard faults.count > 1 else { return }
        try? context.cacheRows(of: faults, keepingRowsIn: self)
    }

    /// How many members ahead ``read(in:)`` hints the objects of.
    private static let membersHintedAhead = 8

    /// Keeps the rows read for the objects `objects` (``ManagedObjectContext/cacheRows(of:keepingRowsIn:)``), recorded
    /// in the row cache at `generation`, read at `date`. Rows of several stores are kept one store after the other:
    /// the first recording's generation is the one at which every kept row was the cache's.
    func keep(_ rows: consuming [StoredRow?], of objects: [ObjectIdentifier], generation: UInt64, at date: Date) {
        precondition(rows.count == objects.count, "an object for each row")
        readRecordAddresses.reserveCapacity(readRecordAddresses.count + rows.count)
        for index in rows.indices { readRecordAddresses.append(rows[index]?.recordAddress) }
        if readObjects.isEmpty {
            (readRows, readObjects) = (rows, objects)
            (readGeneration, readAt) = (generation, date)
        } else {
            readRows.append(contentsOf: rows)
            readObjects.append(contentsOf: objects)
        }
        readPositions = MemberPositions(positionsOf: readObjects)
    }

    /// Groups the members of a to-many that are faults with no row and in no batch into batches of `size` whose rows
    /// are read together (``Filling/rows``), in their order; a lone one left over is not batched. Each batch's
    /// members are listed as the batch holds them (not retained), without an array of the objects in between.
    static func makeBatches(ofRowsOf objects: [ManagedObject], size: Int) {
        var members: [Member?] = []
        members.reserveCapacity(Swift.min(objects.count, size))
        // Each listed as it lies in `objects`, which holds it: an element taken out of the array was retained and
        // released around its append.
        for index in objects.indices {
            let member = Member(object: objects[index])
            guard
                member.withObject({
                    $0.isFault && !$0.holdsCachedRow && $0.faultBatch == nil && !$0.objectID.isTemporaryID
                })
            else { continue }
            members.append(member)
            if members.count == size {
                _ = FaultBatch(rowsOf: members)
                members.removeAll(keepingCapacity: true)
            }
        }
        if members.count > 1 { _ = FaultBatch(rowsOf: members) }
    }

    /// Detaches the batch from every member and returns those that are still faults registered in `context` (a
    /// batched fetch's: ``Filling/objects``).
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
        FaultBatch.makeBatches(ofRowsOf: members, size: Self.relationshipFaultBatchSize)
    }
}
