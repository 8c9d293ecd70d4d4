import Foundation
import Logging
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Testing

/// Crash-point enumeration for a store shared by several opens (FORMAT.md §11, "Several processes"): the
/// crash-point workload runs with each transaction on one of two opens of the same directory chosen by the seed
/// (two opens of one store conflict on their locks as two processes do), so that the writer lock changes hands,
/// checkpoints by one open are caught up with by the other, and each appends to blob segments the other created.
/// A third open only reads, now and then, and must see exactly the model's state of the last acknowledged commit,
/// however many checkpoints happened since it last looked. After every operation that changes the file system, every
/// crash picture must recover every acknowledged transaction and no partial one, as in ``CrashPointTests``.
@Suite struct SharedStoreCrashPointTests {
    /// Two writers whose transactions are mostly large: each must load the other's root records (a large commit is in
    /// no log), and a writer that follows a large commit left without its new log starts that log itself.
    @Test func everyCrashPointOfTwoWritersRecoversEveryAcknowledgedLargeTransaction() throws {
        let seeds: [UInt64] = TestEnvironment.seedOverride.map { [$0] } ?? Array(131...134)
        var total = CrashPointTests.Tally.Counts()
        var reads = 0
        for seed in seeds {
            let (counts, checkedReads) = try runWorkload(seed: seed, configuration: CrashPointTests.largeTransactions)
            total.crashPoints += counts.crashPoints
            total.lostTransactions += counts.lostTransactions
            total.partialTransactions += counts.partialTransactions
            total.failures += counts.failures
            reads += checkedReads
        }
        for failure in total.failures.prefix(20) { print("crash failure: \(failure)") }
        #expect(total.failures.isEmpty)
        #expect(total.lostTransactions == 0)
        #expect(total.partialTransactions == 0)
        #expect(total.crashPoints >= (TestEnvironment.seedOverride == nil ? 2_000 : 1))
        #expect(reads > 0)
    }

    @Test func everyCrashPointOfTwoWritersRecoversEveryAcknowledgedTransaction() throws {
        let seeds: [UInt64] = TestEnvironment.seedOverride.map { [$0] } ?? Array(101...106)
        var total = CrashPointTests.Tally.Counts()
        var reads = 0
        for seed in seeds {
            let (counts, checkedReads) = try runWorkload(seed: seed)
            total.crashPoints += counts.crashPoints
            total.lostTransactions += counts.lostTransactions
            total.partialTransactions += counts.partialTransactions
            total.failures += counts.failures
            reads += checkedReads
        }
        print(
            "shared store: crash points checked: \(total.crashPoints), lost transactions: \(total.lostTransactions), "
                + "partial transactions: \(total.partialTransactions), reads by the idle open checked: \(reads)")
        for failure in total.failures.prefix(20) { print("crash failure: \(failure)") }
        #expect(total.failures.isEmpty)
        #expect(total.lostTransactions == 0)
        #expect(total.partialTransactions == 0)
        #expect(total.crashPoints >= (TestEnvironment.seedOverride == nil ? 5_000 : 1))
        #expect(reads > 0)
    }

    /// Runs the workload over two writing opens and one reading open; returns the crash points' counts and how many
    /// reads of the idle open were compared with the model.
    func runWorkload(
        seed: UInt64, configuration: StoreConfiguration = CrashPointTests.configuration
    ) throws -> (CrashPointTests.Tally.Counts, Int) {
        let workload = CrashWorkload(seed: seed)
        let tally = CrashPointTests.Tally()
        let faulty = try CrashPointTests.checkingFileSystem(seed: seed, workload: workload, tally: tally)
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let writers = [
            try Store.open(at: "/db", configuration: configuration, fileSystem: faulty),
            try Store.open(at: "/db", configuration: configuration, fileSystem: faulty),
        ]
        let reader = try Store.open(at: "/db", configuration: configuration, fileSystem: faulty)
        var reads = 0
        for k in workload.transactions.indices {
            tally.counts.withLock { $0.attempted = k + 1 }
            // Mostly runs of several transactions on one open, so that each catches up with a few of the other's.
            let writer = writers[Int(random.next() % 5 == 0 ? 1 : 0) ^ (k / 7 % 2)]
            try workload.run(k, on: writer)
            tally.counts.withLock { $0.acknowledged = k + 1 }
            if random.next() % 11 == 0 {
                let (last, state) = try CrashWorkload.read(reader)
                #expect(last == k, "seed \(seed): the idle open saw transaction \(last) after \(k) was acknowledged")
                #expect(state == workload.states[k], "seed \(seed): the idle open's state after \(k) differs")
                reads += 1
            }
        }
        // Both writers checkpointed, so each had to follow a new log the other started.
        #expect(writers.allSatisfy { $0.statistics.checkpointCount > 0 }, "seed \(seed): a writer never checkpointed")
        let largeCommits = writers.map(\.statistics.largeCommitCount)
        #expect(
            configuration.largeTransactionBytes == CrashPointTests.configuration.largeTransactionBytes
                ? largeCommits == [0, 0] : largeCommits.allSatisfy { $0 > 0 },
            "seed \(seed): large commits \(largeCommits)")
        for writer in writers { try writer.close() }
        let (last, state) = try CrashWorkload.read(reader)
        #expect(last == workload.transactions.count - 1 && state == workload.states[last])
        try reader.close()
        return (tally.counts.withLock { $0 }, reads + 1)
    }
}
