import Foundation
import StrataCrashWriter
import StrataLock
import StrataStorage
import StrataTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Real processes killed with SIGKILL while they commit: the operating system keeps what was written
/// (a process crash, not a power loss), so every commit the writer acknowledged must be there, whole,
/// after any number of kills, landing anywhere: in a commit, a blob, a checkpoint, a log reset, or the
/// recovery of the previous kill. The writer is `StrataCrashWriter` (Tests/StrataCrashWriter), which
/// runs the deterministic ``KillWorkload`` and prints `ack <i>` once transaction `i` is committed.
///
/// `STRATA_TEST_SEED` replays the kill delays of a failing run (the timing of the writer is not
/// repeatable, so a replay retries the same schedule rather than the same interleaving).
@Suite(.serialized) struct ProcessKillTests {
    /// Kills per run of ``acknowledgedCommitsSurviveSIGKILL()``.
    static let rounds = 100
    /// Once a store holds this many transactions, the next round starts a new store. Each round checks
    /// the whole store, so this bounds a round's time however fast the disk syncs.
    static let transactionsPerStore: UInt64 = 2_500
    /// Every third round checks a copy of the store and leaves the original as the kill left it, so the
    /// next writer runs recovery itself (and may be killed in the middle of it).
    static let copyEvery = 3

    @Test func acknowledgedCommitsSurviveSIGKILL() throws {
        let executable = try CrashWriterProcess.locateExecutable()
        try TestEnvironment.forEachSeed(base: 0x4B49_4C4C, count: 1) { seed in
            try TemporaryStore.withPosixDirectory { root in
                try killRepeatedly(executable: executable, root: root, seed: seed)
            }
        }
    }

    /// Another process (this one) opens the store while the writer commits: each of its snapshots holds a prefix of
    /// the writer's transactions, exactly the model's, and at least every one acknowledged before it was taken; after
    /// the writer is killed, the next write here recovers what it left, and loses nothing it acknowledged.
    @Test func aSecondProcessReadsEveryCommitWhileTheFirstWritesAndTakesOverAfterItsKill() throws {
        let executable = try CrashWriterProcess.locateExecutable()
        try TemporaryStore.withPosixDirectory { root in
            let directory = root + "/store"
            let child = try CrashWriterProcess(executable: executable, directory: directory, start: 0)
            guard child.waitForFirstAcknowledgement(timeout: .seconds(30)) else {
                let result = child.killAndWait()
                Issue.record("the writer acknowledged nothing within 30 s: \(result)")
                return
            }
            let store = try Store.open(at: directory, configuration: .testing(createIfMissing: false))
            var model = KillWorkload.Model()
            var expectations = ExpectedValues()
            var seen: UInt64 = 0
            for _ in 0..<5 {
                let acknowledged = child.acknowledgedSoFar.max() ?? 0
                let found = try StoreCheck.run(store, model: &model, expectations: &expectations, verifying: false)
                #expect(found.problems.isEmpty, "\(found.problems.joined(separator: "\n"))")
                #expect(found.transactionCount > acknowledged, "a snapshot missed an acknowledged commit")
                #expect(found.transactionCount >= seen, "a later snapshot went back in time")
                seen = found.transactionCount
                Thread.sleep(forTimeInterval: 0.2)
            }
            let result = child.killAndWait()
            #expect(result.killedBySIGKILL, "\(result)")
            // The writer died holding whatever it held: this process's next write takes the writer lock at once.
            let table = try #require(store.snapshot().table(named: KillWorkload.progressTableName))
            _ = try store.write { txn in try txn.row(RowID(1), in: table) }
            let found = try StoreCheck.run(store, model: &model, expectations: &expectations)
            #expect(found.problems.isEmpty, "\(found.problems.joined(separator: "\n"))")
            #expect(!result.acknowledged.isEmpty)
            #expect(result.acknowledged.allSatisfy { $0 < found.transactionCount }, "acknowledged commits lost")
            try store.close()
        }
    }

    // MARK: - The kill loop

