import StrataFormat

/// The one write transaction of a store, valid only inside the closure passed to ``Store/write(_:)``.
///
/// Reads inside the transaction see its own changes. Nothing is visible to snapshots until the closure
/// returns and the commit is acknowledged; a closure that throws leaves the store as it was.
///
/// For example:
/// ```swift
/// let id = try store.write { txn in
///     let people = try txn.createTable(named: "person")
///     return try txn.insert(Array("Ada".utf8), into: people)
/// }
/// ```
public final class WriteTransaction {
    // The properties every write changes are not checked for exclusive access at run time: the swift_beginAccess and
    // swift_endAccess pair of a class's stored property costs about 120 instructions, and a put makes four. The
    // transaction belongs to the one thread running the closure (it is not Sendable), and no method changes one of
    // them inside a closure that another access to it runs (the static checks still cover local variables).
    @exclusivity(unchecked) var state: StoreState
    @exclusivity(unchecked) var log: TransactionLog
    let tree: BTree
    let blobs: BlobStore
    let tag: UInt64
    @exclusivity(unchecked) private var isActive = true
    /// Whether a method is lending a row to the caller's closure, which must not use the transaction meanwhile: the
    /// row lies in a leaf the transaction would change.
    @exclusivity(unchecked) private var isLending = false
    /// The new bytes of a row ``update(_:in:rewriting:)`` rewrites: emptied, not freed, from one rewrite to the next.
    @exclusivity(unchecked) var rewritten: [UInt8] = []
    /// Whether blob chunks were appended, which must be synced before the commit is logged.
    var wroteBlobs = false
    /// Index entry changes not yet in the index trees: applied before an index is read and at commit.
    @exclusivity(unchecked) var indexChanges: DeferredIndexChanges? = DeferredIndexChanges()
    /// The memory of ``indexChanges`` already counted toward the spill bound (``logPut``).
    @exclusivity(unchecked) var countedIndexBytes = 0
    /// Why applying the deferred index changes failed, if it did: the index trees may hold part of them, so every later
    /// index read and the commit throw this error (a caller that caught it cannot commit indexes out of step with
    /// their tables).
    private var indexFailure: (any Error)?
    /// Where a large transaction writes its full leaves once its rows pass the memory bound.
    @exclusivity(unchecked) var spill: LeafSpill

    init(
        state: StoreState, tree: BTree, blobs: BlobStore, tag: UInt64, salt: UInt32, largeBytes: UInt64,
        spill: LeafSpill
    ) {
        self.state = state
        self.tree = tree
        self.blobs = blobs
        self.tag = tag
        self.log = TransactionLog(salt: salt, firstLSN: state.lsn + 1, largeBytes: largeBytes)
        self.spill = spill
    }

    func end() { isActive = false }

    /// Before the commit puts the deferred index changes into the index trees: a large transaction writes its table
    /// leaves out first, since that sort and build are its commit's peak of memory (``LeafSpill``).
    func prepareCommit() throws {
        if log.isLarge, indexChanges?.isEmpty == false {
            try spill.spill(state.tables.values.map(\.root), tree: tree, owner: tag)
        }
        try applyIndexChanges()
    }

    /// Puts the deferred index changes into the index trees (before an index is read or the state is committed).
    func applyIndexChanges() throws {
        if let indexFailure { throw indexFailure }
        guard indexChanges?.isEmpty == false else { return }
        do {
            try indexChanges!.apply(
                to: &state, tree: IndexTree(pages: tree.pages), owner: tag, spill: &spill, writingLeaves: log.isLarge)
        } catch {
            indexFailure = error
            throw error
        }
    }

    func checkActive() {
        precondition(isActive, "a WriteTransaction is valid only inside the closure passed to Store.write")
        precondition(!isLending, "a WriteTransaction cannot be used inside a closure it lends a row to")
    }

    /// Runs `body` with the transaction closed to the caller (see ``isLending``).
    private func lending<R>(_ body: () throws -> R) rethrows -> R {
        isLending = true
        defer { isLending = false }
        return try body()
    }

    // MARK: - Tables

    /// Creates an empty table.
    /// - Throws: ``StorageError/tableExists(name:)``, ``StorageError/invalidArgument(_:)`` for an empty name
    ///   or one longer than 1,024 UTF-8 bytes.
    @discardableResult
    public func createTable(named name: String) throws -> TableID {
        checkActive()
        let length = name.utf8.count
        guard length > 0, length <= WALFormat.maximumTableNameLength else {
            throw StorageError.invalidArgument("table names take 1...\(WALFormat.maximumTableNameLength) UTF-8 bytes")
        }
        guard !name.hasPrefix(BlobCatalog.reservedPrefix) else {
            throw StorageError.invalidArgument(
                "table names starting with '\(BlobCatalog.reservedPrefix)' belong to the engine")
        }
        return try createTableUnchecked(named: name)
    }

