import StrataFormat

/// One secondary index as a state of the store sees it: its definition and tree.
struct IndexState: Sendable {
    let id: IndexID
    let definition: IndexDefinition
    var entryCount: UInt64
    var root: IndexNodeRef?
}

extension StoreState {
    func index(_ id: IndexID) throws -> IndexState {
        guard let index = indexes[id] else { throw StorageError.noSuchIndex(id.description) }
        return index
    }

    /// Fills the catalog from a root record: every table and every index, roots on disk.
    mutating func load(_ record: RootRecord) {
        nextTableID = record.nextTableID
        lsn = record.walLSN
        for table in record.tables {
            let id = TableID(table.tableID)
            tables[id] = TableState(
                id: id, name: table.name, nextRowID: table.nextRowID, rowCount: table.rowCount,
                root: table.rootPage == PageFormat.noPage ? nil : .page(table.rootPage))
            tableIDs[table.name] = id
        }
        nextIndexID = record.nextIndexID
        for index in record.indexes {
            let id = IndexID(index.descriptor.indexID)
            let definition = IndexDefinition(index.descriptor)
            indexes[id] = IndexState(
                id: id, definition: definition, entryCount: index.entryCount,
                root: index.rootPage == PageFormat.noPage ? nil : .page(index.rootPage))
            indexIDs[definition.name] = id
            tables[definition.table]?.indexes.append(TableIndex(id: id, definition: definition))
        }
    }

    /// The root record entries of every index, for trees written at `roots` (by index ID).
    func indexRecords(roots: [IndexID: (page: UInt64, height: Int)]) -> [RootRecord.Index] {
        indexes.values.sorted { $0.id < $1.id }.map { index in
            let root = roots[index.id] ?? (PageFormat.noPage, 0)
            return RootRecord.Index(
                descriptor: index.definition.descriptor(id: index.id), entryCount: index.entryCount,
                rootPage: root.page, height: root.height)
        }
    }

    // MARK: - Changes, shared by write transactions and recovery replay

    /// Creates an index and fills it from the table's rows.
    ///
    /// - Throws: ``StorageError/indexExists(name:)``; ``StorageError/noSuchTable(_:)``;
    ///   ``StorageError/invalidArgument(_:)`` for an ID in use, a field list outside 1...16 positions of
    ///   0...65534, more than 65,535 entity IDs, a row that is not a row record or whose key is too long.
    mutating func createIndex(id: IndexID, definition: IndexDefinition, tree: BTree, owner: UInt64) throws {
        guard indexIDs[definition.name] == nil else { throw StorageError.indexExists(name: definition.name) }
        guard id.rawValue >= 1, id.rawValue < UInt32.max, indexes[id] == nil else {
            throw StorageError.invalidArgument("index ID \(id.rawValue) in use or out of range")
        }
        guard !definition.fields.isEmpty, definition.fields.count <= IndexKey.maximumParts,
            definition.fields.allSatisfy({ $0 >= 0 && $0 < Int(UInt16.max) })
        else {
            throw StorageError.invalidArgument(
                "an index takes 1...\(IndexKey.maximumParts) field positions in 0...\(UInt16.max - 1)")
        }
        guard (definition.entityIDs?.count ?? 0) <= Int(UInt16.max) else {
            throw StorageError.invalidArgument("an index filters on at most \(UInt16.max) entity IDs")
        }
        try resolvePending(touching: definition.table)
        var table = try table(definition.table)
        var index = IndexState(id: id, definition: definition, entryCount: 0, root: nil)
        let indexTree = IndexTree(pages: tree.pages)
        // Each row's entry packed where the row lies, in row order; sorted, and distinct (each ends with its row ID):
        // built bottom up, no descent per entry.
        var entries = PackedIndexEntries()
        try RowWalk.forEach(tree: tree, root: table.root, lower: nil, upper: nil, reverse: false) { row, bytes in
            try entries.append(
                of: definition, row: row.rawValue, bytes: bytes, tag: 0, limit: indexTree.maximumEntry,
                pages: tree.pages)
            return true
        }
        let sorted = entries.sorted(inRowOrder: true)
        index.root = entries.build(sorted, tree: indexTree, owner: owner)
        index.entryCount = UInt64(sorted.count)
        indexes[id] = index
        indexIDs[definition.name] = id
        table.indexes.append(TableIndex(id: id, definition: definition))
        tables[definition.table] = table
        nextIndexID = max(nextIndexID, id.rawValue + 1)
    }