    private struct Totals {
        var kills = 0
        var survived = 0
        var acknowledged = 0
        var lost = 0
        var stores = 1
        /// Transactions committed, over all stores.
        var committed: UInt64 = 0
        var killedBeforeFirstAcknowledgement = 0
        /// Transactions found committed although their acknowledgement never reached the test.
        var committedUnacknowledged: UInt64 = 0
        var replayedTransactions = 0
        var recoveriesDiscardingLogBytes = 0
        var recoveriesAfterInterruptedCheckpoint = 0
        var recoveredByWriter = 0
        var writing = Duration.zero
        var checking = Duration.zero
    }

    private struct RoundFailure: Error, CustomStringConvertible {
        var description: String
    }

    private func killRepeatedly(executable: String, root: String, seed: UInt64) throws {
        var random = RepeatableRandomNumberGenerator(seed: seed)
        var model = KillWorkload.Model()
        var expectations = ExpectedValues()
        var totals = Totals()
        var directory = root + "/store-1"
        let copy = root + "/copy"
        // Transactions 0..<committed are in the store: where the next writer starts.
        var committed: UInt64 = 0
        let clock = ContinuousClock()
        let started = clock.now
        // Printed after a failure too: how far the run got.
        defer {
            print("kills survived: \(totals.survived), acknowledged commits lost: \(totals.lost)")
            print(
                "acknowledged commits: \(totals.acknowledged) in total (seed \(seed), \(totals.kills) kills, "
                    + "\(totals.stores) stores, \(clock.now - started): writers \(totals.writing), checks "
                    + "\(totals.checking)); \(totals.committed + committed) transactions committed, "
                    + "\(totals.committedUnacknowledged) found although their acknowledgement was cut off; "
                    + "\(totals.killedBeforeFirstAcknowledgement) kills before the first acknowledgement; recoveries: "
                    + "\(totals.replayedTransactions) transactions replayed, \(totals.recoveriesDiscardingLogBytes) "
                    + "discarding a log tail, \(totals.recoveriesAfterInterruptedCheckpoint) after an interrupted "
                    + "checkpoint, \(totals.recoveredByWriter) left to the writer")
        }

        for round in 0..<Self.rounds {
            // A check reads the whole store: a fast disk would make the later ones slow, so start over.
            if committed >= Self.transactionsPerStore {
                try FileManager.default.removeItem(atPath: directory)
                totals.stores += 1
                totals.committed += committed
                directory = root + "/store-\(totals.stores)"
                committed = 0
            }
            let delay = Int.random(in: 5...150, using: &random)
            let checksCopy = round % Self.copyEvery == Self.copyEvery - 1
            let start = committed
            var context =
                "seed \(seed) round \(round) (store \(totals.stores), writer started at \(start), "
                + "killed after \(delay) ms)"

            let writing = clock.now
            let child = try CrashWriterProcess(executable: executable, directory: directory, start: start)
            Thread.sleep(forTimeInterval: Double(delay) / 1000)
            let result = child.killAndWait()
            totals.writing += clock.now - writing
            totals.kills += 1
            guard result.killedBySIGKILL else {
                throw RoundFailure(description: "\(context): the writer did not die of SIGKILL: \(result)")
            }
            let acknowledged = result.acknowledged
            context += ", acknowledged \(acknowledged.first.map { "\($0)...\(acknowledged.last!)" } ?? "nothing")"
            guard acknowledged == Array(start..<start + UInt64(acknowledged.count)) else {
                throw RoundFailure(description: "\(context): acknowledgements out of sequence: \(acknowledged)")
            }
            if acknowledged.isEmpty { totals.killedBeforeFirstAcknowledgement += 1 }
            totals.acknowledged += acknowledged.count

            let checking = clock.now
            var checked = directory
            if checksCopy, FileManager.default.fileExists(atPath: directory) {
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: directory, toPath: copy)
                checked = copy
                context += ", checking a copy"
                totals.recoveredByWriter += 1
            }
            let found: StoreCheck.Result
            do {
                found = try StoreCheck.open(checked, model: &model, expectations: &expectations)
            } catch {
                throw RoundFailure(description: "\(context): \(error)\nwriter stderr: \(result.standardError)")
            }
            totals.checking += clock.now - checking
            guard found.problems.isEmpty else {
                throw RoundFailure(
                    description: "\(context): the recovered store holds \(found.transactionCount) transactions but:\n"
                        + found.problems.joined(separator: "\n") + "\nwriter stderr: \(result.standardError)")
            }
            let lost = acknowledged.filter { $0 >= found.transactionCount }
            if !lost.isEmpty {
                let holds = "the store holds 0..<\(found.transactionCount)"
                Issue.record("\(context): acknowledged transactions \(lost) are missing; \(holds)")
            }
            totals.lost += lost.count
            totals.survived += 1
            let acknowledgedEnd = acknowledged.last.map { $0 + 1 } ?? start
            if found.transactionCount > acknowledgedEnd {
                totals.committedUnacknowledged += found.transactionCount - acknowledgedEnd
            }
            if let recovery = found.recovery {
                totals.replayedTransactions += recovery.replayedTransactions
                if recovery.discardedLogBytes > 0 { totals.recoveriesDiscardingLogBytes += 1 }
                if recovery.ignoredTailPages > 0 { totals.recoveriesAfterInterruptedCheckpoint += 1 }
            }
            committed = found.transactionCount
        }
        #expect(totals.lost == 0, "seed \(seed): \(totals.lost) acknowledged commits lost")
        #expect(totals.acknowledged > 0, "seed \(seed): no kill came late enough to see an acknowledgement")
    }
}