    func createTableUnchecked(named name: String) throws -> TableID {
        let id = TableID(state.nextTableID)
        try state.createTable(id: id, name: name)
        log.appendOperation { WALOperation.encodeCreateTable(tableID: id.rawValue, name: name, into: &$0) }
        return id
    }

    /// Drops a table and all its rows. Its ID is never given to another table.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/invalidArgument(_:)`` for one of the
    ///   engine's own tables.
    public func dropTable(_ table: TableID) throws {
        checkActive()
        try applyIndexChanges()
        if state.tables[table]?.name.hasPrefix(BlobCatalog.reservedPrefix) == true {
            throw StorageError.invalidArgument("the engine's own tables cannot be dropped")
        }
        try state.dropTable(id: table)
        log.appendOperation { WALOperation.encodeDropTable(tableID: table.rawValue, into: &$0) }
    }

    /// The table with this name, if any.
    public func table(named name: String) -> TableID? {
        name.hasPrefix(BlobCatalog.reservedPrefix) ? nil : state.tableIDs[name]
    }

    /// The table, which must be a user's: the engine's own tables are written only by the engine.
    func userTable(_ table: TableID) throws -> TableState {
        // The table straight from the dictionary: `state.table(_:)`, called on the class's stored state, copied the
        // whole state (a retain and release of each of its tables) for every row a save inserted.
        guard let found = state.tables[table] else { throw StorageError.noSuchTable(table.description) }
        guard !found.isEngineTable else { throw StorageError.invalidArgument("\(found.name) belongs to the engine") }
        return found
    }

    /// The names of every table, sorted (the engine's own tables excluded).
    public var tableNames: [String] { state.userTableNames }

    // MARK: - Rows

    /// Inserts a row and returns its new row ID (one more than any the table ever had).
    ///
    /// - Parameters:
    ///   - value: the row's bytes, at most `WALFormat.maximumValueSize` (64 MiB).
    ///   - table: a user table.
    /// - Returns: the new row's ID.
    /// - Throws: ``StorageError/noSuchTable(_:)``, ``StorageError/invalidArgument(_:)`` for a value over 64 MiB,
    ///   one of the engine's tables or exhausted row IDs.
    @discardableResult
    public func insert(_ value: [UInt8], into table: TableID) throws -> RowID {
        checkActive()
        try checkSize(value)
        let row = try state.insert(table: table, value: .bytes(value), tree: tree, owner: tag, deferring: &indexChanges)
        try logPut(table, row, value)
        return RowID(row)
    }

    /// Inserts a row under a row ID reserved earlier with ``reserveRowIDs(_:in:)`` (or any unused ID).
    /// The table's next row ID rises past `row` if it was not already.
    ///
    /// - Parameters:
    ///   - value: the row's bytes, at most `WALFormat.maximumValueSize` (64 MiB).
    ///   - table: a user table.
    ///   - row: an ID no row of the table has now, below `UInt64.max`.
    /// - Throws: ``StorageError/invalidArgument(_:)`` when a row with this ID exists, for a value over 64 MiB
    ///   or one of the engine's tables; ``StorageError/noSuchTable(_:)``.
    public func insert(_ value: [UInt8], into table: TableID, at row: RowID) throws {
        checkActive()
        try checkSize(value)
        guard try tree.get(userTable(table).root, row.rawValue) == nil else {
            throw StorageError.invalidArgument("row \(row.rawValue) exists in table \(table.rawValue)")
        }
        try state.put(
            table: table, row: row.rawValue, value: .bytes(value), tree: tree, owner: tag, deferring: &indexChanges)
        try logPut(table, row.rawValue, value)
    }

    /// Reserves `count` consecutive row IDs that no insert will allocate; insert them later with
    /// ``insert(_:into:at:)``. The reservation is durable with the transaction.
    /// - Returns: the first reserved ID.
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/invalidArgument(_:)`` for an engine table
    ///   or when the row IDs would run past `UInt64.max`. A `count` below 1 is a precondition failure.
    public func reserveRowIDs(_ count: Int, in table: TableID) throws -> RowID {
        checkActive()
        precondition(count > 0)
        let first = try userTable(table).nextRowID
        let (next, overflow) = first.addingReportingOverflow(UInt64(count))
        guard !overflow else { throw StorageError.invalidArgument("cannot reserve \(count) more row IDs") }
        try state.reserveRows(table: table, upTo: next)
        log.appendOperation { WALOperation.encodeReserveRows(tableID: table.rawValue, nextRowID: next, into: &$0) }
        return RowID(first)
    }

