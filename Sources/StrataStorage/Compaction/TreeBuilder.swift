import StrataFormat

/// Builds one table's B+tree bottom-up from its rows in increasing row-ID order (a bulk load), writing every node as
/// soon as it is complete.
///
/// Rows fill a leaf until the next one would not fit (the exact size of FORMAT.md §4.2: the row IDs cost what their
/// spread needs); the leaf is written and its first row ID and page become an entry of level 1, which
/// ``InternalLevels`` gathers into internal nodes. A long value is written to its overflow chain first.
///
/// Leaves come out full (the last excepted), as SQLite's VACUUM leaves them; appends at the right edge then split
/// off new nodes without leaving half-full ones behind.
struct TreeBuilder {
    private let limits: BTreeLimits
    private var leafKeys: [UInt64] = []
    private var leafValues = LeafValues()
    private var leafSize = 0
    private var levels: InternalLevels<RowTreeInternalNodes>
    private(set) var rowCount: UInt64 = 0
    private var lastKey: UInt64?

    init(pageSize: Int) {
        limits = BTreeLimits(pageSize: pageSize)
        levels = InternalLevels(capacity: limits.capacity)
    }

    /// Adds the next row; `key` must be larger than every key added before. Its bytes are copied where they lie,
    /// into the leaf's packed values (a long value into its overflow chain).
    mutating func add(_ key: UInt64, _ bytes: UnsafeRawBufferPointer, writer: inout PageAppender) throws {
        precondition(lastKey.map { key > $0 } ?? true, "rows must come in increasing row-ID order")
        lastKey = key
        let long = bytes.count > limits.maximumInline
        let size = long ? PageFormat.overflowCellSize : PageFormat.leafCellHeaderSize + bytes.count
        let overflow = long ? try writer.writeOverflow(Array(bytes.assumingMemoryBound(to: UInt8.self))) : 0
        if let first = leafKeys.first,
            LeafPage.bodySize(count: leafKeys.count + 1, first: first, last: key, cellBytes: leafSize + size)
                > limits.capacity
        {
            try writeLeaf(&writer)
        }
        leafKeys.append(key)
        if long {
            leafValues.append(.overflow(firstPage: overflow, length: bytes.count))
        } else {
            leafValues.append(inline: bytes)
        }
        leafSize += size
        rowCount += 1
    }

    /// Adds the next row, from an array.
    mutating func add(_ key: UInt64, _ bytes: [UInt8], writer: inout PageAppender) throws {
        try bytes.withUnsafeBytes { try add(key, $0, writer: &writer) }
    }

    private mutating func writeLeaf(_ writer: inout PageAppender) throws {
        let page = try writer.writeLeaf(keys: leafKeys, values: leafValues)
        let entry = InternalLevels<RowTreeInternalNodes>.Entry(key: leafKeys[0], page: page)
        leafKeys.removeAll(keepingCapacity: true)
        leafValues.removeAll(keepingCapacity: true)
        leafSize = 0
        try levels.push(entry, &writer)
    }

    /// Writes every node still held; returns the root page and the tree's height (`noPage` and 0 when empty).
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
        if !leafKeys.isEmpty { try writeLeaf(&writer) }
        return try levels.finish(&writer)
    }
}
