import StrataFormat

/// Operations on one copy-on-write B+tree of a secondary index: byte-string entries (encoded key ++ row ID),
/// no values.
///
/// The same design as the row tree (``BTree``): a tree is named by its root (`nil` when empty), reads load
/// pages through the ``PageStore`` (its index-node cache), and writes take the writing transaction's tag,
/// copying every node on the path that does not carry it. It is a separate type rather than ``BTree`` made
/// generic over its key because the two differ where the row tree is hot: fixed 8-byte keys compared as
/// integers with values beside them, against variable-length keys compared bytewise without values, whose
/// separators and node sizes vary (a rotation through the parent can change the parent's size, so deletes
/// may split as inserts do).
///
/// Nodes split when their encoded body exceeds a page body (a leaf's entries share a prefix stored once, so a leaf
/// is smaller than the sum of its entries, and may split into more than two; ``NodePartition``), in the middle of
/// their bytes, or, for an append at the right edge of the tree or at the end of a run of one key, right before or
/// after the new entry (so that entries inserted in increasing order fill whole leaves). A leaf split stores the shortest separator that divides the two leaves. A node left
/// below a quarter of a page after a delete is merged with a neighbour when both fit one page, else entries
/// move over from the neighbour until the two are about even.
struct IndexTree: Sendable {
    let pages: PageStore
    /// Bytes a node's body may take.
    let capacity: Int
    /// A node smaller than this after a delete is merged with a neighbour or topped up from it.
    let mergeThreshold: Int
    /// The longest entry a tree takes (``PageFormat/maximumIndexEntry(pageSize:)``).
    let maximumEntry: Int

    init(pages: PageStore) {
        self.pages = pages
        capacity = PageFormat.bodyCapacity(pageSize: pages.pageSize)
        mergeThreshold = capacity / 4
        maximumEntry = PageFormat.maximumIndexEntry(pageSize: pages.pageSize)
    }

    // MARK: - Resolving references

    /// The node a reference names; a page must hold a node of `level` when the caller knows it.
    @inline(__always)
    func resolve(_ ref: IndexNodeRef, level: Int?) throws -> IndexNode {
        switch ref {
        case .node(let node):
            return node
        case .page(let number):
            return try checked(pages.indexNode(at: number), at: number, level: level)
        }
    }

    /// The node as the transaction tagged `owner` may change it: itself if it carries the tag, else a copy (a page
    /// decoded into a node of the transaction's own).
    @inline(__always)
    func mutable(_ ref: IndexNodeRef, owner: UInt64, level: Int?) throws -> IndexNode {
        switch ref {
        case .node(let node):
            return node.owner == owner ? node : node.copy(owner: owner)
        case .page(let number):
            return try checked(pages.ownedIndexNode(at: number, owner: owner), at: number, level: level)
        }
    }

    /// `node`, read from page `number`, if it has the level its parent expects (when the caller knows it).
    @inline(__always)
    private func checked(_ node: IndexNode, at number: UInt64, level: Int?) throws -> IndexNode {
        if let level, node.level != level {
            throw StorageError.corrupt(
                pages.fileName, at: pages.offset(of: number),
                "index node at page \(number) has level \(node.level), its parent expects \(level)")
        }
        return node
    }

    // MARK: - Reading

    /// Whether the tree holds `entry`.
    func contains(_ root: IndexNodeRef?, _ entry: [UInt8]) throws -> Bool {
        var found = false
        _ = try entry.withUnsafeBytes { key in
            try forEach(root, from: key, below: nil, reverse: false) { first in
                found = IndexKey.compare(first, key) == 0
                return false
            }
        }
        return found
    }

    /// Calls `body` for each entry `e` with `lower <= e < upper` (a nil bound: unbounded), in increasing
    /// order or, when `reverse`, decreasing; stops when `body` returns false. Entries of committed pages are lent
    /// where they lie, valid only during the call.
    /// - Returns: false when `body` stopped the walk.
    @discardableResult
    func forEach(
        _ root: IndexNodeRef?, from lower: [UInt8]?, below upper: [UInt8]?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        guard let lower else {
            return try forEach(root, from: nil as UnsafeRawBufferPointer?, below: upper, reverse: reverse, body)
        }
        return try lower.withUnsafeBytes { try forEach(root, from: $0, below: upper, reverse: reverse, body) }
    }

