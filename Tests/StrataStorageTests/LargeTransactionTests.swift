import Foundation
import Logging
import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Large transactions (FORMAT.md, "Large transactions"): past ``StoreConfiguration/largeTransactionBytes`` of log
/// records, a transaction commits by writing its pages, with a root record as its commit point.
@Suite struct LargeTransactionTests {
    static func configuration(largeTransactionBytes: UInt64 = 2_000) -> StoreConfiguration {
        StoreConfiguration(
            durability: .full, pageSize: 512, checkpointThresholdBytes: 1 << 30,
            largeTransactionBytes: largeTransactionBytes,
            logger: Logger(label: "large") { _ in SwiftLogNoOpLogHandler() })
    }

    static func open(_ fileSystem: any FileSystem) throws -> Store {
        try Store.open(at: "/db", configuration: configuration(), fileSystem: fileSystem)
    }

    /// A row record whose field 0 is `group` (the index's key) and field 1 is `text`.
    static func row(group: Int64, _ text: String) -> [UInt8] {
        RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(group), .string(text)])
    }

    static func rows(_ store: Store, _ table: TableID) throws -> [UInt64: [UInt8]] {
        var rows: [UInt64: [UInt8]] = [:]
        try store.snapshot().forEachRow(in: table) { id, bytes in
            rows[id.rawValue] = Array(bytes)
            return true
        }
        return rows
    }

    /// Rows of group `group` as the index finds them.
    static func indexed(_ store: Store, _ index: IndexID, group: Int64) throws -> [RowID] {
        try store.snapshot().rowIDs(in: index, matching: [.int64(group)])
    }

    @Test func aLargeTransactionCommitsByItsPagesAndTheLogNeverHoldsIt() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let (table, index) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (table, try txn.createIndex(named: "t_group", on: table, fields: [0]))
        }
        let walBefore = store.statistics.walBytes
        var model: [UInt64: [UInt8]] = [:]
        try store.write { txn in
            for k in 0..<500 {
                let value = Self.row(group: Int64(k % 7), "row \(k)")
                model[try txn.insert(value, into: table).rawValue] = value
            }
            // Reads inside the transaction see its rows, through the table and through the index.
            #expect(try txn.rowIDs(in: index, matching: [.int64(3)]).count == 71)
            #expect(try txn.indexEntryCount(index) == 500)
        }
        #expect(store.statistics.largeCommitCount == 1)
        #expect(store.statistics.walBytes <= walBefore, "the log holds none of the large transaction")
        #expect(try Self.rows(store, table) == model)
        #expect(try Self.indexed(store, index, group: 3).count == 71)
        // Commits after it go to the new log, and everything survives a power loss and a reopen.
        let after = try store.write { try $0.insert(Self.row(group: 3, "after"), into: table) }
        model[after.rawValue] = Self.row(group: 3, "after")
        #expect(store.statistics.largeCommitCount == 1)
        let recovered = try Self.open(memory.crashImage())
        #expect(try Self.rows(recovered, table) == model)
        #expect(try Self.indexed(recovered, index, group: 3).count == 72)
        #expect(try recovered.verify().isClean)
        try recovered.close()
        try store.close()
    }

    /// Updates and deletes in a large transaction keep the index in step with the table, whether the index was
    /// empty (built bottom up) or not (its changes applied in key order).
    @Test func updatesAndDeletesInALargeTransactionKeepTheIndexInStep() throws {
        let (_, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let (table, index) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (table, try txn.createIndex(named: "t_group", on: table, fields: [0]))
        }
        var model: [UInt64: Int64] = [:]
        for round in 0..<3 {
            try store.write { txn in
                for k in 0..<300 {
                    let group = Int64((k + round) % 5)
                    model[try txn.insert(Self.row(group: group, "r\(round) \(k)"), into: table).rawValue] = group
                }
                for row in model.keys.sorted().filter({ $0 % 3 == UInt64(round) }) {
                    try txn.update(RowID(row), in: table, to: Self.row(group: 9, "moved"))
                    model[row] = 9
                }
                for row in model.keys.sorted().filter({ $0 % 11 == UInt64(round) }) {
                    #expect(try txn.delete(RowID(row), from: table))
                    model[row] = nil
                }
            }
        }
        #expect(store.statistics.largeCommitCount == 3)
        for group: Int64 in [0, 1, 2, 3, 4, 9] {
            let expected = model.filter { $0.value == group }.keys.sorted().map(RowID.init)
            #expect(try Self.indexed(store, index, group: group) == expected, "group \(group)")
        }
        #expect(try store.snapshot().indexEntryCount(index) == model.count)
        #expect(try store.verify().isClean)
        try store.close()
    }

    /// A large transaction that throws leaves nothing, and its pages are garbage the next checkpoint writes over.
    @Test func aLargeTransactionThatThrowsLeavesNothing() throws {
        struct Refused: Error {}
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let table = try store.write { try $0.createTable(named: "t") }
        #expect(throws: Refused.self) {
            try store.write { txn in
                for k in 0..<400 { _ = try txn.insert(Self.row(group: 1, "gone \(k)"), into: table) }
                throw Refused()
            }
        }
        #expect(try Self.rows(store, table).isEmpty)
        try store.write { _ = try $0.insert(Self.row(group: 1, "kept"), into: table) }
        let recovered = try Self.open(memory.crashImage())
        #expect(try Self.rows(recovered, table) == [1: Self.row(group: 1, "kept")])
        try recovered.close()
        try store.close()
    }

    /// The root record of a large commit is durable but its new log could not be put in place (a failed rename):
    /// the commit stands, and the next commit (this open's, or another open's that must load the root record, since
    /// no log holds it) starts the new log first instead of appending after a gap in the LSNs.
    @Test(arguments: [false, true])
    func aLargeCommitWithoutItsNewLogIsFollowedByANewLog(nextWriterIsAnotherOpen: Bool) throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let a = try Self.open(faulty)
        let b = try Self.open(faulty)
        let table = try a.write { try $0.createTable(named: "t") }
        _ = try a.write { try $0.insert(Self.row(group: 0, "small"), into: table) }
        faulty.inject(FaultInjectingFileSystem.Fault(on: [.rename], pathContaining: "strata.wal"))
        try a.write { txn in
            for k in 0..<400 { _ = try txn.insert(Self.row(group: 1, "bulk \(k)"), into: table) }
        }
        faulty.clearFaults()
        #expect(a.statistics.largeCommitCount == 1)
        #expect(try Self.rows(a, table).count == 401)
        let writer = nextWriterIsAnotherOpen ? b : a
        let next = try writer.write { try $0.insert(Self.row(group: 2, "next"), into: table) }
        #expect(next == RowID(402))
        #expect(try Self.rows(b, table).count == 402)
        #expect(try Self.rows(a, table).count == 402)
        let recovered = try Self.open(memory.crashImage())
        #expect(try Self.rows(recovered, table).count == 402)
        #expect(try recovered.snapshot().row(next, in: table) == Self.row(group: 2, "next"))
        #expect(try recovered.verify().isClean)
        try recovered.close()
        try a.close()
        try b.close()
    }

    /// A crash between a large commit's root record and its new log: the open that recovers starts the new log, and
    /// a commit after it survives the next crash.
    @Test func aCrashBeforeTheNewLogIsRecoveredByANewLog() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Self.open(faulty)
        let table = try store.write { try $0.createTable(named: "t") }
        faulty.inject(FaultInjectingFileSystem.Fault(on: [.rename], persistent: true, pathContaining: "strata.wal"))
        try store.write { txn in
            for k in 0..<400 { _ = try txn.insert(Self.row(group: 1, "bulk \(k)"), into: table) }
        }
        let image = memory.crashImage()
        let recovered = try Self.open(image)
        #expect(try Self.rows(recovered, table).count == 400)
        _ = try recovered.write { try $0.insert(Self.row(group: 2, "after the crash"), into: table) }
        let again = try Self.open(image.crashImage())
        #expect(try Self.rows(again, table).count == 401)
        #expect(try again.verify().isClean)
        try again.close()
        try recovered.close()
    }
}
