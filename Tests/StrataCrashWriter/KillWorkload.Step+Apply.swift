import StrataStorage

/// The writer found the store different from the model: an engine bug (or a store of another workload).
struct WorkloadMismatch: Error, CustomStringConvertible {
    var description: String
}

extension KillWorkload.Step {
    /// Performs the step in `txn`, checking each row it changes against the model first.
    func apply(to txn: WriteTransaction) throws {
        let table = try txn.table(named: KillWorkload.tableName) ?? txn.createTable(named: KillWorkload.tableName)
        let progress =
            try txn.table(named: KillWorkload.progressTableName)
            ?? txn.createTable(named: KillWorkload.progressTableName)

        for update in updates {
            let before = KillWorkload.Row(version: update.row.version - 1, blob: update.row.blob)
            try expectRow(update.index, before, in: table, txn, "before transaction \(index) updates it")
            try txn.update(
                KillWorkload.rowID(of: update.index), in: table,
                to: KillWorkload.rowBytes(index: update.index, version: update.row.version, blob: update.row.blob))
        }
        for delete in deletes {
            try expectRow(delete.index, delete.row, in: table, txn, "before transaction \(index) deletes it")
            guard try txn.delete(KillWorkload.rowID(of: delete.index), from: table) else {
                throw WorkloadMismatch(description: "transaction \(index) found no row \(delete.index) to delete")
            }
            if let blob = delete.row.blob, try !txn.deleteBlob(blob) {
                throw WorkloadMismatch(description: "transaction \(index) found no \(blob) to delete")
            }
        }
        if let expected = inserted.blob {
            let blob = try txn.storeBlob(KillWorkload.blobBytes(index: index))
            guard blob == expected else {
                throw WorkloadMismatch(
                    description: "transaction \(index) stored \(blob), the model expects \(expected)")
            }
        }
        let row = try txn.insert(
            KillWorkload.rowBytes(index: index, version: inserted.version, blob: inserted.blob), into: table)
        guard row == KillWorkload.rowID(of: index) else {
            throw WorkloadMismatch(
                description: "transaction \(index) inserted \(row), expected \(KillWorkload.rowID(of: index))")
        }
        if index == 0 {
            try txn.insert(KillWorkload.progressBytes(index: index), into: progress)
        } else {
            try txn.update(RowID(1), in: progress, to: KillWorkload.progressBytes(index: index))
        }
    }

    private func expectRow(
        _ target: UInt64, _ row: KillWorkload.Row, in table: TableID, _ txn: WriteTransaction, _ when: String
    ) throws {
        let expected = KillWorkload.rowBytes(index: target, version: row.version, blob: row.blob)
        let actual = try txn.row(KillWorkload.rowID(of: target), in: table)
        guard actual != expected else { return }
        let found = actual.map(KillWorkload.describeRow) ?? "no row"
        throw WorkloadMismatch(
            description: "row \(target) \(when): expected \(KillWorkload.describeRow(expected)), found \(found)")
    }
}
