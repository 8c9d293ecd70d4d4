import StrataFormat

/// The puts recovery replay gathers for tables that were empty when it reached them, applied per table at once: the
/// row tree and each index tree built bottom-up (``MemoryLeafBuilder``, ``PackedIndexEntries``) instead of one
/// descent, copy and split per row and per index entry, which dominated the profile of opening a store after a crash
/// (W10: `IndexTree.insert` 23%, `BTree.put` 11%, reference counting 14%, malloc 8%).
///
/// Only a table that is empty, with empty indexes, qualifies: nothing old then needs looking up, and every entry is
/// derived once, from the row's final bytes. While a table's row IDs increase, as new rows' do, its puts are left
/// where they lie in the log: the batch notes which records hold them (``KeptRecord``) and the table's ``LoggedRun``
/// where its puts begin and end among those. Opening a store then copies no row: the records are read again from the
/// log (``ReplayedLog``), their rows copied into their leaves and indexed when the table is built (at open's checkpoint
/// or first use, for the tables ``PendingTables`` holds). Copying each row into a leaf as the log was read (250
/// instructions a row) and checking it against each index (330) were two thirds of W10's open; copying the records
/// instead, most of what remained (a page fault per 4 KiB of fresh memory).
///
/// A put that cannot be indexed (only a damaged log whose checksums were made valid again holds one: the transaction
/// that wrote it checked it) is reported at its own log record when its table is built, as a put applied at once is
/// when it is replayed. Only transactions known to commit are gathered (``LogReplay`` applies them in place); anything
/// else that touches a gathered table (a delete, a catalog change) applies what was gathered first, so operations keep
/// their order.
struct ReplayBatch {
    /// An index of a gathered table, as it was when gathering began, with what checking a put needs at hand (a class:
    /// read out of an array of the mutated ``Puts``, an index state was copied for every put, its name, fields and
    /// filter retained and released: 220 instructions a put).
    private final class GatheredIndex: Sendable {
        let state: IndexState
        private let fields: [Int]
        private let entityIDs: Set<UInt16>?

        init(state: IndexState) {
            self.state = state
            fields = state.definition.fields
            entityIDs = state.definition.entityIDs
        }

        /// Checks that the row's entry can be made and fits the tree, throwing what
        /// ``StoreState/entry(of:row:cell:pages:limit:)`` throws for a row that cannot; without making the entry when
        /// its key's bound (``IndexKey/keyLengthBound(fields:of:header:)``) shows that it fits.
        func check(_ row: UInt64, _ value: UnsafeRawBufferPointer, tree: IndexTree) throws {
            if (try? fits(value, limit: tree.maximumEntry)) == true { return }
            // Maybe too long, or not decodable: the exact check.
            _ = try StoreState.entry(
                of: state.definition, row: row, cell: .inline(value), pages: tree.pages, limit: tree.maximumEntry)
        }

        /// Whether the row has no entry, or one whose bound fits `limit`.
        private func fits(_ value: UnsafeRawBufferPointer, limit: Int) throws(FormatError) -> Bool {
            let header = try RowRecord.Header.decode(value)
            if let entityIDs, !entityIDs.contains(header.entityID) { return true }
            return try IndexKey.keyLengthBound(fields: fields, of: value, header: header) &+ IndexKey.rowIDSize <= limit
        }
    }

    /// An operation record of the in-place part that holds gathered puts: where it lies in the log (read again
    /// when the tables are built), its LSN and its payload's length.
    private struct KeptRecord {
        let offset: UInt64
        let lsn: UInt64
        let length: Int
    }

    /// Where a put lies among the kept records: its record, and where its value starts in the record's payload.
    private struct PutPosition: Comparable {
        var record: Int
        var valueStart: Int

        static func < (lhs: PutPosition, rhs: PutPosition) -> Bool {
            (lhs.record, lhs.valueStart) < (rhs.record, rhs.valueStart)
        }
    }

    /// The puts of one table while their row IDs strictly increase, left where they lie: every put into the table
    /// from `first` through `last` belongs to it (a table's puts are gathered from its first put on, until it is
    /// applied).
    private struct LoggedRun {
        var first: PutPosition
        var last: PutPosition
        var lastRow: UInt64
        /// Each kept record the run has puts in, with the first row put there: where the build reports a row.
        var records: [(record: Int, firstRow: UInt64)]

        /// The kept record that holds the put of `row`.
        func record(of row: UInt64) -> Int {
            var low = 0
            var high = records.count
            while high - low > 1 {
                let middle = (low + high) / 2
                if records[middle].firstRow <= row { low = middle } else { high = middle }
            }
            return records[low].record
        }
    }

