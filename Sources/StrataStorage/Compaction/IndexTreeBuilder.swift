import StrataFormat

/// Builds one secondary index's tree bottom-up from its entries in increasing order (a bulk load), writing every
/// node as soon as it is complete: the index counterpart of ``TreeBuilder``, with byte-string entries.
///
/// Entries fill a leaf until the next would not fit (the exact size of FORMAT.md §4.6: the entries share less of a
/// prefix as they spread); the leaf is written and becomes an entry of level 1, keyed by the shortest separator
/// between the previous leaf's last entry and its first, which ``InternalLevels`` gathers into internal nodes.
struct IndexTreeBuilder {
    private let capacity: Int
    private var leaf: [[UInt8]] = []
    private var leafSize = 0
    private var previousLast: [UInt8]?
    private var levels: InternalLevels<IndexTreeInternalNodes>
    private(set) var entryCount: UInt64 = 0

    init(pageSize: Int) {
        capacity = PageFormat.bodyCapacity(pageSize: pageSize)
        levels = InternalLevels(capacity: capacity)
    }

    /// Adds the next entry: larger than every entry added before, at most `maximumIndexEntry` bytes.
    mutating func add(_ entry: [UInt8], writer: inout PageAppender) throws {
        precondition(leaf.last.map { IndexKey.compare($0, entry) < 0 } ?? true, "entries must come in order")
        let size = PageFormat.indexLengthSize + entry.count
        if let first = leaf.first,
            IndexLeafPage.bodySize(count: leaf.count + 1, first: first, last: entry, cellBytes: leafSize + size)
                > capacity
        {
            try writeLeaf(&writer)
        }
        leaf.append(entry)
        leafSize += size
        entryCount += 1
    }

    private mutating func writeLeaf(_ writer: inout PageAppender) throws {
        let page = try writer.writeIndexLeaf(entries: leaf)
        let separator = previousLast.map { IndexKey.shortestSeparator(after: $0, upTo: leaf[0]) } ?? []
        previousLast = leaf[leaf.count - 1]
        leaf.removeAll(keepingCapacity: true)
        leafSize = 0
        try levels.push(InternalLevels<IndexTreeInternalNodes>.Entry(key: separator, page: page), &writer)
    }

    /// Writes every node still held; returns the root page and the tree's height (`noPage` and 0 when empty).
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
        if !leaf.isEmpty { try writeLeaf(&writer) }
        return try levels.finish(&writer)
    }
}
