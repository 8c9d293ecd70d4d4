import StrataFormat

/// Builds one table's B+tree bottom-up from its rows in increasing row-ID order (a bulk load), writing
/// every node as soon as it is complete, so that children always get smaller page numbers than their
/// parents and memory holds one partial node per level.
///
/// 1. Rows fill a leaf until the next one would not fit; the leaf is written and its first row ID and
///    page become an entry of level 1. A long value is written to its overflow chain first.
/// 2. Each level gathers entries the same way into internal nodes; a full node is written once the
///    entry after it arrives (it is kept back one step), and becomes an entry of the level above.
/// 3. At the end, each level from the bottom writes what it holds. A last node with a single child is
///    not allowed, so it is merged with the node kept back and the two are split evenly. The level with
///    a single entry and nothing above is the root.
///
/// Leaves and internal nodes come out full (the last of each level excepted), as SQLite's VACUUM leaves
/// them; appends at the right edge then split off new nodes without leaving half-full ones behind.
struct TreeBuilder {
    private struct Entry {
        var firstKey: UInt64
        var page: UInt64
    }

    private struct Level {
        /// A full node's entries, written once the next entry arrives (or merged at the end).
        var held: [Entry]?
        var current: [Entry] = []
    }

    private let limits: BTreeLimits
    private var leafKeys: [UInt64] = []
    private var leafValues: [LeafValue] = []
    private var leafSize = 0
    /// `levels[i]` gathers entries pointing at nodes of level i (leaves are level 0).
    private var levels: [Level] = []
    private(set) var rowCount: UInt64 = 0
    private var lastKey: UInt64?

    init(pageSize: Int) {
        self.limits = BTreeLimits(pageSize: pageSize)
    }

    /// Adds the next row; `key` must be larger than every key added before.
    mutating func add(_ key: UInt64, _ bytes: [UInt8], writer: inout PageAppender) throws {
        precondition(lastKey.map { key > $0 } ?? true, "rows must come in increasing row-ID order")
        lastKey = key
        let value: LeafValue =
            bytes.count > limits.maximumInline
            ? .overflow(firstPage: try writer.writeOverflow(bytes), length: bytes.count) : .bytes(bytes)
        let size = limits.cellSize(value)
        if let first = leafKeys.first,
            LeafPage.bodySize(count: leafKeys.count + 1, first: first, last: key, cellBytes: leafSize + size)
                > limits.capacity
        {
            try writeLeaf(&writer)
        }
        leafKeys.append(key)
        leafValues.append(value)
        leafSize += size
        rowCount += 1
    }

    private mutating func writeLeaf(_ writer: inout PageAppender) throws {
        let page = try writer.writeLeaf(keys: leafKeys, values: leafValues)
        let entry = Entry(firstKey: leafKeys[0], page: page)
        leafKeys.removeAll(keepingCapacity: true)
        leafValues.removeAll(keepingCapacity: true)
        leafSize = 0
        try push(entry, level: 0, &writer)
    }

    private mutating func push(_ entry: Entry, level: Int, _ writer: inout PageAppender) throws {
        if levels.count == level { levels.append(Level()) }
        if BTreeLimits.internalBodySize(childCount: levels[level].current.count + 1) > limits.capacity {
            if let held = levels[level].held { try writeNode(held, childLevel: level, &writer) }
            levels[level].held = levels[level].current
            levels[level].current = [entry]
        } else {
            levels[level].current.append(entry)
        }
    }

    private mutating func writeNode(_ entries: [Entry], childLevel: Int, _ writer: inout PageAppender) throws {
        precondition(entries.count >= 2)
        var keys = entries.map(\.firstKey)
        keys[0] = 0  // unused: child 0 takes every row below keys[1]
        let page = try writer.writeInternal(level: childLevel + 1, keys: keys, children: entries.map(\.page))
        try push(Entry(firstKey: entries[0].firstKey, page: page), level: childLevel + 1, &writer)
    }

    /// Writes every node still held; returns the root page and the tree's height (`noPage` and 0 when empty).
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
        if !leafKeys.isEmpty { try writeLeaf(&writer) }
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
                    let half = all.count / 2
                    try writeNode(Array(all[..<half]), childLevel: level, &writer)
                    try writeNode(Array(all[half...]), childLevel: level, &writer)
                }
            } else {
                // Only reached with two or more entries: a level with nothing held has written no node, so
                // nothing above it exists and a single entry was handled as the root.
                try writeNode(current, childLevel: level, &writer)
            }
            level += 1
        }
        return (PageFormat.noPage, 0)
    }
}
