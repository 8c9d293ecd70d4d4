import StrataFormat

/// One table as a state of the store sees it.
struct TableState: Sendable {
    let id: TableID
    let name: String
    /// Whether the table belongs to the engine (its name starts with `strata.`): users cannot write it. Stored:
    /// every insert asks.
    let isEngineTable: Bool
    /// The row ID the next insert gets (IDs are never reused).
    var nextRowID: UInt64
    var rowCount: UInt64
    var root: NodeRef?
    /// The secondary indexes over the table, which every put and delete maintains, with their definitions: a write
    /// reads them with the table rather than looking each index up in the catalog (a hash and a copy of its state).
    var indexes: [TableIndex] = []

    init(id: TableID, name: String, nextRowID: UInt64, rowCount: UInt64, root: NodeRef?) {
        self.id = id
        self.name = name
        self.isEngineTable = name.hasPrefix(BlobCatalog.reservedPrefix)
        self.nextRowID = nextRowID
        self.rowCount = rowCount
        self.root = root
    }
}

/// One of a table's secondary indexes as the table lists it: its ID and its definition, which never changes.
struct TableIndex: Sendable {
    let id: IndexID
    let definition: IndexDefinition
}

/// A complete committed (or, inside a write transaction, in-progress) state of the store: the catalog
/// and every table's tree. A value: copying it is how snapshots and transactions get their own view.
struct StoreState: Sendable {
    var tables: [TableID: TableState] = [:]
    var tableIDs: [String: TableID] = [:]
    var nextTableID: UInt32 = 1
    /// The LSN of the last commit this state contains.
    var lsn: UInt64 = 0
    var indexes: [IndexID: IndexState] = [:]
    var indexIDs: [String: IndexID] = [:]
    var nextIndexID: UInt32 = 1
    /// Tables a recovery left unbuilt (``PendingTables``): their roots, and their indexes' roots, are nil here until
    /// resolved. Nil in every state but those an open after a crash publishes.
    var pending: PendingTables?

    /// Table names a user may see: the engine's own tables (``BlobCatalog``) excluded.
    var userTableNames: [String] {
        tableIDs.keys.filter { !$0.hasPrefix(BlobCatalog.reservedPrefix) }.sorted()
    }

    func table(_ id: TableID) throws -> TableState {
        guard let table = tables[id] else { throw StorageError.noSuchTable(id.description) }
        return table
    }

    /// Puts the trees of the pending tables in place (``PendingTables/resolve(_:)``) if `id` is one of them: a change
    /// to a table starts from its rows.
    ///
    /// - Throws: what ``PendingTables/built()`` throws.
    mutating func resolvePending(touching id: TableID) throws {
        if let pending, pending.tables.contains(id) { self = try pending.resolve(self) }
    }

    // MARK: - Changes, shared by write transactions and recovery replay

    mutating func createTable(id: TableID, name: String) throws {
        guard tableIDs[name] == nil else { throw StorageError.tableExists(name: name) }
        guard id.rawValue < UInt32.max else { throw StorageError.invalidArgument("table IDs are exhausted") }
        guard tables[id] == nil else { throw StorageError.invalidArgument("table ID \(id.rawValue) in use") }
        tables[id] = TableState(id: id, name: name, nextRowID: 1, rowCount: 0, root: nil)
        tableIDs[name] = id
        nextTableID = max(nextTableID, id.rawValue + 1)
    }

    mutating func dropTable(id: TableID) throws {
        try resolvePending(touching: id)
        let table = try table(id)
        for index in table.indexes { try dropIndex(id: index.id) }
        tables[id] = nil
        tableIDs[table.name] = nil
    }

