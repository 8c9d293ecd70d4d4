extension Store {
    /// Verifies the store and rebuilds, in one write transaction, every secondary index that verification
    /// finds a problem in (``VerificationReport/Remedy/indexRebuild``): a damaged page, a broken invariant, a
    /// wrong entry count, or disagreement with its table. `strata fsck --repair` calls this.
    ///
    /// Rebuilding reads only the index's table (``WriteTransaction/rebuildIndex(_:)``), so nothing committed
    /// is lost. It cannot help when the table itself is damaged (salvage then), nor when the log replays
    /// changes into a damaged index: opening the store fails first (salvage rebuilds every index too).
    ///
    /// - Returns: the names of the indexes rebuilt, sorted.
    /// An index that also has a problem no rebuild fixes (rows of its table that are not row records it can
    /// index) is left alone.
    ///
    /// - Throws: ``StorageError/storeClosed``; what the rebuild throws (``StorageError/io(_:)``, a table whose
    ///   rows cannot be read); ``StorageError/corruption(file:offset:reason:)`` for a stored row that the
    ///   index cannot take (damage, not a bad argument).
    @discardableResult
    public func repairIndexes() throws -> [String] {
        let report = try verify()
        let stuck = Set(report.problems.compactMap { $0.remedy == nil ? $0.index : nil })
        let names = Set(report.problems.compactMap { $0.remedy == .indexRebuild ? $0.index : nil })
            .subtracting(stuck).sorted()
        guard !names.isEmpty else { return [] }
        do {
            try write { txn in
                for name in names {
                    if let index = txn.index(named: name) { try txn.rebuildIndex(index) }
                }
            }
        } catch StorageError.invalidArgument(let reason) {
            throw StorageError.corrupt(pages.fileName, at: 0, reason)
        }
        logger.warning("secondary indexes rebuilt from their tables", metadata: ["indexes": "\(names)"])
        return names
    }
}