    private func forEach(
        _ root: IndexNodeRef?, from lower: UnsafeRawBufferPointer?, below upper: [UInt8]?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        guard let upper else {
            return try walkFrom(root, Bounds(lower: lower, upper: nil), reverse, body)
        }
        return try upper.withUnsafeBytes { try walkFrom(root, Bounds(lower: lower, upper: $0), reverse, body) }
    }

    /// A walk's bounds, as bytes lent for the walk.
    private struct Bounds {
        var lower: UnsafeRawBufferPointer?
        var upper: UnsafeRawBufferPointer?
    }

    private func walkFrom(
        _ root: IndexNodeRef?, _ bounds: Bounds, _ reverse: Bool, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        guard let root else { return true }
        if let lower = bounds.lower, let upper = bounds.upper, IndexKey.compare(lower, upper) >= 0 { return true }
        return try walk(root, level: nil, bounds, reverse, body)
    }

    private func walk(
        _ ref: IndexNodeRef, level: Int?, _ bounds: Bounds, _ reverse: Bool,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        guard case .node(let node) = ref else {
            guard case .page(let number) = ref else { return true }
            return try walkPage(number, level: level, bounds, reverse, body)
        }
        if node.isLeaf {
            let start = bounds.lower.map { node.search($0).index } ?? 0
            let end = bounds.upper.map { node.search($0).index } ?? node.count
            for position in 0..<max(0, end - start) {
                let index = reverse ? end - 1 - position : start + position
                if try !node.keys.withEntry(index, body) { return false }
            }
            return true
        }
        let first = bounds.lower.map { node.childIndex(for: $0) } ?? 0
        let last = bounds.upper.map { node.childIndex(below: $0) } ?? node.count - 1
        for position in 0..<max(0, last - first + 1) {
            let index = reverse ? last - position : first + position
            if try !walk(node.children[index], level: node.level - 1, bounds, reverse, body) { return false }
        }
        return true
    }

    private func walkPage(
        _ number: UInt64, level: Int?, _ bounds: Bounds, _ reverse: Bool,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        try pages.withIndexPage(number, level: level) { view in
            switch view {
            case .leaf(let leaf):
                let start = bounds.lower.map { leaf.search($0).index } ?? 0
                let end = bounds.upper.map { leaf.search($0).index } ?? leaf.count
                return try leaf.forEachEntry(in: start..<max(start, end), reverse: reverse, body)
            case .internal(let node):
                let first = bounds.lower.map { node.childIndex(for: $0) } ?? 0
                let last = bounds.upper.map { node.childIndex(below: $0) } ?? node.count - 1
                for position in 0..<max(0, last - first + 1) {
                    let index = reverse ? last - position : first + position
                    if try !walkPage(node.child(at: index), level: node.level - 1, bounds, reverse, body) {
                        return false
                    }
                }
                return true
            }
        }
    }

    // MARK: - Inserting

    /// Inserts `entry` (at most ``maximumEntry`` bytes: a precondition).
    /// - Returns: the new root and whether the entry was new.
    func insert(_ root: IndexNodeRef?, _ entry: [UInt8], owner: UInt64) throws -> (root: IndexNodeRef, inserted: Bool) {
        precondition(entry.count <= maximumEntry, "index entry longer than the tree allows")
        guard let root else {
            let leaf = IndexNode(
                level: 0, keys: [entry], children: [], owner: owner,
                bodySize: PageFormat.indexLengthSize + entry.count)
            return (.node(leaf), true)
        }
        let node = try mutable(root, owner: owner, level: nil)
        let (inserted, hint) = try insert(into: node, entry, owner: owner, rightmost: true)
        guard inserted else { return (.node(node), false) }
        return (try finishRoot(node, owner: owner, hint: hint) ?? .node(node), true)
    }

    /// Where a node that an insert made overflow should split.
    enum SplitHint {
        /// In the middle of its bytes.
        case middle
        /// A leaf: right before entry `index`. After an insert that ends a run of its key (rows of one key arrive
        /// in row-ID order, so a run grows at its end wherever it lies in the tree, as in an index on a to-one like
        /// `employee_department`) or appends on the tree's right edge, the run's leaves fill up instead of being
        /// halved at every split, and entries of other keys after the run's end move out of its way.
        case leafBefore(Int)
        /// An internal node on the right edge whose last child split off a new last child: split at its end.
        case internalAtEnd
    }

