import Logging
import StrataIO
import StrataLock
import StrataStorage
import Testing

/// A recovery interrupted by a second crash (SQLite's "compound failures"): the workload runs with no checkpoint, so
/// that a crash leaves its whole log to replay; the open that recovers it (replay, the checkpoint after it, the new
/// log) is then itself crashed after every operation that changes the file system, under each crash policy, and the
/// store recovered from that second picture must still hold every transaction acknowledged before the first crash,
/// with nothing partly visible and verification clean.
@Suite struct RecoveryCrashPointTests {
    /// No automatic checkpoint: the first crash leaves every transaction in the log.
    static let configuration = StoreConfiguration(
        durability: .full, pageSize: 512, checkpointThresholdBytes: 1 << 40,
        logger: .init(label: "crash-test") { _ in SwiftLogNoOpLogHandler() })

    @Test(arguments: [UInt64(1), 2, 3])
    func everyCrashPointOfARecoveryKeepsEveryAcknowledgedTransaction(seed: UInt64) throws {
        try checkEveryCrashPoint(seed: seed, recoveringWith: Self.configuration)
    }

    /// The same when the checkpoint after the replay runs after `open` returns, on another thread (as a large
    /// recovery's does): the second crash lands during that checkpoint, while the recovered store is being read.
    @Test(arguments: [UInt64(1), 2, 3])
    func everyCrashPointOfACheckpointAfterOpenKeepsEveryAcknowledgedTransaction(seed: UInt64) throws {
        var configuration = Self.configuration
        configuration.backgroundRecoveryCheckpointBytes = 0
        try checkEveryCrashPoint(seed: seed, recoveringWith: configuration)
    }

    private func checkEveryCrashPoint(seed: UInt64, recoveringWith configuration: StoreConfiguration) throws {
        let workload = CrashWorkload(seed: seed, transactionCount: 40)
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/db")
        try memory.syncDirectory(at: "/")
        let store = try Store.open(at: "/db", configuration: Self.configuration, fileSystem: memory)
        // Up to a transaction that no checkpoint follows, so that the log holds something to replay.
        let acknowledged = workload.transactions.lastIndex { !$0.checkpointAfter }! + 1
        for k in 0..<acknowledged { try workload.run(k, on: store) }
        // The first crash: the process dies with every transaction acknowledged (synced) and none checkpointed.
        let crashed = memory.crashImage(policy: .dropUnsynced)
        withExtendedLifetime(store) {}

        let failures = Lock<[String]>([])
        let crashPoints = Lock(0)
        let recovering = FaultInjectingFileSystem(wrapping: crashed) { index, operation in
            guard CrashPointTests.mutating.contains(operation) else { return }
            for (number, policy) in CrashPointTests.policies(seed: seed, index: index).enumerated() {
                let outcome = CrashPointTests.check(
                    image: crashed.crashImage(policy: policy), workload: workload, acknowledged: acknowledged,
                    attempted: acknowledged)
                crashPoints.withLock { $0 += 1 }
                if let failure = outcome.failure {
                    failures.withLock { $0.append("operation \(index) (\(operation)) policy \(number): \(failure)") }
                }
            }
        }
        let recovered = try Store.open(at: "/db", configuration: configuration, fileSystem: recovering)
        #expect(recovered.recoveryReport.replayedTransactions > 0)
        #expect(
            recovered.recoveryReport.checkpointsAfterOpen == (configuration.backgroundRecoveryCheckpointBytes == 0))
        let (last, state) = try CrashWorkload.read(recovered)
        #expect(last == acknowledged - 1)
        #expect(state == workload.states[last])
        #expect(try recovered.verify().isClean)
        try recovered.close()

        let found = failures.withLock { $0 }
        print(
            "seed \(seed): \(acknowledged) transactions, \(recovered.recoveryReport.replayedTransactions) replayed, "
                + "\(crashPoints.withLock { $0 }) crash points of the recovery checked")
        for failure in found.prefix(20) { print("seed \(seed): \(failure)") }
        #expect(found.isEmpty)
        // Replay itself writes nothing: the crash points are those of the checkpoint after it and of the new log.
        #expect(crashPoints.withLock { $0 } >= 3 * 4)
    }
}
