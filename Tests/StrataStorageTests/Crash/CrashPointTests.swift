import Foundation
import Logging
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Testing

/// Crash-point enumeration: the workload runs once per seed on an in-memory file system; after every
/// operation that changes the file system, the test takes what would survive a power loss at that instant
/// under each of three policies (unsynced writes dropped; a random prefix of them kept, the last one torn;
/// the same with the torn sector garbled), recovers a store from each picture and checks it: every
/// acknowledged transaction is there, no transaction is partly visible, verification is clean.
///
/// `STRATA_CRASH_SEEDS=N` runs N more random seeds (printed, so a failure can be replayed with
/// `STRATA_TEST_SEED`).
@Suite struct CrashPointTests {
    /// Counts shared between the workload thread's file-system callback and the test.
    final class Tally: Sendable {
        struct Counts {
            var acknowledged = 0
            var attempted = 0
            var crashPoints = 0
            var lostTransactions = 0
            var partialTransactions = 0
            var failures: [String] = []
            /// Transactions that committed by writing their pages.
            var largeCommits = 0
            /// Pages large transactions wrote before their commit (``StoreConfiguration/largeTransactionMemoryBytes``).
            var spilledPages = 0
        }
        let counts = Lock(Counts())
    }

    static let mutating: Set<FaultInjectingFileSystem.Operation> = [
        .write, .truncate, .sync, .rename, .removeFile, .syncDirectory, .createDirectory, .open,
    ]

    static let configuration = StoreConfiguration(
        durability: .full, pageSize: 512, checkpointThresholdBytes: 24 << 10,
        logger: .init(label: "crash-test") { _ in
            SwiftLogNoOpLogHandler()
        })

    @Test func everyCrashPointRecoversEveryAcknowledgedTransaction() throws {
        var seeds: [UInt64] = TestEnvironment.seedOverride.map { [$0] } ?? Array(1...12)
        if let extra = ProcessInfo.processInfo.environment["STRATA_CRASH_SEEDS"], let count = Int(extra) {
            var generator = SystemRandomNumberGenerator()
            seeds += (0..<count).map { _ in generator.next() }
        }
        var total = Tally.Counts()
        for seed in seeds {
            let counts = try runWorkload(seed: seed)
            #expect(counts.largeCommits == 0)
            total.crashPoints += counts.crashPoints
            total.lostTransactions += counts.lostTransactions
            total.partialTransactions += counts.partialTransactions
            total.failures += counts.failures
        }
        print(
            "crash points checked: \(total.crashPoints), lost transactions: \(total.lostTransactions), "
                + "partial transactions: \(total.partialTransactions)")
        for failure in total.failures.prefix(20) { print("crash failure: \(failure)") }
        #expect(total.failures.isEmpty)
        #expect(total.lostTransactions == 0)
        #expect(total.partialTransactions == 0)
        #expect(total.crashPoints >= (TestEnvironment.seedOverride == nil ? 10_000 : 1))
    }

    /// The crash-point workload where most transactions are large (FORMAT.md, "Large transactions"): they commit by
    /// writing their pages, with a root record as the commit point, and the log never holds them.
    static let largeTransactions: StoreConfiguration = {
        var configuration = Self.configuration
        configuration.largeTransactionBytes = 600
        return configuration
    }()

    /// The same crash points when transactions commit by writing their pages: every acknowledged one is there, none
    /// partly, and the commits after a large one (appended to the new log that follows it) survive too.
    @Test func everyCrashPointRecoversEveryAcknowledgedLargeTransaction() throws {
        let seeds: [UInt64] = TestEnvironment.seedOverride.map { [$0] } ?? Array(31...36)
        var total = Tally.Counts()
        for seed in seeds {
            let counts = try runWorkload(seed: seed, configuration: Self.largeTransactions)
            #expect(counts.largeCommits >= 5, "seed \(seed): \(counts.largeCommits) large commits")
            total.crashPoints += counts.crashPoints
            total.lostTransactions += counts.lostTransactions
            total.partialTransactions += counts.partialTransactions
            total.failures += counts.failures
        }
        for failure in total.failures.prefix(20) { print("crash failure: \(failure)") }
        #expect(total.failures.isEmpty)
        #expect(total.lostTransactions == 0)
        #expect(total.partialTransactions == 0)
        #expect(total.crashPoints >= (TestEnvironment.seedOverride == nil ? 3_000 : 1))
    }

    /// The large-transaction workload where every large transaction writes its changed leaves (but each tree's
    /// rightmost) to the page file after every row it puts, before its commit.
    static let spillingTransactions: StoreConfiguration = {
        var configuration = Self.largeTransactions
        configuration.largeTransactionMemoryBytes = 1
        return configuration
    }()