// MARK: - Checking a recovered store

/// Expected row and blob bytes, kept between rounds (generating them is most of a check's work).
private struct ExpectedValues {
    private var rows: [UInt64: (row: KillWorkload.Row, bytes: [UInt8])] = [:]
    private var blobs: [UInt64: [UInt8]] = [:]

    mutating func row(_ index: UInt64, _ row: KillWorkload.Row) -> [UInt8] {
        if let cached = rows[index], cached.row == row { return cached.bytes }
        let bytes = KillWorkload.rowBytes(index: index, version: row.version, blob: row.blob)
        rows[index] = (row, bytes)
        return bytes
    }

    mutating func blob(_ index: UInt64) -> [UInt8] {
        if let cached = blobs[index] { return cached }
        let bytes = KillWorkload.blobBytes(index: index)
        blobs[index] = bytes
        return bytes
    }
}

/// Whether two byte sequences are equal (memcmp: an element-wise `==` is slow in debug builds).
private func sameBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard !rhs.isEmpty else { return true }
    return rhs.withUnsafeBytes { memcmp(lhs.baseAddress!, $0.baseAddress!, rhs.count) == 0 }
}

/// Compares a recovered store with the workload model of the transaction count its rows name.
private enum StoreCheck {
    struct Result {
        /// The store holds transactions `0..<transactionCount`, if `problems` is empty.
        var transactionCount: UInt64
        var problems: [String]
        /// The report of the open that recovered the store (nil when no store had been created yet).
        var recovery: RecoveryReport?
    }

    /// Opens the store in `directory` (a missing store holds no transactions), checks it and closes it.
    static func open(
        _ directory: String, model: inout KillWorkload.Model, expectations: inout ExpectedValues
    ) throws -> Result {
        let store: Store
        do {
            store = try Store.open(at: directory, configuration: .testing(createIfMissing: false))
        } catch StorageError.storeNotFound {
            return Result(transactionCount: 0, problems: [], recovery: nil)
        }
        var result = try run(store, model: &model, expectations: &expectations)
        result.recovery = store.recoveryReport
        do { try store.close() } catch { result.problems.append("closing the store: \(error)") }
        return result
    }

