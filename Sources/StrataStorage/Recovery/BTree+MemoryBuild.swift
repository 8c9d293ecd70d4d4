import StrataFormat

extension BTree {
    /// A new tree holding `keys` and `values`, built bottom-up in memory: leaves filled in order as far as a page
    /// holds them (the exact size of FORMAT.md §4.2), then each level of internal nodes over the one below, the
    /// children shared out evenly among as few nodes as hold them, until one node is left. What inserting the same
    /// rows one by one at the right edge gives (full leaves), without a descent, a copy or a split per row.
    ///
    /// - Parameters:
    ///   - keys: strictly increasing (a precondition).
    ///   - value: the value of `keys[i]`, asked for once, in order; each is copied into its leaf's packed values as
    ///     the leaf fills (no packed copy of them all first).
    ///   - owner: the tag of the write transaction (or replay) the new nodes belong to.
    /// - Returns: the root, or nil for no rows.
    func buildInMemory(keys: [UInt64], value: (Int) -> [UInt8], owner: UInt64) -> NodeRef? {
        guard !keys.isEmpty else { return nil }
        var level: [BTreeNode] = []
        level.reserveCapacity(keys.count / 16 + 1)
        var start = 0
        var cellBytes = 0
        var leafValues = LeafValues()
        func closeLeaf(_ end: Int) {
            level.append(
                BTreeNode(
                    level: 0, keys: Array(keys[start..<end]), values: leafValues, children: [], owner: owner,
                    bodySize: cellBytes))
            leafValues = LeafValues()
        }
        for index in keys.indices {
            precondition(index == 0 || keys[index - 1] < keys[index], "row IDs to build must strictly increase")
            let bytes = value(index)
            let cell = limits.cellSize(.bytes(bytes))
            if index > start,
                LeafPage.bodySize(
                    count: index - start + 1, first: keys[start], last: keys[index], cellBytes: cellBytes + cell)
                    > limits.capacity
            {
                closeLeaf(index)
                start = index
                cellBytes = 0
            }
            bytes.withUnsafeBytes { leafValues.append(inline: $0) }
            cellBytes += cell
        }
        closeLeaf(keys.count)
        let perNode = limits.maximumChildren
        while level.count > 1 {
            // As few parents as hold the children, shared out evenly: each gets at least two (a parent holds at
            // least four children, so with two parents or more every share is above two).
            let parents = (level.count + perNode - 1) / perNode
            var next: [BTreeNode] = []
            next.reserveCapacity(parents)
            for parent in 0..<parents {
                let children = level[(level.count * parent / parents)..<(level.count * (parent + 1) / parents)]
                next.append(
                    BTreeNode(
                        level: children.first!.level + 1, keys: children.map { $0.keys[0] }, values: [],
                        children: children.map { .node($0) }, owner: owner,
                        bodySize: BTreeLimits.internalBodySize(childCount: children.count)))
            }
            level = next
        }
        return .node(level[0])
    }
}
