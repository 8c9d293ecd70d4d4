import StrataFormat

/// The puts recovery replay gathers for tables that were empty when it reached them, applied per table at once: the
/// row tree and each index tree built bottom-up (``MemoryLeafBuilder``, ``PackedIndexEntries``) instead of one
/// descent, copy and split per row and per index entry, which dominated the profile of opening a store after a crash
/// (W10: `IndexTree.insert` 23%, `BTree.put` 11%, reference counting 14%, malloc 8%).
///
/// Only a table that is empty, with empty indexes, qualifies: nothing old then needs looking up, and every entry is
/// derived once, from the row's final bytes. Rows are gathered where they lie in the log (lent by
/// ``WALOperation/decodeAll(_:lendingPuts:_:)``): while their row IDs increase, as new rows' do, each is copied once,
/// straight into its leaf. An array per row, then a copy of it into its leaf (the packed leaves of ``LeafValues``)
/// made W10's open slower than before leaves were packed: a malloc, two copies and a free per row.
///
/// Each put's index entries are computed when the put is gathered, so that a row that cannot be indexed is reported
/// at its own log record, as a put applied at once would be. Only transactions known to commit are gathered
/// (``LogReplay`` applies them in place); anything else that touches a gathered table (a delete, a catalog change)
/// applies what was gathered first, so operations keep their order.
struct ReplayBatch {
    /// One index of a gathered table: its state when gathering began and the puts' entries.
    private struct IndexPuts {
        let index: IndexState
        /// The puts' entries, tagged with the put's position in log order.
        var entries = PackedIndexEntries()

        /// Appends the entry of a put's row, if the index has one.
        ///
        /// - Throws: what ``PackedIndexEntries/append(of:row:bytes:tag:limit:pages:)`` throws for the row.
        mutating func append(
            _ row: UInt64, _ value: UnsafeRawBufferPointer, put: Int, indexTree: IndexTree
        ) throws {
            // `index` is lent from here; read out of an array of index states, it was copied for every put (reference
            // counting of its name, fields and filter: about 200 instructions a put, a fifth of gathering it).
            try entries.append(
                of: index, row: row, bytes: value, tag: put, limit: indexTree.maximumEntry, pages: indexTree.pages)
        }
    }

    /// The puts gathered for one table, in log order.
    private struct Puts {
        let table: TableID
        /// The table's indexes as they were when gathering began (catalog changes apply the batch first).
        var indexes: [IndexPuts]
        /// While row IDs strictly increase (the usual case: new rows get growing IDs): the leaves, filled as the
        /// puts come.
        var leaves: MemoryLeafBuilder?
        /// Once a row ID did not increase: every put's row ID and value, in log order, sorted when applied.
        var rows: [UInt64] = []
        var values = LeafValues()
        /// The puts gathered.
        var count = 0

        /// Adds a put and its index entries.
        ///
        /// - Throws: what ``PackedIndexEntries/append(of:row:bytes:tag:limit:pages:)`` throws for the row.
        mutating func append(_ row: UInt64, _ value: UnsafeRawBufferPointer, indexTree: IndexTree) throws {
            for position in indexes.indices {
                try indexes[position].append(row, value, put: count, indexTree: indexTree)
            }
            count += 1
            if leaves != nil {
                if leaves!.lastKey.map({ row > $0 }) ?? true {
                    leaves!.append(row, value)
                    return
                }
                // Out of order (an update of a gathered row, or an insert at a chosen ID): every put so far back
                // into log order (in order, they are the leaves' rows), to be sorted when applied.
                for leaf in leaves!.finish() {
                    rows.append(contentsOf: leaf.keys)
                    values.append(contentsOf: leaf.values)
                }
                leaves = nil
            }
            rows.append(row)
            values.append(inline: value)
        }
    }

    /// Gathered tables; `slots` finds a table's, `last` the last one asked for without hashing (a log's puts come in
    /// runs).
    private var gathered: [Puts] = []
    private var slots: [TableID: Int] = [:]
    private var last: (table: TableID, slot: Int)?

    var isEmpty: Bool { gathered.isEmpty }

    /// Whether puts into table `id` are being gathered.
    mutating func gathers(table id: TableID) -> Bool {
        if let last, last.table == id { return true }
        guard let found = slots[id] else { return false }
        last = (id, found)
        return true
    }

    /// Begins gathering the puts into table `id` if it qualifies (empty, with empty indexes); returns whether it did.
    ///
    /// - Parameter owner: the tag the nodes built will carry: the replay's in-place tag, the one
    ///   ``apply(table:to:tree:owner:)`` and ``applyAll(to:tree:owner:)`` are given.
    mutating func startGathering(table id: TableID, state: StoreState, tree: BTree, owner: UInt64) -> Bool {
        guard let table = state.tables[id], table.root == nil, table.rowCount == 0,
            table.indexes.allSatisfy({ state.indexes[$0]?.root == nil })
        else { return false }
        last = (id, gathered.count)
        slots[id] = gathered.count
        gathered.append(
            Puts(
                table: id, indexes: table.indexes.map { IndexPuts(index: state.indexes[$0]!) },
                leaves: MemoryLeafBuilder(limits: tree.limits, owner: owner)))
        return true
    }

