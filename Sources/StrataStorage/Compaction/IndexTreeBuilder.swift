import StrataFormat

/// Builds one secondary index's tree bottom-up from its entries in increasing order (a bulk load), writing
/// every node as soon as it is complete: the index counterpart of ``TreeBuilder``, with byte-string entries.
///
/// 1. Entries fill a leaf until the next would not fit; the leaf is written and becomes an entry of level 1,
///    keyed by the shortest separator between the previous leaf's last entry and its first.
/// 2. Each level gathers entries the same way into internal nodes, by bytes; a full node is written once the
///    entry after it arrives (it is kept back one step), and becomes an entry of the level above, keyed by
///    its first child's separator.
/// 3. At the end, each level from the bottom writes what it holds. A last node with a single child is not
///    allowed, so it is merged with the node kept back and the two are split about evenly by bytes (both
///    keep at least two children: a full node has at least four, each separator taking at most a quarter
///    of a page). The level with a single entry and nothing above is the root.
struct IndexTreeBuilder {
    private struct Entry {
        /// Divides this node from the one before it at its level; empty for the first.
        var separator: [UInt8]
        var page: UInt64
    }

    private struct Level {
        var held: [Entry]?
        var current: [Entry] = []
    }

    private let capacity: Int
    private var leaf: [[UInt8]] = []
    private var leafSize = 0
    private var previousLast: [UInt8]?
    private var levels: [Level] = []
    private(set) var entryCount: UInt64 = 0

    init(pageSize: Int) {
        capacity = PageFormat.bodyCapacity(pageSize: pageSize)
    }

    /// Adds the next entry: larger than every entry added before, at most `maximumIndexEntry` bytes.
    mutating func add(_ entry: [UInt8], writer: inout PageAppender) throws {
        precondition(leaf.last.map { IndexKey.compare($0, entry) < 0 } ?? true, "entries must come in order")
        let size = PageFormat.indexLengthSize + entry.count
        // Exact size with the new entry: the leaf's entries share less of a prefix as they spread (§4.6).
        if let first = leaf.first,
            IndexLeafPage.bodySize(
                count: leaf.count + 1, entryBytes: leafSize + size - PageFormat.indexLengthSize * (leaf.count + 1),
                prefixLength: IndexLeafPage.commonPrefixLength(first, entry)) > capacity
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
        try push(Entry(separator: separator, page: page), level: 0, &writer)
    }

    private static func size(_ entries: [Entry]) -> Int {
        IndexInternalPage.bodySize(separatorLengths: entries.dropFirst().lazy.map(\.separator.count))
    }

    private mutating func push(_ entry: Entry, level: Int, _ writer: inout PageAppender) throws {
        if levels.count == level { levels.append(Level()) }
        let current = levels[level].current
        let grown =
            current.isEmpty
            ? PageFormat.internalFirstChildSize
            : Self.size(current) + PageFormat.indexInternalEntryOverhead + entry.separator.count
        if grown > capacity {
            if let held = levels[level].held { try writeNode(held, childLevel: level, &writer) }
            levels[level].held = current
            levels[level].current = [entry]
        } else {
            levels[level].current.append(entry)
        }
    }

    private mutating func writeNode(_ entries: [Entry], childLevel: Int, _ writer: inout PageAppender) throws {
        precondition(entries.count >= 2)
        var keys = entries.map(\.separator)
        keys[0] = []
        let page = try writer.writeIndexInternal(level: childLevel + 1, keys: keys, children: entries.map(\.page))
        try push(Entry(separator: entries[0].separator, page: page), level: childLevel + 1, &writer)
    }

    /// Writes every node still held; returns the root page and the tree's height (`noPage` and 0 when empty).
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
        if !leaf.isEmpty { try writeLeaf(&writer) }
        var level = 0
        while level < levels.count {
            let held = levels[level].held
            let current = levels[level].current
            levels[level] = Level()
            if held == nil, current.count == 1, level == levels.count - 1 {
                return (current[0].page, level + 1)
            }
            if let held {
                if current.count >= 2 {
                    try writeNode(held, childLevel: level, &writer)
                    try writeNode(current, childLevel: level, &writer)
                } else {
                    let all = held + current
                    let half = Self.size(all) / 2
                    var split = 2
                    while split < all.count - 2, Self.size(Array(all[..<split])) < half { split += 1 }
                    try writeNode(Array(all[..<split]), childLevel: level, &writer)
                    try writeNode(Array(all[split...]), childLevel: level, &writer)
                }
            } else {
                try writeNode(current, childLevel: level, &writer)
            }
            level += 1
        }
        return (PageFormat.noPage, 0)
    }
}
