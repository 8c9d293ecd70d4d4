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
/// Each put is checked against the table's indexes when it is gathered (its entries can be made and fit), so that a row
/// that cannot be indexed is reported at its own log record, as a put applied at once would be; the entries themselves
/// are made from the built leaves, when the table is built (at open's checkpoint or first use, for the tables
/// ``PendingTables`` holds): making them as the log was read was a third of W10's open. Only transactions known to commit are gathered
/// (``LogReplay`` applies them in place); anything else that touches a gathered table (a delete, a catalog change)
/// applies what was gathered first, so operations keep their order.
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

    /// The puts gathered for one table, in log order.
    private struct Puts {
        let table: TableID
        /// The table's indexes as they were when gathering began (catalog changes apply the batch first).
        let indexes: [GatheredIndex]
        /// While row IDs strictly increase (the usual case: new rows get growing IDs): the leaves, filled as the
        /// puts come.
        var leaves: MemoryLeafBuilder?
        /// Once a row ID did not increase: every put's row ID and value, in log order, sorted when applied.
        var rows: [UInt64] = []
        var values = LeafValues()
        /// The puts gathered.
        var count = 0

        /// Adds a put, once each index has checked that it can make the put's entry.
        ///
        /// - Throws: what ``GatheredIndex/check(_:_:tree:)`` throws for the row.
        mutating func append(_ row: UInt64, _ value: UnsafeRawBufferPointer, indexTree: IndexTree) throws {
            for index in indexes { try index.check(row, value, tree: indexTree) }
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
            table.indexes.allSatisfy({ state.indexes[$0.id]?.root == nil })
        else { return false }
        last = (id, gathered.count)
        slots[id] = gathered.count
        gathered.append(
            Puts(
                table: id, indexes: table.indexes.map { GatheredIndex(state: state.indexes[$0.id]!) },
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
        if let inOrder = puts.leaves {
            leaves = inOrder
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
        let built = leaves.finish()
        let indexTree = IndexTree(pages: tree.pages)
        for index in puts.indexes {
            let (root, count) = Self.buildIndex(index.state, over: built, tree: indexTree, owner: owner)
            state.indexes[index.state.id]!.root = root
            state.indexes[index.state.id]!.entryCount = UInt64(count)
        }
        table.root = tree.buildLevels(above: built, owner: owner)
        table.rowCount = UInt64(rowCount)
        table.nextRowID = max(table.nextRowID, lastRow + 1)
        state.tables[id] = table
    }

    /// The tree of `index` over the rows of `leaves` (a table's leaves, in row order): each entry made once, from the
    /// row's bytes in its leaf, and no sort among the entries of one key. Each row was checked when it was gathered
    /// (``GatheredIndex/check(_:_:tree:)``), so none fails here.
    private static func buildIndex(
        _ index: IndexState, over leaves: [BTreeNode], tree: IndexTree, owner: UInt64
    ) -> (root: IndexNodeRef?, count: Int) {
        var entries = PackedIndexEntries()
        for leaf in leaves {
            for position in 0..<leaf.count {
                leaf.values.withCell(position) { cell in
                    guard case .inline(let bytes) = cell else { preconditionFailure("gathered values are inline") }
                    let row = leaf.keys[position]
                    do {
                        try entries.append(
                            of: index, row: row, bytes: bytes, tag: 0, limit: tree.maximumEntry, pages: tree.pages)
                    } catch {
                        preconditionFailure("row \(row) was checked when it was gathered: \(error)")
                    }
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
