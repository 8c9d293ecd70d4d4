import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// A device that fails a read while a transaction deletes rows. A delete reads every page it may need (the path to
/// the row and the neighbour a rebalance would take) before it changes anything, so a delete that fails leaves the
/// transaction's rows as they were: a caller may catch the error, go on and commit.
@Suite struct DeleteReadErrorTests {
    @Test func aDeleteThatCannotReadAPageKeepsTheRowAndTheTransactionCommitsTheRest() throws {
        let memory = TemporaryStore.makeFileSystem()
        let configuration = StoreConfiguration.testing(pageSize: 512)
        var store = try Store.openForTesting(memory, configuration: configuration)
        let (table, rows) = try store.write { txn -> (TableID, [RowID]) in
            let table = try txn.createTable(named: "t")
            let rows = try (0..<400).map { k in try txn.insert(Array("row \(k) of the table".utf8), into: table) }
            return (table, rows)
        }
        try store.checkpoint()
        try store.close()

        var alive = Set(rows)
        var failures = 0
        for skip in 0..<20 {
            // Reopened each time so that the pages are read again, each time failing another read.
            let faulty = FaultInjectingFileSystem(wrapping: memory)
            store = try Store.open(at: TemporaryStore.directory, configuration: configuration, fileSystem: faulty)
            faulty.inject(.init(on: [.read], after: skip, pathContaining: "strata.pages"))
            try store.write { txn throws in
                // Neighbouring rows, so that leaves empty out and merge with the leaves beside them.
                for row in rows.filter(alive.contains).prefix(15) {
                    do {
                        let existed = try txn.delete(row, from: table)
                        #expect(existed)
                        alive.remove(row)
                    } catch StorageError.io {
                        failures += 1
                    }
                }
                faulty.clearFaults()
                #expect(try txn.rowCount(in: table) == alive.count, "read \(skip) failed")
                for row in rows {
                    let found = try txn.row(row, in: table) != nil
                    #expect(found == alive.contains(row), "read \(skip): row \(row)")
                }
            }
            #expect(try store.verify().isClean, "read \(skip) failed")
            try store.close()
        }
        #expect(failures > 0)

        store = try Store.open(at: TemporaryStore.directory, configuration: configuration, fileSystem: memory)
        let snapshot = store.snapshot()
        #expect(try snapshot.rowCount(in: table) == alive.count)
        for row in rows {
            let found = try snapshot.row(row, in: table) != nil
            #expect(found == alive.contains(row))
        }
        try store.close()
    }

    /// Deletes note their index removals and the transaction puts them into the index trees before an index is read.
    /// When a read fails while it does, the trees may hold part of the changes: every later index read and the commit
    /// fail with that error, even when the caller caught it, and the store keeps what it had.
    @Test func indexChangesThatFailToApplyLeaveTheTransactionUnableToCommit() throws {
        let memory = TemporaryStore.makeFileSystem()
        let configuration = StoreConfiguration.testing(pageSize: 512)
        let (table, index, rows) = try IndexReference.makeSevenKeyStore(memory, configuration: configuration)

        let faulty = FaultInjectingFileSystem(wrapping: memory)
        let store = try Store.open(at: TemporaryStore.directory, configuration: configuration, fileSystem: faulty)
        do {
            try store.write { txn throws in
                for row in rows.prefix(100) { _ = try txn.delete(row, from: table) }
                faulty.inject(.init(on: [.read], after: 0, pathContaining: "strata.pages"))
                do {
                    _ = try txn.rowIDs(in: index, matching: [.int64(0)])
                    Issue.record("the index's pages were read without a failure")
                } catch StorageError.io {}
                faulty.clearFaults()
                do {
                    _ = try txn.rowIDs(in: index, matching: [.int64(0)])
                    Issue.record("the index was read after its changes failed to apply")
                } catch StorageError.io {}
                // The caller goes on as if nothing had failed.
            }
            Issue.record("the transaction committed")
        } catch StorageError.io {}
        let snapshot = store.snapshot()
        #expect(try snapshot.rowCount(in: table) == rows.count)
        #expect(try snapshot.indexEntryCount(index) == rows.count)
        #expect(try snapshot.rowIDs(in: index, matching: [.int64(0)]).count == 43)
        #expect(try store.verify().isClean)
        try store.close()
    }
}