    /// The puts gathered for one table, in log order.
    private struct Puts {
        let table: TableID
        /// The table's indexes as they were when gathering began (catalog changes apply the batch first).
        let indexes: [GatheredIndex]
        /// While row IDs strictly increase (the usual case: new rows get growing IDs): where the puts lie in the log.
        var run: LoggedRun?
        /// Whether a row ID did not increase: every put's row ID and value is then in `rows` and `values`, in log
        /// order, sorted when applied.
        var outOfOrder = false
        var rows: [UInt64] = []
        var values = LeafValues()
        /// The puts gathered.
        var count = 0

        /// Adds the puts of `found`, all in kept record `record`, to the logged run (or starts it with them); its
        /// first row ID must be above the run's last. Changed where it lies: a copy of the run would copy its record
        /// list.
        mutating func extendRun(with found: WALOperation.PutRun, in record: Int) {
            let first = PutPosition(record: record, valueStart: found.firstValueStart)
            let last = PutPosition(record: record, valueStart: found.lastValueStart)
            count += found.count
            guard run != nil else {
                run = LoggedRun(
                    first: first, last: last, lastRow: found.lastRowID, records: [(record, found.firstRowID)])
                return
            }
            precondition(found.firstRowID > run!.lastRow, "a logged run's row IDs increase")
            run!.last = last
            run!.lastRow = found.lastRowID
            if run!.records[run!.records.count - 1].record != record {
                run!.records.append((record, found.firstRowID))
            }
        }
    }

    /// Gathered tables; `slots` finds a table's, `last` the last one asked for without hashing (a log's puts come in
    /// runs).
    private var gathered: [Puts] = []
    private var slots: [TableID: Int] = [:]
    private var last: (table: TableID, slot: Int)?
    /// The records holding gathered puts (of any table), in log order.
    private var records: [KeptRecord] = []
    /// The offset of the last of ``records`` in the log (none: `UInt64.max`), asked at every put.
    private var lastKeptOffset = UInt64.max
    /// The log the records are read again from; nil when the replay applies every transaction to a copy (nothing is
    /// gathered then).
    private let log: ReplayedLog?

    init(log: ReplayedLog?) { self.log = log }

    var isEmpty: Bool { gathered.isEmpty }

    /// An operation record as the log's reader lends it, while its operations are applied.
    struct LentRecord {
        let payload: UnsafeRawBufferPointer
        let offset: UInt64
        let lsn: UInt64
    }

    /// Whether puts into table `id` are being gathered.
    mutating func gathers(table id: TableID) -> Bool {
        if let last, last.table == id { return true }
        guard let found = slots[id] else { return false }
        last = (id, found)
        return true
    }

    /// Begins gathering the puts into table `id` if it qualifies (empty, with empty indexes); returns whether it did.
    mutating func startGathering(table id: TableID, state: StoreState) -> Bool {
        guard let table = state.tables[id], table.root == nil, table.rowCount == 0,
            table.indexes.allSatisfy({ state.indexes[$0.id]?.root == nil })
        else { return false }
        last = (id, gathered.count)
        slots[id] = gathered.count
        gathered.append(Puts(table: id, indexes: table.indexes.map { GatheredIndex(state: state.indexes[$0.id]!) }))
        return true
    }

    /// Gathers the puts from `reader`'s position on into table `id`, which ``gathers(table:)`` or
    /// ``startGathering(table:state:)`` just accepted, that extend its logged run (``WALOperation/scanPutRun(_:table:after:)``):
    /// the rows of a bulk load, taken a run at a time, each read no further than its row ID and length. Returns how
    /// many it took; none when the table's rows came out of order already, or the put at the position does not
    /// extend the run (`reader` is then unmoved, and the put is for ``gather(table:row:value:of:indexTree:)``).
    ///
    /// - Throws: what ``StoreState/put(table:row:value:tree:owner:)`` throws for a row ID it refuses.
    mutating func gatherRun(table id: TableID, from reader: inout ByteReader, of lent: LentRecord) throws -> Int {
        guard let last, last.table == id else { preconditionFailure("table \(id) is not gathered") }
        guard !gathered[last.slot].outOfOrder,
            let found = WALOperation.scanPutRun(&reader, table: id.rawValue, after: gathered[last.slot].run?.lastRow)
        else { return 0 }
        // Row IDs increase along the run: only its last can be out of range.
        guard found.lastRowID < UInt64.max else {
            throw StorageError.invalidArgument("row ID \(found.lastRowID) is out of range")
        }
        gathered[last.slot].extendRun(with: found, in: keep(lent))
        return found.count
    }

