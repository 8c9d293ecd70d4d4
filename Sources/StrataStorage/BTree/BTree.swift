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
            return try checked(pages.node(at: number), at: number, level: level)
        }
    }

    /// The node as the transaction tagged `owner` may change it: itself if it carries the tag, else a copy (a page
    /// decoded into a node of the transaction's own).
    @inline(__always)
    func mutable(_ ref: NodeRef, owner: UInt64, level: Int?) throws -> BTreeNode {
        switch ref {
        case .node(let node):
            return node.owner == owner ? node : node.copy(owner: owner)
        case .page(let number):
            return try checked(pages.ownedNode(at: number, owner: owner), at: number, level: level)
        }
    }

    /// `node`, read from page `number`, if it has the level its parent expects (when the caller knows it).
    @inline(__always)
    private func checked(_ node: BTreeNode, at number: UInt64, level: Int?) throws -> BTreeNode {
        if let level, node.level != level {
            throw StorageError.corrupt(
                pages.fileName, at: pages.offset(of: number),
                "tree node at page \(number) has level \(node.level), its parent expects \(level)")
        }
        return node
    }

    // MARK: - Reading

    /// The value stored under `key`, if any, copied out of its page.
    func get(_ root: NodeRef?, _ key: UInt64) throws -> LeafValue? {
        var value: LeafValue?
        try withCell(root, key) { value = LeafValue($0) }
        return value
    }

    /// Calls `body` with the value stored under `key` where it lies (bytes of a page, valid only during the call).
    /// Not generic on purpose: callers in other modules cannot specialise a generic lookup, and every generic
    /// value in the descent would cost a metadata lookup per page.
    /// - Returns: whether the row exists (`body` is called only then).
    @discardableResult
    func withCell(_ root: NodeRef?, _ key: UInt64, _ body: (LeafCell) throws -> Void) throws -> Bool {
        guard var current = root else { return false }
        var level: Int? = nil
        while true {
            switch current {
            case .node(let node):
                guard node.isLeaf else {
                    current = node.children[node.childIndex(for: key)]
                    level = node.level - 1
                    continue
                }
                let (index, found) = node.search(key)
                guard found else { return false }
                try node.values.withCell(index, body)
                return true
            case .page(let number):
                return try withPageCell(number, level: level, key, body)
            }
        }
    }

    /// The rest of a lookup, from a committed page down: every step reads the page where it lies.
    private func withPageCell(
        _ number: UInt64, level: Int?, _ key: UInt64, _ body: (LeafCell) throws -> Void
    ) throws -> Bool {
        var next: (page: UInt64, level: Int)? = (number, level ?? -1)
        var found = false
        while let (page, expected) = next {
            next = try pages.withTreePage(page, level: expected < 0 ? nil : expected) { view in
                switch view {
                case .internal(let node):
                    return (node.child(at: node.childIndex(for: key)), node.level - 1)
                case .leaf(let leaf):
                    let (index, hit) = leaf.search(key)
                    if hit {
                        found = true
                        try body(leaf.cell(at: index))
                    }
                    return nil
                }
            }
        }
        return found
    }

    /// Calls `body` with the position and the value (nil when absent) of each of `keys`, which must increase
    /// strictly, walking the tree once: a key in the leaf of the key before it is found without a new descent, as a
    /// cursor would (SQLite's cursors skip the descent the same way). Values are lent where they lie.
    /// - Returns: false when `body` stopped the walk.
    @discardableResult
    func forEachCell(
        _ root: NodeRef?, keys: UnsafeBufferPointer<UInt64>, _ body: (Int, LeafCell?) throws -> Bool
    ) throws -> Bool {
        var position = 0
        guard let root else {
            while position < keys.count {
                if try !body(position, nil) { return false }
                position += 1
            }
            return true
        }
        return try seek(root, level: nil, below: nil, keys, &position, body)
    }

    /// Handles `keys[position...]` below `upper` (nil: unbounded) in the subtree at `ref`.
    private func seek(
        _ ref: NodeRef, level: Int?, below upper: UInt64?, _ keys: UnsafeBufferPointer<UInt64>, _ position: inout Int,
        _ body: (Int, LeafCell?) throws -> Bool
    ) throws -> Bool {
        func inRange(_ position: Int) -> Bool { position < keys.count && upper.map { keys[position] < $0 } ?? true }
        switch ref {
        case .node(let node):
            if node.isLeaf {
                while inRange(position) {
                    let (index, found) = node.search(keys[position])
                    let going =
                        found ? try node.values.withCell(index) { try body(position, $0) } : try body(position, nil)
                    if !going { return false }
                    position += 1
                }
                return true
            }
            while inRange(position) {
                let child = node.childIndex(for: keys[position])
                let childUpper = child + 1 < node.count ? node.keys[child + 1] : upper
                if try !seek(node.children[child], level: node.level - 1, below: childUpper, keys, &position, body) {
                    return false
                }
            }
            return true
        case .page(let number):
            return try pages.withTreePage(number, level: level) { view in
                switch view {
                case .leaf(let leaf):
                    while inRange(position) {
                        let (index, found) = leaf.search(keys[position])
                        if try !body(position, found ? leaf.cell(at: index) : nil) { return false }
                        position += 1
                    }
                    return true
                case .internal(let node):
                    // A parent of leaves hints the leaves of the next keys: each is most likely a page not read
                    // for a while, and its lines arrive while the keys before it are handled.
                    var hinted = HintedLeaves(from: position)
                    let hints = node.level == 1 ? pages.hints() : nil
                    while inRange(position) {
                        if let hints {
                            hintLeaves(
                                of: node, keys, upTo: position + Self.leavesHintedAhead, below: upper, &hinted, hints)
                        }
                        let child = hinted.child(at: position) ?? node.childIndex(for: keys[position])
                        let childUpper = child + 1 < node.count ? node.separator(at: child + 1) : upper
                        let going = try seek(
                            .page(node.child(at: child)), level: node.level - 1, below: childUpper, keys, &position,
                            body)
                        if !going { return false }
                    }
                    return true
                }
            }
        }
    }

    /// How many keys ahead a seek hints the leaves of: each leaf's lines take about a memory latency to arrive,
    /// the time the seek spends on a few rows. At most the children ``HintedLeaves`` keeps.
    static let leavesHintedAhead = 4

    /// Hints the leaves of `keys[hinted..<end]` below `node`, a parent of leaves, up to `upper` (keys past it go to
    /// another parent): the start of each leaf (header, first row ID, value ends) and where the key's value most
    /// likely lies (``LeafPage/likelyValueOffset(of:first:end:pageSize:)`` from the child's separators).
    private func hintLeaves(
        of node: InternalPageView, _ keys: UnsafeBufferPointer<UInt64>, upTo end: Int, below upper: UInt64?,
        _ hinted: inout HintedLeaves, _ hints: PageHints
    ) {
        while hinted.end < min(end, keys.count) {
            let key = keys[hinted.end]
            if let upper, key >= upper { return }
            // Keys often share a leaf with the key before: then its child is known and its start already hinted.
            let previous = hinted.last
            let sameLeaf = previous.map { $0 + 1 == node.count || key < node.separator(at: $0 + 1) } ?? false
            let child = sameLeaf ? previous! : node.childIndex(for: key)
            hinted.append(child)
            let page = node.child(at: child)
            if !sameLeaf { hints.prefetch(page, lines: Self.leafStartLinesHinted, from: 0) }
            if child > 0, child + 1 < node.count,
                let offset = LeafPage.likelyValueOffset(
                    of: key, first: node.separator(at: child), end: node.separator(at: child + 1),
                    pageSize: hints.pageSize)
            {
                // The line before the guess too: a value of about 100 bytes spans two or three lines.
                hints.prefetch(page, lines: 3, from: offset &- PageHints.lineSize / 2)
            }
        }
    }

    /// The lines at a leaf's start a hint covers: the header, first row ID and the value ends of about 40 rows.
    static let leafStartLinesHinted = 2

    /// The children of the keys hinted ahead (``hintLeaves(of:_:upTo:below:_:)``), kept for the descent so that it
    /// does not search the parent for them again: the last few, by key position.
    struct HintedLeaves {
        /// One past the last key position hinted.
        private(set) var end: Int
        private var children: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        /// How many children are kept: the tuple's count.
        static let kept = 8

        /// The first key position hinted.
        private let start: Int

        init(from position: Int) {
            precondition(position >= 0, "key positions start at 0")
            (start, end) = (position, position)
        }

        private static func offset(of position: Int) -> Int { (position % kept) &* MemoryLayout<Int>.stride }

        /// The child of the key at `position`, if hinted and still kept.
        func child(at position: Int) -> Int? {
            guard position >= start, position < end, end - position <= Self.kept else { return nil }
            return withUnsafeBytes(of: children) { $0.load(fromByteOffset: Self.offset(of: position), as: Int.self) }
        }

        /// The child of the last key hinted, if any.
        var last: Int? { child(at: end - 1) }

        /// Records the child of the key at position ``end``.
        mutating func append(_ child: Int) {
            withUnsafeMutableBytes(of: &children) {
                $0.storeBytes(of: child, toByteOffset: Self.offset(of: end), as: Int.self)
            }
            end += 1
        }
    }

    /// Calls `body` for each row with `lower <= key <= upper`, in increasing order or, when `reverse`,
    /// decreasing, with values copied out of their pages; stops when `body` returns false.
    /// - Returns: false when `body` stopped the walk.
    @discardableResult
    func forEach(
        _ root: NodeRef?, from lower: UInt64, through upper: UInt64, reverse: Bool,
        _ body: (UInt64, LeafValue) throws -> Bool
    ) throws -> Bool {
        try forEachCell(root, from: lower, through: upper, reverse: reverse) { key, cell in
            try body(key, LeafValue(cell))
        }
    }

    /// Calls `body` for each row with `lower <= key <= upper`, in increasing order or, when `reverse`,
    /// decreasing, with each value where it lies (valid only during the call); stops when `body` returns false.
    /// Committed pages are walked in place: nothing is allocated per row.
    /// - Returns: false when `body` stopped the walk.
    @discardableResult
    func forEachCell(
        _ root: NodeRef?, from lower: UInt64, through upper: UInt64, reverse: Bool,
        _ body: (UInt64, LeafCell) throws -> Bool
    ) throws -> Bool {
        guard let root, lower <= upper else { return true }
        return try walk(root, level: nil, lower, upper, reverse, body)
    }

    private func walk(
        _ ref: NodeRef, level: Int?, _ lower: UInt64, _ upper: UInt64, _ reverse: Bool,
        _ body: (UInt64, LeafCell) throws -> Bool
    ) throws -> Bool {
        guard case .node(let node) = ref else {
            guard case .page(let number) = ref else { return true }
            return try walkPage(number, level: level, lower, upper, reverse, body)
        }
        if node.isLeaf {
            let start = node.search(lower).index
            var end = node.search(upper).index
            if end < node.count, node.keys[end] == upper { end += 1 }
            for position in 0..<max(0, end - start) {
                let index = reverse ? end - 1 - position : start + position
                if try !node.values.withCell(index, { try body(node.keys[index], $0) }) { return false }
            }
            return true
        }
        let first = node.childIndex(for: lower)
        let last = node.childIndex(for: upper)
        for position in 0...(last - first) {
            let index = reverse ? last - position : first + position
            if try !walk(node.children[index], level: node.level - 1, lower, upper, reverse, body) { return false }
        }
        return true
    }

    private func walkPage(
        _ number: UInt64, level: Int?, _ lower: UInt64, _ upper: UInt64, _ reverse: Bool,
        _ body: (UInt64, LeafCell) throws -> Bool
    ) throws -> Bool {
        try pages.withTreePage(number, level: level) { view in
            switch view {
            case .leaf(let leaf):
                let start = leaf.search(lower).index
                var end = leaf.search(upper).index
                if end < leaf.count, leaf.key(at: end) == upper { end += 1 }
                // A loop of its own for a bitmap, so that the loop of the other leaves stays as it was (reading keys
                // through one more indirection cost a dense scan 6% more instructions).
                if let keys = leaf.bitmapKeys {
                    for position in 0..<max(0, end - start) {
                        let index = reverse ? end - 1 - position : start + position
                        if try !body(keys[index], leaf.cell(at: index)) { return false }
                    }
                    return true
                }
                if reverse {
                    for position in 0..<max(0, end - start) {
                        let index = end - 1 - position
                        if try !body(leaf.key(at: index), leaf.cell(at: index)) { return false }
                    }
                    return true
                }
                // Forward, the scans' order, in a loop of its own: no direction test or index arithmetic per row.
                var index = start
                while index < end {
                    if try !body(leaf.key(at: index), leaf.cell(at: index)) { return false }
                    index &+= 1
                }
                return true
            case .internal(let node):
                let first = node.childIndex(for: lower)
                let last = node.childIndex(for: upper)
                for position in 0...(last - first) {
                    let index = reverse ? last - position : first + position
                    if try !walkPage(node.child(at: index), level: node.level - 1, lower, upper, reverse, body) {
                        return false
                    }
                }
                return true
            }
        }
    }

    // MARK: - Inserting and replacing

    /// Stores `value` under `key`, replacing any value there, in one descent.
    /// - Parameter onlyReplacing: store nothing when `key` has no value (an update of a row that must exist).
    /// - Returns: the new root and the value replaced, if any (what index maintenance needs of the old row).
    func put(
        _ root: NodeRef?, key: UInt64, value: LeafValue, owner: UInt64, onlyReplacing: Bool = false
    ) throws -> (root: NodeRef?, replaced: LeafValue?) {
        var copier = LeafCopier()
        let (newRoot, _) = try put(
            root, key: key, value: value, owner: owner, onlyReplacing: onlyReplacing, seeing: &copier)
        return (newRoot, copier.value)
    }

    /// Stores `value` under `key`, replacing any value there, in one descent that lends the value it finds to
    /// `visitor` where it lies (nil when the key has none), before the leaf changes: index maintenance reads the old
    /// row there instead of a copy, and a visitor that throws leaves the tree's contents as they were. (A visitor,
    /// not a closure: a closure passed down the recursion retained what it captured at every level.)
    /// - Parameter onlyReplacing: store nothing (and visit nothing) when `key` has no value.
    /// - Returns: the new root and whether a value was replaced.
    func put<Visitor: LeafVisitor>(
        _ root: NodeRef?, key: UInt64, value: LeafValue, owner: UInt64, onlyReplacing: Bool = false,
        seeing visitor: inout Visitor
    ) throws -> (root: NodeRef?, replaced: Bool) {
        var writer = ShowingLeafWriter(value: value, visitor: visitor)
        defer { visitor = writer.visitor }
        return try put(root, key: key, owner: owner, onlyReplacing: onlyReplacing, writing: &writer)
    }

    /// Stores under `key` the value `writer` makes of the value it finds there (nil when the key has none), in one
    /// descent: the writer sees the old value where it lies, before the leaf changes, and a writer that throws leaves
    /// the tree's contents as they were. The writer is the put's last step that can throw: once it returns, the put
    /// happens (``RowIndexing`` relies on it).
    /// - Parameter onlyReplacing: store nothing (and call `writer` not at all) when `key` has no value.
    /// - Returns: the new root and whether a value was replaced.
    func put<Writer: LeafWriter>(
        _ root: NodeRef?, key: UInt64, owner: UInt64, onlyReplacing: Bool = false, writing writer: inout Writer
    ) throws -> (root: NodeRef?, replaced: Bool) {
        guard let root else {
            guard !onlyReplacing else { return (nil, false) }
            let value = try writer.value(replacing: nil)
            let leaf = BTreeNode(
                level: 0, keys: [key], values: [value], children: [], owner: owner, bodySize: limits.cellSize(value))
            return (.node(leaf), false)
        }
        var node = try mutable(root, owner: owner, level: nil)
        let (replaced, firstSplits) = try put(
            into: node, key: key, owner: owner, rightmost: true, onlyReplacing: onlyReplacing, writing: &writer)
        // Nothing stored: the tree as it was (the copies made on the way down are dropped).
        guard let replaced else { return (root, false) }
        var splits = firstSplits
        // A root that split gets a parent, which may split in turn when the root split into many nodes.
        while !splits.isEmpty {
            let parent = BTreeNode(
                level: node.level + 1, keys: [0] + splits.map(\.separator), values: [],
                children: [.node(node)] + splits.map { .node($0.node) }, owner: owner,
                bodySize: BTreeLimits.internalBodySize(childCount: splits.count + 1))
            node = parent
            splits = limits.fits(parent) ? [] : splitInternal(parent)
        }
        return (.node(node), replaced)
    }

    /// The leaf holding `key`, made the transaction's own on the way down as a put makes it (each node on the path that
    /// `owner` does not tag is copied into its parent), with the key's position in it and the path's new top; nil when
    /// `key` has no value. For a change decided where the value lies by a caller at its own level, stored with
    /// ``replace(_:at:with:top:key:owner:)``: one descent, with no writer carried down it.
    func ownedLeaf(
        _ root: NodeRef?, key: UInt64, owner: UInt64
    ) throws -> (top: BTreeNode, leaf: BTreeNode, index: Int)? {
        guard let root else { return nil }
        let top = try mutable(root, owner: owner, level: nil)
        var node = top
        while !node.isLeaf {
            let index = node.childIndex(for: key)
            let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
            node.children[index] = .node(child)
            node = child
        }
        let (index, found) = node.search(key)
        return found ? (top, node, index) : nil
    }

    /// Replaces value `index` of `leaf`, which ``ownedLeaf(_:key:owner:)`` found under `key` below `top`, and returns
    /// the tree's new root. The leaf changes in place; one the new value overfills splits through a put of that value
    /// from `top` (a second descent, rare: through nodes the transaction owns already, so it reads no page).
    func replace(
        _ leaf: BTreeNode, at index: Int, with value: LeafValue, top: BTreeNode, key: UInt64, owner: UInt64
    ) throws -> NodeRef {
        leaf.bodySize += limits.cellSize(value) - limits.cellSize(leaf, index)
        leaf.values.replace(index, with: value)
        guard !limits.fits(leaf) else { return .node(top) }
        var ignoring = IgnoringLeafVisitor()
        let (root, _) = try put(
            .node(top), key: key, value: value, owner: owner, onlyReplacing: true, seeing: &ignoring)
        return root ?? .node(top)
    }

    /// New right siblings of a node that split, each with the smallest key it holds.
    typealias Splits = [(separator: UInt64, node: BTreeNode)]

    /// `rightmost`: whether `node` is on the tree's right edge. Appending there (row IDs only grow, so
    /// inserts usually do) splits off just the new entry, leaving full nodes behind instead of half-full ones.
    /// - Returns: whether a value was replaced (nil: nothing stored, `onlyReplacing` and no value), and the splits.
    private func put<Writer: LeafWriter>(
        into node: BTreeNode, key: UInt64, owner: UInt64, rightmost: Bool, onlyReplacing: Bool,
        writing writer: inout Writer
    ) throws -> (replaced: Bool?, splits: Splits) {
        if node.isLeaf {
            let (index, found) = node.search(key)
            if found {
                let value = try node.values.withCell(index) { try writer.value(replacing: $0) }
                node.bodySize += limits.cellSize(value) - limits.cellSize(node, index)
                node.values.replace(index, with: value)
            } else {
                guard !onlyReplacing else { return (nil, []) }
                let value = try writer.value(replacing: nil)
                node.keys.insert(key, at: index)
                node.values.insert(value, at: index)
                node.bodySize += limits.cellSize(value)
            }
            guard !limits.fits(node) else { return (found, []) }
            let appended = rightmost && !found && index == node.count - 1
            return (found, appended ? [splitLeafAtEnd(node)] : splitLeaf(node))
        }
        let index = node.childIndex(for: key)
        let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
        node.children[index] = .node(child)
        let childIsRightmost = rightmost && index == node.count - 1
        let (replaced, splits) = try put(
            into: child, key: key, owner: owner, rightmost: childIsRightmost, onlyReplacing: onlyReplacing,
            writing: &writer)
        for (offset, split) in splits.enumerated() {
            node.keys.insert(split.separator, at: index + 1 + offset)
            node.children.insert(.node(split.node), at: index + 1 + offset)
            node.bodySize += PageFormat.internalEntrySize
        }
        guard !limits.fits(node) else { return (replaced, []) }
        return (replaced, childIsRightmost && splits.count == 1 ? [splitInternalAtEnd(node)] : splitInternal(node))
    }

    /// Splits a leaf that overflowed by an append: the new right leaf takes only the last cell (the rest is the
    /// leaf as it was before the append, which fit).
    private func splitLeafAtEnd(_ node: BTreeNode) -> (UInt64, BTreeNode) {
        let last = node.count - 1
        let size = limits.cellSize(node, last)
        let right = BTreeNode(
            level: 0, keys: [node.keys[last]], values: node.values.extracting(last..<(last + 1)), children: [],
            owner: node.owner, bodySize: size)
        node.keys.removeLast()
        node.values.removeSuffix(from: last)
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

    /// Splits an overfull leaf near the middle of its bytes. A leaf's size depends on how far its row IDs
    /// spread (§4.2), so when either half still does not fit (small values under sparse row IDs), the cells are
    /// packed greedily into as many leaves as they need. `node` keeps the first part.
    func splitLeaf(_ node: BTreeNode) -> Splits {
        let cuts = NodePartition.cuts(
            count: node.count, cellSize: { limits.cellSize(node, $0) }, cellBytes: node.bodySize
        ) { start, end, cells in
            LeafPage.bodySize(count: end - start, first: node.keys[start], last: node.keys[end - 1], cellBytes: cells)
                <= limits.capacity
        }
        var splits: Splits = []
        for (start, end) in zip(cuts, cuts.dropFirst() + [node.count]).dropFirst() {
            let right = BTreeNode(
                level: 0, keys: Array(node.keys[start..<end]), values: node.values.extracting(start..<end),
                children: [], owner: node.owner, bodySize: limits.cellBytes(node, start..<end))
            splits.append((node.keys[start], right))
        }
        let keep = cuts.count > 1 ? cuts[1] : node.count
        node.bodySize = limits.cellBytes(node, 0..<keep)
        node.keys.removeSubrange(keep...)
        node.values.removeSuffix(from: keep)
        return splits
    }

    /// Splits an overfull internal node into as few nodes as hold its children, evenly (two halves when it
    /// overflowed by one child); the first key of each new node moves up as its separator.
    func splitInternal(_ node: BTreeNode) -> Splits {
        let perNode = limits.maximumChildren
        let parts = (node.count + perNode - 1) / perNode
        let starts = (0..<max(parts, 2)).map { node.count * $0 / max(parts, 2) }
        var splits: Splits = []
        for (start, end) in zip(starts, starts.dropFirst() + [node.count]).dropFirst() {
            let right = BTreeNode(
                level: node.level, keys: Array(node.keys[start..<end]), values: [],
                children: Array(node.children[start..<end]), owner: node.owner,
                bodySize: BTreeLimits.internalBodySize(childCount: end - start))
            splits.append((node.keys[start], right))
        }
        let keep = starts[1]
        node.keys.removeSubrange(keep...)
        node.children.removeSubrange(keep...)
        node.bodySize = BTreeLimits.internalBodySize(childCount: keep)
        return splits
    }
}
