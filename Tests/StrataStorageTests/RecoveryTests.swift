import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Recovery (Store+Open): the newest checkpoint plus every transaction of the log whose commit record
/// survived, and nothing of a transaction whose commit record did not.
@Suite struct RecoveryTests {
    private let walPath = TemporaryStore.wal()
    private let pagePath = TemporaryStore.pageFile()

    /// A moment of a workload at which the disk is captured: the crash image, the log as it was, and for
    /// each transaction in that log the end of its commit record and the model after it.
    struct LogCapture {
        var image: InMemoryFileSystem
        /// The model the checkpoint (or an empty store) gives, before the first transaction of the log.
        var base: ReferenceModel
        var commits: [(end: UInt64, model: ReferenceModel)]
    }

    /// Runs `transactions` seeded transactions with a checkpoint every so often, capturing the disk just
    /// before each checkpoint and at the end.
    private func runWorkload(
        seed: UInt64,
        transactions: Int,
        pageSize: Int,
        checkpointEvery: ClosedRange<Int>
    ) throws -> [LogCapture] {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize))
        var workload = RandomWorkload(seed: seed, pageSize: pageSize)
        // Few and short overflow values: every cut reopens and reads the whole store.
        workload.overflowPercent = 4
        workload.largeValueSize = 2 * pageSize
        var captures: [LogCapture] = []
        var current = LogCapture(image: fileSystem, base: ReferenceModel(), commits: [])
        var untilCheckpoint = Int.random(in: checkpointEvery, using: &workload.random)
        for _ in 0..<transactions {
            guard try workload.runTransaction(on: store) else { continue }
            current.commits.append((store.statistics.walBytes, workload.model))
            untilCheckpoint -= 1
            if untilCheckpoint == 0 {
                current.image = fileSystem.crashImage()
                captures.append(current)
                try store.checkpoint()
                current = LogCapture(image: fileSystem, base: workload.model, commits: [])
                untilCheckpoint = Int.random(in: checkpointEvery, using: &workload.random)
            }
        }
        current.image = fileSystem.crashImage()
        captures.append(current)
        try store.close()
        return captures
    }

    /// The expected model when the log is cut to `length` bytes: the last transaction whose commit record
    /// ends within it, else the checkpoint's.
    private func expected(
        _ capture: LogCapture,
        cutAt length: UInt64
    ) -> (model: ReferenceModel, commits: Int, end: UInt64) {
        var result = (capture.base, 0, UInt64(WALFormat.fileHeaderSize))
        for (index, commit) in capture.commits.enumerated() where commit.end <= length {
            result = (commit.model, index + 1, commit.end)
        }
        return result
    }

    /// Opens a copy of the capture with its log cut to `length` bytes and checks that it holds exactly the
    /// expected state and reports what it replayed and discarded; when `thorough`, also that it verifies
    /// clean and that new commits follow the recovered log and survive a crash.
    private func checkCut(
        _ capture: LogCapture,
        pages: [UInt8],
        log: [UInt8],
        at length: Int,
        pageSize: Int,
        thorough: Bool,
        paddedTo fileSize: Int? = nil,
        context: String
    ) throws -> Bool {
        // A fresh file system holding the two files: cheaper than a crash image of the whole workload's.
        let fileSystem = TemporaryStore.makeFileSystem()
        try fileSystem.setContents(pages, of: pagePath)
        var cut = Array(log[0..<length])
        // A write torn inside the reserved space leaves its zeros after what it wrote: bytes of the log that were
        // zeros anyway (an LSN's or a count's high bytes) are there as if written.
        var written = length
        if let fileSize {
            cut += [UInt8](repeating: 0, count: fileSize - length)
            while written < log.count, log[written] == 0 { written += 1 }
        }
        try fileSystem.setContents(cut, of: walPath)
        let (model, replayed, end) = expected(capture, cutAt: UInt64(written))
        // Recovery discards what follows the last commit, up to the file's end unless zeros (reserved space) follow
        // the last valid record (FORMAT.md §3.3).
        let validEnd = Int(try WALLayout(cut).recordsEnd)
        let discarded =
            cut[validEnd..<min(cut.count, validEnd + WALFormat.recordHeaderSize)].allSatisfy { $0 == 0 }
            ? UInt64(validEnd) - end : UInt64(cut.count) - end
        let store: Store
        do { store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize)) } catch {
            Issue.record("\(context): open failed: \(error)")
            return false
        }
        var ok = true
        if try ReferenceModel.capture(store.snapshot()).tables != model.tables {
            model.assertMatches(store.snapshot(), context)
            ok = false
        }
        let report = store.recoveryReport
        if report.replayedTransactions != replayed || report.discardedLogBytes != discarded {
            let bytes = "discarded \(report.discardedLogBytes) bytes (expected \(discarded))"
            Issue.record("\(context): replayed \(report.replayedTransactions) (expected \(replayed)), \(bytes)")
            ok = false
        }
        guard thorough else {
            try store.close()
            return ok
        }
        let verification = try store.verify()
        if !verification.isClean {
            Issue.record("\(context): verify: \(verification)")
            ok = false
        }
        // New commits must follow the valid prefix of the log and survive a crash.
        var after = model
        let name = "after-recovery"
        try store.write { txn in
            let id = try txn.createTable(named: name)
            #expect(id == after.createTable(named: name))
            _ = try txn.insert([1, 2, 3], into: id)
        }
        after.insert([1, 2, 3], into: name)
        let crashed = fileSystem.crashImage()
        try store.close()
        let reopened = try Store.openForTesting(crashed, configuration: .testing(pageSize: pageSize))
        ok = after.assertMatches(reopened.snapshot(), "\(context), after a commit and a crash") && ok
        try reopened.close()
        return ok
    }

    /// The required exhaustive cut: for the log after each checkpoint of a 240-transaction workload, cut
    /// at every record boundary and reopen; for the last two logs of two transactions or more, also at
    /// every byte of their last records (at least four, at least 1,200 bytes).
    @Test(arguments: [512, 4096])
    func cutAtEveryRecordBoundaryAndEveryByteOfTheLastRecordsRecoversTheLastCommittedTransaction(pageSize: Int) throws {
        try TestEnvironment.forEachSeed(base: 0x2EC0_7E27 &+ UInt64(pageSize), count: 1) { seed in
            try cutEverywhere(seed: seed, pageSize: pageSize)
        }
    }

    private func cutEverywhere(seed: UInt64, pageSize: Int) throws {
        let captures = try runWorkload(seed: seed, transactions: 240, pageSize: pageSize, checkpointEvery: 30...70)
        #expect(captures.count >= 4)
        var cases = 0
        // Every byte is cut in the last two logs that hold at least four records.
        let detailed = Set(captures.indices.filter { captures[$0].commits.count >= 2 }.suffix(2))
        for (captureIndex, capture) in captures.enumerated() {
            let file = try capture.image.contentsOfFile(at: walPath)
            let pages = try capture.image.contentsOfFile(at: pagePath)
            #expect(try WALLayout.endsInReservedSpace(file), "the log holds valid records, then zeros")
            // The records, cut as a log file without reserved space is (one whose last append extended it).
            let log = Array(file[..<Int(try WALLayout(file).recordsEnd)])
            let layout = try WALLayout(log)
            #expect(layout.commitRecords.map(\.end) == capture.commits.map(\.end))
            let boundaries = Set([WALFormat.fileHeaderSize] + layout.records.map { Int($0.end) })
            var cuts = boundaries
            if detailed.contains(captureIndex) {
                // Every byte of the log's last records: at least four, and at least 1,200 bytes.
                var first = max(0, layout.records.count - 4)
                while first > 0, log.count - Int(layout.records[first].offset) < 1_200 { first -= 1 }
                cuts.formUnion(Int(layout.records[first].offset)...log.count)
            }
            for length in cuts.sorted() {
                cases += 1
                let context = "seed \(seed) page \(pageSize) log \(captureIndex) cut at \(length) of \(log.count)"
                let thorough = boundaries.contains(length) || cases % 97 == 0
                guard
                    try checkCut(
                        capture,
                        pages: pages,
                        log: log,
                        at: length,
                        pageSize: pageSize,
                        thorough: thorough,
                        context: context
                    )
                else { return }
                // The same cut as a write torn inside reserved space: zeros follow it to the file's end.
                guard detailed.contains(captureIndex), file.count > length else { continue }
                cases += 1
                guard
                    try checkCut(
                        capture, pages: pages, log: log, at: length, pageSize: pageSize, thorough: thorough,
                        paddedTo: file.count, context: "\(context), zeros after it")
                else { return }
            }
        }
        #expect(cases > 2_000)
        print("RecoveryTests: page size \(pageSize): \(cases) cuts of \(captures.count) logs reopened")
    }

    /// A log cut inside its 48-byte header is damage, not a torn tail: opening fails with `corruption`.
    @Test func logCutInsideItsHeaderIsCorruption() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        _ = try store.write { try $0.createTable(named: "t") }
        let image = fileSystem.crashImage()
        try store.close()
        for length in 0..<UInt64(WALFormat.fileHeaderSize) {
            let copy = image.crashImage()
            try copy.truncate(path: walPath, to: length)
            #expect(throws: StorageError.self, "log cut to \(length)") { try Store.openForTesting(copy) }
            do { _ = try Store.openForTesting(copy) } catch let error as StorageError {
                guard case .corruption(let file, _, _) = error else {
                    Issue.record("log cut to \(length): \(error)")
                    continue
                }
                #expect(file == walPath)
            }
        }
    }

    @Test func missingLogIsCorruption() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        try Store.openForTesting(fileSystem).close()
        try fileSystem.removeFile(at: walPath)
        #expect(throws: StorageError.corruption(file: walPath, offset: 0, reason: "the write-ahead log is missing")) {
            try Store.openForTesting(fileSystem)
        }
    }

    @Test func logOfAnotherStoreIsCorruption() throws {
        let first = TemporaryStore.makeFileSystem()
        let second = TemporaryStore.makeFileSystem()
        try Store.openForTesting(first).close()
        try Store.openForTesting(second).close()
        try first.replaceContentsOfFile(at: walPath, with: try second.contentsOfFile(at: walPath))
        #expect {
            try Store.openForTesting(first)
        } throws: { error in
            guard case StorageError.corruption(_, _, let reason) = error else { return false }
            return reason.contains("another store")
        }
    }

    /// A crash after a checkpoint's root record is durable but before the log is replaced leaves the old
    /// log, whose records the checkpoint already covers: none may be applied twice.
    @Test func logCoveredByTheCheckpointIsSkipped() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        var workload = RandomWorkload(seed: 41, pageSize: 4096)
        for _ in 0..<30 { try workload.runTransaction(on: store) }
        let oldLog = try fileSystem.contentsOfFile(at: walPath)
        try store.checkpoint()
        let checkpointed = workload.model
        // The page file after the checkpoint with the log from before it.
        let crashed = fileSystem.crashImage()
        try crashed.replaceContentsOfFile(at: walPath, with: oldLog)
        try store.close()

        let recovered = try Store.openForTesting(crashed)
        #expect(recovered.recoveryReport.replayedTransactions == 0)
        checkpointed.assertMatches(recovered.snapshot(), "old log over a newer checkpoint")
        #expect(try recovered.verify().isClean)
        // The old log goes on from its end; new transactions must survive the next crash too.
        for _ in 0..<10 { try workload.runTransaction(on: recovered) }
        let again = crashed.crashImage()
        try recovered.close()
        let reopened = try Store.openForTesting(again)
        workload.model.assertMatches(reopened.snapshot(), "after new commits on the old log")
        try reopened.close()
    }

    /// A crash in the middle of a checkpoint leaves tree pages after the newest root record: they are
    /// ignored, the log is replayed, and the next checkpoint writes over them.
    @Test func pagesOfAnInterruptedCheckpointAreIgnored() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        var workload = RandomWorkload(seed: 42, pageSize: 512)
        for _ in 0..<20 { try workload.runTransaction(on: store) }
        try store.checkpoint()
        for _ in 0..<25 { try workload.runTransaction(on: store) }
        let before = fileSystem.crashImage()
        let pagesBefore = try before.contentsOfFile(at: pagePath)
        try store.checkpoint()
        let pagesAfter = try fileSystem.contentsOfFile(at: pagePath)
        try store.close()
        // The new checkpoint's pages without its root record (its last page).
        let interrupted = Array(pagesAfter[0..<(pagesAfter.count - 512)])
        #expect(interrupted.count > pagesBefore.count)
        try before.replaceContentsOfFile(at: pagePath, with: interrupted)

        let recovered = try Store.openForTesting(before, configuration: .testing(pageSize: 512))
        #expect(recovered.recoveryReport.ignoredTailPages == UInt64(interrupted.count - pagesBefore.count) / 512)
        #expect(recovered.recoveryReport.replayedTransactions == 25)
        workload.model.assertMatches(recovered.snapshot(), "after an interrupted checkpoint")
        #expect(try recovered.verify().isClean)
        try recovered.close()
        let reopened = try Store.openForTesting(before, configuration: .testing(pageSize: 512))
        workload.model.assertMatches(reopened.snapshot(), "reopened")
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }

    /// A torn final page (part of a page) at the end of the page file is ignored.
    @Test func partialPageAtTheEndOfThePageFileIsIgnored() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        var workload = RandomWorkload(seed: 43, pageSize: 512)
        for _ in 0..<15 { try workload.runTransaction(on: store) }
        try store.close()
        var pages = try fileSystem.contentsOfFile(at: pagePath)
        pages += [UInt8](repeating: 0xA5, count: 300)
        try fileSystem.replaceContentsOfFile(at: pagePath, with: pages)
        let reopened = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        workload.model.assertMatches(reopened.snapshot(), "with a partial page at the end")
        for _ in 0..<15 { try workload.runTransaction(on: reopened) }
        try reopened.close()
        let again = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        workload.model.assertMatches(again.snapshot(), "after a checkpoint over the partial page")
        #expect(try again.verify().isClean)
        try again.close()
    }

    /// Transactions torn at every point of a group of commits written with durability `.off` (so
    /// nothing is synced): a crash keeps a prefix of the writes, the last one cut short.
    @Test func tornUnsyncedTailsRecoverToAPrefixOfTheCommits() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512, durability: .off))
        var workload = RandomWorkload(seed: 44, pageSize: 512)
        for _ in 0..<10 { try workload.runTransaction(on: store) }
        try store.checkpoint()
        var models = [workload.model]
        for _ in 0..<20 {
            if try workload.runTransaction(on: store) { models.append(workload.model) }
        }
        var seen = Set<Int>()
        for seed in 0..<300 as Range<UInt64> {
            let policy: InMemoryFileSystem.CrashPolicy =
                seed % 2 == 0 ? .keepUnsyncedPrefix(seed: seed) : .garbleLastSector(seed: seed)
            let crashed = fileSystem.crashImage(policy: policy)
            let recovered = try Store.openForTesting(crashed, configuration: .testing(pageSize: 512))
            let state = try ReferenceModel.capture(recovered.snapshot())
            guard let index = models.firstIndex(where: { $0.tables == state.tables }) else {
                Issue.record("crash policy \(policy): the recovered state is no prefix of the commits")
                continue
            }
            seen.insert(index)
            #expect(try recovered.verify().isClean, "crash policy \(policy)")
            try recovered.close()
        }
        #expect(seen.count > 5, "torn crashes should land on many different commits, saw \(seen.sorted())")
        try store.close()
    }
}