    /// Drops an index and its entries.
    mutating func dropIndex(id: IndexID) throws {
        let index = try index(id)
        try resolvePending(touching: index.definition.table)
        indexes[id] = nil
        indexIDs[index.definition.name] = nil
        tables[index.definition.table]?.indexes.removeAll { $0.id == id }
    }

    /// The entry of a row in `index` (nil: filtered out), checked against the tree's entry limit.
    ///
    /// - Throws: ``StorageError/invalidArgument(_:)`` when the row is not a row record, a field does not
    ///   decode, or the entry exceeds `limit` bytes.
    static func entry(
        of index: IndexDefinition, row: UInt64, value: LeafValue, pages: PageStore, limit: Int
    ) throws -> [UInt8]? {
        try value.withCell { try entry(of: index, row: row, cell: $0, pages: pages, limit: limit) }
    }

    /// The entry of a row lent where it lies; see ``entry(of:row:value:pages:limit:)``.
    static func entry(
        of index: IndexDefinition, row: UInt64, cell: LeafCell, pages: PageStore, limit: Int
    ) throws -> [UInt8]? {
        let entry: [UInt8]?
        do {
            entry = try pages.withBytes(of: cell) { buffer in
                try Result { () throws(FormatError) in try index.entry(forRow: row, buffer) }.get()
            }
        } catch let error as FormatError {
            throw StorageError.invalidArgument(
                "row \(row) of \(index.table) cannot be indexed by '\(index.name)': \(error)")
        }
        if let entry, entry.count > limit {
            throw StorageError.invalidArgument(
                "row \(row) of \(index.table) has a key of \(entry.count - IndexKey.rowIDSize) bytes for "
                    + "index '\(index.name)'; keys take at most \(limit - IndexKey.rowIDSize) bytes "
                    + "with this page size")
        }
        return entry
    }

    /// Puts the entries a put or delete changed into their indexes at once (a transaction that defers its index
    /// changes has them noted by the put or delete itself).
    mutating func apply(_ changes: RowIndexing, pages: PageStore, owner: UInt64) throws {
        guard let first = changes.first else { return }
        let tree = IndexTree(pages: pages)
        try replaceEntry(of: first.index, old: first.old, new: first.new, tree: tree, owner: owner)
        for change in changes.rest {
            try replaceEntry(of: change.index, old: change.old, new: change.new, tree: tree, owner: owner)
        }
    }

    /// Replaces a row's entry in an index.
    private mutating func replaceEntry(
        of id: IndexID, old: [UInt8]?, new: [UInt8]?, tree: IndexTree, owner: UInt64
    ) throws {
        var index = indexes[id]!
        if let old {
            let (root, removed) = try tree.remove(index.root, old, owner: owner)
            guard removed else {
                throw StorageError.corrupt(
                    tree.pages.fileName, at: 0, "index '\(index.definition.name)' lacks the entry of a row it indexes")
            }
            index.root = root
            index.entryCount -= 1
        }
        if let new {
            let (root, inserted) = try tree.insert(index.root, new, owner: owner)
            guard inserted else {
                throw StorageError.corrupt(
                    tree.pages.fileName, at: 0, "index '\(index.definition.name)' holds an entry for a row it lacks")
            }
            index.root = root
            index.entryCount += 1
        }
        indexes[index.id] = index
    }
}
