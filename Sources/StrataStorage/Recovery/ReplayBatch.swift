import StrataFormat

/// The puts recovery replay gathers for tables that were empty when it reached them, applied per table at once: the
/// row tree and each index tree built bottom-up (``BTree/buildInMemory(keys:values:owner:)``,
/// ``IndexTree/build(_:owner:)``) instead of one descent, copy and split per row and per index entry, which dominated
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
        var rows: [UInt64] = []
        var values: [[UInt8]] = []
        /// Per index of the table (`TableState.indexes` order): each put's entry, nil when the index filters it out.
        var entries: [[[UInt8]?]]
        /// Whether `rows` strictly increase (the usual case: new rows get growing IDs), so no sort is needed.
        var increasing = true
    }

    private var tables: [TableID: Puts] = [:]

    var isEmpty: Bool { tables.isEmpty }

    /// Gathers a put when its table qualifies (already gathered, or empty with empty indexes).
    ///
    /// - Returns: false when the caller must apply the put itself.
    /// - Throws: what ``StoreState/put(table:row:value:tree:owner:)`` throws for a row it refuses.
    mutating func gather(
        table id: TableID, row: UInt64, value: [UInt8], state: StoreState, indexTree: IndexTree
    ) throws -> Bool {
        if tables[id] == nil {
            guard let table = state.tables[id], table.root == nil, table.rowCount == 0,
                table.indexes.allSatisfy({ state.indexes[$0]?.root == nil })
            else { return false }
            tables[id] = Puts(entries: Array(repeating: [], count: table.indexes.count))
        }
        guard row < UInt64.max else { throw StorageError.invalidArgument("row ID \(row) is out of range") }
        let indexes = state.tables[id]!.indexes
        var puts = tables.removeValue(forKey: id)!
        for (position, index) in indexes.enumerated() {
            puts.entries[position].append(
                try StoreState.entry(
                    of: state.indexes[index]!, row: row, value: .bytes(value), pages: indexTree.pages,
                    limit: indexTree.maximumEntry))
        }
        if let last = puts.rows.last, last >= row { puts.increasing = false }
        puts.rows.append(row)
        puts.values.append(value)
        tables[id] = puts
        return true
    }

    /// Applies what was gathered for table `id`, if anything.
    mutating func apply(table id: TableID, to state: inout StoreState, tree: BTree, owner: UInt64) {
        guard let puts = tables.removeValue(forKey: id) else { return }
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
        table.root = tree.buildInMemory(keys: keys, values: order.map { .bytes(puts.values[$0]) }, owner: owner)
        table.rowCount = UInt64(keys.count)
        table.nextRowID = max(table.nextRowID, keys[keys.count - 1] + 1)
        state.tables[id] = table
        let indexTree = IndexTree(pages: tree.pages)
        for (position, indexID) in table.indexes.enumerated() {
            let entries = IndexEntrySort.sorted(order.compactMap { puts.entries[position][$0] })
            state.indexes[indexID]!.root = indexTree.build(entries, owner: owner)
            state.indexes[indexID]!.entryCount = UInt64(entries.count)
        }
    }

    /// Applies everything gathered.
    mutating func applyAll(to state: inout StoreState, tree: BTree, owner: UInt64) {
        for id in tables.keys.sorted() { apply(table: id, to: &state, tree: tree, owner: owner) }
    }
}
