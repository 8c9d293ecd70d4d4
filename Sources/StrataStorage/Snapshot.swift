import StrataFormat

/// A consistent, read-only view of a store at one commit.
///
/// A snapshot sees exactly the state committed when it was taken, unaffected by later commits and
/// checkpoints, for as long as it is kept. Snapshots are values: share them across threads freely.
/// Keeping one alive keeps the memory of the trees it sees alive, so take a new one for new work.
public struct Snapshot: Sendable {
    /// The state as committed: after a recovery, its tables may be pending (``PendingTables``). Its catalog (tables
    /// and index definitions), row counts and next row IDs are right; everything else reads ``state``.
    let committed: StoreState
    let tree: BTree
    let blobs: BlobStore

    init(state: StoreState, tree: BTree, blobs: BlobStore) {
        self.committed = state
        self.tree = tree
        self.blobs = blobs
    }

    /// The state with every tree in place: the tables a recovery left pending are built at the first read of one
    /// (shared by every snapshot, once).
    ///
    /// - Throws: what ``PendingTables/built()`` throws.
    var state: StoreState {
        get throws {
            if let pending = committed.pending { return try pending.resolve(committed) }
            return committed
        }
    }

    /// The root of a table's row tree, built first if a recovery left it pending: what reads of rows start from,
    /// without a copy of the whole state.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``; what ``PendingTables/built()`` throws.
    func root(of table: TableID) throws -> NodeRef? {
        if let pending = committed.pending, pending.tables.contains(table),
            let built = try pending.built().tables[table]
        {
            return built
        }
        return try committed.table(table).root
    }

    /// The log sequence number of the last commit this snapshot contains.
    public var lsn: UInt64 { committed.lsn }

    /// The table with this name, if any.
    public func table(named name: String) -> TableID? {
        name.hasPrefix(BlobCatalog.reservedPrefix) ? nil : committed.tableIDs[name]
    }

    /// The names of every table, sorted (the engine's own tables excluded).
    public var tableNames: [String] { committed.userTableNames }

    /// The value of a row, or nil when there is none.
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read.
    public func row(_ row: RowID, in table: TableID) throws -> [UInt8]? {
        guard let value = try tree.get(root(of: table), row.rawValue) else { return nil }
        return try tree.pages.bytes(of: value)
    }

    /// Calls `body` with the bytes of a row without copying them, if the row exists.
    ///
    /// The buffer is valid only during `body`: a committed row is lent where it lies in the mapped page file.
    ///
    /// - Returns: what `body` returns, or nil when the row does not exist (`body` is then not called).
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read; or what `body` throws.
    public func withRow<R>(_ row: RowID, in table: TableID, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var result: R?
        try tree.withCell(root(of: table), row.rawValue) { cell in
            result = try tree.pages.withBytes(of: cell, body)
        }
        return result
    }

    /// Calls `body` with each of `rows` and its bytes (nil when the row does not exist), in the order given.
    ///
    /// Rows in increasing order (as an index gives the rows of one key) are found in one walk of the tree: a row
    /// in the same leaf as the one before needs no new descent. Other orders work too, a run at a time. The bytes
    /// are lent where they lie, valid only during the call.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read; or what `body` throws.
    public func forEachRow(
        _ rows: [RowID], in table: TableID, _ body: (RowID, UnsafeRawBufferPointer?) throws -> Bool
    ) throws {
        let root = try root(of: table)
        // The cell closure captures the page store alone: capturing the snapshot copied it (a retain of each of its
        // references) at every leaf the walk entered, more than the leaf's search.
        let pages = tree.pages
        var start = 0
        var keys: [UInt64] = []
        keys.reserveCapacity(rows.count)
        while start < rows.count {
            // The longest strictly increasing run from `start`, walked at once.
            keys.removeAll(keepingCapacity: true)
            keys.append(rows[start].rawValue)
            var end = start + 1
            while end < rows.count, rows[end].rawValue > rows[end - 1].rawValue {
                keys.append(rows[end].rawValue)
                end += 1
            }
            let going = try keys.withUnsafeBufferPointer { keys in
                try tree.forEachCell(root, keys: keys) { position, cell in
                    let row = RowID(keys[position])
                    guard let cell else { return try body(row, nil) }
                    return try pages.withBytes(of: cell) { try body(row, $0) }
                }
            }
            if !going { return }
            start = end
        }
    }

    /// Calls `body` for each row with a row ID in `lower...upper` (both optional), in row-ID order or
    /// reversed; `body` returns false to stop.
    ///
    /// - Parameters:
    ///   - table: the table to walk.
    ///   - lower: the smallest row ID to visit, or nil for no bound.
    ///   - upper: the largest row ID to visit, or nil for no bound.
    ///   - reverse: whether to walk from the highest row ID down.
    ///   - body: called with each row's ID and bytes, which are valid only during the call; returns false to stop.
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read; or what `body` throws.
    public func forEachRow(
        in table: TableID, from lower: RowID? = nil, through upper: RowID? = nil, reverse: Bool = false,
        _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try RowWalk.forEach(
            tree: tree, root: root(of: table), lower: lower, upper: upper, reverse: reverse, body)
    }

    /// The number of rows in a table (kept with the table: no scan).
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``.
    public func rowCount(in table: TableID) throws -> Int { Int(try committed.table(table).rowCount) }

    /// The row ID the table's next insert will get.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``.
    public func nextRowID(in table: TableID) throws -> RowID { RowID(try committed.table(table).nextRowID) }
}