    /// Checks `store`: the rows name how many transactions it holds; the rows, the progress row, the
    /// blobs and the counters must then be exactly the model's, and the engine's verifier must agree.
    static func run(
        _ store: Store, model: inout KillWorkload.Model, expectations: inout ExpectedValues, verifying: Bool = true
    ) throws -> Result {
        var problems: [String] = []
        func problem(_ text: @autoclosure () -> String) {
            if problems.count < 20 { problems.append(text()) }
        }
        if verifying {
            let report = try store.verify()
            for item in report.problems.prefix(10) { problem("verify: \(item)") }
        }

        let snapshot = store.snapshot()
        var transactionCount: UInt64 = 0
        if let table = snapshot.table(named: KillWorkload.tableName) {
            try snapshot.forEachRow(in: table, reverse: true) { row, _ in
                transactionCount = row.rawValue
                return false
            }
        }
        if model.transactionCount > transactionCount { model = KillWorkload.Model() }
        while model.transactionCount < transactionCount { model.next() }

        // The tables.
        let expectedTables =
            transactionCount == 0 ? [] : [KillWorkload.tableName, KillWorkload.progressTableName].sorted()
        if snapshot.tableNames != expectedTables {
            problem("tables \(snapshot.tableNames), expected \(expectedTables)")
        }

        // Every row of the model, with its exact bytes, and no other.
        if let table = snapshot.table(named: KillWorkload.tableName) {
            var present = Set<UInt64>()
            try snapshot.forEachRow(in: table) { row, bytes in
                let index = row.rawValue - 1
                present.insert(index)
                guard let expected = model.rows[index] else {
                    problem("row \(index) should not exist: \(KillWorkload.describeRow(Array(bytes)))")
                    return true
                }
                let expectedBytes = expectations.row(index, expected)
                if !sameBytes(bytes, expectedBytes) {
                    problem(
                        "row \(index): \(KillWorkload.describeRow(Array(bytes))), expected "
                            + KillWorkload.describeRow(expectedBytes))
                }
                return true
            }
            let missing = model.rows.keys.filter { !present.contains($0) }.sorted()
            if !missing.isEmpty { problem("rows missing: \(missing.prefix(20))") }
            let count = try snapshot.rowCount(in: table)
            if count != model.rows.count { problem("row count \(count), expected \(model.rows.count)") }
            let next = try snapshot.nextRowID(in: table)
            if next != KillWorkload.rowID(of: transactionCount) {
                problem("next row ID \(next), expected \(KillWorkload.rowID(of: transactionCount))")
            }
        }

        // The progress row names the last transaction.
        if let progress = snapshot.table(named: KillWorkload.progressTableName) {
            let value = try snapshot.row(RowID(1), in: progress)
            let expected = KillWorkload.progressBytes(index: transactionCount &- 1)
            let count = try snapshot.rowCount(in: progress)
            if value != expected || count != 1 {
                problem("progress row \(value.map { "\($0)" } ?? "missing"), expected \(expected)")
            }
        }

        // Every blob of a live row, intact, and no other.
        var blobs: [BlobID: UInt64] = [:]
        try snapshot.forEachBlob { blob, length in
            blobs[blob] = length
            return true
        }
        var expectedBlobs: [BlobID: UInt64] = [:]
        for (index, row) in model.rows { if let blob = row.blob { expectedBlobs[blob] = index } }
        for blob in blobs.keys where expectedBlobs[blob] == nil { problem("\(blob) should not exist") }
        for (blob, index) in expectedBlobs.sorted(by: { $0.key < $1.key }) {
            guard let length = blobs[blob] else {
                problem("\(blob) of row \(index) is missing")
                continue
            }
            let expected = expectations.blob(index)
            guard length == UInt64(expected.count) else {
                problem("\(blob) of row \(index) is \(length) bytes, expected \(expected.count)")
                continue
            }
            do {
                guard let bytes = try snapshot.readBlob(blob) else {
                    problem("\(blob) of row \(index) cannot be read")
                    continue
                }
                if !bytes.withUnsafeBytes({ sameBytes($0, expected) }) {
                    problem("\(blob) of row \(index) reads back different bytes")
                }
            } catch {
                problem("\(blob) of row \(index): \(error)")
            }
        }
        return Result(transactionCount: transactionCount, problems: problems, recovery: nil)
    }
}

// MARK: - The writer process

/// A running `StrataCrashWriter`, whose acknowledgements are read as they arrive.
final class CrashWriterProcess {
    /// What the writer did, once it is dead.
    struct Result: CustomStringConvertible {
        var killedBySIGKILL: Bool
        var termination: String
        var acknowledged: [UInt64]
        var standardError: String

        var description: String {
            "\(termination), \(acknowledged.count) acknowledgements, stderr: "
                + (standardError.isEmpty ? "(empty)" : standardError)
        }
    }

    /// The bytes read from one of the writer's pipes, until end of file.
    private final class Output: Sendable {
        private let bytes = Lock<[UInt8]>([])
        private let finished = DispatchSemaphore(value: 0)