    /// Stores a row; returns whether it replaced one. The table's indexes follow, at once or, with `deferred`, when
    /// those changes are applied. One descent: the tree shows the row it replaces to index maintenance
    /// (``RowIndexing``) before anything changes, so a row that cannot be indexed throws with the table as it was.
    ///
    /// - Parameters:
    ///   - onlyReplacing: change nothing when the row does not exist (an update), and return false.
    ///   - forUser: refuse one of the engine's tables (checked here, where the table is read anyway).
    @discardableResult
    mutating func put(
        table id: TableID, row: UInt64, value: LeafValue, tree: BTree, owner: UInt64, onlyReplacing: Bool = false,
        forUser: Bool = false, deferring deferred: inout DeferredIndexChanges?
    ) throws -> Bool {
        var writer = ShowingLeafWriter(value: value, visitor: IgnoringLeafVisitor())
        return try put(
            table: id, row: row, tree: tree, owner: owner, onlyReplacing: onlyReplacing, forUser: forUser,
            deferring: &deferred, writing: &writer)
    }

    /// ``put(table:row:value:tree:owner:onlyReplacing:forUser:deferring:)`` of the value `writer` makes of the row it
    /// finds, in the same one descent: the writer sees the old row first, then index maintenance compares the two.
    /// A throw of the writer leaves the table as it was.
    @discardableResult
    mutating func put<Writer: LeafWriter>(
        table id: TableID, row: UInt64, tree: BTree, owner: UInt64, onlyReplacing: Bool = false,
        forUser: Bool = false, deferring deferred: inout DeferredIndexChanges?, writing writer: inout Writer
    ) throws -> Bool {
        try resolvePending(touching: id)
        guard let slot = tables.index(forKey: id) else { throw StorageError.noSuchTable(id.description) }
        return try put(
            at: slot, row: row, tree: tree, owner: owner, onlyReplacing: onlyReplacing, forUser: forUser,
            deferring: &deferred, writing: &writer)
    }

    /// ``put(table:row:tree:owner:onlyReplacing:forUser:deferring:writing:)`` of the table at `slot` in ``tables``.
    private mutating func put<Writer: LeafWriter>(
        at slot: [TableID: TableState].Index, row: UInt64, tree: BTree, owner: UInt64, onlyReplacing: Bool,
        forUser: Bool, deferring deferred: inout DeferredIndexChanges?, writing writer: inout Writer
    ) throws -> Bool {
        let (root, indexes, refused) = withTable(at: slot) { ($0.root, $0.indexes, forUser && $0.isEngineTable) }
        if refused { throw engineTable(at: slot) }
        guard row < UInt64.max else { throw StorageError.invalidArgument("row ID \(row) is out of range") }
        var indexed = IndexedLeafWriter(
            writer: writer, indexing: RowIndexing(indexes, row: row, pages: tree.pages))
        // Deferred changes are lent to the put, which notes its entries there.
        indexed.indexing.exchangeNoted(with: &deferred)
        let newRoot: NodeRef?
        let replaced: Bool
        do {
            (newRoot, replaced) = try tree.put(
                root, key: row, owner: owner, onlyReplacing: onlyReplacing, writing: &indexed)
        } catch {
            indexed.indexing.exchangeNoted(with: &deferred)
            writer = indexed.writer
            throw error
        }
        indexed.indexing.exchangeNoted(with: &deferred)
        writer = indexed.writer
        if onlyReplacing, !replaced { return false }
        withTable(at: slot) { table in
            table.root = newRoot
            if !replaced { table.rowCount += 1 }
            if row >= table.nextRowID { table.nextRowID = row + 1 }
        }
        // Changes kept by the put (none when it noted them): applied at once.
        if indexed.indexing.keepsChanges { try apply(indexed.indexing, pages: tree.pages, owner: owner) }
        return replaced
    }

