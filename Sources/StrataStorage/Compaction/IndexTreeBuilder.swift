import StrataFormat

/// Builds one secondary index's tree bottom-up from its entries in increasing order (a bulk load), writing every
/// node as soon as it is complete: the index counterpart of ``TreeBuilder``, with byte-string entries.
///
/// Entries fill a leaf until the next would not fit (the exact size of FORMAT.md §4.6: the entries share less of a
/// prefix as they spread); the leaf is written and becomes an entry of level 1, keyed by the shortest separator
/// between the previous leaf's last entry and its first, which ``InternalLevels`` gathers into internal nodes.
///
/// Entries are taken lent (``add(_:writer:)``) and packed into the leaf being filled: no
/// array per entry (compaction's index builds made and freed one per row, a third of W12's time with the sort).
struct IndexTreeBuilder {
    private let capacity: Int
    private var leaf = IndexEntries()
    /// The bytes of the leaf's cells (each entry and its length), before the shared prefix is taken out.
    private var leafSize = 0
    /// The leaf's first entry.
    private var first: [UInt8] = []
    private var previousLast: [UInt8]?
    private var levels: InternalLevels<IndexTreeInternalNodes>
    private(set) var entryCount: UInt64 = 0

    init(pageSize: Int) {
        capacity = PageFormat.bodyCapacity(pageSize: pageSize)
        levels = InternalLevels(capacity: capacity)
    }

    /// Adds the next entry: larger than every entry added before, at most `maximumIndexEntry` bytes.
    mutating func add(_ entry: [UInt8], writer: inout PageAppender) throws {
        try entry.withUnsafeBytes { try add($0, writer: &writer) }
    }

    /// Adds the next entry, lent (valid only during the call): larger than every entry added before, at most
    /// `maximumIndexEntry` bytes.
    mutating func add(_ entry: UnsafeRawBufferPointer, writer: inout PageAppender) throws {
        let added = try addIfInOrder(entry, writer: &writer)
        precondition(added, "entries must come in order")
    }

    /// Adds the next entry, lent (valid only during the call), if it is larger than every entry added before (an
    /// index copied from pages, whose order is checked rather than trusted); at most `maximumIndexEntry` bytes.
    ///
    /// - Returns: false, adding nothing, when `entry` does not follow the last entry added.
    mutating func addIfInOrder(_ entry: UnsafeRawBufferPointer, writer: inout PageAppender) throws -> Bool {
        let cell = PageFormat.indexLengthSize + entry.count
        if !leaf.isEmpty {
            guard leaf.withEntry(leaf.count - 1, { IndexKey.compare($0, entry) < 0 }) else { return false }
            // The entries of a leaf share the prefix of its first and its last (§4.6), stored once.
            let prefix = first.withUnsafeBytes { IndexLeafPage.commonPrefixLength($0, entry) }
            let size = PageFormat.indexLengthSize + prefix + leafSize + cell - (leaf.count + 1) * prefix
            if size > capacity { try writeLeaf(&writer) }
        } else if let previousLast {
            guard previousLast.withUnsafeBytes({ IndexKey.compare($0, entry) < 0 }) else { return false }
        }
        if leaf.isEmpty {
            first.removeAll(keepingCapacity: true)
            first.append(contentsOf: entry.assumingMemoryBound(to: UInt8.self))
        }
        leaf.append(entry)
        leafSize += cell
        entryCount += 1
        return true
    }

    private mutating func writeLeaf(_ writer: inout PageAppender) throws {
        let page = try writer.writeIndexLeaf(entries: leaf)
        let separator = previousLast.map { IndexKey.shortestSeparator(after: $0, upTo: first) } ?? []
        previousLast = leaf[leaf.count - 1]
        leaf = IndexEntries()
        leafSize = 0
        try levels.push(InternalLevels<IndexTreeInternalNodes>.Entry(key: separator, page: page), &writer)
    }

    /// Writes every node still held; returns the root page and the tree's height (`noPage` and 0 when empty).
    mutating func finish(_ writer: inout PageAppender) throws -> (root: UInt64, height: Int) {
        if !leaf.isEmpty { try writeLeaf(&writer) }
        return try levels.finish(&writer)
    }
}
