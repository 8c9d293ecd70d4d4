import StrataFormat

/// One node of a secondary index's copy-on-write B+tree, in memory: byte-string keys and no values.
///
/// Like ``BTreeNode``: a node decoded from a page is frozen (`owner == 0`) and shared by snapshots and the
/// page cache; a node made by a write transaction carries its tag and is mutated only by it, before it commits.
final class IndexNode: @unchecked Sendable {
    // Safety: as BTreeNode. Mutation happens only through the owning, not yet committed, transaction,
    // which is confined to one thread; published nodes are never mutated.

    /// 0 for leaves; a parent's level is its children's plus one.
    let level: Int
    /// Leaves: the entries (encoded key ++ row ID), strictly increasing. Internal nodes: `keys[i]` (i ≥ 1)
    /// separates `children[i-1]` (entries below it) from `children[i]` (entries at or above it); `keys[0]`
    /// is empty and unused. Packed (``IndexEntries``).
    var keys: IndexEntries
    /// Internal nodes only: one child per key.
    var children: [IndexNodeRef]
    /// The tag of the write transaction that may mutate this node, or 0 when frozen.
    let owner: UInt64
    /// Internal nodes: the size of the page body once encoded. Leaves: the bytes of their entries plus an offset
    /// each (``encodedSize`` takes off what the entries share, which depends on the first and last, §4.6).
    var bodySize: Int

    init(level: Int, keys: IndexEntries, children: [IndexNodeRef], owner: UInt64, bodySize: Int) {
        self.level = level
        self.keys = keys
        self.children = children
        self.owner = owner
        self.bodySize = bodySize
    }

    convenience init(level: Int, keys: [[UInt8]], children: [IndexNodeRef], owner: UInt64, bodySize: Int) {
        self.init(level: level, keys: IndexEntries(keys), children: children, owner: owner, bodySize: bodySize)
    }

    var isLeaf: Bool { level == 0 }
    var count: Int { keys.count }

    /// A mutable copy for the transaction tagged `owner`.
    func copy(owner: UInt64) -> IndexNode {
        IndexNode(level: level, keys: keys, children: children, owner: owner, bodySize: bodySize)
    }

    /// The bytes one key takes in this node's body.
    @inline(__always)
    func cost(_ key: [UInt8]) -> Int {
        isLeaf ? PageFormat.indexLengthSize + key.count : PageFormat.indexInternalEntryOverhead + key.count
    }

    /// The bytes the key at `position` takes in this node's body.
    @inline(__always)
    func cost(at position: Int) -> Int {
        (isLeaf ? PageFormat.indexLengthSize : PageFormat.indexInternalEntryOverhead) + keys.length(at: position)
    }

    /// ``bodySize`` of a node of `level` holding `keys` (internal: `keys[0]` unused).
    static func bodySize<Keys: Collection<[UInt8]>>(level: Int, keys: Keys) -> Int {
        if level == 0 { return keys.reduce(0) { $0 + PageFormat.indexLengthSize + $1.count } }
        return IndexInternalPage.bodySize(separatorLengths: keys.dropFirst().lazy.map(\.count))
    }

    /// ``bodySize`` of a leaf holding `keys[range]`, read in place.
    static func leafBodySize(_ keys: IndexEntries, _ range: Range<Int>) -> Int {
        range.count * PageFormat.indexLengthSize + keys.byteCount(of: range)
    }

    /// The body the node takes once encoded: a leaf's entries less the prefix they share stored once (§4.6);
    /// an internal node's ``bodySize``.
    var encodedSize: Int {
        guard isLeaf, count > 0 else { return bodySize }
        let prefix = keys.withEntries { entries in
            let (first, last) = (entries[0], entries[entries.count - 1])
            let limit = min(first.count, last.count)
            var length = 0
            while length < limit, first[length] == last[length] { length &+= 1 }
            return length
        }
        // IndexLeafPage.bodySize(count:first:last:cellBytes:), with the prefix found in place.
        return PageFormat.indexLengthSize &+ prefix &+ bodySize &- count &* prefix
    }

    /// The index of the child whose range holds `key` (internal nodes): the last i ≥ 1 with
    /// `keys[i] <= key`, else 0.
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        keys.withEntries { keys in
            var low = 1
            var high = keys.count
            while low < high {
                let middle = (low &+ high) >> 1
                if IndexKey.compare(keys[middle], key) <= 0 {
                    low = middle &+ 1
                } else {
                    high = middle
                }
            }
            return low &- 1
        }
    }

    /// The index of the last child that may hold an entry below `key` (internal nodes): the last i ≥ 1
    /// with `keys[i] < key`, else 0 (`keys[0]` is no separator).
    @inline(__always)
    func childIndex(below key: UnsafeRawBufferPointer) -> Int {
        keys.withEntries { keys in Self.lowerBound(key, in: keys, from: 1) &- 1 }
    }

    /// The first position at or after `start` whose entry is not below `key` (entries are in increasing order).
    @inline(__always)
    private static func lowerBound(
        _ key: UnsafeRawBufferPointer, in keys: IndexEntries.Lent, from start: Int
    ) -> Int {
        var low = start
        var high = keys.count
        while low < high {
            let middle = (low &+ high) >> 1
            if IndexKey.compare(keys[middle], key) < 0 {
                low = middle &+ 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// The first position in a leaf whose entry is at or after `key`, and whether it equals `key`.
    @inline(__always)
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        keys.withEntries { keys in
            let low = Self.lowerBound(key, in: keys, from: 0)
            return (low, low < keys.count && IndexKey.compare(keys[low], key) == 0)
        }
    }

    /// ``search(_:)`` among the keys from `start` on, every key before `start` being below `key`: the key at `start`
    /// is compared first, so a sorted run of removals that takes consecutive keys compares each key once rather than
    /// searching the whole node for each.
    @inline(__always)
    func search(_ key: UnsafeRawBufferPointer, from start: Int) -> (index: Int, found: Bool) {
        keys.withEntries { Self.search(key, in: $0, from: start) }
    }

    /// ``search(_:from:)`` among keys lent once for many searches (each lending retains and releases the keys).
    @inline(__always)
    static func search(
        _ key: UnsafeRawBufferPointer, in keys: IndexEntries.Lent, from start: Int
    ) -> (index: Int, found: Bool) {
        guard start < keys.count else { return (start, false) }
        let order = IndexKey.compare(keys[start], key)
        if order >= 0 { return (start, order == 0) }
        let low = lowerBound(key, in: keys, from: start &+ 1)
        return (low, low < keys.count && IndexKey.compare(keys[low], key) == 0)
    }

    /// ``childIndex(for:)`` of a key held in an array (writers).
    @inline(__always)
    func childIndex(for key: [UInt8]) -> Int { key.withUnsafeBytes { childIndex(for: $0) } }

    /// ``search(_:)`` of a key held in an array (writers).
    @inline(__always)
    func search(_ key: [UInt8]) -> (index: Int, found: Bool) { key.withUnsafeBytes { search($0) } }
}

/// A reference to an index node: a page of the page file, or a node in memory.
enum IndexNodeRef: Sendable {
    case page(UInt64)
    case node(IndexNode)
}
