import Foundation
import StrataFormat
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Testing

/// Opening, locking, closing, statistics and group commit (Store.swift, Store+Open.swift).
@Suite struct StoreTests {
    @Test func openCreatesAnEmptyStoreThatVerifiesClean() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 1024))
        #expect(store.recoveryReport.created)
        #expect(store.pageSize == 1024)
        #expect(store.storeID.count == 16)
        #expect(store.snapshot().tableNames.isEmpty)
        #expect(store.snapshot().lsn == 0)
        let report = try store.verify()
        #expect(report.isClean, "\(report)")
        #expect(report.tableCount == 0 && report.rowCount == 0)
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(!reopened.recoveryReport.created)
        #expect(reopened.pageSize == 1024, "an existing store keeps its page size")
        try reopened.close()
    }

    /// A store whose directory `open` created survives a power loss: the new directory's entry, and those
    /// of any parent directories it had to create, must be synced (ba3879e syncs the immediate parent).
    @Test(arguments: ["/db", "/data/db", "/data/stores/db"])
    func storeWhoseDirectoryOpenCreatedSurvivesAPowerLoss(directory: String) throws {
        let fileSystem = InMemoryFileSystem()
        let store = try Store.open(at: directory, configuration: .testing(), fileSystem: fileSystem)
        let table = try store.write { try $0.createTable(named: "t") }
        let row = try store.write { try $0.insert([42], into: table) }
        let crashed = fileSystem.crashImage()
        #expect(crashed.exists(at: directory + "/strata.pages"), "the acknowledged store is gone after a power loss")
        if crashed.exists(at: directory + "/strata.pages") {
            let recovered = try Store.open(
                at: directory,
                configuration: .testing(createIfMissing: false),
                fileSystem: crashed
            )
            #expect(try recovered.snapshot().row(row, in: table) == [42])
            try recovered.close()
        }
        try store.close()
    }

    /// A store of format version 1 (leaf pages before they were searched in place), 2 (row records before they
    /// were compact) or 3 (leaves before row-ID bitmaps) is refused, by the writer's open and by the read-only open of
    /// fsck alike, with a message that names the version and what to do.
    @Test(arguments: [UInt32(1), 2, 3])
    func anOlderStoreIsRefusedWithAMessageSayingWhatToDo(version: UInt32) throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        try store.write { txn in _ = try txn.insert([1, 2, 3], into: try txn.createTable(named: "t")) }
        try store.close()
        let handle = try fileSystem.openFile(at: TemporaryStore.pageFile(), mode: .existing)
        var header = try handle.read(count: StoreHeader.encodedSize, at: 0).withUnsafeBytes {
            (bytes) throws(FormatError) in try StoreHeader.decode(bytes)
        }
        header.formatVersion = version
        try handle.write(header.encoded(), at: 0)
        try handle.sync()
        try handle.close()
        func isVersionOneRefusal(_ error: any Error) -> Bool {
            guard case StorageError.unsupportedFormat(_, let reason) = error else { return false }
            return reason.contains("format version \(version)") && reason.contains("new store")
        }
        #expect(performing: { try Store.openForTesting(fileSystem) }, throws: isVersionOneRefusal)
        #expect(
            performing: { try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem) },
            throws: isVersionOneRefusal)
    }

    @Test func openWithoutCreateIfMissingThrowsStoreNotFound() {
        let fileSystem = TemporaryStore.makeFileSystem()
        #expect(throws: StorageError.storeNotFound(path: "/db")) {
            try Store.openForTesting(fileSystem, configuration: .testing(createIfMissing: false))
        }
        #expect(throws: StorageError.storeNotFound(path: "/elsewhere")) {
            try Store.openForTesting(
                fileSystem,
                directory: "/elsewhere",
                configuration: .testing(createIfMissing: false)
            )
        }
        #expect(!fileSystem.exists(at: "/elsewhere"), "a failed open creates nothing")
    }

    @Test(arguments: [0, 256, 511, 513, 3000, 131_072])
    func invalidPageSizeIsInvalidArgument(pageSize: Int) {
        #expect {
            try Store.openForTesting(TemporaryStore.makeFileSystem(), configuration: .testing(pageSize: pageSize))
        } throws: { error in
            guard case StorageError.invalidArgument = error else { return false }
            return true
        }
    }

    @Test func secondOpenWhileOpenSharesTheStoreAndIsRefusedOnlyDuringCompaction() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        let second = try Store.openForTesting(fileSystem)
        let table = try store.write { try $0.createTable(named: "t") }
        #expect(second.snapshot().tableNames == ["t"])
        let row = try second.write { try $0.insert(Array("from the second open".utf8), into: table) }
        #expect(try store.snapshot().row(row, in: table) == Array("from the second open".utf8))
        try second.close()
        try store.close()
        // Compaction (or destruction) holds the store lock exclusive: an open must wait for it to end.
        let compaction = try fileSystem.lockFile(at: "/db/strata.lock")
        #expect(throws: StorageError.storeLocked(path: "/db")) { try Store.openForTesting(fileSystem) }
        compaction.unlock()
        let again = try Store.openForTesting(fileSystem)
        #expect(again.snapshot().tableNames == ["t"])
        try again.close()
    }

    @Test func secondOpenOfAPosixStoreSharesItAndCompactionNamesThisProcess() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let configuration = StoreConfiguration.testing()
            let store = try Store.open(at: directory, configuration: configuration)
            let second = try Store.open(at: directory, configuration: configuration)
            let table = try store.write { try $0.createTable(named: "posix") }
            let row = try second.write { try $0.insert(Array("durable".utf8), into: table) }
            #expect(try store.snapshot().row(row, in: table) == Array("durable".utf8))
            #expect(throws: StorageError.storeInUse(path: directory, processes: [getpid()])) {
                try Store.compact(at: directory, configuration: configuration)
            }
            try store.close()
            try second.close()
            let again = try Store.open(at: directory, configuration: configuration)
            #expect(try again.snapshot().row(row, in: table) == Array("durable".utf8))
            #expect(try again.verify().isClean)
            try again.close()
        }
    }

    @Test func storeReleasedWithoutCloseReleasesItsLockAndLosesNothing() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        var model = ReferenceModel()
        do {
            let store = try Store.openForTesting(fileSystem)
            let table = try store.write { try $0.createTable(named: "t") }
            model.createTable(named: "t")
            _ = try store.write { try $0.insert([9], into: table) }
            model.insert([9], into: "t")
        }
        let reopened = try Store.openForTesting(fileSystem)
        model.assertMatches(reopened.snapshot())
        try reopened.close()
    }

    @Test func closedStoreRefusesWorkButKeepsSnapshotsReadable() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        let table = try store.write { try $0.createTable(named: "t") }
        let row = try store.write { try $0.insert(Array(repeating: 7, count: 5000), into: table) }
        let snapshot = store.snapshot()
        try store.close()
        try store.close()  // closing twice does nothing
        #expect(throws: StorageError.storeClosed) { try store.write { _ in } }
        #expect(throws: StorageError.storeClosed) { try store.checkpoint() }
        #expect(throws: StorageError.storeClosed) { try store.verify() }
        #expect(try snapshot.row(row, in: table) == Array(repeating: 7, count: 5000))
        #expect(try store.snapshot().rowCount(in: table) == 1)
    }

    @Test func statisticsCountCommitsCheckpointsAndLSNs() throws {
        let store = try Store.openForTesting(TemporaryStore.makeFileSystem(), configuration: .testing(pageSize: 512))
        let table = try store.write { try $0.createTable(named: "t") }
        for index in 0..<10 { _ = try store.write { try $0.insert([UInt8(index)], into: table) } }
        // An empty transaction commits nothing.
        try store.write { _ in }
        var statistics = store.statistics
        #expect(statistics.commitCount == 11)
        #expect(statistics.lastLSN == 22, "one operations record and one commit record per transaction")
        #expect(statistics.checkpointLSN == 0)
        #expect(statistics.checkpointCount == 0)
        #expect(statistics.walBytes > UInt64(WALFormat.fileHeaderSize))
        try store.checkpoint()
        statistics = store.statistics
        #expect(statistics.checkpointCount == 1)
        #expect(statistics.checkpointLSN == 22)
        #expect(statistics.generation == 1)
        #expect(statistics.walBytes == UInt64(WALFormat.fileHeaderSize))
        #expect(statistics.pageFileBytes > 512)
        #expect(store.snapshot().lsn == 22)
        try store.close()
    }

    /// Runs eight threads committing 200 transactions each with durability `.full` on `fileSystem`, then
    /// checks that every commit is there (also after reopening).
    /// - Returns: the store's statistics before closing.
    private func commitFromEightThreads(on fileSystem: any FileSystem, directory: String) throws -> StoreStatistics {
        let configuration = StoreConfiguration.testing(durability: .full)
        let store = try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
        let threads = 8
        let perThread = 200
        let tables = try store.write { txn in try (0..<threads).map { try txn.createTable(named: "thread-\($0)") } }
        let rows = Lock<[[RowID]]>(Array(repeating: [], count: threads))
        let failures = Lock<[String]>([])
        runOnThreads(threads) { thread in
            for index in 0..<perThread {
                do {
                    let row = try store.write { txn in
                        try txn.insert(Array("\(thread):\(index)".utf8), into: tables[thread])
                    }
                    rows.withLock { $0[thread].append(row) }
                } catch {
                    failures.withLock { $0.append("thread \(thread) commit \(index): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let statistics = store.statistics
        #expect(statistics.commitCount == threads * perThread + 1)
        func check(_ snapshot: Snapshot) throws {
            for thread in 0..<threads {
                let expected = rows.withLock { $0[thread] }
                #expect(expected.count == perThread)
                #expect(try snapshot.rowCount(in: tables[thread]) == perThread)
                for (index, row) in expected.enumerated() {
                    #expect(try snapshot.row(row, in: tables[thread]) == Array("\(thread):\(index)".utf8))
                }
            }
        }
        try check(store.snapshot())
        #expect(try store.verify().isClean)
        try store.close()
        let reopened = try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
        try check(reopened.snapshot())
        try reopened.close()
        return statistics
    }

    /// Group commit: with a log sync that takes 20 ms (a slow disk), eight threads committing 200 transactions
    /// each share syncs: far fewer syncs than commits. The sync must outlast a commit's own work for the others to
    /// queue behind it; under ThreadSanitizer, with the other concurrency suites running beside it on two cores, that
    /// work takes several milliseconds: a 1 ms sync shared too little, and a 5 ms one once gave 1,027 syncs for 1,601
    /// commits (378 on the next run).
    @Test func concurrentFullDurabilityCommitsShareSyncs() throws {
        let slowSyncs = FaultInjectingFileSystem(wrapping: TemporaryStore.makeFileSystem()) { _, operation in
            if operation == .sync { Thread.sleep(forTimeInterval: 0.02) }
        }
        let statistics = try commitFromEightThreads(on: slowSyncs, directory: TemporaryStore.directory)
        print("StoreTests: group commit: \(statistics.commitCount) commits, \(statistics.walSyncCount) log syncs")
        #expect(statistics.walSyncCount < statistics.commitCount)
        #expect(
            statistics.walSyncCount < statistics.commitCount / 2,
            "syncs \(statistics.walSyncCount) for \(statistics.commitCount) commits"
        )
    }

    /// The same on a POSIX directory: every commit is there, and no commit took more than one sync.
    @Test func concurrentFullDurabilityCommitsOnAPosixStoreAreAllDurable() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let statistics = try commitFromEightThreads(on: PosixFileSystem(), directory: directory)
            #expect(statistics.walSyncCount <= statistics.commitCount)
        }
    }

    /// Durability `.normal`: the commit returns before its sync, which follows within the delay (20 ms). The test
    /// waits up to a minute of wall-clock time, not a count of tries: on a loaded machine 200 tries of 10 ms (each
    /// with a crash image and a recovery) once ended before the syncing thread ran.
    @Test func normalDurabilitySyncsWithinTheDelay() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(
            fileSystem,
            configuration: .testing(durability: .normal(maxDelayMilliseconds: 20))
        )
        let table = try store.write { try $0.createTable(named: "t") }
        let row = try store.write { try $0.insert([1, 2, 3], into: table) }
        var survived = false
        let deadline = Date().addingTimeInterval(60)
        while !survived, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            let crashed = fileSystem.crashImage()
            let recovered = try Store.openForTesting(crashed)
            survived =
                try recovered.snapshot().table(named: "t").map { try recovered.snapshot().row(row, in: $0) } == [
                    1, 2, 3,
                ]
            try recovered.close()
        }
        #expect(survived, "the commit was not synced within a minute")
        try store.close()
    }

    /// Durability `.off`: nothing is synced until a checkpoint; a crash before it loses the commits but
    /// never consistency.
    @Test func offDurabilityLosesUncheckpointedCommitsAtACrashButStaysConsistent() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(durability: .off))
        var workload = RandomWorkload(seed: 5, pageSize: 4096)
        for _ in 0..<10 { try workload.runTransaction(on: store) }
        try store.checkpoint()
        let checkpointed = workload.model
        for _ in 0..<10 { try workload.runTransaction(on: store) }
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        checkpointed.assertMatches(crashed.snapshot(), "after a crash")
        try crashed.close()
        try store.close()
        let closed = try Store.openForTesting(fileSystem)
        workload.model.assertMatches(closed.snapshot(), "after close")
        try closed.close()
    }
}