    /// Replaces the value of an existing row.
    ///
    /// - Parameters:
    ///   - row: the row to replace.
    ///   - table: a user table.
    ///   - value: the row's new bytes, at most `WALFormat.maximumValueSize` (64 MiB).
    /// - Throws: ``StorageError/rowNotFound(table:row:)`` when the row does not exist;
    ///   ``StorageError/noSuchTable(_:)``; ``StorageError/invalidArgument(_:)`` for a value over 64 MiB or
    ///   one of the engine's tables.
    public func update(_ row: RowID, in table: TableID, to value: [UInt8]) throws {
        checkActive()
        try checkSize(value)
        // One descent: the put finds the row, or changes nothing. No row has the last ID (the put refuses it). The put
        // checks that the table is a user's, where it reads the table anyway.
        guard row.rawValue < UInt64.max,
            try state.put(
                table: table, row: row.rawValue, value: .bytes(value), tree: tree, owner: tag, onlyReplacing: true,
                forUser: true, deferring: &indexChanges)
        else { throw StorageError.rowNotFound(table: table, row: row) }
        try logPut(table, row.rawValue, value)
    }

    /// Rewrites a row in one search of its table: `body` sees the row's bytes where the update finds them and writes
    /// the new row, which replaces them there. In place of ``row(_:in:)`` then ``update(_:in:to:)``, two searches
    /// and two arrays a row, for a change that depends on the row, or that keeps most of it (an SQL
    /// `UPDATE ... SET field = ? WHERE id = ?`). Index entries change only when the indexed fields' bytes do.
    ///
    /// For example, setting the first field of a row record laid out as ``RowRecord`` describes:
    /// ```swift
    /// try txn.update(row, in: employees) { old, new in
    ///     var (header, fields) = try RowRecord.decodeAll(old)
    ///     fields[0] = .int64(salary)
    ///     new = RowRecord.encode(entityID: header.entityID, rowVersion: header.rowVersion, fields: fields)
    /// }
    /// ```
    /// A caller that knows the row's layout writes the bytes itself (`new.append(contentsOf:)`), allocating nothing.
    ///
    /// - Parameters:
    ///   - row: the row to rewrite.
    ///   - table: a user table.
    ///   - body: sees the row's bytes (`old`, valid only during the call) and puts the row's new bytes in `new`, at
    ///     most `WALFormat.maximumValueSize` (64 MiB). `new` comes empty, with the capacity of the rows rewritten
    ///     before in this transaction, so appending a row no longer than those allocates nothing. Not called when
    ///     there is no row. What it throws stops the update with nothing changed, and is rethrown. It must not use
    ///     the transaction (a precondition failure).
    /// - Throws: ``StorageError/rowNotFound(table:row:)`` when the row does not exist;
    ///   ``StorageError/noSuchTable(_:)``; ``StorageError/invalidArgument(_:)`` for a new row over 64 MiB or one of
    ///   the engine's tables; ``StorageError/corruption(file:offset:reason:)`` or ``StorageError/io(_:)`` when a page
    ///   cannot be read; or what `body` throws.
    public func update(
        _ row: RowID, in table: TableID,
        rewriting body: (_ old: UnsafeRawBufferPointer, _ new: inout [UInt8]) throws -> Void
    ) throws {
        checkActive()
        // One descent, as update(_:in:to:): `body` makes the new row where the tree finds the old one. The bytes stay
        // in `rewritten` for the log record.
        let found = try lending { try row.rawValue < UInt64.max && rewrite(row.rawValue, in: table, body) }
        guard found else { throw StorageError.rowNotFound(table: table, row: row) }
        try logPut(table, row.rawValue, rewritten)
    }

    /// ``update(_:in:rewriting:)``'s change: `body` is called from the state's rewrite, where the row lies, rather
    /// than kept in a writer passed down the descent (withoutActuallyEscaping made a closure context an update for
    /// that, and released it).
    private func rewrite(
        _ row: UInt64, in table: TableID, _ body: (UnsafeRawBufferPointer, inout [UInt8]) throws -> Void
    ) throws -> Bool {
        try state.rewrite(table: table, row: row, tree: tree, owner: tag, deferring: &indexChanges) { old in
            rewritten.removeAll(keepingCapacity: true)
            try tree.pages.withBytes(of: old) { try body($0, &rewritten) }
            try checkSize(rewritten)
            return .bytes(rewritten)
        }
    }

    /// Deletes a row.
    /// - Returns: whether the row existed.
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/invalidArgument(_:)`` for an engine table;
    ///   ``StorageError/corruption(file:offset:reason:)`` or ``StorageError/io(_:)`` when a page cannot be read.
    @discardableResult
    public func delete(_ row: RowID, from table: TableID) throws -> Bool {
        checkActive()
        return try deleteRow(row, from: table, forUser: true)
    }

