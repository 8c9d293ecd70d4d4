import StrataFormat

extension Snapshot {
    // MARK: - Secondary indexes

    /// The index with this name, if any.
    public func index(named name: String) -> IndexID? { committed.indexIDs[name] }

    /// What an index indexes.
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``.
    public func indexDefinition(_ index: IndexID) throws -> IndexDefinition {
        try committed.index(index).definition
    }

    /// The names of the indexes over a table, sorted (none for a table that does not exist).
    public func indexNames(on table: TableID) -> [String] { IndexScan.names(committed, on: table) }

    /// The names of every index, sorted.
    public var indexNames: [String] { committed.indexIDs.keys.sorted() }

    /// Calls `body` for each entry of an index between two bounds (both optional), in key then row-ID
    /// order or reversed, as of this snapshot; `body` returns false to stop.
    ///
    /// For example, the ten oldest people, oldest first, on an index whose first field is the age:
    /// ```swift
    /// var oldest: [RowID] = []
    /// try snapshot.forEachIndexEntry(in: byAge, reverse: true) { entry in
    ///     oldest.append(entry.row)
    ///     return oldest.count < 10
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - index: the index to scan.
    ///   - lower: where the scan starts: a key or prefix, inclusive or not (``IndexBound``); nil: the first entry.
    ///   - upper: where it ends; nil: the last entry.
    ///   - reverse: whether to walk from the upper end down.
    ///   - body: called with each entry; returns false to stop.
    /// - Throws: ``StorageError/noSuchIndex(_:)``; ``StorageError/invalidArgument(_:)`` for a bound with more
    ///   parts than the index has; ``StorageError/corruption(file:offset:reason:)`` or ``StorageError/io(_:)``
    ///   when a page cannot be read; or what `body` throws.
    public func forEachIndexEntry(
        in index: IndexID, from lower: IndexBound? = nil, through upper: IndexBound? = nil, reverse: Bool = false,
        _ body: (IndexEntry) throws -> Bool
    ) throws {
        try IndexScan.forEach(
            state, pages: tree.pages, index: index, lower: lower, upper: upper, reverse: reverse, body)
    }

    /// Calls `body` with each entry of an index in a key range, as ``forEachIndexEntry(in:from:through:reverse:_:)``
    /// does, but lent where it lies in its page: nothing is decoded or allocated until `body` asks for a key part
    /// (``IndexEntryView/keyPart(_:)``), which makes covering scans cheap. The view is valid only during the call.
    ///
    /// - Throws: as ``forEachIndexEntry(in:from:through:reverse:_:)``, or what `body` throws.
    public func forEachIndexEntryView(
        in index: IndexID, from lower: IndexBound? = nil, through upper: IndexBound? = nil, reverse: Bool = false,
        _ body: (IndexEntryView) throws -> Bool
    ) throws {
        try IndexScan.forEachView(
            state, pages: tree.pages, index: index, lower: lower, upper: upper, reverse: reverse, body)
    }

    /// The rows whose key equals `key`, or starts with it when it has fewer parts than the index, in key then
    /// row-ID order, as of this snapshot. Values match as their index encodings do (`-0.0` matches `0.0`,
    /// `1.50` matches `1.5`).
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``; ``StorageError/invalidArgument(_:)`` for a key with more
    ///   parts than the index has; ``StorageError/corruption(file:offset:reason:)`` or ``StorageError/io(_:)``.
    public func rowIDs(in index: IndexID, matching key: [RowRecord.Field]) throws -> [RowID] {
        try IndexScan.rowIDs(state, pages: tree.pages, index: index, matching: key)
    }

    /// The number of entries in an index (kept with the index: no scan).
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``.
    public func indexEntryCount(_ index: IndexID) throws -> Int { Int(try state.index(index).entryCount) }
}
