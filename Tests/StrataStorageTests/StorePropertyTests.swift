import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Random sequences of operations (transactions of inserts, updates, deletes, table creations and drops;
/// checkpoints; clean reopens; simulated power losses) checked against the reference model after every
/// step. Several seeds per run; `STRATA_TEST_ITERATIONS` runs more, `STRATA_TEST_SEED` replays one.
@Suite struct StorePropertyTests {
    private enum Step: CaseIterable {
        case transaction, checkpoint, reopen, crash
    }

    /// Draws the next step: mostly transactions.
    private func nextStep(_ random: inout RepeatableRandomNumberGenerator) -> Step {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<86: .transaction
        case 86..<92: .checkpoint
        case 92..<96: .reopen
        default: .crash
        }
    }

    /// Compares the store with the model; records the differences and returns false when they differ.
    private func matches(_ model: ReferenceModel, _ store: Store, _ context: @autoclosure () -> String) throws -> Bool {
        if try ReferenceModel.capture(store.snapshot()).tables == model.tables { return true }
        model.assertMatches(store.snapshot(), context())
        return false
    }

    /// Durability `.full`: after a power loss every committed transaction is there, and nothing else.
    @Test func randomOperationsWithFullDurabilityMatchTheModelThroughCrashes() throws {
        var counts = (transactions: 0, checkpoints: 0, reopens: 0, crashes: 0)
        try TestEnvironment.forEachSeed(base: 0x9809_E27F, count: 8) { seed in
            var random = RepeatableRandomNumberGenerator(seed: seed)
            let pageSize = [512, 1024, 4096].randomElement(using: &random)!
            let threshold: UInt64 =
                Bool.random(using: &random) ? .max : UInt64.random(in: 2_048...32_768, using: &random)
            // A cache of 16 pages makes readers decode pages again and again; the default keeps everything.
            let cache = [16, 64, 16_384].randomElement(using: &random)!
            let configuration = StoreConfiguration.testing(
                pageSize: pageSize,
                checkpointThresholdBytes: threshold,
                pageCacheCapacity: cache
            )
            var fileSystem = TemporaryStore.makeFileSystem()
            var store = try Store.openForTesting(fileSystem, configuration: configuration)
            var workload = RandomWorkload(seed: random.next(), pageSize: pageSize)
            workload.largeValueSize = 2 * pageSize
            let context = "seed \(seed) (page \(pageSize), checkpoint threshold \(threshold), cache \(cache))"
            for index in 0..<300 {
                let step = nextStep(&random)
                switch step {
                case .transaction:
                    try workload.runTransaction(on: store, maximumOperations: 8)
                    counts.transactions += 1
                case .checkpoint:
                    try store.checkpoint()
                    counts.checkpoints += 1
                case .reopen:
                    try store.close()
                    store = try Store.openForTesting(fileSystem, configuration: configuration)
                    counts.reopens += 1
                case .crash:
                    // Power goes: the open store is abandoned with its file system; a new store opens what
                    // was durable.
                    fileSystem = fileSystem.crashImage()
                    store = try Store.openForTesting(fileSystem, configuration: configuration)
                    counts.crashes += 1
                }
                guard try matches(workload.model, store, "\(context), step \(index) (\(step))") else {
                    throw ModelMismatch("\(context): the store differs from the model at step \(index) (\(step))")
                }
                if step != .transaction || index % 25 == 0 {
                    let report = try store.verify()
                    guard report.isClean else {
                        throw ModelMismatch("\(context), step \(index) (\(step)): verify: \(report)")
                    }
                }
                if index % 50 == 0 {
                    var scans = random.fork()
                    let problems = workload.model.rangeScanDifferences(store.snapshot(), scans: 10, using: &scans)
                    #expect(problems == [], "\(context), step \(index)")
                }
            }
            try store.close()
        }
        print(
            "StorePropertyTests (full): \(counts.transactions) transactions, \(counts.checkpoints) checkpoints, "
                + "\(counts.reopens) reopens, \(counts.crashes) crashes"
        )
        #expect(counts.crashes > 0 && counts.reopens > 0)
    }

    /// Durability `.off` and `.normal`: a power loss may lose the latest commits, but the store comes back
    /// as exactly the state of one commit, no older than the last checkpoint. Torn tails included.
    @Test func randomOperationsWithoutSyncedCommitsRecoverToACommittedPrefix() throws {
        var outcomes = (crashes: 0, lostCommits: 0)
        try TestEnvironment.forEachSeed(base: 0x0FF_D07A, count: 8) { seed in
            var random = RepeatableRandomNumberGenerator(seed: seed)
            let pageSize = [512, 4096].randomElement(using: &random)!
            let durability: StoreConfiguration.Durability =
                Bool.random(using: &random) ? .off : .normal(maxDelayMilliseconds: 1)
            let configuration = StoreConfiguration.testing(
                pageSize: pageSize,
                durability: durability,
                checkpointThresholdBytes: UInt64.random(in: 4_096...65_536, using: &random)
            )
            var fileSystem = TemporaryStore.makeFileSystem()
            var store = try Store.openForTesting(fileSystem, configuration: configuration)
            var workload = RandomWorkload(seed: random.next(), pageSize: pageSize)
            workload.largeValueSize = 2 * pageSize
            var history: [UInt64: ReferenceModel] = [0: ReferenceModel()]
            let context = "seed \(seed) (page \(pageSize), \(durability))"
            for index in 0..<250 {
                switch nextStep(&random) {
                case .transaction:
                    try workload.runTransaction(on: store)
                    history[store.statistics.lastLSN] = workload.model
                case .checkpoint:
                    try store.checkpoint()
                case .reopen:
                    try store.close()
                    store = try Store.openForTesting(fileSystem, configuration: configuration)
                case .crash:
                    let floor = store.statistics.checkpointLSN
                    let lastLSN = store.statistics.lastLSN
                    let policy: InMemoryFileSystem.CrashPolicy = [
                        .dropUnsynced, .keepUnsyncedPrefix(seed: random.next()), .garbleLastSector(seed: random.next()),
                    ].randomElement(using: &random)!
                    fileSystem = fileSystem.crashImage(policy: policy)
                    store = try Store.openForTesting(fileSystem, configuration: configuration)
                    let lsn = store.snapshot().lsn
                    guard lsn >= floor, lsn <= lastLSN, let model = history[lsn] else {
                        throw ModelMismatch(
                            "\(context), step \(index): recovered LSN \(lsn) is no commit in "
                                + "\(floor)...\(lastLSN) (\(policy))"
                        )
                    }
                    guard try matches(model, store, "\(context), step \(index), crash (\(policy))") else {
                        throw ModelMismatch(
                            "\(context), step \(index): the recovered state is not the state of its commit"
                        )
                    }
                    if lsn < lastLSN { outcomes.lostCommits += 1 }
                    outcomes.crashes += 1
                    // Go on from the recovered state; forget the lost future.
                    history = history.filter { $0.key <= lsn }
                    workload.resetModel(to: model)
                    let report = try store.verify()
                    guard report.isClean else { throw ModelMismatch("\(context), step \(index): verify: \(report)") }
                }
                guard try matches(workload.model, store, "\(context), step \(index)") else {
                    throw ModelMismatch("\(context): the store differs from the model at step \(index)")
                }
            }
            try store.close()
        }
        print(
            "StorePropertyTests (unsynced): \(outcomes.crashes) crashes, "
                + "\(outcomes.lostCommits) of them lost recent commits"
        )
        #expect(outcomes.crashes > 0)
    }
}
