import Dispatch
import Foundation
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

/// Writers, readers, checkpoints and close on several threads at once (Store.swift's writer gate and
/// group commit, Store+Checkpoint.swift): no acknowledged commit is lost, no reader sees a half state.
@Suite struct StoreConcurrencyTests {
    /// Four writers with durability `.full` and a small checkpoint threshold (so automatic checkpoints
    /// replace the log under waiting committers), a thread checkpointing on its own and a verifying
    /// reader; then a power loss: every acknowledged row is there.
    @Test func writersCheckpointsAndReadersTogetherLoseNothing() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let slowSyncs = FaultInjectingFileSystem(wrapping: fileSystem) { _, operation in
            if operation == .sync { Thread.sleep(forTimeInterval: 0.0002) }
        }
        let store = try Store.open(
            at: TemporaryStore.directory,
            configuration: .testing(pageSize: 512, checkpointThresholdBytes: 8_192),
            fileSystem: slowSyncs
        )
        let writers = 4
        let perWriter = 150
        let tables = try store.write { txn in try (0..<writers).map { try txn.createTable(named: "w\($0)") } }
        let acknowledged = Lock<[[RowID: [UInt8]]]>(Array(repeating: [:], count: writers))
        let failures = Lock<[String]>([])
        let writing = Atomic<Int>(writers)
        runOnThreads(writers + 2) { thread in
            if thread < writers {
                var random = RepeatableRandomNumberGenerator(seed: UInt64(thread))
                for index in 0..<perWriter {
                    let value = random.bytes(Int.random(in: 0...300, using: &random)) + [UInt8(index & 0xFF)]
                    do {
                        let row = try store.write { try $0.insert(value, into: tables[thread]) }
                        acknowledged.withLock { $0[thread][row] = value }
                        if index % 10 == 9, let victim = acknowledged.withLock({ $0[thread].keys.min() }) {
                            _ = try store.write { try $0.delete(victim, from: tables[thread]) }
                            acknowledged.withLock { $0[thread][victim] = nil }
                        }
                    } catch {
                        failures.withLock { $0.append("writer \(thread): \(error)") }
                    }
                }
                writing.subtract(1, ordering: .releasing)
            } else if thread == writers {
                while writing.load(ordering: .acquiring) > 0 {
                    do { try store.checkpoint() } catch { failures.withLock { $0.append("checkpoint: \(error)") } }
                    Thread.sleep(forTimeInterval: 0.002)
                }
            } else {
                while writing.load(ordering: .acquiring) > 0 {
                    let snapshot = store.snapshot()
                    do {
                        for table in tables {
                            var count = 0
                            try snapshot.forEachRow(in: table) { _, _ in
                                count += 1
                                return true
                            }
                            if count != (try snapshot.rowCount(in: table)) {
                                failures.withLock {
                                    $0.append("reader: a snapshot's scan disagrees with its row count")
                                }
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("reader: \(error)") }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(store.statistics.checkpointCount > 3)
        let expected = acknowledged.withLock { $0 }
        func check(_ snapshot: Snapshot, _ context: String) throws {
            for (thread, rows) in expected.enumerated() {
                var found: [RowID: [UInt8]] = [:]
                try snapshot.forEachRow(in: tables[thread]) { row, bytes in
                    found[row] = Array(bytes)
                    return true
                }
                #expect(found == rows, "\(context): writer \(thread)")
            }
        }
        try check(store.snapshot(), "live")
        let crashed = try Store.openForTesting(fileSystem.crashImage(), configuration: .testing(pageSize: 512))
        try check(crashed.snapshot(), "after a power loss")
        #expect(try crashed.verify().isClean)
        try crashed.close()
        try store.close()
    }

    /// Closing while writers commit: each commit either returns (and is then durable) or throws
    /// `storeClosed`; a reopen shows exactly the commits that returned.
    @Test func closeWhileWritersCommitKeepsExactlyTheAcknowledgedCommits() throws {
        for round in 0..<5 {
            let fileSystem = TemporaryStore.makeFileSystem()
            let store = try Store.openForTesting(
                fileSystem,
                configuration: .testing(pageSize: 512, checkpointThresholdBytes: 16_384)
            )
            let writers = 3
            let tables = try store.write { txn in try (0..<writers).map { try txn.createTable(named: "w\($0)") } }
            let acknowledged = Lock<[Set<RowID>]>(Array(repeating: [], count: writers))
            let unexpected = Lock<[String]>([])
            runOnThreads(writers + 1) { thread in
                if thread == writers {
                    // Close while the writers commit: after their first acknowledged commit (a fixed delay alone
                    // let a loaded machine close before any writer ran), then a little later each round.
                    let deadline = Date().addingTimeInterval(30)
                    while acknowledged.withLock({ $0.allSatisfy(\.isEmpty) }), Date() < deadline {
                        Thread.sleep(forTimeInterval: 0.000_5)
                    }
                    Thread.sleep(forTimeInterval: 0.002 * Double(round))
                    do { try store.close() } catch { unexpected.withLock { $0.append("close: \(error)") } }
                    return
                }
                for index in 0..<10_000 {
                    do {
                        let row = try store.write { try $0.insert([UInt8(index & 0xFF)], into: tables[thread]) }
                        acknowledged.withLock { _ = $0[thread].insert(row) }
                    } catch StorageError.storeClosed {
                        return
                    } catch {
                        unexpected.withLock { $0.append("writer \(thread): \(error)") }
                        return
                    }
                }
            }
            #expect(unexpected.withLock { $0 } == [], "round \(round)")
            #expect(
                acknowledged.withLock { $0.map(\.count).reduce(0, +) } > 0,
                "round \(round): no commit before close"
            )
            let reopened = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
            #expect(reopened.recoveryReport.replayedTransactions == 0, "round \(round): close checkpointed everything")
            for thread in 0..<writers {
                var rows = Set<RowID>()
                try reopened.snapshot().forEachRow(in: tables[thread]) { row, _ in
                    rows.insert(row)
                    return true
                }
                #expect(rows == acknowledged.withLock { $0[thread] }, "round \(round), writer \(thread)")
            }
            #expect(try reopened.verify().isClean)
            try reopened.close()
        }
    }
}

extension StoreConcurrencyTests {
    /// A commit with `.full` durability waits for its log sync outside every lock readers take: while a
    /// writer is held inside the sync, readers take snapshots, read the last acknowledged state and finish,
    /// and a second writer even builds its transaction (issue 8: readers never block on a writer's fsync).
    @Test func readersDoNotWaitForAWritersSync() throws {
        let inSync = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = Atomic<Bool>(false)
        let syncs = FaultInjectingFileSystem(wrapping: TemporaryStore.makeFileSystem()) { _, operation in
            // Hold the writer inside the second commit's log sync until the readers are done.
            guard operation == .sync, holding.load(ordering: .relaxed) else { return }
            holding.store(false, ordering: .relaxed)
            inSync.signal()
            release.wait()
        }
        let store = try Store.open(at: TemporaryStore.directory, configuration: .testing(), fileSystem: syncs)
        let table = try store.write { txn in try txn.createTable(named: "t") }
        let first = try store.write { try $0.insert([1], into: table) }
        holding.store(true, ordering: .relaxed)
        let writer = Thread { _ = try? store.write { try $0.insert([2], into: table) } }
        writer.start()
        #expect(inSync.wait(timeout: .now() + 10) == .success)
        // The writer is inside its sync now. A reader goes on (on a thread of its own, so that a reader that
        // waited for the sync fails the test instead of hanging it).
        let reads = Atomic<Int>(0)
        let readsDone = DispatchSemaphore(value: 0)
        let reader = Thread {
            for _ in 0..<100 {
                if (try? store.snapshot().row(first, in: table)) == [1] { reads.add(1, ordering: .relaxed) }
            }
            readsDone.signal()
        }
        reader.start()
        #expect(readsDone.wait(timeout: .now() + 10) == .success)
        #expect(reads.load(ordering: .relaxed) == 100)
        release.signal()
        // The held commit is acknowledged once its sync returns.
        var acknowledged = false
        for _ in 0..<1000 where !acknowledged {
            acknowledged = try store.snapshot().rowCount(in: table) == 2
            if !acknowledged { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(acknowledged)
        try store.close()
    }
}
