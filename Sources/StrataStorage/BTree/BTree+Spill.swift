extension BTree {
    /// Writes every leaf of the tree that the transaction tagged `owner` holds in memory, but the rightmost (an
    /// append fills it next), with `write`, and puts the page it returns in the leaf's place: the parents keep only
    /// separator keys and page numbers, and the leaves' memory is freed. A written leaf is a page like any other to
    /// the tree: a later change to one of its rows copies it back into memory (``mutable(_:owner:level:)``).
    ///
    /// Only the transaction's own nodes are walked: a subtree it did not change holds nothing to write.
    func spillLeaves(_ root: NodeRef?, owner: UInt64, _ write: (BTreeNode) throws -> UInt64) throws {
        guard case .node(let node)? = root, node.owner == owner, !node.isLeaf else { return }
        try spillChildren(of: node, owner: owner, rightmost: true, write)
    }

    private func spillChildren(
        of node: BTreeNode, owner: UInt64, rightmost: Bool, _ write: (BTreeNode) throws -> UInt64
    ) throws {
        for index in 0..<node.count {
            guard case .node(let child) = node.children[index], child.owner == owner else { continue }
            let childIsRightmost = rightmost && index == node.count - 1
            if !child.isLeaf {
                try spillChildren(of: child, owner: owner, rightmost: childIsRightmost, write)
            } else if !childIsRightmost {
                node.children[index] = .page(try write(child))
            }
        }
    }
}
