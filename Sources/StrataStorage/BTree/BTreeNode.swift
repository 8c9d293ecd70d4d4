import StrataFormat

/// One node of a copy-on-write B+tree, in memory.
///
/// A node is either decoded from a page (then frozen, `owner == 0`, and shared by every snapshot and
/// the page cache) or created by a write transaction (then `owner` is that transaction's tag). Only the
/// transaction whose tag a node carries mutates it, and only before it commits; a write transaction that
/// needs to change any other node copies it first. Committed nodes are therefore immutable, which is what
/// makes snapshots free: a snapshot is a set of roots.
final class BTreeNode: @unchecked Sendable {
    // Safety: see the type comment. Mutation happens only through the owning, not yet committed,
    // transaction, which is confined to one thread; published nodes are never mutated. For the same reason the
    // properties skip the runtime's exclusivity checks: W7's callgrind counted 15 of them per update in the tree's
    // put and lookup, about 85 instructions each.

    // The fields a descent reads first lie together at the object's start.
    /// 0 for leaves; a parent's level is its children's plus one.
    let level: Int
    /// The tag of the write transaction that may mutate this node, or 0 when frozen.
    let owner: UInt64
    /// Leaves whose row IDs are consecutive (`keys[i] == denseFirst + i` for every i < `denseCount`): a search
    /// finds a key without reading `keys`, whose array is a cache miss of its own in a cold leaf (W7's perf at
    /// N = 1,000,000: 45% of the descent's own samples were the loads of the keys' count and of the key probed).
    /// `denseCount` is 0 when the row IDs have gaps, and for internal nodes.
    @exclusivity(unchecked) private var denseFirst: UInt64 = 0
    @exclusivity(unchecked) private var denseCount = 0
    /// Leaves: the row IDs. Internal nodes: `keys[i]` (i >= 1) is the smallest row ID of `children[i]`;
    /// `keys[0]` is unused.
    @exclusivity(unchecked) var keys: [UInt64] {
        didSet { if level == 0 { noteDenseKeys() } }
    }
    /// Leaves only: one value per key, packed.
    @exclusivity(unchecked) var values: LeafValues
    /// Internal nodes only: one child per key.
    @exclusivity(unchecked) var children: [NodeRef]
    /// Internal nodes: the size of the page body once encoded. Leaves: the bytes of their cells, values and value
    /// ends (``BTreeLimits/encodedSize(_:)`` adds the row IDs, whose cost depends on how far they spread).
    @exclusivity(unchecked) var bodySize: Int

    init(level: Int, keys: [UInt64], values: LeafValues, children: [NodeRef], owner: UInt64, bodySize: Int) {
        self.level = level
        self.keys = keys
        self.values = values
        self.children = children
        self.owner = owner
        self.bodySize = bodySize
        if level == 0 { noteDenseKeys() }
    }

    /// Records whether the leaf's row IDs are consecutive: they are strictly increasing, so they are when the last
    /// is the first plus the count less one.
    @inline(__always)
    private func noteDenseKeys() {
        if let first = keys.first, let last = keys.last, last &- first == UInt64(keys.count &- 1) {
            denseFirst = first
            denseCount = keys.count
        } else {
            denseCount = 0
        }
    }

    var isLeaf: Bool { level == 0 }

    /// A leaf's row count, first and last row ID (nil when empty), read from the dense hint when the row IDs are
    /// consecutive: an update's size check then reads no more of a cold leaf than the search did.
    @inline(__always)
    var leafSpread: (count: Int, first: UInt64, last: UInt64)? {
        if denseCount > 0 { return (denseCount, denseFirst, denseFirst &+ UInt64(denseCount &- 1)) }
        guard let first = keys.first, let last = keys.last else { return nil }
        return (keys.count, first, last)
    }

    var count: Int { keys.count }

    /// A mutable copy for the transaction tagged `owner`.
    func copy(owner: UInt64) -> BTreeNode {
        BTreeNode(level: level, keys: keys, values: values, children: children, owner: owner, bodySize: bodySize)
    }

    /// The index of the child whose key range holds `key` (internal nodes).
    @inline(__always)
    func childIndex(for key: UInt64) -> Int {
        // The last i in 1..<count with keys[i] <= key, else 0.
        var low = 1
        var high = keys.count
        while low < high {
            let middle = (low &+ high) >> 1
            if keys[middle] <= key { low = middle &+ 1 } else { high = middle }
        }
        return low &- 1
    }

    /// The position of `key` in a leaf: `(index, found)`, where index is the insertion point when not found.
    ///
    /// Row IDs are usually nearly dense, so the first probe is where the key would be if they were (as
    /// ``LeafPageView/search(_:)`` does): a random delete in a cold leaf then misses the cache once instead of once per
    /// step of a binary search (W8's perf: that search was 28% of BTree.delete's own samples).
    @inline(__always)
    func search(_ key: UInt64) -> (index: Int, found: Bool) {
        let offset = key &- denseFirst
        if offset < UInt64(denseCount) { return (Int(offset), true) }
        if let first = keys.first, key >= first {
            let guess = key &- first
            if guess < UInt64(keys.count), keys[Int(guess)] == key { return (Int(guess), true) }
        }
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low &+ high) >> 1
            if keys[middle] < key { low = middle &+ 1 } else { high = middle }
        }
        return (low, low < keys.count && keys[low] == key)
    }
}

/// A reference to a B+tree node: a page of the page file, or a node in memory.
enum NodeRef: Sendable {
    case page(UInt64)
    case node(BTreeNode)
}