    /// The same crash points when large transactions write leaves before their commit: those pages are garbage until
    /// the root record names them, so a crash anywhere in between recovers the state before the transaction.
    @Test func everyCrashPointRecoversEveryAcknowledgedSpillingTransaction() throws {
        let seeds: [UInt64] = TestEnvironment.seedOverride.map { [$0] } ?? Array(37...40)
        var total = Tally.Counts()
        for seed in seeds {
            let counts = try runWorkload(seed: seed, configuration: Self.spillingTransactions)
            #expect(counts.largeCommits >= 5, "seed \(seed): \(counts.largeCommits) large commits")
            total.spilledPages += counts.spilledPages
            total.crashPoints += counts.crashPoints
            total.lostTransactions += counts.lostTransactions
            total.partialTransactions += counts.partialTransactions
            total.failures += counts.failures
        }
        print(
            "spilling: crash points checked: \(total.crashPoints), pages written before commits: \(total.spilledPages)"
        )
        for failure in total.failures.prefix(20) { print("crash failure: \(failure)") }
        #expect(total.failures.isEmpty)
        #expect(total.lostTransactions == 0)
        #expect(total.partialTransactions == 0)
        #expect(total.spilledPages >= (TestEnvironment.seedOverride == nil ? 20 : 1))
        #expect(total.crashPoints >= (TestEnvironment.seedOverride == nil ? 2_000 : 1))
    }

    func runWorkload(seed: UInt64, configuration: StoreConfiguration = Self.configuration) throws -> Tally.Counts {
        let workload = CrashWorkload(seed: seed)
        let tally = Tally()
        let faulty = try Self.checkingFileSystem(seed: seed, workload: workload, tally: tally)
        let store = try Store.open(at: "/db", configuration: configuration, fileSystem: faulty)
        for k in workload.transactions.indices {
            tally.counts.withLock { $0.attempted = k + 1 }
            try workload.run(k, on: store)
            tally.counts.withLock { $0.acknowledged = k + 1 }
        }
        let largeCommits = store.statistics.largeCommitCount
        let spilledPages = store.statistics.spilledPageCount
        try store.close()
        return tally.counts.withLock {
            $0.largeCommits = largeCommits
            $0.spilledPages = spilledPages
            return $0
        }
    }

    /// A new in-memory file system with the store directory `/db`, behind a fault-injecting one that, after every
    /// operation that changes the file system, recovers a store from each crash picture of that instant and tallies
    /// what it found against the workload's acknowledged and attempted transactions.
    static func checkingFileSystem(
        seed: UInt64, workload: CrashWorkload, tally: Tally
    ) throws -> FaultInjectingFileSystem {
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/db")
        try memory.syncDirectory(at: "/")
        return FaultInjectingFileSystem(wrapping: memory) { index, operation in
            guard mutating.contains(operation) else { return }
            let (acknowledged, attempted) = tally.counts.withLock { ($0.acknowledged, $0.attempted) }
            for (number, policy) in policies(seed: seed, index: index).enumerated() {
                let outcome = check(
                    image: memory.crashImage(policy: policy), workload: workload, acknowledged: acknowledged,
                    attempted: attempted)
                tally.counts.withLock { counts in
                    counts.crashPoints += 1
                    counts.lostTransactions += outcome.lost
                    counts.partialTransactions += outcome.partial ? 1 : 0
                    if let failure = outcome.failure {
                        counts.failures.append("seed \(seed) operation \(index) policy \(number): \(failure)")
                    }
                }
            }
        }
    }

    static func policies(seed: UInt64, index: Int) -> [InMemoryFileSystem.CrashPolicy] {
        let mixed = seed &* 1_000_003 &+ UInt64(index)
        return [.dropUnsynced, .keepUnsyncedPrefix(seed: mixed), .garbleLastSector(seed: mixed)]
    }

    /// Recovers a store from a crash image and compares it with the workload's states.
    static func check(
        image: InMemoryFileSystem, workload: CrashWorkload, acknowledged: Int, attempted: Int
    ) -> (lost: Int, partial: Bool, failure: String?) {
        guard image.exists(at: "/db/strata.pages") else {
            // The crash came before the store's creation was durable: only valid if nothing was acknowledged.
            return acknowledged == 0 ? (0, false, nil) : (acknowledged, false, "store vanished")
        }
        do {
            let store = try Store.open(at: "/db", configuration: configuration, fileSystem: image)
            defer { try? store.close() }
            let (last, state) = try CrashWorkload.read(store)
            let recovered = last + 1  // transactions 0...last are in the store
            if recovered < acknowledged {
                return (acknowledged - recovered, false, "recovered \(recovered) of \(acknowledged) acknowledged")
            }
            if recovered > attempted {
                return (0, true, "recovered \(recovered) transactions, only \(attempted) were attempted")
            }
            let expected = last >= 0 ? workload.states[last] : CrashWorkload.State()
            if state != expected {
                return (0, true, "state after \(recovered) transactions differs from the model")
            }
            let report = try store.verify()
            if !report.isClean { return (0, false, "verification: \(report.problems.prefix(3))") }
            return (0, false, nil)
        } catch {
            return (0, false, "recovery failed: \(error)")
        }
    }
}