    /// Gathers a put into table `id`, which ``gathers(table:)`` or ``startGathering(table:state:)`` just accepted,
    /// its value lent where it lies in record `lent`.
    ///
    /// - Throws: what ``StoreState/put(table:row:value:tree:owner:)`` throws for a row ID it refuses, or for a row it
    ///   cannot index once the table's row IDs stopped increasing (before, rows are checked when built).
    mutating func gather(
        table id: TableID, row: UInt64, value: UnsafeRawBufferPointer, of lent: LentRecord, indexTree: IndexTree
    ) throws {
        guard let last, last.table == id else { preconditionFailure("table \(id) is not gathered") }
        guard row < UInt64.max else { throw StorageError.invalidArgument("row ID \(row) is out of range") }
        if !gathered[last.slot].outOfOrder {
            if gathered[last.slot].run.map({ row > $0.lastRow }) ?? true {
                let valueStart = value.baseAddress! - lent.payload.baseAddress!
                let one = WALOperation.PutRun(
                    count: 1, firstRowID: row, lastRowID: row, firstValueStart: valueStart, lastValueStart: valueStart)
                gathered[last.slot].extendRun(with: one, in: keep(lent))
                return
            }
            // Out of order (an update of a gathered row, or an insert at a chosen ID): every put so far into log
            // order, checked as it is taken, to be sorted when applied.
            try takeRunIntoLogOrder(slot: last.slot, indexTree: indexTree)
        }
        for index in gathered[last.slot].indexes { try index.check(row, value, tree: indexTree) }
        gathered[last.slot].count += 1
        gathered[last.slot].rows.append(row)
        gathered[last.slot].values.append(inline: value)
    }

    /// The position of `lent` in ``records``, where it is noted at its first gathered put.
    private mutating func keep(_ lent: LentRecord) -> Int {
        if lent.offset != lastKeptOffset {
            records.append(KeptRecord(offset: lent.offset, lsn: lent.lsn, length: lent.payload.count))
            lastKeptOffset = lent.offset
        }
        return records.count - 1
    }

    /// Moves the logged run of the puts at `slot` into its row and value arrays, each put checked against the table's
    /// indexes.
    private mutating func takeRunIntoLogOrder(slot: Int, indexTree: IndexTree) throws {
        var puts = gathered[slot]
        guard let run = puts.run else {
            gathered[slot].outOfOrder = true
            return
        }
        try forEachPut(of: run, table: puts.table) { row, value, record in
            do {
                for index in puts.indexes { try index.check(row, value, tree: indexTree) }
            } catch { throw failure(error, atRecord: record) }
            puts.rows.append(row)
            puts.values.append(inline: value)
        }
        puts.run = nil
        puts.outOfOrder = true
        gathered[slot] = puts
    }

