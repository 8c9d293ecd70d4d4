import StrataFormat

extension BTree {
    /// The tree over `leaves` (in row order, as ``MemoryLeafBuilder`` fills them): each level of internal nodes over
    /// the one below, the children shared out evenly among as few nodes as hold them, until one node is left. With full
    /// leaves, what inserting the same rows one by one at the right edge gives, without a descent, a copy or a split per
    /// row.
    ///
    /// - Returns: the root, or nil for no leaves.
    func buildLevels(above leaves: [BTreeNode], owner: UInt64) -> NodeRef? {
        guard !leaves.isEmpty else { return nil }
        var level = leaves
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