        /// Starts a thread that reads `descriptor` to its end.
        init(reading descriptor: Int32) {
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    bytes.withLock { $0 += buffer[0..<count] }
                }
                finished.signal()
            }
        }

        var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }

        /// Waits until the writing end is closed everywhere (the writer died).
        func waitForEnd(timeout: DispatchTime) -> Bool { finished.wait(timeout: timeout) == .success }
    }

    private let process = Process()
    private let standardOutput = Pipe()
    private let standardError = Pipe()
    private let acknowledgements: Output
    private let errors: Output
    private var result: Result?

    /// Starts `StrataCrashWriter directory start`.
    convenience init(executable: String, directory: String, start: UInt64) throws {
        try self.init(executable: executable, arguments: [directory, String(start)])
    }

    /// Starts `StrataCrashWriter` with `arguments` (see Tests/StrataCrashWriter/main.swift).
    init(executable: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = standardOutput
        process.standardError = standardError
        acknowledgements = Output(reading: standardOutput.fileHandleForReading.fileDescriptor)
        errors = Output(reading: standardError.fileHandleForReading.fileDescriptor)
        // run() closes our copies of the pipes' writing ends, so the readers see end of file once the
        // writer is gone.
        try process.run()
    }

    deinit {
        // A test that fails half-way must not leave a writer running, nor its pipes read after they close.
        if result == nil { _ = killAndWait() }
    }

    /// The acknowledged transactions so far: complete `ack <i>` lines only.
    private static func acknowledged(in text: String) -> [UInt64] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a line being written when the writer died
        return lines.compactMap { $0.hasPrefix("ack ") ? UInt64($0.dropFirst(4)) : nil }
    }

    /// The transactions acknowledged so far (complete lines only), while the writer runs.
    var acknowledgedSoFar: [UInt64] { Self.acknowledged(in: acknowledgements.text) }

    /// Waits until the writer acknowledges a commit; false if it dies or `timeout` passes first.
    func waitForFirstAcknowledgement(timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if !Self.acknowledged(in: acknowledgements.text).isEmpty { return true }
            if !process.isRunning { return false }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return false
    }

    /// Sends SIGKILL (if the writer still runs), waits for it to die and for its output to end.
    func killAndWait() -> Result {
        if let result { return result }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let deadline = DispatchTime.now() + .seconds(30)
        let ended = acknowledgements.waitForEnd(timeout: deadline) && errors.waitForEnd(timeout: deadline)
        let signalled = process.terminationReason == .uncaughtSignal
        let status = process.terminationStatus
        var termination = signalled ? "killed by signal \(status)" : "exited with status \(status)"
        if !ended { termination += " (its output did not end)" }
        let result = Result(
            killedBySIGKILL: signalled && status == SIGKILL, termination: termination,
            acknowledged: Self.acknowledged(in: acknowledgements.text), standardError: errors.text)
        self.result = result
        return result
    }

    private struct NotFound: Error, CustomStringConvertible {
        var description: String
    }

    /// The `StrataCrashWriter` executable: `STRATA_CRASH_WRITER` if set, else the one in the build
    /// products directory of the running test binary (SwiftPM builds it there, as a dependency of
    /// StrataStorageTests). The test binary is `<products>/StrataPackageTests.xctest` on Linux and
    /// `<products>/StrataPackageTests.xctest/Contents/MacOS/StrataPackageTests` on macOS, so the search
    /// goes up from the binary's directory.
    static func locateExecutable() throws -> String {
        let name = "StrataCrashWriter"
        if let path = ProcessInfo.processInfo.environment["STRATA_CRASH_WRITER"] {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw NotFound(description: "STRATA_CRASH_WRITER=\(path) is not an executable file")
            }
            return path
        }
        let starts = [
            URL(fileURLWithPath: CommandLine.arguments[0]), Bundle.main.executableURL, Bundle.main.bundleURL,
        ].compactMap { $0?.resolvingSymlinksInPath() }
        var searched: [String] = []
        for start in starts {
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(name).path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate)
                {
                    return candidate
                }
                searched.append(directory.path)
                directory = directory.deletingLastPathComponent()
            }
        }
        throw NotFound(
            description: "\(name) not found next to the test binary (searched \(searched)); build it with "
                + "`swift build --product \(name)` or set STRATA_CRASH_WRITER to its path")
    }
}
