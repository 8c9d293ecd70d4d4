import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// A device that fails a read while a store opens: recovery must report an I/O error (the data may be
/// fine; retrying may work), never call the store corrupt and never open it at an older state.
@Suite struct RecoveryReadErrorTests {
    @Test func readErrorAtEveryReadOfOpenIsAnIOErrorOrHarmless() throws {
        // A store with two checkpoints and committed transactions in its log.
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        var workload = RandomWorkload(seed: 0xEEAD, pageSize: 512)
        workload.largeValueSize = 1_000
        for round in 0..<3 {
            for _ in 0..<15 { try workload.runTransaction(on: store) }
            if round < 2 { try store.checkpoint() }
        }
        let image = fileSystem.crashImage()
        try store.close()

        // Count the reads a clean open makes, then fail each of them once.
        let counting = FaultInjectingFileSystem(wrapping: image.crashImage())
        try Store.open(at: TemporaryStore.directory, configuration: .testing(pageSize: 512), fileSystem: counting)
            .close()
        let operations = counting.operationCount
        var outcomes: [String: Int] = [:]
        for index in 0..<operations {
            let faulty = FaultInjectingFileSystem(wrapping: image.crashImage())
            faulty.inject(.init(on: [.read], after: index))
            do {
                let recovered = try Store.open(
                    at: TemporaryStore.directory,
                    configuration: .testing(pageSize: 512),
                    fileSystem: faulty
                )
                let state = try ReferenceModel.capture(recovered.snapshot())
                if faulty.failuresInjected > 0, state.tables != workload.model.tables {
                    Issue.record("read \(index) failed: the store opened at another state")
                }
                outcomes[faulty.failuresInjected > 0 ? "opened despite the failed read" : "no such read", default: 0] +=
                    1
                try recovered.close()
            } catch let error as StorageError {
                switch error {
                case .io: outcomes["io", default: 0] += 1
                default:
                    let file = "\(error)".contains("strata.wal") ? "log" : "page file"
                    outcomes["corruption blamed on the \(file)", default: 0] += 1
                    Issue.record("read \(index) failed once: open reported \(error), not an I/O error")
                }
            }
        }
        print("RecoveryReadErrorTests: \(operations) operations: \(outcomes)")
        #expect(outcomes["io", default: 0] > 0)
    }
}