    /// Replaces a row of a user table with the value `rewrite` makes of it, in one descent
    /// (``BTree/ownedLeaf(_:key:owner:)``), its index entries changed as a put changes them. `rewrite` runs here, where
    /// the row lies: a caller's closure kept in a ``LeafWriter`` instead would have to be made escaping (an allocation
    /// and its release a row). Changes nothing and returns false when the row does not exist; a throw of `rewrite` or
    /// of index maintenance leaves the table's rows as they were.
    mutating func rewrite(
        table id: TableID, row: UInt64, tree: BTree, owner: UInt64, deferring deferred: inout DeferredIndexChanges?,
        _ rewrite: (LeafCell) throws -> LeafValue
    ) throws -> Bool {
        try resolvePending(touching: id)
        guard let slot = tables.index(forKey: id) else { throw StorageError.noSuchTable(id.description) }
        let (root, indexes, refused) = withTable(at: slot) { ($0.root, $0.indexes, $0.isEngineTable) }
        if refused { throw engineTable(at: slot) }
        guard let (top, leaf, index) = try tree.ownedLeaf(root, key: row, owner: owner) else { return false }
        var indexing = RowIndexing(indexes, row: row, pages: tree.pages)
        // Deferred changes are lent to the visit, which notes the entries there (see put(at:...)).
        indexing.exchangeNoted(with: &deferred)
        let value: LeafValue
        do {
            value = try leaf.values.withCell(index) { old in
                let new = try rewrite(old)
                try indexing.visit(old, new: new)
                return new
            }
        } catch {
            indexing.exchangeNoted(with: &deferred)
            throw error
        }
        indexing.exchangeNoted(with: &deferred)
        // The visit was the last step that can fail: the replacement reads no page.
        let newRoot = try tree.replace(leaf, at: index, with: value, top: top, key: row, owner: owner)
        withTable(at: slot) { $0.root = newRoot }
        // Changes kept by the visit (none when it noted them): applied at once.
        if indexing.keepsChanges { try apply(indexing, pages: tree.pages, owner: owner) }
        return true
    }

    /// Stores a new row of a user table under the table's next row ID, which it returns; its index entries as
    /// ``put(table:row:value:tree:owner:onlyReplacing:forUser:deferring:)`` changes them. One lookup of the table.
    mutating func insert(
        table id: TableID, value: LeafValue, tree: BTree, owner: UInt64, deferring deferred: inout DeferredIndexChanges?
    ) throws -> UInt64 {
        try resolvePending(touching: id)
        guard let slot = tables.index(forKey: id) else { throw StorageError.noSuchTable(id.description) }
        let (row, refused) = withTable(at: slot) { ($0.nextRowID, $0.isEngineTable) }
        if refused { throw engineTable(at: slot) }
        guard row < UInt64.max else {
            throw StorageError.invalidArgument("the row IDs of table \(id.rawValue) are exhausted")
        }
        var writer = ShowingLeafWriter(value: value, visitor: IgnoringLeafVisitor())
        _ = try put(
            at: slot, row: row, tree: tree, owner: owner, onlyReplacing: false, forUser: false, deferring: &deferred,
            writing: &writer)
        return row
    }

    /// Calls `body` with the table at `slot` where it lies in ``tables``: `Dictionary.Values`' getter copies the whole
    /// `TableState` (its name, root and index list retained, then released), 250 instructions a read of one field.
    private mutating func withTable<R>(at slot: [TableID: TableState].Index, _ body: (inout TableState) -> R) -> R {
        body(&tables.values[slot])
    }

    /// The table's root, read where the table lies (see ``withTable(at:_:)``; mutating for that reason only).
    mutating func root(of id: TableID) throws -> NodeRef? {
        guard let slot = tables.index(forKey: id) else { throw StorageError.noSuchTable(id.description) }
        return withTable(at: slot) { $0.root }
    }

    private func engineTable(at slot: [TableID: TableState].Index) -> StorageError {
        StorageError.invalidArgument("\(tables.values[slot].name) belongs to the engine")
    }

    /// Stores a row, its index entries changed at once.
    @discardableResult
    mutating func put(table id: TableID, row: UInt64, value: LeafValue, tree: BTree, owner: UInt64) throws -> Bool {
        var immediate: DeferredIndexChanges?
        return try put(table: id, row: row, value: value, tree: tree, owner: owner, deferring: &immediate)
    }

