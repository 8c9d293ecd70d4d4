import StrataFormat

extension BTree {
    /// Removes `key`, in one descent.
    /// - Returns: the new root (`nil` when the tree became empty) and the value removed, if the key was there.
    func delete(_ root: NodeRef?, key: UInt64, owner: UInt64) throws -> (root: NodeRef?, deleted: LeafValue?) {
        var copier = LeafCopier()
        let (newRoot, deleted) = try delete(root, key: key, owner: owner, seeing: &copier)
        return (deleted ? newRoot : root, copier.value)
    }

    /// Removes `key`, in one descent that lends the value it removes to `visitor` where it lies, before the leaf
    /// changes: index maintenance reads the old row there instead of a copy, and a visitor that throws leaves the
    /// tree's contents as they were.
    /// - Returns: the new root (`nil` when the tree became empty) and whether the key was there.
    func delete<Visitor: LeafVisitor>(
        _ root: NodeRef?, key: UInt64, owner: UInt64, seeing visitor: inout Visitor
    ) throws -> (root: NodeRef?, deleted: Bool) {
        guard let root else { return (nil, false) }
        var node = try mutable(root, owner: owner, level: nil)
        guard var splits = try delete(from: node, key: key, owner: owner, seeing: &visitor) else {
            return (root, false)
        }
        // A leaf can grow when it loses a row (dense row IDs become deltas, FORMAT.md §4.2): a root that split
        // gets a parent, as in a put.
        while !splits.isEmpty {
            let parent = BTreeNode(
                level: node.level + 1, keys: [0] + splits.map(\.separator), values: [],
                children: [.node(node)] + splits.map { .node($0.node) }, owner: owner,
                bodySize: BTreeLimits.internalBodySize(childCount: splits.count + 1))
            node = parent
            splits = limits.fits(parent) ? [] : splitInternal(parent)
        }
        // An internal root left with one child gives way to that child; an empty leaf root empties the tree.
        var top = node
        while !top.isLeaf, top.count == 1 {
            top = try resolve(top.children[0], level: top.level - 1)
        }
        if top.isLeaf, top.count == 0 { return (nil, true) }
        return (.node(top), true)
    }

    /// - Returns: nil when `key` is not there; else the new right siblings of `node` if it split. `visitor` sees the
    ///   value removed.
    private func delete<Visitor: LeafVisitor>(
        from node: BTreeNode, key: UInt64, owner: UInt64, seeing visitor: inout Visitor
    ) throws -> Splits? {
        if node.isLeaf {
            let (index, found) = node.search(key)
            guard found else { return nil }
            try node.values.withCell(index) { try visitor.visit($0) }
            node.bodySize -= limits.cellSize(node, index)
            node.keys.remove(at: index)
            node.values.remove(at: index)
            // Removing a row from the middle of a dense leaf makes its row IDs cost bytes (§4.2).
            return limits.fits(node) ? [] : splitLeaf(node)
        }
        let index = node.childIndex(for: key)
        let child = try mutable(node.children[index], owner: owner, level: node.level - 1)
        node.children[index] = .node(child)
        // The neighbour a rebalance of `child` would take is read now, before anything below changes: the way back up
        // reads no page, so a read that fails leaves the tree's rows as they were (a caller may catch the error and
        // commit the rest of its transaction).
        let neighbour =
            node.count > 1 && mayUnderflow(child, deleting: key)
            ? try neighbour(of: index, in: node, child: child, owner: owner) : nil
        guard let splits = try delete(from: child, key: key, owner: owner, seeing: &visitor) else { return nil }
        if !splits.isEmpty {
            for (offset, split) in splits.enumerated() {
                node.keys.insert(split.separator, at: index + 1 + offset)
                node.children.insert(.node(split.node), at: index + 1 + offset)
                node.bodySize += PageFormat.internalEntrySize
            }
            return limits.fits(node) ? [] : splitInternal(node)
        }
        if child.count == 0 {
            node.keys.remove(at: index)
            node.children.remove(at: index)
            node.bodySize -= PageFormat.internalEntrySize
        } else if child.bodySize < limits.mergeThreshold || (!child.isLeaf && child.count < 2) {
            // `mayUnderflow` held for this child; only a root with one child has no neighbour (the caller collapses it).
            guard let neighbour else {
                precondition(node.count == 1, "an underfull child was not expected to be")
                return []
            }
            rebalance(node, child: child, at: index, neighbour: neighbour)
        }
        return []
    }

    /// Whether deleting `key` below `child` may leave it underfull, which rebalancing it then needs a neighbour for:
    /// exactly for a leaf, conservatively for an internal node (it loses at most one child).
    private func mayUnderflow(_ child: BTreeNode, deleting key: UInt64) -> Bool {
        guard child.isLeaf else {
            return child.count < 3 || child.bodySize - PageFormat.internalEntrySize < limits.mergeThreshold
        }
        guard child.bodySize - limits.maximumCellSize < limits.mergeThreshold else { return false }
        let (index, found) = child.search(key)
        return found && child.bodySize - limits.cellSize(child, index) < limits.mergeThreshold
    }

