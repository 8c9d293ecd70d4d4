import StrataFormat

/// Operations on one copy-on-write B+tree keyed by row ID.
///
/// A tree is named by its root (`nil` when empty). Reads follow references, loading pages through the
/// ``PageStore``. Writes take the tag of the write transaction: nodes carrying that tag are changed in
/// place, every other node on the path is copied first, so committed trees are never disturbed.
struct BTree: Sendable {
    let pages: PageStore
    let limits: BTreeLimits

    init(pages: PageStore) {
        self.pages = pages
        self.limits = BTreeLimits(pageSize: pages.pageSize)
    }

    // MARK: - Resolving references

    /// The node a reference names; a page must hold a node of `level` when the caller knows it.
    @inline(__always)
    func resolve(_ ref: NodeRef, level: Int?) throws -> BTreeNode {
        switch ref {
        case .node(let node):
            return node
        case .page(let number):
            let node = try pages.node(at: number)
            if let level, node.level != level {
                throw StorageError.corrupt(
                    pages.fileName, at: pages.offset(of: number),
                    "tree node at page \(number) has level \(node.level), its parent expects \(level)")
            }
            return node
        }
    }

    /// The node as the transaction tagged `owner` may change it: itself if it carries the tag, else a copy.
    @inline(__always)
    func mutable(_ ref: NodeRef, owner: UInt64, level: Int?) throws -> BTreeNode {
        if case .node(let node) = ref, node.owner == owner { return node }
        return try resolve(ref, level: level).copy(owner: owner)
    }

    // MARK: - Reading

    /// The value stored under `key`, if any.
    func get(_ root: NodeRef?, _ key: UInt64) throws -> LeafValue? {
        guard let root else { return nil }
        var node = try resolve(root, level: nil)
        while !node.isLeaf {
            node = try resolve(node.children[node.childIndex(for: key)], level: node.level - 1)
        }
        let (index, found) = node.search(key)
        return found ? node.values[index] : nil
    }

    /// Calls `body` for each row with `lower <= key <= upper`, in increasing order or, when `reverse`,
    /// decreasing; stops when `body` returns false.
    /// - Returns: false when `body` stopped the walk.
    @discardableResult
    func forEach(
        _ root: NodeRef?, from lower: UInt64, through upper: UInt64, reverse: Bool,
        _ body: (UInt64, LeafValue) throws -> Bool
    ) throws -> Bool {
        guard let root, lower <= upper else { return true }
        return try walk(try resolve(root, level: nil), lower, upper, reverse, body)
    }

    private func walk(
        _ node: BTreeNode, _ lower: UInt64, _ upper: UInt64, _ reverse: Bool, _ body: (UInt64, LeafValue) throws -> Bool
    ) throws -> Bool {
        if node.isLeaf {
            let start = node.search(lower).index
            var end = node.search(upper).index
            if end < node.count, node.keys[end] == upper { end += 1 }
            guard start < end else { return true }
            if reverse {
                for index in (start..<end).reversed() where try !body(node.keys[index], node.values[index]) {
                    return false
                }
            } else {
                for index in start..<end where try !body(node.keys[index], node.values[index]) { return false }
            }
            return true
        }
        let first = node.childIndex(for: lower)
        let last = node.childIndex(for: upper)
        let range = first...last
        for index in reverse ? Array(range.reversed()) : Array(range) {
            let child = try resolve(node.children[index], level: node.level - 1)
            if try !walk(child, lower, upper, reverse, body) { return false }
        }
        return true
    }

    // MARK: - Inserting and replacing

    /// Stores `value` under `key`, replacing any value there.
    /// - Returns: the new root and whether a value was replaced.
    func put(_ root: NodeRef?, key: UInt64, value: LeafValue, owner: UInt64) throws -> (root: NodeRef, replaced: Bool) {
        guard let root else {
            let leaf = BTreeNode(
                level: 0, keys: [key], values: [value], children: [], owner: owner, bodySize: limits.cellSize(value))
            return (.node(leaf), false)
        }
        let node = try mutable(root, owner: owner, level: nil)
        let (replaced, split) = try put(into: node, key: key, value: value, owner: owner, rightmost: true)
        guard let (separator, right) = split else { return (.node(node), replaced) }
        let newRoot = BTreeNode(
            level: node.level + 1, keys: [0, separator], values: [], children: [.node(node), .node(right)],
            owner: owner, bodySize: BTreeLimits.internalBodySize(childCount: 2))
        return (.node(newRoot), replaced)
    }

