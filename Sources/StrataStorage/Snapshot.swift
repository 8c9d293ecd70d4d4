import StrataFormat

/// A consistent, read-only view of a store at one commit.
///
/// A snapshot sees exactly the state committed when it was taken, unaffected by later commits and
/// checkpoints, for as long as it is kept. Snapshots are values: share them across threads freely.
/// Keeping one alive keeps the memory of the trees it sees alive, so take a new one for new work.
public struct Snapshot: Sendable {
    let state: StoreState
    let tree: BTree
    let blobs: BlobStore

    /// The log sequence number of the last commit this snapshot contains.
    public var lsn: UInt64 { state.lsn }

    /// The table with this name, if any.
    public func table(named name: String) -> TableID? {
        name.hasPrefix(BlobCatalog.reservedPrefix) ? nil : state.tableIDs[name]
    }

    /// The names of every table, sorted (the engine's own tables excluded).
    public var tableNames: [String] { state.userTableNames }

    /// The value of a row, or nil when there is none.
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read.
    public func row(_ row: RowID, in table: TableID) throws -> [UInt8]? {
        guard let value = try tree.get(state.table(table).root, row.rawValue) else { return nil }
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
        try tree.withCell(state.table(table).root, row.rawValue) { cell in
            result = try tree.pages.withBytes(of: cell, body)
        }
        return result
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
            tree: tree, root: state.table(table).root, lower: lower, upper: upper, reverse: reverse, body)
    }

    /// The number of rows in a table (kept with the table: no scan).
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``.
    public func rowCount(in table: TableID) throws -> Int { Int(try state.table(table).rowCount) }

    /// The row ID the table's next insert will get.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``.
    public func nextRowID(in table: TableID) throws -> RowID { RowID(try state.table(table).nextRowID) }
}