    /// Gathers a put into table `id`, which ``gathers(table:)`` or ``startGathering(table:state:tree:owner:)`` just
    /// accepted, its value lent where it lies.
    ///
    /// - Throws: what ``StoreState/put(table:row:value:tree:owner:)`` throws for a row it refuses.
    mutating func gather(table id: TableID, row: UInt64, value: UnsafeRawBufferPointer, indexTree: IndexTree) throws {
        guard let last, last.table == id else { preconditionFailure("table \(id) is not gathered") }
        guard row < UInt64.max else { throw StorageError.invalidArgument("row ID \(row) is out of range") }
        try gathered[last.slot].append(row, value, indexTree: indexTree)
    }

    /// Applies what was gathered for table `id`, if anything.
    mutating func apply(table id: TableID, to state: inout StoreState, tree: BTree, owner: UInt64) {
        guard let slot = slots.removeValue(forKey: id) else { return }
        last = nil
        let puts = gathered.remove(at: slot)
        for (table, later) in slots where later > slot { slots[table] = later - 1 }
        apply(puts, to: &state, tree: tree, owner: owner)
    }

    private func apply(_ puts: Puts, to state: inout StoreState, tree: BTree, owner: UInt64) {
        let id = puts.table
        var table = state.tables[id]!
        var leaves: MemoryLeafBuilder
        /// By put position: whether the put is its row's last (only the last put of each row counts).
        var kept: [Bool] = []
        if let inOrder = puts.leaves {
            leaves = inOrder
        } else {
            // The last put of each row wins: positions ordered by row, then by log order, keeping each row's last.
            var order = Array(puts.rows.indices)
            order.sort { puts.rows[$0] != puts.rows[$1] ? puts.rows[$0] < puts.rows[$1] : $0 < $1 }
            kept = [Bool](repeating: false, count: puts.count)
            for (rank, position) in order.enumerated()
            where rank + 1 == order.count || puts.rows[order[rank + 1]] != puts.rows[position] {
                kept[position] = true
            }
            leaves = MemoryLeafBuilder(limits: tree.limits, owner: owner)
            for position in order where kept[position] {
                puts.values.withCell(position) { cell in
                    guard case .inline(let bytes) = cell else { preconditionFailure("gathered values are inline") }
                    leaves.append(puts.rows[position], bytes)
                }
            }
        }
        let rowCount = leaves.count
        let lastRow = leaves.lastKey!
        table.root = tree.buildLevels(above: leaves.finish(), owner: owner)
        table.rowCount = UInt64(rowCount)
        table.nextRowID = max(table.nextRowID, lastRow + 1)
        state.tables[id] = table
        let indexTree = IndexTree(pages: tree.pages)
        let inRowOrder = puts.leaves != nil
        for index in puts.indexes {
            let indexID = index.index.id
            let (root, count) = index.entries.build(
                keeping: { inRowOrder || kept[$0] }, inRowOrder: inRowOrder, tree: indexTree, owner: owner)
            state.indexes[indexID]!.root = root
            state.indexes[indexID]!.entryCount = UInt64(count)
        }
    }

    /// Leaves the gathered tables whose rows came in increasing order unbuilt (``PendingTables``), with their row counts
    /// and next row IDs set in `state`, which then carries them; applies the others (their rows must be sorted, and an
    /// updated row counted once: that takes the build). The batch is then empty.
    ///
    /// - Parameter owner: the tag the nodes built (now or later) carry.
    mutating func leavePending(in state: inout StoreState, tree: BTree, owner: UInt64) {
        guard !isEmpty else { return }
        precondition(state.pending == nil, "a state carries the pending tables of one replay")
        var ordered = ReplayBatch()
        var tables = Set<TableID>()
        for puts in gathered {
            guard let leaves = puts.leaves, let lastRow = leaves.lastKey else {
                apply(puts, to: &state, tree: tree, owner: owner)
                continue
            }
            state.tables[puts.table]!.rowCount = UInt64(leaves.count)
            state.tables[puts.table]!.nextRowID = max(state.tables[puts.table]!.nextRowID, lastRow + 1)
            ordered.slots[puts.table] = ordered.gathered.count
            ordered.gathered.append(puts)
            tables.insert(puts.table)
        }
        gathered = []
        slots = [:]
        last = nil
        guard !ordered.isEmpty else { return }
        state.pending = PendingTables(batch: ordered, tables: tables, base: state, tree: tree, owner: owner)
    }

    /// Applies everything gathered.
    mutating func applyAll(to state: inout StoreState, tree: BTree, owner: UInt64) {
        for puts in gathered { apply(puts, to: &state, tree: tree, owner: owner) }
        gathered = []
        slots = [:]
        last = nil
    }
}
