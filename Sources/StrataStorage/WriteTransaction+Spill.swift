extension WriteTransaction {
    /// Writes what a large transaction past its memory bound holds to the page file before its commit: its tables'
    /// full leaves (``LeafSpill``) and the index entries of its loads into empty indexes as sorted runs
    /// (``IndexLoadRuns``).
    ///
    /// - Throws: ``StorageError/io(_:)``; then the transaction cannot commit.
    func spillLarge() throws {
        try spill.spill(state.tables.values.map(\.root), tree: tree, owner: tag)
        try indexChanges?.spillLoads(of: state, tree: IndexTree(pages: tree.pages), into: &spill)
        // The loads' notes just written out are counted again as they grow back.
        countedIndexBytes = indexChanges?.memoryBytes ?? 0
    }
}
