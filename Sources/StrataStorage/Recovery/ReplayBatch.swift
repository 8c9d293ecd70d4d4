import StrataFormat

/// The puts recovery replay gathers for tables that were empty when it reached them, applied per table at once: the
/// row tree and each index tree built bottom-up (``BTree/buildInMemory(keys:value:owner:)``,
/// ``PackedIndexEntries``) instead of one descent, copy and split per row and per index entry, which dominated
/// the profile of opening a store after a crash (W10: `IndexTree.insert` 23%, `BTree.put` 11%, reference counting
/// 14%, malloc 8%).
///
/// Only a table that is empty, with empty indexes, qualifies: nothing old then needs looking up, and every entry is
/// derived once, from the row's final bytes. Each put's index entries are computed when the put is gathered, so that
/// a row that cannot be indexed is reported at its own log record, as a put applied at once would be. Only
/// transactions known to commit are gathered (``LogReplay`` applies them in place); anything else that touches a
/// gathered table (a delete, a catalog change) applies what was gathered first, so operations keep their order.
struct ReplayBatch {
    /// The puts gathered for one table, in log order.
    private struct Puts {
        let table: TableID
        /// The table's indexes as they were when gathering began (catalog changes apply the batch first).
        let indexes: [IndexState]
        var rows: [UInt64] = []
        var values: [[UInt8]] = []
        /// Per index: the puts' entries.
        var entries: [PackedIndexEntries]
        /// Whether `rows` strictly increase (the usual case: new rows get growing IDs), so no sort is needed.
        var increasing = true
    }

    /// Gathered tables; `slots` finds a table's (one hash lookup per put).
    private var gathered: [Puts] = []
    private var slots: [TableID: Int] = [:]

    var isEmpty: Bool { gathered.isEmpty }

    /// Gathers a put when its table qualifies (already gathered, or empty with empty indexes).
    ///
    /// - Returns: false when the caller must apply the put itself.
    /// - Throws: what ``StoreState/put(table:row:value:tree:owner:)`` throws for a row it refuses.
    mutating func gather(
        table id: TableID, row: UInt64, value: [UInt8], state: StoreState, indexTree: IndexTree
    ) throws -> Bool {
        let slot: Int
        if let found = slots[id] {
            slot = found
        } else {
            guard let table = state.tables[id], table.root == nil, table.rowCount == 0,
                table.indexes.allSatisfy({ state.indexes[$0]?.root == nil })
            else { return false }
            let indexes = table.indexes.map { state.indexes[$0]! }
            slot = gathered.count
            slots[id] = slot
            gathered.append(
                Puts(
                    table: id, indexes: indexes,
                    entries: Array(repeating: PackedIndexEntries(), count: indexes.count)))
        }
        guard row < UInt64.max else { throw StorageError.invalidArgument("row ID \(row) is out of range") }
        let put = gathered[slot].rows.count
        for position in gathered[slot].indexes.indices {
            try gathered[slot].entries[position].append(
                of: gathered[slot].indexes[position], row: row, value: value, put: put,
                limit: indexTree.maximumEntry, pages: indexTree.pages)
        }
        if let last = gathered[slot].rows.last, last >= row { gathered[slot].increasing = false }
        gathered[slot].rows.append(row)
        gathered[slot].values.append(value)
        return true
    }

    /// Applies what was gathered for table `id`, if anything.
    mutating func apply(table id: TableID, to state: inout StoreState, tree: BTree, owner: UInt64) {
        guard let slot = slots.removeValue(forKey: id) else { return }
        let puts = gathered.remove(at: slot)
        for (table, later) in slots where later > slot { slots[table] = later - 1 }
        apply(puts, to: &state, tree: tree, owner: owner)
    }

    private func apply(_ puts: Puts, to state: inout StoreState, tree: BTree, owner: UInt64) {
        let id = puts.table
        // The last put of each row wins: positions ordered by row, then by log order, keeping each row's last.
        var order = Array(puts.rows.indices)
        if !puts.increasing {
            order.sort { puts.rows[$0] != puts.rows[$1] ? puts.rows[$0] < puts.rows[$1] : $0 < $1 }
            var kept: [Int] = []
            kept.reserveCapacity(order.count)
            for position in order {
                if let last = kept.last, puts.rows[last] == puts.rows[position] {
                    kept[kept.count - 1] = position
                } else {
                    kept.append(position)
                }
            }
            order = kept
        }
        var table = state.tables[id]!
        let keys = order.map { puts.rows[$0] }
        table.root = tree.buildInMemory(keys: keys, value: { puts.values[order[$0]] }, owner: owner)
        table.rowCount = UInt64(keys.count)
        table.nextRowID = max(table.nextRowID, keys[keys.count - 1] + 1)
        state.tables[id] = table
        let indexTree = IndexTree(pages: tree.pages)
        var kept = [Bool](repeating: puts.increasing, count: puts.rows.count)
        if !puts.increasing { for position in order { kept[position] = true } }
        for (position, index) in puts.indexes.enumerated() {
            let indexID = index.id
            let (root, count) = puts.entries[position].build(
                keeping: kept, inRowOrder: puts.increasing, tree: indexTree, owner: owner)
            state.indexes[indexID]!.root = root
            state.indexes[indexID]!.entryCount = UInt64(count)
        }
    }

    /// Applies everything gathered.
    mutating func applyAll(to state: inout StoreState, tree: BTree, owner: UInt64) {
        for puts in gathered { apply(puts, to: &state, tree: tree, owner: owner) }
        gathered = []
        slots = [:]
    }
}