    /// Calls `body` with each put of `run`, in log order, and the kept record that holds it, its records read again
    /// from the log.
    ///
    /// - Throws: what ``ReplayedLog/withPayload(at:lsn:length:buffer:_:)`` throws, or `body`.
    private func forEachPut(
        of run: LoggedRun, table: TableID, _ body: (UInt64, UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        guard let log else { preconditionFailure("puts are gathered only from a log read again") }
        var buffer: [UInt8] = []
        for record in run.first.record...run.last.record {
            let kept = records[record]
            try log.withPayload(at: kept.offset, lsn: kept.lsn, length: kept.length, buffer: &buffer) { payload in
                // Decoded once already, when the log was read (and verified again now): it cannot fail.
                try WALOperation.decodeAll(
                    payload,
                    lendingPuts: { id, row, value in
                        guard id == table.rawValue else { return true }
                        let position = PutPosition(
                            record: record, valueStart: value.baseAddress! - payload.baseAddress!)
                        if position >= run.first, position <= run.last { try body(row, value, record) }
                        return true
                    }, { _ in })
            }
        }
    }

    /// A put of kept record `record` that cannot be applied, reported as ``LogReplay`` reports one it applies.
    private func failure(_ error: any Error, atRecord record: Int) -> StorageError {
        StorageError.corrupt(
            log?.path ?? "", at: records[record].offset,
            "operation record LSN \(records[record].lsn) does not apply: \(error)")
    }

    /// Applies what was gathered for table `id`, if anything.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the log record of a put that cannot be
    ///   indexed.
    mutating func apply(table id: TableID, to state: inout StoreState, tree: BTree, owner: UInt64) throws {
        guard let slot = slots.removeValue(forKey: id) else { return }
        last = nil
        let puts = gathered.remove(at: slot)
        for (table, later) in slots where later > slot { slots[table] = later - 1 }
        try apply(puts, to: &state, tree: tree, owner: owner)
    }

    private func apply(_ puts: Puts, to state: inout StoreState, tree: BTree, owner: UInt64) throws {
        guard puts.count > 0 else { return }
        let id = puts.table
        var table = state.tables[id]!
        var leaves = MemoryLeafBuilder(limits: tree.limits, owner: owner)
        if let run = puts.run {
            try forEachPut(of: run, table: id) { row, value, _ in leaves.append(row, value) }
        } else {
            // The last put of each row wins: positions ordered by row, then by log order, keeping each row's last.
            var order = Array(puts.rows.indices)
            order.sort { puts.rows[$0] != puts.rows[$1] ? puts.rows[$0] < puts.rows[$1] : $0 < $1 }
            /// By put position: whether the put is its row's last (only the last put of each row counts).
            var kept = [Bool](repeating: false, count: puts.count)
            for (rank, position) in order.enumerated()
            where rank + 1 == order.count || puts.rows[order[rank + 1]] != puts.rows[position] {
                kept[position] = true
            }
            for position in order where kept[position] {
                puts.values.withCell(position) { cell in
                    guard case .inline(let bytes) = cell else { preconditionFailure("gathered values are inline") }
                    leaves.append(puts.rows[position], bytes)
                }
            }
        }
        let rowCount = leaves.count
        let lastRow = leaves.lastKey!
        let built = leaves.finish()
        let indexTree = IndexTree(pages: tree.pages)
        for index in puts.indexes {
            let (root, count) = try buildIndex(index.state, over: built, tree: indexTree, owner: owner) { row in
                // Rows taken into log order were checked then: only a logged run's are checked here.
                guard let run = puts.run else { preconditionFailure("row \(row) was checked when it was gathered") }
                return run.record(of: row)
            }
            state.indexes[index.state.id]!.root = root
            state.indexes[index.state.id]!.entryCount = UInt64(count)
        }
        table.root = tree.buildLevels(above: built, owner: owner)
        table.rowCount = UInt64(rowCount)
        table.nextRowID = max(table.nextRowID, lastRow + 1)
        state.tables[id] = table
    }

    /// The tree of `index` over the rows of `leaves` (a table's leaves, in row order): each entry made once, from the
    /// row's bytes in its leaf, and no sort among the entries of one key.
    ///
    /// - Parameter record: the kept record that holds a row's put, for a row that cannot be indexed.
    private func buildIndex(
        _ index: IndexState, over leaves: [BTreeNode], tree: IndexTree, owner: UInt64, record: (UInt64) -> Int
    ) throws -> (root: IndexNodeRef?, count: Int) {
        var entries = PackedIndexEntries()
        for leaf in leaves {
            for position in 0..<leaf.count {
                try leaf.values.withCell(position) { cell in
                    guard case .inline(let bytes) = cell else { preconditionFailure("gathered values are inline") }
                    let row = leaf.keys[position]
                    do {
                        try entries.append(
                            of: index.definition, row: row, bytes: bytes, tag: 0, limit: tree.maximumEntry,
                            pages: tree.pages)
                    } catch { throw failure(error, atRecord: record(row)) }
                }
            }
        }
        return entries.build(keeping: { _ in true }, inRowOrder: true, tree: tree, owner: owner)
    }

    /// Leaves the gathered tables whose rows came in increasing order unbuilt (``PendingTables``), with their row counts
    /// and next row IDs set in `state`, which then carries them; applies the others (their rows must be sorted, and an
    /// updated row counted once: that takes the build). The batch is then empty.
    ///
    /// - Parameter owner: the tag the nodes built (now or later) carry.
    /// - Throws: what ``apply(table:to:tree:owner:)`` throws.
    mutating func leavePending(in state: inout StoreState, tree: BTree, owner: UInt64) throws {
        guard !isEmpty else { return }
        precondition(state.pending == nil, "a state carries the pending tables of one replay")
        var ordered = ReplayBatch(log: log)
        ordered.records = records
        var tables = Set<TableID>()
        for puts in gathered {
            guard let run = puts.run else {
                try apply(puts, to: &state, tree: tree, owner: owner)
                continue
            }
            state.tables[puts.table]!.rowCount = UInt64(puts.count)
            state.tables[puts.table]!.nextRowID = max(state.tables[puts.table]!.nextRowID, run.lastRow + 1)
            ordered.slots[puts.table] = ordered.gathered.count
            ordered.gathered.append(puts)
            tables.insert(puts.table)
        }
        clear()
        guard !ordered.isEmpty else { return }
        state.pending = PendingTables(batch: ordered, tables: tables, base: state, tree: tree, owner: owner)
    }

    /// Applies everything gathered.
    ///
    /// - Throws: what ``apply(table:to:tree:owner:)`` throws.
    mutating func applyAll(to state: inout StoreState, tree: BTree, owner: UInt64) throws {
        defer { clear() }
        for puts in gathered { try apply(puts, to: &state, tree: tree, owner: owner) }
    }

    /// Forgets everything gathered, and the records kept for it.
    private mutating func clear() {
        gathered = []
        slots = [:]
        last = nil
        records = []
        lastKeptOffset = .max
    }
}
