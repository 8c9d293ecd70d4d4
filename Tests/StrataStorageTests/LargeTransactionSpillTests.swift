import Foundation
import Logging
import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// A large transaction past ``StoreConfiguration/largeTransactionMemoryBytes`` of rows writes its full leaves to the
/// page file before it commits (FORMAT.md, "Large transactions"): they are invisible until its root record names them,
/// garbage after a crash or a rollback, and a later change to one of their rows copies the leaf back.
@Suite struct LargeTransactionSpillTests {
    /// 512-byte pages, large from 2,000 bytes of log, spilling every `spillBytes` of rows.
    static func configuration(spillBytes: UInt64 = 1_000) -> StoreConfiguration {
        var configuration = StoreConfiguration(
            durability: .full, pageSize: 512, checkpointThresholdBytes: 1 << 30, largeTransactionBytes: 2_000,
            logger: Logger(label: "spill") { _ in SwiftLogNoOpLogHandler() })
        configuration.largeTransactionMemoryBytes = spillBytes
        return configuration
    }

    static func open(_ fileSystem: any FileSystem, spillBytes: UInt64 = 1_000) throws -> Store {
        try Store.open(at: "/db", configuration: configuration(spillBytes: spillBytes), fileSystem: fileSystem)
    }

    /// The rows and reads of the large-transaction tests.
    static func row(group: Int64, _ text: String) -> [UInt8] { LargeTransactionTests.row(group: group, text) }

    static func rows(_ store: Store, _ table: TableID) throws -> [UInt64: [UInt8]] {
        try LargeTransactionTests.rows(store, table)
    }

    static let pageFile = "/db/" + StoreFileNames.pageFile

