import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// What a write transaction may do, what it refuses, and what it leaves behind when it fails
/// (WriteTransaction.swift).
@Suite struct WriteTransactionTests {
    private struct Deliberate: Error {}

    /// A store with one table "t" holding rows 1...3.
    private func makeStore(
        _ fileSystem: InMemoryFileSystem = TemporaryStore.makeFileSystem()
    ) throws -> (Store, TableID) {
        let store = try Store.openForTesting(fileSystem)
        let table = try store.write { txn throws in
            let table = try txn.createTable(named: "t")
            for value: UInt8 in 1...3 { try txn.insert([value], into: table) }
            return table
        }
        return (store, table)
    }

    @Test func throwingClosureLeavesNothingBehind() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table) = try makeStore(fileSystem)
        let before = try ReferenceModel.capture(store.snapshot())
        let walBefore = try fileSystem.contentsOfFile(at: TemporaryStore.wal())
        let lsnBefore = store.snapshot().lsn
        #expect(throws: Deliberate.self) {
            try store.write { txn throws in
                let other = try txn.createTable(named: "other")
                try txn.insert(Array(repeating: 1, count: 10_000), into: other)
                try txn.insert([4], into: table)
                try txn.update(RowID(1), in: table, to: [9, 9])
                try txn.delete(RowID(2), from: table)
                try txn.dropTable(table)
                throw Deliberate()
            }
        }
        #expect(try ReferenceModel.capture(store.snapshot()) == before)
        #expect(store.snapshot().lsn == lsnBefore)
        #expect(try fileSystem.contentsOfFile(at: TemporaryStore.wal()) == walBefore, "nothing logged")
        // The store goes on, and the next transaction does not see the failed one's changes.
        try store.write { txn throws in
            #expect(txn.table(named: "other") == nil)
            #expect(try txn.row(RowID(1), in: table) == [1])
            #expect(try txn.rowCount(in: table) == 3)
            #expect(try txn.insert([5], into: table) == RowID(4))
        }
        #expect(try store.verify().isClean)
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(reopened.snapshot().tableNames == ["t"])
        #expect(try reopened.snapshot().rowCount(in: table) == 4)
        try reopened.close()
    }

    @Test func errorCaughtInsideTheClosureDoesNotUndoTheRest() throws {
        let (store, table) = try makeStore()
        try store.write { txn throws in
            #expect(throws: StorageError.rowNotFound(table: table, row: RowID(99))) {
                try txn.update(RowID(99), in: table, to: [1])
            }
            try txn.update(RowID(3), in: table, to: [33])
        }
        #expect(try store.snapshot().row(RowID(3), in: table) == [33])
        try store.close()
    }

    @Test func updateOfAMissingRowIsRowNotFound() throws {
        let (store, table) = try makeStore()
        _ = try store.write { try $0.delete(RowID(2), from: table) }
        for row: UInt64 in [0, 2, 4, 1000, .max] {
            #expect(throws: StorageError.rowNotFound(table: table, row: RowID(row))) {
                try store.write { try $0.update(RowID(row), in: table, to: [1]) }
            }
        }
        #expect(try store.snapshot().rowCount(in: table) == 2)
        #expect(try store.snapshot().nextRowID(in: table) == RowID(4), "a failed update allocates nothing")
        try store.close()
    }

    @Test func deleteOfAMissingRowReturnsFalseAndLogsNothing() throws {
        let (store, table) = try makeStore()
        let lsn = store.snapshot().lsn
        #expect(try store.write { try $0.delete(RowID(7), from: table) } == false)
        #expect(try store.write { try $0.delete(RowID(1), from: table) } == true)
        #expect(try store.write { try $0.delete(RowID(1), from: table) } == false)
        #expect(store.snapshot().lsn == lsn + 2, "only the real delete was logged")
        try store.close()
    }

    @Test func deleteSeeingTheRowLendsItsBytesOnceAndOnlyWhenItExists() throws {
        let (store, table) = try makeStore()
        var seen: [[UInt8]] = []
        let existed = try store.write { txn throws in
            try txn.delete(RowID(2), from: table) { seen.append(Array($0)) }
        }
        #expect(existed)
        #expect(seen == [[2]])
        #expect(try store.write { try $0.delete(RowID(2), from: table) { seen.append(Array($0)) } } == false)
        #expect(seen == [[2]], "no row, no call")
        #expect(try store.snapshot().row(RowID(2), in: table) == nil)
        #expect(try store.snapshot().rowCount(in: table) == 2)
        try store.close()
    }

    @Test func deleteSeeingARowInOverflowPagesLendsAllOfIt() throws {
        let (store, table) = try makeStore()
        let large = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let row = try store.write { try $0.insert(large, into: table) }
        try store.checkpoint()
        var seen: [UInt8] = []
        try store.write { txn throws in _ = try txn.delete(row, from: table) { seen = Array($0) } }
        #expect(seen == large)
        #expect(try store.snapshot().row(row, in: table) == nil)
        #expect(try store.verify().isClean)
        try store.close()
    }

    @Test func deleteWhoseLookAtTheRowThrowsChangesNothing() throws {
        let (store, table) = try makeStore()
        let lsn = store.snapshot().lsn
        try store.write { txn throws in
            #expect(throws: Deliberate.self) { try txn.delete(RowID(1), from: table) { _ in throw Deliberate() } }
            #expect(try txn.row(RowID(1), in: table) == [1], "the row stays")
            #expect(try txn.rowCount(in: table) == 3)
        }
        #expect(store.snapshot().lsn == lsn, "nothing logged")
        #expect(try store.snapshot().row(RowID(1), in: table) == [1])
        try store.close()
    }

    @Test func unknownTableIsNoSuchTableEverywhere() throws {
        let (store, _) = try makeStore()
        let missing = TableID(42)
        let expected = StorageError.noSuchTable(missing.description)
        try store.write { txn throws in
            #expect(throws: expected) { try txn.insert([1], into: missing) }
            #expect(throws: expected) { try txn.update(RowID(1), in: missing, to: [1]) }
            #expect(throws: expected) { try txn.delete(RowID(1), from: missing) }
            #expect(throws: expected) { try txn.row(RowID(1), in: missing) }
            #expect(throws: expected) { try txn.rowCount(in: missing) }
            #expect(throws: expected) { try txn.forEachRow(in: missing) { _, _ in true } }
            #expect(throws: expected) { try txn.dropTable(missing) }
        }
        let snapshot = store.snapshot()
        #expect(throws: expected) { try snapshot.row(RowID(1), in: missing) }
        #expect(throws: expected) { try snapshot.rowCount(in: missing) }
        #expect(throws: expected) { try snapshot.nextRowID(in: missing) }
        #expect(throws: expected) { try snapshot.forEachRow(in: missing) { _, _ in true } }
        #expect(throws: expected) { try snapshot.withRow(RowID(1), in: missing) { _ in () } }
        try store.close()
    }

    @Test func duplicateTableNameIsTableExists() throws {
        let (store, _) = try makeStore()
        #expect(throws: StorageError.tableExists(name: "t")) { try store.write { try $0.createTable(named: "t") } }
        #expect(throws: StorageError.tableExists(name: "u")) {
            try store.write { txn throws in
                try txn.createTable(named: "u")
                try txn.createTable(named: "u")
            }
        }
        #expect(store.snapshot().tableNames == ["t"])
        try store.close()
    }

    @Test func tableNamesOutsideTheLimitsAreInvalidArguments() throws {
        let (store, _) = try makeStore()
        for name in ["", String(repeating: "x", count: 1025), String(repeating: "é", count: 513)] {
            #expect(throws: StorageError.self, "name of \(name.utf8.count) bytes") {
                try store.write { try $0.createTable(named: name) }
            }
        }
        let longest = String(repeating: "y", count: 1024)
        let id = try store.write { try $0.createTable(named: longest) }
        #expect(store.snapshot().table(named: longest) == id)
        try store.close()
    }

    @Test func droppedTableIDsAreNeverReusedEvenAcrossReopenAndCheckpoint() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, first) = try makeStore(fileSystem)
        try store.write { try $0.dropTable(first) }
        let second = try store.write { try $0.createTable(named: "t") }
        #expect(second.rawValue > first.rawValue)
        #expect(store.snapshot().table(named: "t") == second)
        #expect(try store.snapshot().rowCount(in: second) == 0, "a new table of an old name starts empty")
        // Drop the newest table: its ID is the highest ever given, and must still not come back.
        try store.write { try $0.dropTable(second) }
        // Across a crash (replay of the log) ...
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        let third = try crashed.write { try $0.createTable(named: "t") }
        #expect(third.rawValue > second.rawValue, "after replay: \(third) reused an ID up to \(second)")
        try crashed.close()
        // ... and across a checkpoint and a clean reopen.
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        let fourth = try reopened.write { try $0.createTable(named: "t") }
        #expect(fourth.rawValue > second.rawValue, "after a checkpoint: \(fourth) reused an ID up to \(second)")
        try reopened.close()
    }

    @Test func rowIDsAreNeverReusedAfterDeleteEvenAcrossReopen() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table) = try makeStore(fileSystem)
        // Delete the highest row, and then every row.
        _ = try store.write { try $0.delete(RowID(3), from: table) }
        #expect(try store.write { try $0.insert([4], into: table) } == RowID(4))
        try store.write { txn in for row: UInt64 in 1...4 { try txn.delete(RowID(row), from: table) } }
        #expect(try store.snapshot().nextRowID(in: table) == RowID(5))
        // After a crash (replay) ...
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(try crashed.write { try $0.insert([5], into: table) } == RowID(5))
        try crashed.close()
        // ... after a checkpoint of an empty table and a clean reopen ...
        try store.close()
        var reopened = try Store.openForTesting(fileSystem)
        #expect(try reopened.snapshot().nextRowID(in: table) == RowID(5))
        #expect(try reopened.write { try $0.insert([5], into: table) } == RowID(5))
        _ = try reopened.write { try $0.delete(RowID(5), from: table) }
        try reopened.close()
        // ... and again, with nothing left in the log.
        reopened = try Store.openForTesting(fileSystem)
        #expect(try reopened.write { try $0.insert([6], into: table) } == RowID(6))
        try reopened.close()
    }

    @Test func insertDeleteInOneTransactionStillConsumesTheRowID() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table) = try makeStore(fileSystem)
        try store.write { txn throws in
            let row = try txn.insert([1], into: table)
            #expect(try txn.delete(row, from: table))
        }
        #expect(try store.snapshot().nextRowID(in: table) == RowID(5))
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(try crashed.snapshot().nextRowID(in: table) == RowID(5), "after replay")
        try crashed.close()
        try store.close()
    }

    /// Puts, updates and deletes change their table where it lies in the state's catalog: interleaved over many
    /// tables, each keeps its own rows, count and next row ID, and a snapshot taken before keeps its view.
    @Test func writesInterleavedOverTablesKeepEachTablesRowsCountsAndIDs() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, first) = try makeStore(fileSystem)
        let tables = try store.write { txn in try (0..<40).map { try txn.createTable(named: "t\($0)") } + [first] }
        let before = store.snapshot()
        try store.write { txn throws in
            for round: UInt8 in 0..<5 {
                for (position, table) in tables.enumerated() {
                    let row = try txn.insert([round, UInt8(position)], into: table)
                    #expect(row == RowID(UInt64(round) + (table == first ? 4 : 1)))
                }
            }
            for (position, table) in tables.enumerated() where position % 3 == 0 {
                try txn.update(RowID(2), in: table, to: [99, UInt8(position)])
                #expect(try txn.delete(RowID(1), from: table))
            }
            #expect(throws: StorageError.self) { try txn.update(RowID(99), in: first, to: [1]) }
        }
        let snapshot = store.snapshot()
        for (position, table) in tables.enumerated() {
            let changed = position % 3 == 0
            let rows = table == first ? 8 : 5
            #expect(try snapshot.rowCount(in: table) == rows - (changed ? 1 : 0))
            #expect(try snapshot.nextRowID(in: table) == RowID(UInt64(rows) + 1))
            if table != first {
                let expected: [UInt8] = changed ? [99, UInt8(position)] : [1, UInt8(position)]
                #expect(try snapshot.row(RowID(2), in: table) == expected)
                #expect(try before.rowCount(in: table) == 0)
            }
        }
        #expect(try before.rowCount(in: first) == 3)
        #expect(try store.verify().isClean)
        let committed = try ReferenceModel.capture(snapshot)
        try store.close()
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(try ReferenceModel.capture(crashed.snapshot()) == committed, "after replay")
        try crashed.close()
    }

    /// IDs hash as their raw value does, so that the catalog's dictionaries find them in one step.
    @Test func idsHashAsTheirRawValue() {
        var byID: [TableID: UInt32] = [:]
        var indexes: Set<IndexID> = []
        for raw: UInt32 in [1, 2, 3, 1_000, 65_536, UInt32.max - 1] {
            #expect(TableID(raw).hashValue == raw.hashValue)
            #expect(IndexID(raw).hashValue == raw.hashValue)
            byID[TableID(raw)] = raw
            indexes.insert(IndexID(raw))
        }
        for raw in byID.values { #expect(byID[TableID(raw)] == raw && indexes.contains(IndexID(raw))) }
        #expect(byID[TableID(4)] == nil && !indexes.contains(IndexID(4)))
    }

    @Test func readsInsideTheTransactionSeeItsOwnChanges() throws {
        let (store, table) = try makeStore()
        let before = store.snapshot()
        try store.write { txn throws in
            let other = try txn.createTable(named: "other")
            #expect(txn.table(named: "other") == other)
            #expect(txn.tableNames == ["other", "t"])
            let row = try txn.insert(Array(repeating: 5, count: 9000), into: other)
            #expect(try txn.row(row, in: other) == Array(repeating: 5, count: 9000))
            try txn.update(RowID(1), in: table, to: [10])
            #expect(try txn.delete(RowID(2), from: table))
            #expect(try txn.row(RowID(1), in: table) == [10])
            #expect(try txn.row(RowID(2), in: table) == nil)
            #expect(try txn.rowCount(in: table) == 2)
            var seen: [UInt64] = []
            try txn.forEachRow(in: table, reverse: true) { row, _ in
                seen.append(row.rawValue)
                return true
            }
            #expect(seen == [3, 1])
            // Snapshots do not see the transaction until it commits.
            #expect(store.snapshot().table(named: "other") == nil)
        }
        #expect(try before.row(RowID(2), in: table) == [2], "an earlier snapshot keeps its view")
        #expect(try store.snapshot().row(RowID(2), in: table) == nil)
        try store.close()
    }

    @Test func valueLargerThanTheLimitIsInvalidArgument() throws {
        let (store, table) = try makeStore()
        let tooLarge = [UInt8](repeating: 0, count: WALFormat.maximumValueSize + 1)
        #expect { try store.write { try $0.insert(tooLarge, into: table) } } throws: { error in
            guard case StorageError.invalidArgument = error else { return false }
            return true
        }
        #expect { try store.write { try $0.update(RowID(1), in: table, to: tooLarge) } } throws: { error in
            guard case StorageError.invalidArgument = error else { return false }
            return true
        }
        #expect(try store.snapshot().rowCount(in: table) == 3)
        try store.close()
    }

    @Test func reservedRowIDsAreSkippedByInsertAndDurable() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table) = try makeStore(fileSystem)
        let first = try store.write { try $0.reserveRowIDs(10, in: table) }
        #expect(first == RowID(4))
        #expect(try store.write { try $0.insert([1], into: table) } == RowID(14))
        try store.write { try $0.insert([7], into: table, at: RowID(5)) }
        #expect(try store.snapshot().row(RowID(5), in: table) == [7])
        #expect(try store.snapshot().rowCount(in: table) == 5)
        // Across a crash (replay) and across a checkpoint, the reservation holds.
        try store.write { _ = try $0.reserveRowIDs(5, in: table) }
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(try crashed.snapshot().nextRowID(in: table) == RowID(20))
        try crashed.close()
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(try reopened.snapshot().nextRowID(in: table) == RowID(20))
        #expect(try reopened.write { try $0.insert([2], into: table) } == RowID(20))
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }

    @Test func insertAtAnExistingRowIDIsInvalidArgument() throws {
        let (store, table) = try makeStore()
        #expect { try store.write { try $0.insert([9], into: table, at: RowID(2)) } } throws: { error in
            guard case StorageError.invalidArgument = error else { return false }
            return true
        }
        #expect(try store.snapshot().row(RowID(2), in: table) == [2])
        #expect(throws: StorageError.noSuchTable(TableID(77).description)) {
            try store.write { try $0.insert([9], into: TableID(77), at: RowID(1)) }
        }
        try store.close()
    }

    /// The row-ID space has an end: inserting at the last ID, or reserving past it, must be refused with an
    /// error rather than overflow the table's next row ID (a trap that ends the process).
    @Test func insertAtTheLastRowIDIsAnErrorNotATrap() async {
        await #expect(processExitsWith: .success) {
            let store = try Store.openForTesting(TemporaryStore.makeFileSystem())
            let table = try store.write { try $0.createTable(named: "t") }
            _ = try? store.write { try $0.insert([1], into: table, at: RowID(.max)) }
            try store.close()
        }
    }

    @Test func reservingPastTheLastRowIDIsAnErrorNotATrap() async {
        await #expect(processExitsWith: .success) {
            let store = try Store.openForTesting(TemporaryStore.makeFileSystem())
            let table = try store.write { try $0.createTable(named: "t") }
            _ = try? store.write { try $0.reserveRowIDs(Int.max, in: table) }
            _ = try? store.write { try $0.reserveRowIDs(Int.max, in: table) }
            _ = try? store.write { try $0.insert([1], into: table) }
            try store.close()
        }
    }

    @Test func emptyValuesAreRowsToo() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table) = try makeStore(fileSystem)
        let row = try store.write { try $0.insert([], into: table) }
        #expect(try store.snapshot().row(row, in: table) == [])
        try store.write { try $0.update(RowID(1), in: table, to: []) }
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(try reopened.snapshot().row(row, in: table) == [])
        #expect(try reopened.snapshot().row(RowID(1), in: table) == [])
        try reopened.close()
    }
}

/// Misuse that must trap early rather than corrupt anything (STYLE: programmer errors are preconditions).
@Suite struct WriteTransactionMisuseTests {
    @Test func transactionUsedAfterItsClosureTraps() async {
        await #expect(processExitsWith: .failure) {
            let store = try Store.openForTesting(TemporaryStore.makeFileSystem())
            var escaped: WriteTransaction?
            try store.write { escaped = $0 }
            _ = try escaped!.createTable(named: "late")
        }
    }
}