    /// `rightmost`: whether `node` is on the tree's right edge. Returns whether the entry was inserted and
    /// where `node` should split if it overflows.
    private func insert(
        into node: IndexNode, _ entry: [UInt8], owner: UInt64, rightmost: Bool
    ) throws -> (inserted: Bool, hint: SplitHint) {
        if node.isLeaf {
            let (index, found) = node.search(entry)
            guard !found else { return (false, .middle) }
            node.keys.insert(entry, at: index)
            node.bodySize += PageFormat.indexLengthSize + entry.count
            let last = index == node.count - 1
            let runEnd = index > 0 && node.keys.withEntry(index - 1) { previous in Self.sameKey(previous, entry) }
            // At the leaf's end the new entry starts the right leaf (the run goes on growing there); inside the
            // leaf it ends the left one, so that the entries after it (other keys, which grow elsewhere) leave.
            if last && (rightmost || runEnd) { return (true, .leafBefore(index)) }
            return (true, runEnd ? .leafBefore(index + 1) : .middle)
        }
        let index = node.childIndex(for: entry)
        let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
        node.children[index] = .node(child)
        let childIsRightmost = rightmost && index == node.count - 1
        let (inserted, hint) = try insert(into: child, entry, owner: owner, rightmost: childIsRightmost)
        guard inserted else { return (false, .middle) }
        let countBefore = node.count
        try fix(node, at: index, owner: owner, hint: hint, shrank: false)
        // An append on the right edge reaches this node's end when its last child split off a new last child.
        let splitOffLast: Bool
        switch hint {
        case .middle: splitOffLast = false
        case .leafBefore, .internalAtEnd: splitOffLast = childIsRightmost && node.count > countBefore
        }
        return (true, splitOffLast ? .internalAtEnd : .middle)
    }

