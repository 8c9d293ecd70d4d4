import StrataFormat

/// One table's copy in compaction's step 2: each row, in increasing row-ID order, goes into the new tree where it lies
/// (a blob catalog row after its blob's copy), makes its entries of the indexes to rebuild, and folds those of the
/// indexes to check (``ExpectedIndexEntries``).
///
/// A struct whose state the walk's closure reaches through one variable: as captured variables of a nested function,
/// each row paid four dynamic exclusivity checks (28% of the copy's instructions).
struct TableCopy {
    private let pages: PageStore
    private let isCatalog: Bool
    private let rebuilt: [IndexState]
    private var builder: TreeBuilder
    /// The entries of each index in `rebuilt`, in the same order.
    private(set) var entries: [PackedIndexEntries]
    /// What the rows give for each index checked, in the order given.
    private(set) var expected: [ExpectedIndexEntries]
    private var lastKey: UInt64?

    init(table: TableState, pages: PageStore, rebuilding rebuilt: [IndexState], checking checked: [IndexState]) {
        self.pages = pages
        self.isCatalog = table.name == BlobCatalog.tableName
        self.rebuilt = rebuilt
        builder = TreeBuilder(pageSize: pages.pageSize)
        entries = rebuilt.map { _ in PackedIndexEntries() }
        expected = checked.map { ExpectedIndexEntries($0.definition) }
    }

    /// The rows added so far.
    var rowCount: UInt64 { builder.rowCount }

    /// Writes the nodes the tree still holds; returns its root page and height.
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
        try builder.finish(&writer)
    }

    /// Whether `key` is above every row added so far (the builder takes rows in increasing order only).
    func follows(_ key: UInt64) -> Bool {
        lastKey.map { key > $0 } ?? true
    }

    /// Adds the next row; `key` must follow the rows added before.
    mutating func add(
        _ key: UInt64, _ cell: LeafCell, writer: inout PageAppender, segments: inout SegmentCopier,
        throttle: inout ProgressThrottle
    ) throws {
        lastKey = key
        try pages.withBytes(of: cell) { bytes in
            for position in rebuilt.indices {
                do {
                    try entries[position].append(
                        of: rebuilt[position].definition, row: key, bytes: bytes, tag: 0, limit: .max, pages: pages)
                } catch StorageError.invalidArgument(let reason) {
                    // A stored row the index cannot take is damage, not a caller's bad argument.
                    throw StorageError.corrupt(pages.fileName, at: 0, reason)
                }
            }
            for position in expected.indices { expected[position].add(row: key, bytes) }
            // Copied where it lies into the new leaf: no array per row.
            if !isCatalog { try builder.add(key, bytes, writer: &writer) }
        }
        if isCatalog {
            let entry = try BlobCatalog.entry(LeafValue(cell), pages: pages, blob: BlobID(key))
            try builder.add(
                key, try segments.copy(BlobID(key), entry) { throttle.advance() }.encoded(), writer: &writer)
        }
        throttle.advance()
    }
}
