import Foundation
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

/// Snapshots see exactly the commit they were taken at, whatever commits and checkpoints follow
/// (Snapshot.swift).
@Suite struct SnapshotTests {
    @Test func snapshotKeepsItsStateThroughLaterCommitsAndCheckpoints() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        var workload = RandomWorkload(seed: 0x5AA9, pageSize: 512)
        workload.largeValueSize = 2_000
        var kept: [(Snapshot, ReferenceModel)] = []
        for step in 0..<150 {
            try workload.runTransaction(on: store)
            if step % 10 == 0 { kept.append((store.snapshot(), workload.model)) }
            if step % 37 == 36 { try store.checkpoint() }
        }
        try store.checkpoint()
        for (index, (snapshot, model)) in kept.enumerated() {
            model.assertMatches(snapshot, "snapshot \(index)")
        }
        // And after the store is closed.
        try store.close()
        for (index, (snapshot, model)) in kept.enumerated() {
            model.assertMatches(snapshot, "snapshot \(index) after close")
        }
    }

    @Test func rangeScansWithRandomBoundsMatchTheModel() throws {
        let store = try Store.openForTesting(TemporaryStore.makeFileSystem(), configuration: .testing(pageSize: 512))
        var workload = RandomWorkload(seed: 0x5CA7, pageSize: 512)
        workload.weights = (create: 1, drop: 0, insert: 20, update: 3, delete: 6)
        var random = RepeatableRandomNumberGenerator(seed: 0x5CA8)
        for step in 0..<300 {
            try workload.runTransaction(on: store, maximumOperations: 10)
            if step % 50 == 49 { try store.checkpoint() }
            if step % 10 == 0 {
                let problems = workload.model.rangeScanDifferences(store.snapshot(), scans: 20, using: &random)
                #expect(problems == [], "step \(step)")
            }
        }
        try store.close()
    }

    /// `Store.row(_:in:)` reads a row as a new snapshot would: every commit before it, inline and overflow values,
    /// rows deleted and never there, before and after checkpoints, and no table for a table that is gone.
    @Test func storeRowReadsWhatANewSnapshotReads() throws {
        let store = try Store.openForTesting(TemporaryStore.makeFileSystem(), configuration: .testing(pageSize: 512))
        defer { try? store.close() }
        let table = try store.write { try $0.createTable(named: "t") }
        var random = RepeatableRandomNumberGenerator(seed: 0x0_0A0D)
        var rows: [RowID] = []
        var deleted: [RowID] = []
        for step in 0..<200 {
            try store.write { txn in
                let length = Int.random(in: 1...1_200, using: &random)
                rows.append(try txn.insert((0..<length).map { UInt8(truncatingIfNeeded: $0 &+ step) }, into: table))
                if step % 3 == 0, let row = rows.randomElement(using: &random) {
                    try txn.update(row, in: table, to: [UInt8(truncatingIfNeeded: step)])
                }
                if step % 5 == 0, let index = rows.indices.randomElement(using: &random) {
                    #expect(try txn.delete(rows[index], from: table))
                    deleted.append(rows.remove(at: index))
                }
            }
            if step % 40 == 39 { try store.checkpoint() }
            if step % 20 == 0 || step == 199 {
                let snapshot = store.snapshot()
                for row in rows + deleted + [RowID(UInt64(rows.count + deleted.count + 10))] {
                    #expect(try store.row(row, in: table) == snapshot.row(row, in: table), "step \(step), \(row)")
                }
            }
        }
        try store.write { try $0.dropTable(table) }
        #expect(throws: StorageError.noSuchTable(table.description)) { try store.row(rows[0], in: table) }
    }

    /// A row another open of the store committed is read by the next `Store.row(_:in:)`, as by the next snapshot.
    @Test func storeRowSeesAnotherOpensCommit() throws {
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/db")
        try memory.syncDirectory(at: "/")
        let configuration = StoreConfiguration(durability: .full, pageSize: 512)
        let writer = try Store.open(at: "/db", configuration: configuration, fileSystem: memory)
        let reader = try Store.open(at: "/db", configuration: configuration, fileSystem: memory)
        defer {
            try? writer.close()
            try? reader.close()
        }
        let table = try writer.write { try $0.createTable(named: "t") }
        let row = try writer.write { try $0.insert([1], into: table) }
        #expect(try reader.row(row, in: table) == [1])
        try writer.write { try $0.update(row, in: table, to: [2, 2]) }
        #expect(try reader.row(row, in: table) == [2, 2])
        try writer.checkpoint()
        try writer.write { _ = try $0.delete(row, from: table) }
        #expect(try reader.row(row, in: table) == nil)
    }

    @Test func withRowReadsInlineAndOverflowValuesWithoutCopying() throws {
        let store = try Store.openForTesting(TemporaryStore.makeFileSystem(), configuration: .testing(pageSize: 512))
        let table = try store.write { try $0.createTable(named: "t") }
        let short = try store.write { try $0.insert([1, 2, 3], into: table) }
        let long = try store.write { try $0.insert((0..<5_000).map { UInt8(truncatingIfNeeded: $0) }, into: table) }
        for checkpointed in [false, true] {
            if checkpointed { try store.checkpoint() }
            let snapshot = store.snapshot()
            #expect(try snapshot.withRow(short, in: table) { Array($0) } == [1, 2, 3])
            #expect(try snapshot.withRow(long, in: table) { $0.count } == 5_000)
            #expect(try snapshot.withRow(long, in: table) { $0[4_999] } == UInt8(truncatingIfNeeded: 4_999))
            #expect(try snapshot.withRow(RowID(99), in: table) { _ in true } == nil)
        }
        try store.close()
    }

    /// A reader thread takes snapshots while a writer commits and checkpoints: every snapshot holds exactly
    /// the state of the commit its LSN names, and keeps holding it while the writer goes on.
    @Test func snapshotsTakenOnAnotherThreadWhileAWriterCommitsAreConsistent() throws {
        let store = try Store.openForTesting(
            TemporaryStore.makeFileSystem(),
            configuration: .testing(pageSize: 512, durability: .off)
        )
        let models = Lock<[UInt64: ReferenceModel]>([0: ReferenceModel()])
        let done = Atomic<Bool>(false)
        let failures = Lock<[String]>([])
        let checks = Atomic<Int>(0)
        runOnThreads(3) { thread in
            if thread == 0 {
                var workload = RandomWorkload(seed: 0x7EAD, pageSize: 512)
                workload.largeValueSize = 1_500
                do {
                    for step in 0..<400 {
                        try workload.runTransaction(on: store)
                        let lsn = store.statistics.lastLSN
                        models.withLock { $0[lsn] = workload.model }
                        if step % 40 == 39 { try store.checkpoint() }
                    }
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
                done.store(true, ordering: .releasing)
                return
            }
            var held: [(Snapshot, UInt64)] = []
            while !done.load(ordering: .acquiring) {
                let snapshot = store.snapshot()
                // The writer records the model right after its commit returns: wait for it.
                var expected: ReferenceModel?
                while expected == nil {
                    expected = models.withLock { $0[snapshot.lsn] }
                    if expected == nil { Thread.sleep(forTimeInterval: 0.0001) }
                }
                do {
                    let state = try ReferenceModel.capture(snapshot)
                    if state.tables != expected!.tables {
                        failures.withLock {
                            $0.append("reader \(thread): snapshot at LSN \(snapshot.lsn) differs from its commit")
                        }
                    }
                } catch {
                    failures.withLock { $0.append("reader \(thread): \(error)") }
                }
                checks.add(1, ordering: .relaxed)
                if held.count < 20 { held.append((snapshot, snapshot.lsn)) }
            }
            // Snapshots held across the whole run still read as their commits.
            for (snapshot, lsn) in held {
                let expected = models.withLock { $0[lsn] }!
                if (try? ReferenceModel.capture(snapshot).tables) != expected.tables {
                    failures.withLock { $0.append("reader \(thread): a held snapshot at LSN \(lsn) changed") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(checks.load(ordering: .relaxed) > 10)
        #expect(try store.verify().isClean)
        try store.close()
    }

    @Test func snapshotLSNIsTheLastCommitItContains() throws {
        let store = try Store.openForTesting(TemporaryStore.makeFileSystem())
        let empty = store.snapshot()
        let table = try store.write { try $0.createTable(named: "t") }
        let afterCreate = store.snapshot()
        _ = try store.write { try $0.insert([1], into: table) }
        #expect(empty.lsn == 0)
        #expect(afterCreate.lsn > empty.lsn)
        #expect(store.snapshot().lsn > afterCreate.lsn)
        #expect(empty.table(named: "t") == nil)
        #expect(try afterCreate.rowCount(in: table) == 0)
        #expect(try afterCreate.nextRowID(in: table) == RowID(1))
        try store.close()
    }

    /// forEachRow(_:in:) gives what withRow gives for every ID, in the order asked, for increasing runs (one walk),
    /// unsorted and repeated IDs and absent rows, over checkpointed pages, in-memory nodes and both mixed.
    @Test(arguments: [512, 4096])
    func rowsByIDMatchOneLookupEach(pageSize: Int) throws {
        let store = try Store.openForTesting(
            TemporaryStore.makeFileSystem(), configuration: .testing(pageSize: pageSize))
        var random = RepeatableRandomNumberGenerator(seed: UInt64(pageSize) + 77)
        let table = try store.write { try $0.createTable(named: "t") }
        try store.write { txn in
            for _ in 1...3_000 { try txn.insert(random.bytes(Int.random(in: 0...60, using: &random)), into: table) }
        }
        for round in 0..<3 {
            if round == 1 { try store.checkpoint() }
            if round == 2 {
                try store.write { txn in
                    for _ in 0..<200 {
                        let row = RowID(UInt64.random(in: 1...3_000, using: &random))
                        _ = try txn.delete(row, from: table)
                    }
                    for _ in 0..<100 { _ = try txn.insert([1, 2, 3], into: table) }
                }
            }
            let snapshot = store.snapshot()
            for shape in 0..<4 {
                var rows = (0..<500).map { _ in RowID(UInt64.random(in: 0...3_200, using: &random)) }
                if shape < 2 { rows = Array(Set(rows)).sorted { $0.rawValue < $1.rawValue } }
                if shape == 1 { rows = (1...3_100).map { RowID(UInt64($0)) } }
                try snapshot.expectRowsByIDMatchLookups(rows, in: table, "round \(round) shape \(shape)")
            }
            // Stopping early stops.
            var count = 0
            try snapshot.forEachRow((1...100).map { RowID(UInt64($0)) }, in: table) { _, _ in
                count += 1
                return count < 7
            }
            #expect(count == 7)
        }
        try store.close()
    }
}

extension Snapshot {
    /// Expects `forEachRow(_:in:_:)` over `rows` to give each row in the order asked, with what one `withRow` each
    /// gives (nil for an absent row).
    func expectRowsByIDMatchLookups(_ rows: [RowID], in table: TableID, _ comment: String) throws {
        var seen: [RowID] = []
        try forEachRow(rows, in: table) { row, bytes in
            seen.append(row)
            let single = try withRow(row, in: table) { Array($0) }
            #expect(bytes.map { Array($0) } == single, "\(comment) row \(row)")
            return true
        }
        #expect(seen == rows, "\(comment)")
    }
}
