import StrataFormat

extension WriteTransaction {
    // MARK: - Secondary indexes

    /// Creates a secondary index over a table and fills it from the table's rows.
    ///
    /// The table's rows must be row records (FORMAT.md, "Row records"); from now on every put and delete of
    /// the table, in this transaction and all later ones, keeps the index in step, and a put of a row that
    /// is not a row record (or whose key is too long) throws before it changes anything. The index is
    /// durable with the transaction, and is dropped with its table.
    ///
    /// For example:
    /// ```swift
    /// let byName = try txn.createIndex(named: "person.name", on: people, fields: [0], entityIDs: [2, 3])
    /// let adas = try txn.rowIDs(in: byName, matching: [.string("Ada")])
    /// ```
    ///
    /// - Parameters:
    ///   - name: unique among the store's indexes: 1...1,024 UTF-8 bytes, not starting with `strata.`.
    ///   - table: a user table.
    ///   - fields: 1...16 row-record field positions (0...65534): the key's parts in order. A position at or
    ///     past a row's field count is null for that row.
    ///   - entityIDs: index only rows whose row-record entity ID is in the set (at most 65,535); nil: every row.
    /// - Returns: the new index's ID (never reused).
    /// - Throws: ``StorageError/indexExists(name:)``; ``StorageError/noSuchTable(_:)``;
    ///   ``StorageError/invalidArgument(_:)`` for a bad name, field list or entity set, an engine table, a
    ///   row that is not a row record, or a key longer than the page size allows
    ///   (``PageFormat/maximumIndexEntry(pageSize:)`` less 8 bytes: 998 at 4 KiB).
    @discardableResult
    public func createIndex(
        named name: String, on table: TableID, fields: [Int], entityIDs: Set<UInt16>? = nil
    ) throws -> IndexID {
        checkActive()
        try applyIndexChanges()
        let length = name.utf8.count
        guard length > 0, length <= WALFormat.maximumTableNameLength else {
            throw StorageError.invalidArgument("index names take 1...\(WALFormat.maximumTableNameLength) UTF-8 bytes")
        }
        guard !name.hasPrefix(BlobCatalog.reservedPrefix) else {
            throw StorageError.invalidArgument(
                "index names starting with '\(BlobCatalog.reservedPrefix)' belong to the engine")
        }
        _ = try userTable(table)
        let id = IndexID(state.nextIndexID)
        let definition = IndexDefinition(name: name, table: table, fields: fields, entityIDs: entityIDs)
        try state.createIndex(id: id, definition: definition, tree: tree, owner: tag)
        log.appendOperation { WALOperation.encodeCreateIndex(definition.descriptor(id: id), into: &$0) }
        return id
    }

    /// Drops a secondary index and its entries. Its ID is never given to another index.
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``.
    public func dropIndex(_ index: IndexID) throws {
        checkActive()
        try applyIndexChanges()
        try state.dropIndex(id: index)
        log.appendOperation { WALOperation.encodeDropIndex(indexID: index.rawValue, into: &$0) }
    }

    /// Rebuilds a secondary index from its table's rows, under the same ID, name and definition: the repair
    /// for an index that disagrees with its table or whose pages are damaged (``StoreVerifier`` reports
    /// either). Its old pages are not read.
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``; what ``createIndex(named:on:fields:entityIDs:)`` throws
    ///   for the table's rows.
    public func rebuildIndex(_ index: IndexID) throws {
        checkActive()
        try applyIndexChanges()
        let definition = try state.index(index).definition
        try state.dropIndex(id: index)
        try state.createIndex(id: index, definition: definition, tree: tree, owner: tag)
        log.appendOperation { WALOperation.encodeDropIndex(indexID: index.rawValue, into: &$0) }
        log.appendOperation { WALOperation.encodeCreateIndex(definition.descriptor(id: index), into: &$0) }
    }

    /// The index with this name, if any.
    public func index(named name: String) -> IndexID? {
        checkActive()
        return state.indexIDs[name]
    }

    /// What an index indexes.
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``.
    public func indexDefinition(_ index: IndexID) throws -> IndexDefinition {
        checkActive()
        return try state.index(index).definition
    }

    /// The names of the indexes over a table, sorted (none for a table that does not exist).
    public func indexNames(on table: TableID) -> [String] {
        checkActive()
        return IndexScan.names(state, on: table)
    }

    /// Calls `body` for each entry of an index between two bounds (both optional), in key then row-ID
    /// order or reversed, as this transaction sees it (its own changes included); `body` returns false to stop.
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
        checkActive()
        try applyIndexChanges()
        try IndexScan.forEach(
            state, pages: tree.pages, index: index, lower: lower, upper: upper, reverse: reverse, body)
    }

    /// The rows whose key equals `key`, or starts with it when it has fewer parts than the index, in key then
    /// row-ID order, as this transaction sees them. Values match as their index encodings do (`-0.0` matches
    /// `0.0`, `1.50` matches `1.5`).
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``; ``StorageError/invalidArgument(_:)`` for a key with more
    ///   parts than the index has; ``StorageError/corruption(file:offset:reason:)`` or ``StorageError/io(_:)``.
    public func rowIDs(in index: IndexID, matching key: [RowRecord.Field]) throws -> [RowID] {
        checkActive()
        try applyIndexChanges()
        return try IndexScan.rowIDs(state, pages: tree.pages, index: index, matching: key)
    }

    /// The number of entries in an index as this transaction sees it (kept with the index: no scan).
    ///
    /// - Throws: ``StorageError/noSuchIndex(_:)``.
    public func indexEntryCount(_ index: IndexID) throws -> Int {
        checkActive()
        return Int(try state.index(index).entryCount) + (indexChanges?.entryDelta(of: index) ?? 0)
    }
}
