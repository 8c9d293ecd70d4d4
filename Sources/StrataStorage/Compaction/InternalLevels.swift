import StrataFormat

/// What a bottom-up build needs to know of a tree's internal nodes: the row tree's (u64 keys) or an index tree's
/// (byte-string separators).
protocol InternalNodeFormat {
    /// What divides a child from the one before it: its smallest row ID, or an index separator.
    associatedtype Key
    /// The bytes a child takes in an internal node's body; the first child of a node keeps no key.
    static func entrySize(_ key: Key, first: Bool) -> Int
    /// Writes an internal node of `level` over `children`, `keys[i]` dividing child i from child i − 1
    /// (`keys[0]` is not stored); returns its page.
    static func write(level: Int, keys: [Key], children: [UInt64], to writer: inout PageAppender) throws -> UInt64
}

/// The internal levels of a tree built bottom-up from its leaves in order (a bulk load or a compaction), writing
/// every node as soon as it is complete, so that children always get smaller page numbers than their parents and
/// memory holds one partial node per level. One mechanism for the row tree (``TreeBuilder``) and the index trees
/// (``IndexTreeBuilder``), which differ in how they pack leaves.
///
/// 1. Each level gathers its children's entries into a node until the next would not fit; a full node is written
///    once the entry after it arrives (it is kept back one step), and becomes an entry of the level above, keyed by
///    its first child's key.
/// 2. At the end, each level from the bottom writes what it holds. A last node with a single child is not allowed,
///    so it is merged with the node kept back and the two are split about evenly by bytes (both keep at least two
///    children: a full node has at least four, each entry taking at most a quarter of a page). The level with a
///    single entry and nothing above is the root.
///
/// Internal nodes come out full (the last of each level excepted), as SQLite's VACUUM leaves them.
struct InternalLevels<Format: InternalNodeFormat> {
    /// A written node, as an entry of the level above it.
    struct Entry {
        var key: Format.Key
        var page: UInt64
    }

    private struct Level {
        /// A full node's entries, written once the next entry arrives (or merged at the end).
        var held: [Entry]?
        var current: [Entry] = []
        var currentSize = 0
    }

    private let capacity: Int
    /// `levels[i]` gathers entries pointing at nodes of level i (leaves are level 0).
    private var levels: [Level] = []

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds a written node of `level` (leaves: 0), in order.
    mutating func push(_ entry: Entry, level: Int = 0, _ writer: inout PageAppender) throws {
        if levels.count == level { levels.append(Level()) }
        let size = Format.entrySize(entry.key, first: levels[level].current.isEmpty)
        if levels[level].currentSize + size > capacity {
            if let held = levels[level].held { try writeNode(held, childLevel: level, &writer) }
            levels[level].held = levels[level].current
            levels[level].current = [entry]
            levels[level].currentSize = Format.entrySize(entry.key, first: true)
        } else {
            levels[level].current.append(entry)
            levels[level].currentSize += size
        }
    }

    private mutating func writeNode(_ entries: [Entry], childLevel: Int, _ writer: inout PageAppender) throws {
        precondition(entries.count >= 2)
        let page = try Format.write(
            level: childLevel + 1, keys: entries.map(\.key), children: entries.map(\.page), to: &writer)
        try push(Entry(key: entries[0].key, page: page), level: childLevel + 1, &writer)
    }

    /// Writes every node still held; returns the root page and the tree's height (`noPage` and 0 when empty).
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
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
                    let sizes = all.indices.map { Format.entrySize(all[$0].key, first: $0 == 0) }
                    let half = sizes.reduce(0, +) / 2
                    var split = 2
                    var leftSize = sizes[0] + sizes[1]
                    while split < all.count - 2, leftSize < half {
                        leftSize += sizes[split]
                        split += 1
                    }
                    try writeNode(Array(all[..<split]), childLevel: level, &writer)
                    try writeNode(Array(all[split...]), childLevel: level, &writer)
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

/// The row tree's internal nodes (FORMAT.md §4.3): a first child, then 16 bytes a child.
enum RowTreeInternalNodes: InternalNodeFormat {
    static func entrySize(_ key: UInt64, first: Bool) -> Int {
        first ? PageFormat.internalFirstChildSize : PageFormat.internalEntrySize
    }

    static func write(level: Int, keys: [UInt64], children: [UInt64], to writer: inout PageAppender) throws -> UInt64 {
        var keys = keys
        keys[0] = 0  // unused: child 0 takes every row below keys[1]
        return try writer.writeInternal(level: level, keys: keys, children: children)
    }
}

/// An index tree's internal nodes (FORMAT.md §4.7): a first child, then 10 bytes and the separator a child.
enum IndexTreeInternalNodes: InternalNodeFormat {
    static func entrySize(_ key: [UInt8], first: Bool) -> Int {
        first ? PageFormat.internalFirstChildSize : PageFormat.indexInternalEntryOverhead + key.count
    }

    static func write(level: Int, keys: [[UInt8]], children: [UInt64], to writer: inout PageAppender) throws -> UInt64 {
        var keys = keys
        keys[0] = []
        return try writer.writeIndexInternal(level: level, keys: keys, children: children)
    }
}