    /// Deletes a row, lending its bytes to `body` first, in the delete's one descent: a caller that checks the row
    /// (its version) or frees what it references (its blobs) does not search for it a second time.
    ///
    /// - Parameters:
    ///   - row: the row to delete.
    ///   - table: a user table.
    ///   - body: sees the row's bytes, valid only during the call, before the row goes; not called when there is no
    ///     row. What it throws stops the delete with nothing changed, and is rethrown.
    /// - Returns: whether the row existed.
    /// - Throws: what ``delete(_:from:)`` throws, or what `body` throws.
    @discardableResult
    public func delete(
        _ row: RowID, from table: TableID, seeing body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        checkActive()
        return try withoutActuallyEscaping(body) { body in
            var lender = LeafBytesLender(pages: tree.pages, body: body)
            return try lending { try deleteRow(row, from: table, forUser: true, showing: &lender) }
        }
    }

    /// Deletes a row of any table, the engine's included unless `forUser`.
    func deleteRow(_ row: RowID, from table: TableID, forUser: Bool = false) throws -> Bool {
        var ignoring = IgnoringLeafVisitor()
        return try deleteRow(row, from: table, forUser: forUser, showing: &ignoring)
    }

    /// ``deleteRow(_:from:forUser:)``, showing the row to `caller` where the delete finds it.
    private func deleteRow<Caller: LeafVisitor>(
        _ row: RowID, from table: TableID, forUser: Bool, showing caller: inout Caller
    ) throws -> Bool {
        // One descent: the delete finds the row, or changes nothing.
        guard
            try state.delete(
                table: table, row: row.rawValue, tree: tree, owner: tag, forUser: forUser, deferring: &indexChanges,
                showing: &caller)
        else { return false }
        log.appendOperation { WALOperation.encodeDelete(tableID: table.rawValue, rowID: row.rawValue, into: &$0) }
        return true
    }

    /// The value of a row as this transaction sees it, or nil when there is none.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read.
    public func row(_ row: RowID, in table: TableID) throws -> [UInt8]? {
        checkActive()
        guard let value = try tree.get(state.root(of: table), row.rawValue) else { return nil }
        return try tree.pages.bytes(of: value)
    }

    /// The number of rows in a table as this transaction sees it.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``.
    public func rowCount(in table: TableID) throws -> Int {
        checkActive()
        return Int(try state.table(table).rowCount)
    }

    /// Calls `body` for each row with a row ID in `lower...upper` (both optional), in row-ID order
    /// or reversed; `body` returns false to stop. The rows are those this transaction sees, its own
    /// changes included; the bytes are valid only during each call.
    ///
    /// - Throws: ``StorageError/noSuchTable(_:)``; ``StorageError/corruption(file:offset:reason:)`` or
    ///   ``StorageError/io(_:)`` when a page cannot be read; or what `body` throws.
    public func forEachRow(
        in table: TableID, from lower: RowID? = nil, through upper: RowID? = nil, reverse: Bool = false,
        _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        checkActive()
        try RowWalk.forEach(
            tree: tree, root: state.table(table).root, lower: lower, upper: upper, reverse: reverse, body)
    }

    func checkSize(_ value: [UInt8]) throws {
        guard value.count <= WALFormat.maximumValueSize else {
            throw StorageError.invalidArgument(
                "row value of \(value.count) bytes exceeds \(WALFormat.maximumValueSize); store it as a blob")
        }
    }

    /// Logs a put; a large transaction past its memory bound then writes its full leaves out (``LeafSpill``).
    private func logPut(_ table: TableID, _ row: UInt64, _ value: [UInt8]) throws {
        log.appendPut(tableID: table.rawValue, rowID: row, value: value)
        // A row costs its bytes plus its key and value end in the leaf, and what its index entries noted since the
        // last put take (a load's notes are as large as its rows: W1.graph's were 14.7 MB for 16 MiB of rows).
        // Counted from the first put: the rows put before the transaction became large are in memory too.
        let noted = indexChanges?.memoryBytes ?? 0
        let bytes = value.count &+ 16 &+ max(0, noted &- countedIndexBytes)
        countedIndexBytes = noted
        guard spill.note(bytes: bytes), log.isLarge else { return }
        try spillLarge()
    }
}

@available(*, unavailable, message: "a write transaction belongs to the thread running Store.write's closure")
extension WriteTransaction: Sendable {}

/// Row iteration shared by snapshots and write transactions.
enum RowWalk {
    static func forEach(
        tree: BTree, root: NodeRef?, lower: RowID?, upper: RowID?, reverse: Bool,
        _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try tree.forEachCell(
            root, from: lower?.rawValue ?? 0, through: upper?.rawValue ?? UInt64.max, reverse: reverse
        ) { key, cell in
            try tree.pages.withBytes(of: cell) { try body(RowID(key), $0) }
        }
    }
}