    /// Whether two entries have the same key (they differ only in the row ID that ends them).
    static func sameKey(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Bool {
        a.count == b.count
            && b.withUnsafeBytes { b in
                IndexKey.compare(
                    UnsafeRawBufferPointer(rebasing: a.dropLast(IndexKey.rowIDSize)),
                    UnsafeRawBufferPointer(rebasing: b.dropLast(IndexKey.rowIDSize))) == 0
            }
    }

    // MARK: - Removing

    /// Removes `entry`.
    /// - Returns: the new root (`nil` when the tree became empty) and whether the entry was there.
    func remove(_ root: IndexNodeRef?, _ entry: [UInt8], owner: UInt64) throws -> (root: IndexNodeRef?, removed: Bool) {
        guard let root else { return (nil, false) }
        let node = try mutable(root, owner: owner, level: nil)
        guard try remove(from: node, entry, owner: owner) else { return (root, false) }
        return (try finishRoot(node, owner: owner, hint: .middle), true)
    }

    private func remove(from node: IndexNode, _ entry: [UInt8], owner: UInt64) throws -> Bool {
        if node.isLeaf {
            let (index, found) = node.search(entry)
            guard found else { return false }
            node.bodySize -= PageFormat.indexLengthSize + node.keys.length(at: index)
            node.keys.removeEntry(at: index)
            return true
        }
        let index = node.childIndex(for: entry)
        let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
        node.children[index] = .node(child)
        guard try remove(from: child, entry, owner: owner) else { return false }
        try fix(node, at: index, owner: owner, hint: .middle, shrank: true)
        return true
    }

    /// Removes `entries` (strictly increasing), a leaf at a time: one descent per leaf they lie in, and each leaf
    /// rebuilt once without them rather than moved up once per entry (W8's callgrind: removing 100,000 entries one by
    /// one cost 8,300 instructions each, most of them moving a leaf's bytes and ends). The entries come packed (an
    /// array each cost an allocation and a free per removed entry).
    /// - Returns: the new root and how many of `entries` were there and are gone.
    func remove(
        _ root: IndexNodeRef?, sorted entries: IndexEntries, owner: UInt64
    ) throws -> (root: IndexNodeRef?, removed: Int) {
        try entries.withEntries { entries in
            var root = root
            var position = 0
            var removed = 0
            while position < entries.count, let current = root {
                let node = try mutable(current, owner: owner, level: nil)
                let here = try removeRun(from: node, entries, &position, below: nil, owner: owner)
                guard here > 0 else { continue }
                removed += here
                root = try finishRoot(node, owner: owner, hint: .middle)
            }
            return (root, removed)
        }
    }

    /// At most this many runs of removals from one leaf move the bytes after each (``removeRun``); more are removed
    /// by copying what stays, once.
    private static let removalRunsMovedInPlace = 4

    /// Removes the entries from `entries[position]` on that lie in the leaf `entries[position]` belongs to (those
    /// below `upper`, the separator after that leaf), advancing `position` past them; returns how many were there.
    private func removeRun(
        from node: IndexNode, _ entries: IndexEntries.Lent, _ position: inout Int, below upper: [UInt8]?,
        owner: UInt64
    ) throws -> Int {
        func isBelowUpper(_ entry: UnsafeRawBufferPointer) -> Bool {
            guard let upper else { return true }
            return upper.withUnsafeBytes { IndexKey.compare(entry, $0) < 0 }
        }
        if node.isLeaf {
            var gone: [Int] = []
            // The entries increase: each is searched for from where the one before it was (W8's removals of whole
            // departments searched every leaf from its start, 10 comparisons an entry). An entry found here, or one
            // that sorts before this leaf's last, belongs here; only one past the last is compared with the bound.
            var runs = 0
            let first = position
            node.keys.withEntries { keys in
                var from = 0
                repeat {
                    let (index, found) = IndexNode.search(entries[position], in: keys, from: from)
                    if found {
                        if gone.last != index &- 1 { runs += 1 }
                        gone.append(index)
                    } else if index == keys.count, position != first, !isBelowUpper(entries[position]) {
                        break
                    }
                    from = found ? index &+ 1 : index
                    position += 1
                } while position < entries.count
            }
            guard !gone.isEmpty else { return 0 }
            // A run of removals (a department's entries in W8) leaves in one move of the bytes after it; many
            // scattered ones, by copying what stays.
            if runs <= Self.removalRunsMovedInPlace {
                var end = gone.count
                while end > 0 {
                    var start = end &- 1
                    while start > 0, gone[start &- 1] == gone[start] &- 1 { start &-= 1 }
                    let range = gone[start]..<(gone[end &- 1] &+ 1)
                    node.bodySize -= PageFormat.indexLengthSize * range.count + node.keys.byteCount(of: range)
                    node.keys.removeEntries(in: range)
                    end = start
                }
                return gone.count
            }
            var kept = IndexEntries()
            kept.reserveCapacity(entries: node.count - gone.count, bytes: node.keys.byteCount(of: 0..<node.count))
            var next = 0
            for index in 0..<node.count {
                if next < gone.count, gone[next] == index {
                    next += 1
                    node.bodySize -= PageFormat.indexLengthSize + node.keys.length(at: index)
                } else {
                    node.keys.withEntry(index) { kept.append($0) }
                }
            }
            node.keys = kept
            return gone.count
        }
        let index = node.childIndex(for: entries[position])
        let childUpper = index + 1 < node.count ? node.keys[index + 1] : upper
        let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
        node.children[index] = .node(child)
        let removed = try removeRun(from: child, entries, &position, below: childUpper, owner: owner)
        if removed > 0 { try fix(node, at: index, owner: owner, hint: .middle, shrank: true) }
        return removed
    }

    // MARK: - Keeping nodes within a page

    /// Brings a changed root back within bounds: splits it under a new root when it overflows, gives way to
    /// its only child while it is an internal node with one, and empties the tree when it has nothing.
    private func finishRoot(_ node: IndexNode, owner: UInt64, hint: SplitHint) throws -> IndexNodeRef? {
        if node.encodedSize > capacity {
            var top = node
            var splits = split(node, hint)
            // A root that split into many nodes may need more than one new level.
            while !splits.isEmpty {
                let parent = IndexNode(
                    level: top.level + 1, keys: IndexEntries([[]] + splits.map(\.separator)),
                    children: [.node(top)] + splits.map { .node($0.node) }, owner: owner,
                    bodySize: IndexInternalPage.bodySize(separatorLengths: splits.map(\.separator.count)))
                top = parent
                splits = parent.bodySize > capacity ? split(parent, .middle) : []
            }
            return .node(top)
        }
        var top: IndexNodeRef = .node(node)
        var topNode = node
        while !topNode.isLeaf, topNode.count == 1 {
            top = topNode.children[0]
            topNode = try resolve(top, level: topNode.level - 1)
        }
        return topNode.count == 0 ? nil : top
    }

    /// After `parent.children[index]` (a node the transaction owns) changed: splits it when it overflows,
    /// removes it when empty, and, after a delete below it (`shrank`), merges or tops it up when underfull
    /// (never after an insert: the right leaf an append splits off holds one entry, and must not be evened
    /// out with the full leaf beside it). `parent` may then overflow or be underfull itself, which its own
    /// parent (or ``finishRoot(_:owner:hint:)``) fixes in turn.
    private func fix(_ parent: IndexNode, at index: Int, owner: UInt64, hint: SplitHint, shrank: Bool) throws {
        guard case .node(let child) = parent.children[index] else { return }
        if child.encodedSize > capacity {
            for (offset, split) in split(child, hint).enumerated() {
                parent.keys.insert(split.separator, at: index + 1 + offset)
                parent.children.insert(.node(split.node), at: index + 1 + offset)
                parent.bodySize += PageFormat.indexInternalEntryOverhead + split.separator.count
            }
        } else if child.count == 0 {
            removeChild(of: parent, at: index)
        } else if shrank, child.bodySize < mergeThreshold || (!child.isLeaf && child.count < 2) {
            try rebalance(parent, child: index, owner: owner)
        }
    }

    /// Removes child `index` and the separator that goes with it.
    private func removeChild(of parent: IndexNode, at index: Int) {
        if parent.count == 1 {
            parent.keys = IndexEntries()
            parent.children = []
            parent.bodySize = PageFormat.internalFirstChildSize
            return
        }
        // Child 0 has no separator: the next child's becomes unused. Child i ≥ 1 takes its own along.
        let separator = index == 0 ? 1 : index
        parent.bodySize -= PageFormat.indexInternalEntryOverhead + parent.keys.length(at: separator)
        parent.keys.removeEntry(at: separator)
        parent.children.remove(at: index)
        parent.keys[0] = []
    }

    /// New right siblings of a node that split, each with the separator before it.
    typealias Splits = [(separator: [UInt8], node: IndexNode)]

    /// Splits an overfull node as `hint` says where that leaves every part within a page. A leaf's entries share
    /// less of a prefix as they spread (§4.6), so a leaf may need more than two parts (``NodePartition``); an
    /// internal node splits near the middle of its bytes, again while a part is too big.
    private func split(_ node: IndexNode, _ hint: SplitHint) -> Splits {
        if node.isLeaf {
            let preferred: Int?
            if case .leafBefore(let at) = hint { preferred = at } else { preferred = nil }
            let cuts = NodePartition.cuts(
                count: node.count, preferred: preferred, cellSize: { node.cost(at: $0) },
                cellBytes: node.bodySize
            ) { start, end, cells in
                IndexLeafPage.bodySize(
                    count: end - start, first: node.keys[start], last: node.keys[end - 1], cellBytes: cells)
                    <= capacity
            }
            return splitLeaf(node, cuts: cuts)
        }
        if case .internalAtEnd = hint {
            let (separator, right) = splitAtEnd(node)
            return [(separator, right)]
        }
        // Children 0..<m stay, keys[m] moves up, children m... go right; both sides keep two or more children
        // (an overflowing node has at least five: each separator takes at most a quarter of a page).
        let half = node.bodySize / 2
        var leftSize = PageFormat.internalFirstChildSize
        var middle = 1
        while middle < node.count - 2 {
            let size = node.cost(at: middle)
            if leftSize + size > half, middle >= 2 { break }
            leftSize += size
            middle += 1
        }
        let (separator, right) = splitInternal(node, at: middle, leftSize: leftSize)
        var splits: Splits = node.bodySize > capacity ? split(node, .middle) : []
        splits.append((separator, right))
        if right.bodySize > capacity { splits += split(right, .middle) }
        return splits
    }

    /// Splits a leaf at `cuts` (starting with 0): `node` keeps the first part, each other part becomes a new leaf
    /// after the shortest separator that divides it from the part before.
    private func splitLeaf(_ node: IndexNode, cuts: [Int]) -> Splits {
        var splits: Splits = []
        for (start, end) in zip(cuts, cuts.dropFirst() + [node.count]).dropFirst() {
            let right = IndexNode(
                level: 0, keys: node.keys.entries(in: start..<end), children: [], owner: node.owner,
                bodySize: IndexNode.leafBodySize(node.keys, start..<end))
            splits.append((IndexKey.shortestSeparator(after: node.keys[start - 1], upTo: node.keys[start]), right))
        }
        let keep = cuts.count > 1 ? cuts[1] : node.count
        node.keys.removeSubrange(keep...)
        node.bodySize = IndexNode.leafBodySize(node.keys, 0..<node.count)
        return splits
    }

    /// Splits an internal node on the right edge at its end: the new right node takes the last two children.
    private func splitAtEnd(_ node: IndexNode) -> ([UInt8], IndexNode) {
        let middle = node.count - 2
        let leftSize = IndexNode.bodySize(level: node.level, keys: node.keys[..<middle])
        return splitInternal(node, at: middle, leftSize: leftSize)
    }

    private func splitInternal(_ node: IndexNode, at middle: Int, leftSize: Int) -> ([UInt8], IndexNode) {
        let separator = node.keys[middle]
        var rightKeys = node.keys.entries(in: middle..<node.count)
        rightKeys[0] = []
        let rightSize =
            node.bodySize - leftSize - PageFormat.indexInternalEntryOverhead - separator.count
            + PageFormat.internalFirstChildSize
        let right = IndexNode(
            level: node.level, keys: rightKeys, children: Array(node.children[middle...]), owner: node.owner,
            bodySize: rightSize)
        node.keys.removeSubrange(middle...)
        node.children.removeSubrange(middle...)
        node.bodySize = leftSize
        return (separator, right)
    }

    /// Merges an underfull child with a neighbour when both fit one page, else moves entries over from the
    /// neighbour until the two are about even (and no internal node keeps a single child).
    private func rebalance(_ parent: IndexNode, child index: Int, owner: UInt64) throws {
        guard parent.count > 1 else { return }  // the root's only child: the root gives way to it
        let leftIndex = index > 0 ? index - 1 : index
        let rightIndex = leftIndex + 1
        let level = parent.level - 1
        let rightRef = parent.children[rightIndex]
        let left = try mutable(parent.children[leftIndex], owner: owner, level: level)
        let right = try mutable(rightRef, owner: owner, level: level)
        // Pages that each verify may still overlap (damage the page checks cannot see): joining them would make a
        // leaf out of order, which no page can encode (§4.6).
        if left.isLeaf, let last = left.keys.last, let first = right.keys.first, IndexKey.compare(last, first) >= 0 {
            var offset: UInt64 = 0
            if case .page(let number) = rightRef { offset = pages.offset(of: number) }
            throw StorageError.corrupt(pages.fileName, at: offset, "neighbouring index leaves overlap")
        }
        parent.children[leftIndex] = .node(left)
        parent.children[rightIndex] = .node(right)
        let separator = parent.keys[rightIndex]
        if left.isLeaf {
            let merged = IndexLeafPage.bodySize(
                count: left.count + right.count, first: left.keys[0], last: right.keys[right.count - 1],
                cellBytes: left.bodySize + right.bodySize)
            if merged <= capacity {
                left.keys.append(contentsOf: right.keys)
                left.bodySize += right.bodySize
                removeChild(of: parent, at: rightIndex)
                return
            }
            redistributeLeaves(left, right)
            let newSeparator = IndexKey.shortestSeparator(after: left.keys[left.count - 1], upTo: right.keys[0])
            parent.bodySize += newSeparator.count - separator.count
            parent.keys[rightIndex] = newSeparator
            return
        }
        let merged = left.bodySize + right.bodySize + PageFormat.indexLengthSize + separator.count
        if merged <= capacity {
            left.keys.append(separator)
            left.keys.append(contentsOf: right.keys.dropFirst())
            left.children.append(contentsOf: right.children)
            left.bodySize = merged
            removeChild(of: parent, at: rightIndex)
            return
        }
        redistributeInternal(left, right, parent: parent, separatorIndex: rightIndex)
    }

    /// Moves entries across two neighbouring leaves while each move makes their entry bytes more even and the
    /// leaf that takes the entry still fits its page (its entries may share less of a prefix then, §4.6).
    private func redistributeLeaves(_ left: IndexNode, _ right: IndexNode) {
        // The entries to move are counted first, then moved together: one at a time, each move shifted the rest of
        // the leaf (W8: 4.7M instructions for 20 rebalances at N = 100,000).
        var moving = 0
        var movingBytes = 0
        while right.count - moving > 1 {
            let size = right.cost(at: moving)
            let fits = right.keys.withEntry(moving) { entry in
                left.keys.withEntry(0) { first in
                    IndexLeafPage.bodySize(
                        count: left.count + moving + 1, first: first, last: entry,
                        cellBytes: left.bodySize + movingBytes + size) <= capacity
                }
            }
            guard size < (right.bodySize - movingBytes) - (left.bodySize + movingBytes), fits else { break }
            moving += 1
            movingBytes += size
        }
        if moving > 0 {
            left.keys.append(contentsOf: right.keys.entries(in: 0..<moving))
            right.keys = right.keys.entries(in: moving..<right.count)
            left.bodySize += movingBytes
            right.bodySize -= movingBytes
            moving = 0
            movingBytes = 0
        }
        while left.count - moving > 1 {
            let last = left.count - 1 - moving
            let size = left.cost(at: last)
            let fits = left.keys.withEntry(last) { entry in
                right.keys.withEntry(right.count - 1) { lastOfRight in
                    IndexLeafPage.bodySize(
                        count: right.count + moving + 1, first: entry, last: lastOfRight,
                        cellBytes: right.bodySize + movingBytes + size) <= capacity
                }
            }
            guard size < (left.bodySize - movingBytes) - (right.bodySize + movingBytes), fits else { break }
            moving += 1
            movingBytes += size
        }
        guard moving > 0 else { return }
        let cut = left.count - moving
        var moved = left.keys.entries(in: cut..<left.count)
        moved.append(contentsOf: right.keys)
        right.keys = moved
        left.keys = left.keys.entries(in: 0..<cut)
        right.bodySize += movingBytes
        left.bodySize -= movingBytes
    }

    /// Rotates children through the parent's separator while that makes the two nodes' sizes more even, or
    /// while one of them has a single child.
    private func redistributeInternal(_ left: IndexNode, _ right: IndexNode, parent: IndexNode, separatorIndex: Int) {
        let overhead = PageFormat.indexInternalEntryOverhead
        while right.count > 2 {
            let gain = overhead + parent.keys[separatorIndex].count
            let loss = overhead + right.keys[1].count
            let before = abs(left.bodySize - right.bodySize)
            let after = abs((left.bodySize + gain) - (right.bodySize - loss))
            guard left.count < 2 || after < before else { break }
            left.keys.append(parent.keys[separatorIndex])
            left.children.append(right.children.removeFirst())
            left.bodySize += gain
            let up = right.keys.remove(at: 1)
            right.bodySize -= loss
            parent.bodySize += up.count - parent.keys[separatorIndex].count
            parent.keys[separatorIndex] = up
        }
        while left.count > 2 {
            let movedKey = left.keys[left.count - 1]
            let loss = overhead + movedKey.count
            let gain = overhead + parent.keys[separatorIndex].count
            let before = abs(left.bodySize - right.bodySize)
            let after = abs((left.bodySize - loss) - (right.bodySize + gain))
            guard right.count < 2 || after < before else { break }
            left.keys.removeLast()
            let movedChild = left.children.removeLast()
            left.bodySize -= loss
            right.keys[0] = parent.keys[separatorIndex]
            right.keys.insert([], at: 0)
            right.children.insert(movedChild, at: 0)
            right.bodySize += gain
            parent.bodySize += movedKey.count - parent.keys[separatorIndex].count
            parent.keys[separatorIndex] = movedKey
        }
    }
}