    /// The neighbour of child `index` that ``rebalance(_:child:at:neighbour:)`` works with (the left one, the right one
    /// for the first child), made the transaction's own, checked against the child for overlap.
    private func neighbour(of index: Int, in parent: BTreeNode, child: BTreeNode, owner: UInt64) throws -> BTreeNode {
        let at = index > 0 ? index - 1 : index + 1
        let neighbour = try mutable(parent.children[at], owner: owner, level: parent.level - 1)
        let (left, right) = index > 0 ? (neighbour, child) : (child, neighbour)
        // Pages that each verify may still overlap (damage the page checks cannot see): joining them would make a
        // leaf out of order, which no page can encode (§4.2).
        if left.isLeaf, let last = left.keys.last, let first = right.keys.first, last >= first {
            throw StorageError.corrupt(
                pages.fileName, at: offset(of: parent.children[at]),
                "neighbouring leaves overlap: row \(last) in the left one, \(first) in the right one")
        }
        parent.children[at] = .node(neighbour)
        return neighbour
    }

    /// Merges an underfull child with its `neighbour` (see ``neighbour(of:in:child:owner:)``) when both fit one page, else
    /// moves entries over from the neighbour so that neither is underfull (and no internal node keeps a single child).
    /// Reads no page: it cannot fail half-way.
    private func rebalance(_ parent: BTreeNode, child: BTreeNode, at index: Int, neighbour: BTreeNode) {
        let leftIndex = index > 0 ? index - 1 : index
        let rightIndex = leftIndex + 1
        let (left, right) = index > 0 ? (neighbour, child) : (child, neighbour)
        let merged =
            left.isLeaf
            ? left.bodySize + right.bodySize
            : left.bodySize + right.bodySize + PageFormat.internalFirstChildSize
        let mergedFits =
            left.isLeaf
            ? LeafPage.bodySize(
                count: left.count + right.count, first: left.keys[0],
                last: right.keys[right.count - 1], cellBytes: merged) <= limits.capacity
            : merged <= limits.capacity
        if mergedFits {
            if left.isLeaf {
                left.keys.append(contentsOf: right.keys)
                left.values.append(contentsOf: right.values)
            } else {
                left.keys.append(parent.keys[rightIndex])
                left.keys.append(contentsOf: right.keys.dropFirst())
                left.children.append(contentsOf: right.children)
            }
            left.bodySize = merged
            parent.keys.remove(at: rightIndex)
            parent.children.remove(at: rightIndex)
            parent.bodySize -= PageFormat.internalEntrySize
        } else if left.isLeaf {
            redistributeLeaves(left, right)
            parent.keys[rightIndex] = right.keys[0]
        } else {
            redistributeInternal(left, right, parent: parent, separatorIndex: rightIndex)
        }
    }

    /// Moves cells across two neighbouring leaves while each move makes their cell bytes more even and the
    /// receiving leaf still fits its page (its row IDs spread with each cell it takes).
    private func redistributeLeaves(_ left: BTreeNode, _ right: BTreeNode) {
        // Count the cells to move first, then move them together: packed values move as one run.
        var moving = 0
        var movingBytes = 0
        while right.count - moving > 1 {
            let size = limits.cellSize(right, moving)
            guard size < (right.bodySize - movingBytes) - (left.bodySize + movingBytes),
                LeafPage.bodySize(
                    count: left.count + moving + 1, first: left.keys[0], last: right.keys[moving],
                    cellBytes: left.bodySize + movingBytes + size) <= limits.capacity
            else { break }
            moving += 1
            movingBytes += size
        }
        if moving > 0 {
            left.keys.append(contentsOf: right.keys[..<moving])
            right.keys.removeSubrange(..<moving)
            left.values.append(contentsOf: right.values.extracting(0..<moving))
            right.values.removePrefix(moving)
            left.bodySize += movingBytes
            right.bodySize -= movingBytes
            moving = 0
            movingBytes = 0
        }
        while left.count - moving > 1 {
            let last = left.count - 1 - moving
            let size = limits.cellSize(left, last)
            guard size < (left.bodySize - movingBytes) - (right.bodySize + movingBytes),
                LeafPage.bodySize(
                    count: right.count + moving + 1, first: left.keys[last], last: right.keys[right.count - 1],
                    cellBytes: right.bodySize + movingBytes + size) <= limits.capacity
            else { break }
            moving += 1
            movingBytes += size
        }
        guard moving > 0 else { return }
        let cut = left.count - moving
        right.keys.insert(contentsOf: left.keys[cut...], at: 0)
        left.keys.removeSubrange(cut...)
        right.values.prepend(contentsOf: left.values.extracting(cut..<left.values.count))
        left.values.removeSuffix(from: cut)
        right.bodySize += movingBytes
        left.bodySize -= movingBytes
    }

    /// Rotates children through the parent's separator until both nodes hold about as many.
    private func redistributeInternal(_ left: BTreeNode, _ right: BTreeNode, parent: BTreeNode, separatorIndex: Int) {
        while left.count + 1 < right.count {
            left.keys.append(parent.keys[separatorIndex])
            left.children.append(right.children.removeFirst())
            parent.keys[separatorIndex] = right.keys[1]
            right.keys.removeFirst()
        }
        while right.count + 1 < left.count {
            let movedKey = left.keys.removeLast()
            let movedChild = left.children.removeLast()
            right.keys[0] = parent.keys[separatorIndex]
            right.keys.insert(0, at: 0)
            right.children.insert(movedChild, at: 0)
            parent.keys[separatorIndex] = movedKey
        }
        left.bodySize = BTreeLimits.internalBodySize(childCount: left.count)
        right.bodySize = BTreeLimits.internalBodySize(childCount: right.count)
    }

    /// Where the node a reference names lies in the page file, for an error (0 for a node in memory).
    func offset(of ref: NodeRef) -> UInt64 {
        if case .page(let number) = ref { return pages.offset(of: number) }
        return 0
    }
}
