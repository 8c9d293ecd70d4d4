import Foundation
import StrataCrashWriter
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

/// Several processes on one store (FORMAT.md §11): writer processes (``SharedWorkload`` workers) and reader
/// processes run at once for a bounded time while the test kills one of them with SIGKILL every few hundred
/// milliseconds and starts it again; this process reads through an open of its own all along. Then every commit a
/// writer acknowledged must be in the store, every snapshot anyone took must have been a state that some prefix of
/// the commits explains (no partial transaction, nothing going back in time), and verification must be clean.
///
/// `STRATA_TEST_SEED` replays the kill schedule of a failing run (not its interleaving, which the processes decide).
@Suite(.serialized) struct MultiProcessStressTests {
    static let writerCount = 4
    static let readerCount = 2
    static let duration = Duration.seconds(15)

    @Test func killedWritersAndReadersLoseNothingAcknowledgedAndEverySnapshotIsAPrefix() throws {
        let executable = try CrashWriterProcess.locateExecutable()
        try TestEnvironment.forEachSeed(base: 0x5348_4152, count: 1) { seed in
            try TemporaryStore.withPosixDirectory { root in
                try run(executable: executable, directory: root + "/store", seed: seed)
            }
        }
    }

    private func run(executable: String, directory: String, seed: UInt64) throws {
        try Store.open(at: directory, configuration: .testing()).close()
        var random = RepeatableRandomNumberGenerator(seed: seed)
        func writer(_ worker: Int) throws -> CrashWriterProcess {
            try CrashWriterProcess(executable: executable, arguments: ["--shared-writer", directory, String(worker)])
        }
        func reader() throws -> CrashWriterProcess {
            try CrashWriterProcess(executable: executable, arguments: ["--shared-reader", directory])
        }
        var writers = try (0..<Self.writerCount).map(writer)
        var readers = try (0..<Self.readerCount).map { _ in try reader() }
        var acknowledged = [UInt64](repeating: 0, count: Self.writerCount)
        var kills = 0
        var ownChecks = 0
        var problems: [String] = []

        func collect(_ result: CrashWriterProcess.Result, of role: String) {
            if !result.killedBySIGKILL {
                problems.append("\(role) \(result.termination): \(result.standardError.suffix(2_000))")
            }
        }

        let store = try Store.open(at: directory, configuration: .testing(createIfMissing: false))
        var previous = SharedWorkload.Check()
        let clock = ContinuousClock()
        let deadline = clock.now + Self.duration
        while clock.now < deadline, problems.isEmpty {
            Thread.sleep(forTimeInterval: Double(50 + random.next() % 400) / 1_000)
            // What the running writers acknowledged before this snapshot must be in it.
            var before = acknowledged
            for (worker, process) in writers.enumerated() {
                before[worker] = max(before[worker], process.acknowledgedSoFar.max() ?? 0)
            }
            let check = SharedWorkload.check(store.snapshot())
            ownChecks += 1
            problems += check.problems.map { "this process's snapshot: \($0)" }
            for worker in 0..<Self.writerCount {
                let seen = check.sequences[UInt32(worker)] ?? 0
                if seen < before[worker] {
                    problems.append("worker \(worker): a snapshot holds \(seen), \(before[worker]) was acknowledged")
                }
                if seen < previous.sequences[UInt32(worker)] ?? 0 { problems.append("worker \(worker) went back") }
            }
            previous = check

            let victim = Int(random.next() % UInt64(Self.writerCount + Self.readerCount))
            kills += 1
            if victim < Self.writerCount {
                let result = writers[victim].killAndWait()
                collect(result, of: "writer \(victim)")
                acknowledged[victim] = max(acknowledged[victim], result.acknowledged.max() ?? 0)
                writers[victim] = try writer(victim)
            } else {
                collect(readers[victim - Self.writerCount].killAndWait(), of: "reader")
                readers[victim - Self.writerCount] = try reader()
            }
        }
        for (worker, process) in writers.enumerated() {
            let result = process.killAndWait()
            collect(result, of: "writer \(worker)")
            acknowledged[worker] = max(acknowledged[worker], result.acknowledged.max() ?? 0)
        }
        for process in readers { collect(process.killAndWait(), of: "reader") }

        // This open takes the writer lock the killed writers left, cuts what the last of them left half-written and
        // sees everything; so does a fresh open, which also recovers.
        _ = try store.write { txn in txn.tableNames }
        let live = SharedWorkload.check(store.snapshot())
        try store.close()
        let reopened = try Store.open(at: directory, configuration: .testing(createIfMissing: false))
        let final = SharedWorkload.check(reopened.snapshot())
        let report = try reopened.verify()
        try reopened.close()

        print(
            "multi-process stress (seed \(seed)): \(kills) kills, \(final.total) transactions committed, "
                + "acknowledged per worker \(acknowledged), found \(final.sequences.sorted { $0.key < $1.key }), "
                + "\(ownChecks) snapshots checked here")
        #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
        #expect(final.problems.isEmpty, "\(final.problems.joined(separator: "\n"))")
        #expect(live.total == final.total && live.sequences == final.sequences, "the live open missed commits")
        for worker in 0..<Self.writerCount {
            #expect((final.sequences[UInt32(worker)] ?? 0) >= acknowledged[worker], "worker \(worker) lost commits")
        }
        #expect(acknowledged.allSatisfy { $0 > 0 }, "a writer never committed: \(acknowledged)")
        #expect(kills >= 10)
        #expect(report.isClean, "\(report.problems.prefix(5))")
    }
}