    /// Removes a row; returns whether it was there. Its index entries go at once or, with `deferred`, when those
    /// changes are applied; the tree's one descent shows the row to `caller`, then to index maintenance
    /// (``RowIndexing``).
    /// - Parameters:
    ///   - forUser: refuse one of the engine's tables.
    ///   - caller: sees the row first; a throw stops the delete with the table as it was.
    @discardableResult
    mutating func delete<Caller: LeafVisitor>(
        table id: TableID, row: UInt64, tree: BTree, owner: UInt64, forUser: Bool = false,
        deferring deferred: inout DeferredIndexChanges?, showing caller: inout Caller
    ) throws -> Bool {
        try resolvePending(touching: id)
        guard let slot = tables.index(forKey: id) else { throw StorageError.noSuchTable(id.description) }
        let (root, indexes, rowCount, refused) = withTable(at: slot) {
            ($0.root, $0.indexes, $0.rowCount, forUser && $0.isEngineTable)
        }
        if refused { throw engineTable(at: slot) }
        var visitors = ChainedLeafVisitor(
            first: caller, second: RowIndexing(indexes, row: row, pages: tree.pages))
        // Deferred changes are lent to the delete, which notes its removals there; a delete that fails after its
        // visit (the tree's rebalancing reads pages) takes them back.
        visitors.second.exchangeNoted(with: &deferred)
        let newRoot: NodeRef?
        let deleted: Bool
        do {
            (newRoot, deleted) = try tree.delete(root, key: row, owner: owner, seeing: &visitors)
            guard !deleted || rowCount > 0 else {
                throw StorageError.corruption(
                    file: tables.values[slot].name, offset: row, reason: "the table's row count is below its rows")
            }
        } catch {
            visitors.second.takeBackDelete()
            visitors.second.exchangeNoted(with: &deferred)
            caller = visitors.first
            throw error
        }
        visitors.second.exchangeNoted(with: &deferred)
        caller = visitors.first
        let indexing = visitors.second
        guard deleted else { return false }
        withTable(at: slot) { table in
            table.root = newRoot
            table.rowCount -= 1
        }
        // Changes kept by the delete (none when it noted them): applied at once.
        if indexing.keepsChanges { try apply(indexing, pages: tree.pages, owner: owner) }
        return true
    }

    /// Removes a row, its index entries at once or, with `deferred`, when those changes are applied.
    @discardableResult
    mutating func delete(
        table id: TableID, row: UInt64, tree: BTree, owner: UInt64, forUser: Bool = false,
        deferring deferred: inout DeferredIndexChanges?
    ) throws -> Bool {
        var ignoring = IgnoringLeafVisitor()
        return try delete(
            table: id, row: row, tree: tree, owner: owner, forUser: forUser, deferring: &deferred, showing: &ignoring)
    }

    /// Removes a row, its index entries at once.
    @discardableResult
    mutating func delete(table id: TableID, row: UInt64, tree: BTree, owner: UInt64) throws -> Bool {
        var immediate: DeferredIndexChanges?
        return try delete(table: id, row: row, tree: tree, owner: owner, deferring: &immediate)
    }

    /// Raises a table's next row ID (never lowers it).
    mutating func reserveRows(table id: TableID, upTo next: UInt64) throws {
        guard var table = tables[id] else { throw StorageError.noSuchTable(id.description) }
        table.nextRowID = max(table.nextRowID, next)
        tables[id] = table
    }

    /// Applies one logged operation (recovery replay).
    mutating func apply(_ operation: WALOperation, tree: BTree, owner: UInt64) throws {
        switch operation {
        case .createTable(let id, let name): try createTable(id: TableID(id), name: name)
        case .dropTable(let id): try dropTable(id: TableID(id))
        case .put(let id, let row, let value):
            try put(table: TableID(id), row: row, value: .bytes(value), tree: tree, owner: owner)
        case .delete(let id, let row): try delete(table: TableID(id), row: row, tree: tree, owner: owner)
        case .reserveRows(let id, let next): try reserveRows(table: TableID(id), upTo: next)
        case .createIndex(let descriptor):
            try createIndex(
                id: IndexID(descriptor.indexID), definition: IndexDefinition(descriptor), tree: tree, owner: owner)
        case .dropIndex(let id): try dropIndex(id: IndexID(id))
        }
    }
}
