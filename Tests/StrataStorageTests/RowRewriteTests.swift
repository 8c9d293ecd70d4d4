import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// `WriteTransaction.update(_:in:rewriting:)`: a row read and rewritten in one search (`StoreState.rewrite`).
@Suite struct RowRewriteTests {
    private struct Deliberate: Error {}

    private static func row(_ group: Int64, _ text: String) -> [UInt8] {
        RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(group), .string(text)])
    }

    /// The row with `text` as its second field, its group kept.
    private static func renamed(_ old: UnsafeRawBufferPointer, _ text: String) throws -> [UInt8] {
        let (_, fields) = try RowRecord.decodeAll(old)
        guard case .int64(let group) = fields[0] else { throw Deliberate() }
        return row(group, text)
    }

    /// A store with table "t" holding rows 1...10 (`row(k % 3, "row k")`) and index "t_group" on their first field.
    private static func makeStore(
        _ fileSystem: InMemoryFileSystem = TemporaryStore.makeFileSystem()
    ) throws -> (Store, TableID, IndexID) {
        let store = try Store.openForTesting(fileSystem)
        let (table, index) = try store.write { txn throws in
            let table = try txn.createTable(named: "t")
            let index = try txn.createIndex(named: "t_group", on: table, fields: [0])
            for k in 1...10 { try txn.insert(row(Int64(k % 3), "row \(k)"), into: table) }
            return (table, index)
        }
        return (store, table, index)
    }

    private static func rows(_ snapshot: Snapshot, _ table: TableID) throws -> [UInt64: [UInt8]] {
        var rows: [UInt64: [UInt8]] = [:]
        try snapshot.forEachRow(in: table) { id, bytes in
            rows[id.rawValue] = Array(bytes)
            return true
        }
        return rows
    }

    private static func rows(_ txn: WriteTransaction, _ table: TableID) throws -> [UInt64: [UInt8]] {
        var rows: [UInt64: [UInt8]] = [:]
        try txn.forEachRow(in: table) { id, bytes in
            rows[id.rawValue] = Array(bytes)
            return true
        }
        return rows
    }

    @Test func theRewriteSeesTheRowAndItsBytesReplaceIt() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table, _) = try Self.makeStore(fileSystem)
        var seen: [[UInt8]] = []
        try store.write { txn throws in
            try txn.update(RowID(4), in: table) { old, new in
                seen.append(Array(old))
                #expect(new.isEmpty)
                new = try Self.renamed(old, "four, renamed")
            }
            #expect(try txn.row(RowID(4), in: table) == Self.row(1, "four, renamed"), "the transaction sees it")
        }
        #expect(seen == [Self.row(1, "row 4")], "one call, with the row as it was")
        #expect(try store.snapshot().row(RowID(4), in: table) == Self.row(1, "four, renamed"))
        #expect(try store.snapshot().rowCount(in: table) == 10)
        #expect(try store.verify().isClean)
        try store.close()
    }

    /// `new` comes empty each time with the capacity the rows before it took: a rewrite allocates nothing.
    @Test func theNewBytesComeEmptyWithTheCapacityOfTheRowsBefore() throws {
        let (store, table, _) = try Self.makeStore()
        var capacities: [Int] = []
        try store.write { txn throws in
            for k in 1...10 {
                try txn.update(RowID(UInt64(k)), in: table) { old, new in
                    #expect(new.isEmpty)
                    capacities.append(new.capacity)
                    new.append(contentsOf: old)
                }
            }
        }
        #expect(capacities.dropFirst().allSatisfy { $0 >= Self.row(0, "row 10").count }, "\(capacities)")
        try store.close()
    }

    @Test func aMissingRowIsRowNotFoundAndTheRewriteIsNotCalled() throws {
        let (store, table, _) = try Self.makeStore()
        _ = try store.write { try $0.delete(RowID(2), from: table) }
        let lsn = store.snapshot().lsn
        for row: UInt64 in [0, 2, 11, 1000, .max] {
            #expect(throws: StorageError.rowNotFound(table: table, row: RowID(row))) {
                try store.write { txn throws in
                    try txn.update(RowID(row), in: table) { _, _ in Issue.record("called for missing row \(row)") }
                }
            }
        }
        #expect(throws: StorageError.noSuchTable(TableID(77).description)) {
            try store.write { try $0.update(RowID(1), in: TableID(77)) { _, new in new = [1] } }
        }
        #expect(store.snapshot().lsn == lsn, "nothing logged")
        #expect(try store.snapshot().rowCount(in: table) == 9)
        #expect(try store.snapshot().nextRowID(in: table) == RowID(11), "a failed update allocates nothing")
        try store.close()
    }

    @Test func aRewriteThatThrowsLeavesTheTransactionUnchanged() throws {
        let (store, table, index) = try Self.makeStore()
        let before = try Self.rows(store.snapshot(), table)
        let lsn = store.snapshot().lsn
        try store.write { txn throws in
            #expect(throws: Deliberate.self) {
                try txn.update(RowID(3), in: table) { old, new in
                    new = Self.row(7, "half written")
                    throw Deliberate()
                }
            }
            #expect(try txn.row(RowID(3), in: table) == before[3], "the row stays")
            #expect(try txn.rowIDs(in: index, matching: [.int64(7)]).isEmpty, "no entry for the new key")
            #expect(try txn.rowIDs(in: index, matching: [.int64(0)]).contains(RowID(3)), "the old entry stays")
            // The next rewrite starts from empty bytes, not from what the failed one left.
            try txn.update(RowID(5), in: table) { old, new in new.append(contentsOf: old) }
        }
        #expect(try Self.rows(store.snapshot(), table) == before)
        #expect(store.snapshot().lsn == lsn + 2, "only the second rewrite was logged (its put and the commit)")
        #expect(try IndexReference.checkAllIndexes(store.snapshot(), "after a rewrite that threw"))
        #expect(try store.verify().isClean)
        try store.close()
    }

    @Test func aNewRowOverTheLimitIsInvalidArgumentAndChangesNothing() throws {
        let (store, table, _) = try Self.makeStore()
        let before = try Self.rows(store.snapshot(), table)
        #expect {
            try store.write { txn throws in
                try txn.update(RowID(1), in: table) { _, new in
                    new = [UInt8](repeating: 0, count: WALFormat.maximumValueSize + 1)
                }
            }
        } throws: { error in
            guard case StorageError.invalidArgument = error else { return false }
            return true
        }
        #expect(try Self.rows(store.snapshot(), table) == before)
        try store.close()
    }

    /// A rewrite of the indexed field moves the row's entry; one of another field keeps it. The index holds what a
    /// rebuild from the rows gives, in the transaction, after the commit, a checkpoint and a reopen.
    @Test func aRewriteOfAnIndexedFieldMovesTheEntryAndOfAnotherKeepsIt() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table, index) = try Self.makeStore(fileSystem)
        try store.write { txn throws in
            // Row 3 (group 0) to group 5; row 4 (group 1) renamed only.
            try txn.update(RowID(3), in: table) { _, new in new = Self.row(5, "row 3") }
            try txn.update(RowID(4), in: table) { old, new in new = try Self.renamed(old, "four") }
            #expect(try txn.rowIDs(in: index, matching: [.int64(5)]) == [RowID(3)])
            #expect(try !txn.rowIDs(in: index, matching: [.int64(0)]).contains(RowID(3)))
            #expect(try txn.rowIDs(in: index, matching: [.int64(1)]) == [1, 4, 7, 10].map { RowID($0) })
        }
        #expect(try store.snapshot().rowIDs(in: index, matching: [.int64(5)]) == [RowID(3)])
        #expect(try IndexReference.checkAllIndexes(store.snapshot(), "after the commit"))
        try store.checkpoint()
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(try reopened.snapshot().rowIDs(in: index, matching: [.int64(5)]) == [RowID(3)])
        #expect(try IndexReference.checkAllIndexes(reopened.snapshot(), "after a checkpoint and a reopen"))
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }

    /// The rewrite is logged as the put of the new row: a crash after the commit replays it, index entries included.
    @Test func theLogReplaysTheRewrite() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table, index) = try Self.makeStore(fileSystem)
        try store.checkpoint()
        try store.write { txn throws in
            for k: UInt64 in [2, 6, 9] {
                try txn.update(RowID(k), in: table) { old, new in new = try Self.renamed(old, "rewritten \(k)") }
            }
            try txn.update(RowID(8), in: table) { _, new in new = Self.row(9, "row 8") }
        }
        let expected = try Self.rows(store.snapshot(), table)
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(try Self.rows(crashed.snapshot(), table) == expected)
        #expect(try crashed.snapshot().row(RowID(6), in: table) == Self.row(0, "rewritten 6"))
        #expect(try crashed.snapshot().rowIDs(in: index, matching: [.int64(9)]) == [RowID(8)])
        #expect(try IndexReference.checkAllIndexes(crashed.snapshot(), "after the replay"))
        #expect(try crashed.verify().isClean)
        try crashed.close()
        try store.close()
    }

    /// A row in overflow pages is lent whole, and may be rewritten shorter (inline) or longer.
    @Test func aRowInOverflowPagesIsLentWholeAndRewritten() throws {
        let (store, table, _) = try Self.makeStore()
        let large = Self.row(1, String(repeating: "long ", count: 4_000))
        let row = try store.write { try $0.insert(large, into: table) }
        try store.checkpoint()
        var seen: [UInt8] = []
        try store.write { txn throws in
            try txn.update(row, in: table) { old, new in
                seen = Array(old)
                new = try Self.renamed(old, "short")
            }
        }
        #expect(seen == large)
        #expect(try store.snapshot().row(row, in: table) == Self.row(1, "short"))
        let longer = Self.row(1, String(repeating: "longer ", count: 5_000))
        try store.write { try $0.update(RowID(1), in: table) { _, new in new = longer } }
        try store.checkpoint()
        #expect(try store.snapshot().row(RowID(1), in: table) == longer)
        #expect(try store.verify().isClean)
        try store.close()
    }

    /// Rewrites that lengthen rows overfill their leaves, which split (a put of the new row from the top of the path
    /// the rewrite made the transaction's own); rewrites that shorten them again fit where they are. The tree holds
    /// every row and the index every entry, in the transaction, after a checkpoint and after a reopen.
    @Test func rewritesThatLengthenRowsSplitTheirLeaves() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let (store, table, index) = try Self.makeStore(fileSystem)
        try store.write { txn in
            for k in 11...600 { try txn.insert(Self.row(Int64(k % 3), "row \(k)"), into: table) }
        }
        try store.checkpoint()
        let leavesBefore = try #require(store.verify().tables.first { $0.name == "t" }).leafPages
        var model = try Self.rows(store.snapshot(), table)
        try store.write { txn in
            for k in stride(from: 7, through: 600, by: 7) {
                // Ten times longer, and every fourteenth row to another group (its index entry moves).
                let new = Self.row(Int64(k % 14 == 0 ? 50 : k % 3), String(repeating: "longer \(k) ", count: 10))
                try txn.update(RowID(UInt64(k)), in: table) { _, bytes in bytes.append(contentsOf: new) }
                model[UInt64(k)] = new
            }
            for k in stride(from: 21, through: 600, by: 21) {
                try txn.update(RowID(UInt64(k)), in: table) { old, new in new = try Self.renamed(old, "short") }
                model[UInt64(k)] = try txn.row(RowID(UInt64(k)), in: table)
            }
            #expect(try Self.rows(txn, table) == model, "the transaction sees every row")
            #expect(try txn.rowCount(in: table) == 600)
        }
        #expect(try Self.rows(store.snapshot(), table) == model)
        #expect(try store.snapshot().rowIDs(in: index, matching: [.int64(50)]).count == 600 / 14)
        #expect(try IndexReference.checkAllIndexes(store.snapshot(), "after the rewrites"))
        try store.checkpoint()
        let leavesAfter = try #require(store.verify().tables.first { $0.name == "t" }).leafPages
        #expect(leavesAfter > leavesBefore, "leaves split: \(leavesBefore) -> \(leavesAfter)")
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(try Self.rows(reopened.snapshot(), table) == model)
        #expect(try IndexReference.checkAllIndexes(reopened.snapshot(), "after a reopen"))
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }

    /// Rewrites in a transaction past its memory bound write its full leaves out as its puts do, and commit as well.
    @Test func rewritesOfALargeTransactionSpillAndCommit() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try LargeTransactionSpillTests.open(faulty)
        let (table, index) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (table, try txn.createIndex(named: "t_group", on: table, fields: [0]))
        }
        try store.write { txn in
            for k in 0..<3_000 { try txn.insert(Self.row(Int64(k % 7), "row \(k)"), into: table) }
        }
        try store.checkpoint()
        let spilledBefore = store.statistics.spilledPageCount
        var model = try Self.rows(store.snapshot(), table)
        try store.write { txn in
            for k in stride(from: 1, through: 3_000, by: 1) {
                let id = UInt64(k)
                // Every third row changes its group (its index entry), the rest only their text.
                let new =
                    k % 3 == 0 ? Self.row(Int64(100 + k % 5), "moved \(k)") : Self.row(Int64((k - 1) % 7), "kept \(k)")
                try txn.update(RowID(id), in: table) { _, bytes in bytes.append(contentsOf: new) }
                model[id] = new
            }
            #expect(try txn.row(RowID(1), in: table) == model[1], "a spilled leaf read back")
        }
        #expect(store.statistics.spilledPageCount > spilledBefore, "the rewrites spilled")
        #expect(try Self.rows(store.snapshot(), table) == model)
        #expect(try store.snapshot().rowIDs(in: index, matching: [.int64(101)]).count == 200)
        #expect(try IndexReference.checkAllIndexes(store.snapshot(), "after the large rewrite"))
        #expect(try store.verify().isClean)
        let recovered = try LargeTransactionSpillTests.open(memory.crashImage())
        #expect(try Self.rows(recovered.snapshot(), table) == model)
        #expect(try IndexReference.checkAllIndexes(recovered.snapshot(), "after recovery"))
        #expect(try recovered.verify().isClean)
        try recovered.close()
        try store.close()
    }
}

/// Misuse of the rewrite that must trap rather than change a leaf the rewrite is reading.
@Suite struct RowRewriteMisuseTests {
    @Test func usingTheTransactionInsideTheRewriteTraps() async {
        await #expect(processExitsWith: .failure) {
            let store = try Store.openForTesting(TemporaryStore.makeFileSystem())
            let table = try store.write { txn throws in
                let table = try txn.createTable(named: "t")
                try txn.insert([1], into: table)
                return table
            }
            // Not a thrown error: only the trap ends the process with a failure.
            try? store.write { txn throws in
                try txn.update(RowID(1), in: table) { _, new in
                    new = [2]
                    _ = try txn.insert([3], into: table)
                }
            }
        }
    }
}