    @Test func aSortedLoadWritesItsLeavesBeforeItsCommitAndCommitsThemAll() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let (table, index) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (table, try txn.createIndex(named: "t_group", on: table, fields: [0]))
        }
        var model: [UInt64: [UInt8]] = [:]
        try store.write { txn in
            for k in 0..<3_000 {
                // Every 100th row is long enough for an overflow chain at 512-byte pages.
                let text = k % 100 == 0 ? String(repeating: "long ", count: 200) : "row \(k)"
                let value = Self.row(group: Int64(k % 7), text)
                model[try txn.insert(value, into: table).rawValue] = value
            }
            // The first rows' leaves are in the page file already: the transaction reads them back from there.
            #expect(memory.fileSize(of: Self.pageFile)! > 20 * 512)
            #expect(try txn.row(RowID(1), in: table) == model[1])
            #expect(try txn.row(RowID(101), in: table) == model[101])
            var seen = 0
            try txn.forEachRow(in: table) { id, bytes in
                #expect(Array(bytes) == model[id.rawValue])
                seen += 1
                return true
            }
            #expect(seen == 3_000)
            #expect(try txn.rowIDs(in: index, matching: [.int64(3)]).count == 429)
        }
        #expect(store.statistics.largeCommitCount == 1)
        #expect(store.statistics.spilledPageCount > 50)
        #expect(try Self.rows(store, table) == model)
        #expect(try store.snapshot().rowIDs(in: index, matching: [.int64(3)]).count == 429)
        #expect(try store.verify().isClean)
        let recovered = try Self.open(memory.crashImage())
        #expect(try Self.rows(recovered, table) == model)
        #expect(try recovered.verify().isClean)
        try recovered.close()
        try store.close()
    }

    /// The index entries a load notes count toward the memory bound with its rows (they are as large again): rows that
    /// alone stay under the bound are written out before the commit once their entries take the transaction past it.
    @Test func aLoadsIndexEntriesCountTowardTheMemoryBound() throws {
        for indexed in [false, true] {
            let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
            let store = try Self.open(faulty, spillBytes: 200_000)
            let table = try store.write { txn in
                let table = try txn.createTable(named: "t")
                if indexed { try txn.createIndex(named: "t_text", on: table, fields: [1]) }
                return table
            }
            let before = memory.fileSize(of: Self.pageFile) ?? 0
            var model: [UInt64: [UInt8]] = [:]
            try store.write { txn in
                var rowBytes = 0
                for k in 0..<2_000 {
                    let value = Self.row(group: Int64(k % 7), String(repeating: "x", count: 40) + "\(k)")
                    rowBytes += value.count + 16
                    model[try txn.insert(value, into: table).rawValue] = value
                }
                #expect(rowBytes < 200_000)
                // Without an index the rows stay in memory until the commit; with one, the leaves were written.
                #expect(((memory.fileSize(of: Self.pageFile) ?? 0) > before) == indexed)
            }
            #expect(store.statistics.largeCommitCount == 1)
            #expect(try Self.rows(store, table) == model)
            #expect(try store.verify().isClean)
            try store.close()
        }
    }

    /// A load into empty indexes builds them from its sorted entries: keys that group (a few distinct numbers), keys
    /// all distinct and short, and keys too long for the sort's words.
    @Test func aLoadIntoEmptyIndexesBuildsEachWhole() throws {
        let (_, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let (table, groups, names) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (
                table, try txn.createIndex(named: "t_group", on: table, fields: [0]),
                try txn.createIndex(named: "t_text", on: table, fields: [1])
            )
        }
        let long = String(repeating: "x", count: 40)
        try store.write { txn in
            for k in 0..<2_000 {
                let text = k % 2 == 0 ? "n\(k)" : "\(long)\(k)"
                try txn.insert(Self.row(group: Int64(k % 11), text), into: table)
            }
        }
        let snapshot = store.snapshot()
        #expect(try snapshot.indexEntryCount(groups) == 2_000)
        #expect(try snapshot.indexEntryCount(names) == 2_000)
        #expect(try snapshot.rowIDs(in: groups, matching: [.int64(4)]).count == 182)
        #expect(try snapshot.rowIDs(in: names, matching: [.string("n1998")]) == [RowID(1_999)])
        #expect(try snapshot.rowIDs(in: names, matching: [.string("\(long)1999")]) == [RowID(2_000)])
        // Verification checks each index against its table, both ways.
        #expect(try store.verify().isClean)
        try store.close()
    }

    /// Rows out of order, updates and deletes of rows whose leaves were written already: the leaf is read back and
    /// copied, as any committed page is, and the old page is garbage.
    @Test func outOfOrderRowsUpdatesAndDeletesOfWrittenLeavesStillWork() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let (table, index) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (table, try txn.createIndex(named: "t_group", on: table, fields: [0]))
        }
        var model: [UInt64: [UInt8]] = [:]
        try store.write { txn in
            for k in 0..<200 {
                let value = Self.row(group: Int64(k % 5), "before \(k)")
                model[try txn.insert(value, into: table).rawValue] = value
            }
        }
        try store.write { txn in
            let reserved = try txn.reserveRowIDs(500, in: table)
            for k in 0..<2_000 {
                let value = Self.row(group: Int64(k % 5), "load \(k)")
                model[try txn.insert(value, into: table).rawValue] = value
            }
            // Into the reserved gap, below rows whose leaves were written, in decreasing order.
            for k in stride(from: 499, through: 0, by: -3) {
                let value = Self.row(group: 9, "late \(k)")
                try txn.insert(value, into: table, at: RowID(reserved.rawValue + UInt64(k)))
                model[reserved.rawValue + UInt64(k)] = value
            }
            for row in stride(from: UInt64(1), through: 2_500, by: 7) where model[row] != nil {
                let value = Self.row(group: 8, "updated \(row)")
                try txn.update(RowID(row), in: table, to: value)
                model[row] = value
            }
            for row in stride(from: UInt64(3), through: 2_600, by: 11) where model[row] != nil {
                #expect(try txn.delete(RowID(row), from: table))
                model[row] = nil
            }
            for (row, value) in model where row % 13 == 0 { #expect(try txn.row(RowID(row), in: table) == value) }
            #expect(try txn.rowCount(in: table) == model.count)
        }
        #expect(store.statistics.spilledPageCount > 20)
        #expect(try Self.rows(store, table) == model)
        let groupEight = model.filter { $0.value == Self.row(group: 8, "updated \($0.key)") }.count
        #expect(try store.snapshot().rowIDs(in: index, matching: [.int64(8)]).count == groupEight)
        #expect(try store.verify().isClean)
        try store.close()
        let reopened = try Self.open(memory)
        #expect(try Self.rows(reopened, table) == model)
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }

    /// A rollback cuts off the leaves it wrote: the page file is byte for byte what it was.
    @Test func aSpillingTransactionThatThrowsLeavesThePageFileAsItWas() throws {
        struct Abandon: Error {}
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let table = try store.write { try $0.createTable(named: "t") }
        try store.write { txn in for k in 0..<100 { try txn.insert(Self.row(group: 1, "kept \(k)"), into: table) } }
        try store.checkpoint()
        let rowsBefore = try Self.rows(store, table)
        let pagesBefore = memory.contents(of: Self.pageFile)
        #expect(throws: Abandon.self) {
            try store.write { txn in
                for k in 0..<2_000 { try txn.insert(Self.row(group: 2, "dropped \(k)"), into: table) }
                #expect(memory.fileSize(of: Self.pageFile)! > UInt64(pagesBefore!.count) + 20 * 512)
                throw Abandon()
            }
        }
        #expect(memory.contents(of: Self.pageFile) == pagesBefore)
        #expect(try Self.rows(store, table) == rowsBefore)
        #expect(try store.verify().isClean)
        // The next load writes where the abandoned one did, and commits.
        try store.write { txn in for k in 0..<2_000 { try txn.insert(Self.row(group: 3, "load \(k)"), into: table) } }
        #expect(try Self.rows(store, table).count == 2_100)
        #expect(try store.verify().isClean)
        try store.close()
        let reopened = try Self.open(memory)
        #expect(try Self.rows(reopened, table).count == 2_100)
        try reopened.close()
    }

    /// One fault (a full disk, an I/O error, a short write) at every file-system operation of a spilling load, in
    /// turn: the load commits whole or throws and leaves the store as it was, in memory, after a power loss and after
    /// a reopen, and verification is clean.
    @Test func aFaultAtEveryOperationOfASpillingLoadLeavesAllOrNothing() throws {
        var operationIndex = 0
        var tried = 0
        let kinds: [(IOError.Code, Double?)] = [(.noSpace, nil), (.ioFailure, nil), (.noSpace, 0.5)]
        while true {
            let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
            let store = try Self.open(faulty)
            let table = try store.write { try $0.createTable(named: "t") }
            var model: [UInt64: [UInt8]] = [:]
            for k in 0..<50 {
                let value = Self.row(group: 1, "first \(k)")
                model[try store.write { try $0.insert(value, into: table) }.rawValue] = value
            }
            let (code, fraction) = kinds[operationIndex % kinds.count]
            faulty.inject(
                .init(
                    on: [.write, .sync, .truncate, .rename, .syncDirectory, .open], after: operationIndex, code: code,
                    shortWriteFraction: fraction))
            var loaded = model
            let committed: Bool
            do {
                try store.write { txn in
                    for k in 0..<1_500 {
                        let value = Self.row(group: 2, "load \(k)")
                        loaded[try txn.insert(value, into: table).rawValue] = value
                    }
                    for row in stride(from: UInt64(1), through: 1_500, by: 9) {
                        let value = Self.row(group: 3, "updated \(row)")
                        try txn.update(RowID(row), in: table, to: value)
                        loaded[row] = value
                    }
                }
                committed = true
            } catch StorageError.io {
                committed = false
            } catch StorageError.storeFailed {
                committed = false
            }
            if committed { model = loaded }
            guard faulty.failuresInjected > 0 else {
                #expect(committed)
                #expect(store.statistics.spilledPageCount > 20)
                try store.close()
                break
            }
            tried += 1
            #expect(try Self.rows(store, table) == model, "operation \(operationIndex)")
            let recovered = try Self.open(memory.crashImage())
            #expect(try Self.rows(recovered, table) == model, "operation \(operationIndex) after a power loss")
            #expect(try recovered.verify().isClean, "operation \(operationIndex) after a power loss")
            try recovered.close()
            // A commit whose new log could not follow it (a fault after its root record) leaves the log behind the
            // store until the next writer or checkpoint starts one (FORMAT.md §7.2.1), which the live verification
            // reports; as in FaultInjectionTests, the next checkpoint comes first.
            try? store.checkpoint()
            let report = try store.verify()
            #expect(report.isClean, "operation \(operationIndex): \(report.problems)")
            try? store.close()
            let reopened = try Self.open(memory)
            #expect(try Self.rows(reopened, table) == model, "operation \(operationIndex) after reopen")
            #expect(try reopened.verify().isClean, "operation \(operationIndex) after reopen")
            try reopened.close()
            operationIndex += 1
        }
        print("spilling load: injected errors tried: \(tried)")
        #expect(tried > 30)
    }
}