    /// `rightmost`: whether `node` is on the tree's right edge. Appending there (row IDs only grow, so
    /// inserts usually do) splits off just the new entry, leaving full nodes behind instead of half-full ones.
    private func put(
        into node: BTreeNode, key: UInt64, value: LeafValue, owner: UInt64, rightmost: Bool
    ) throws -> (replaced: Bool, split: (UInt64, BTreeNode)?) {
        if node.isLeaf {
            let (index, found) = node.search(key)
            let size = limits.cellSize(value)
            if found {
                node.bodySize += size - limits.cellSize(node.values[index])
                node.values[index] = value
            } else {
                node.keys.insert(key, at: index)
                node.values.insert(value, at: index)
                node.bodySize += size
            }
            guard node.bodySize > limits.capacity else { return (found, nil) }
            let appended = rightmost && !found && index == node.count - 1
            return (found, appended ? splitLeafAtEnd(node) : splitLeaf(node))
        }
        let index = node.childIndex(for: key)
        let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
        node.children[index] = .node(child)
        let childIsRightmost = rightmost && index == node.count - 1
        let (replaced, split) = try put(into: child, key: key, value: value, owner: owner, rightmost: childIsRightmost)
        if let (separator, right) = split {
            node.keys.insert(separator, at: index + 1)
            node.children.insert(.node(right), at: index + 1)
            node.bodySize += PageFormat.internalEntrySize
        }
        guard node.bodySize > limits.capacity else { return (replaced, nil) }
        return (replaced, childIsRightmost && split != nil ? splitInternalAtEnd(node) : splitInternal(node))
    }

    /// Splits a leaf that overflowed by an append: the new right leaf takes only the last cell.
    private func splitLeafAtEnd(_ node: BTreeNode) -> (UInt64, BTreeNode) {
        let last = node.count - 1
        let size = limits.cellSize(node.values[last])
        let right = BTreeNode(
            level: 0, keys: [node.keys[last]], values: [node.values[last]], children: [], owner: node.owner,
            bodySize: size)
        node.keys.removeLast()
        node.values.removeLast()
        node.bodySize -= size
        return (right.keys[0], right)
    }

    /// Splits an internal node that overflowed by an append: the new right node takes the last two children
    /// (an internal node has at least two).
    private func splitInternalAtEnd(_ node: BTreeNode) -> (UInt64, BTreeNode) {
        let middle = node.count - 2
        let separator = node.keys[middle]
        let right = BTreeNode(
            level: node.level, keys: Array(node.keys[middle...]), values: [], children: Array(node.children[middle...]),
            owner: node.owner, bodySize: BTreeLimits.internalBodySize(childCount: 2))
        node.keys.removeSubrange(middle...)
        node.children.removeSubrange(middle...)
        node.bodySize = BTreeLimits.internalBodySize(childCount: middle)
        return (separator, right)
    }

    /// Splits an overfull leaf near the middle of its bytes; returns the separator and the new right leaf.
    private func splitLeaf(_ node: BTreeNode) -> (UInt64, BTreeNode) {
        let half = node.bodySize / 2
        var leftSize = 0
        var split = 0
        while split < node.count - 1 {
            let size = limits.cellSize(node.values[split])
            if leftSize + size > half, split > 0 { break }
            leftSize += size
            split += 1
        }
        let right = BTreeNode(
            level: 0, keys: Array(node.keys[split...]), values: Array(node.values[split...]), children: [],
            owner: node.owner, bodySize: node.bodySize - leftSize)
        node.keys.removeSubrange(split...)
        node.values.removeSubrange(split...)
        node.bodySize = leftSize
        return (right.keys[0], right)
    }

    /// Splits an overfull internal node in the middle; the middle key moves up as the separator.
    private func splitInternal(_ node: BTreeNode) -> (UInt64, BTreeNode) {
        let middle = node.count / 2
        let separator = node.keys[middle]
        let right = BTreeNode(
            level: node.level, keys: Array(node.keys[middle...]), values: [], children: Array(node.children[middle...]),
            owner: node.owner, bodySize: BTreeLimits.internalBodySize(childCount: node.count - middle))
        node.keys.removeSubrange(middle...)
        node.children.removeSubrange(middle...)
        node.bodySize = BTreeLimits.internalBodySize(childCount: middle)
        return (separator, right)
    }
}
