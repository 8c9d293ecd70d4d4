import Foundation
import Logging
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Injected I/O errors: a full disk, an I/O error, a short write, on every kind of file the engine writes.
/// A failed commit throws a typed error and leaves no trace; the store stays open and consistent, and
/// later commits succeed once the fault is gone; a failed checkpoint loses nothing.
@Suite struct FaultInjectionTests {
    /// - Parameter largeTransactionBytes: small values make transactions with a long value large (FORMAT.md, "Large
    ///   transactions").
    static func configuration(
        _ durability: StoreConfiguration.Durability = .full, largeTransactionBytes: UInt64 = 8 << 20
    ) -> StoreConfiguration {
        StoreConfiguration(
            durability: durability, pageSize: 512, checkpointThresholdBytes: 1 << 30,
            largeTransactionBytes: largeTransactionBytes,
            logger: Logger(label: "fault-test") { _ in SwiftLogNoOpLogHandler() })
    }

    /// A store on a fault-injecting in-memory file system, with table "t".
    struct Fixture {
        let memory = InMemoryFileSystem()
        let faulty: FaultInjectingFileSystem
        let store: Store
        let table: TableID

        init(_ durability: StoreConfiguration.Durability = .full, largeTransactionBytes: UInt64 = 8 << 20) throws {
            try memory.createDirectory(at: "/db")
            try memory.syncDirectory(at: "/")
            faulty = FaultInjectingFileSystem(wrapping: memory)
            store = try Store.open(
                at: "/db",
                configuration: FaultInjectionTests.configuration(
                    durability, largeTransactionBytes: largeTransactionBytes),
                fileSystem: faulty)
            table = try store.write { try $0.createTable(named: "t") }
        }

        func rows(_ store: Store? = nil) throws -> [UInt64: [UInt8]] {
            var rows: [UInt64: [UInt8]] = [:]
            let snapshot = (store ?? self.store).snapshot()
            try snapshot.forEachRow(in: snapshot.table(named: "t")!) { id, bytes in
                rows[id.rawValue] = Array(bytes)
                return true
            }
            return rows
        }

        /// The rows a store recovered from a power loss right now would hold.
        func rowsAfterPowerLoss() throws -> [UInt64: [UInt8]] {
            let image = memory.crashImage()
            let recovered = try Store.open(
                at: "/db", configuration: FaultInjectionTests.configuration(), fileSystem: image)
            defer { try? recovered.close() }
            #expect(try recovered.verify().isClean)
            var rows: [UInt64: [UInt8]] = [:]
            let snapshot = recovered.snapshot()
            try snapshot.forEachRow(in: snapshot.table(named: "t")!) { id, bytes in
                rows[id.rawValue] = Array(bytes)
                return true
            }
            return rows
        }
    }

    static func expectIOError(_ code: IOError.Code, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected an I/O error \(code)")
        } catch StorageError.io(let error) {
            #expect(error.code == code)
        } catch {
            Issue.record("expected an I/O error \(code), got \(error)")
        }
    }

    @Test(arguments: [IOError.Code.noSpace, .ioFailure])
    func failedLogWriteLeavesNoTraceAndLaterCommitsSucceed(code: IOError.Code) throws {
        let fixture = try Fixture()
        try fixture.store.write { _ = try $0.insert([1], into: fixture.table) }
        fixture.faulty.inject(.init(on: [.write], code: code, pathContaining: "strata.wal"))
        Self.expectIOError(code) { try fixture.store.write { _ = try $0.insert([2], into: fixture.table) } }
        #expect(try fixture.rows() == [1: [1]])
        try fixture.store.write { _ = try $0.insert([3], into: fixture.table) }
        #expect(try fixture.rows() == [1: [1], 2: [3]])
        #expect(try fixture.rowsAfterPowerLoss() == [1: [1], 2: [3]])
        #expect(try fixture.store.verify().isClean)
    }

    @Test func shortLogWriteIsCutBackAndLaterCommitsSucceed() throws {
        let fixture = try Fixture()
        fixture.faulty.inject(
            .init(on: [.write], code: .noSpace, pathContaining: "strata.wal", shortWriteFraction: 0.5))
        Self.expectIOError(.noSpace) {
            try fixture.store.write { _ = try $0.insert([UInt8](repeating: 9, count: 300), into: fixture.table) }
        }
        try fixture.store.write { _ = try $0.insert([4], into: fixture.table) }
        #expect(try fixture.rows() == [1: [4]])
        #expect(try fixture.rowsAfterPowerLoss() == [1: [4]])
    }

    @Test func failedLogSyncInFullDurabilityIsUndoneAndLaterCommitsSucceed() throws {
        let fixture = try Fixture()
        try fixture.store.write { _ = try $0.insert([1], into: fixture.table) }
        fixture.faulty.inject(.init(on: [.sync], code: .ioFailure, pathContaining: "strata.wal"))
        Self.expectIOError(.ioFailure) { try fixture.store.write { _ = try $0.insert([2], into: fixture.table) } }
        #expect(try fixture.rows() == [1: [1]])
        try fixture.store.write { _ = try $0.insert([3], into: fixture.table) }
        // The failed transaction's row ID is allocated again: it never existed.
        #expect(try fixture.rows() == [1: [1], 2: [3]])
        #expect(try fixture.rowsAfterPowerLoss() == [1: [1], 2: [3]])
        try fixture.store.close()
        let reopened = try Store.open(at: "/db", configuration: Self.configuration(), fileSystem: fixture.memory)
        #expect(try fixture.rows(reopened) == [1: [1], 2: [3]])
        #expect(try reopened.verify().isClean)
    }

    @Test func failedLogSyncWithoutFullDurabilityStopsWritesUntilReopen() throws {
        let fixture = try Fixture(.off)
        try fixture.store.write { _ = try $0.insert([1], into: fixture.table) }
        fixture.faulty.inject(.init(on: [.sync], code: .ioFailure, pathContaining: "strata.wal"))
        Self.expectIOError(.ioFailure) { try fixture.store.checkpoint() }
        do {
            try fixture.store.write { _ = try $0.insert([2], into: fixture.table) }
            Issue.record("a write after a failed sync must be refused")
        } catch StorageError.io, StorageError.storeFailed {}
        fixture.faulty.clearFaults()
        try? fixture.store.close()
        let reopened = try Store.open(at: "/db", configuration: Self.configuration(), fileSystem: fixture.memory)
        #expect(try reopened.verify().isClean)
    }

    @Test(arguments: [IOError.Code.noSpace, .ioFailure])
    func failedCheckpointKeepsThePreviousCheckpointAndLosesNothing(code: IOError.Code) throws {
        let fixture = try Fixture()
        for value in 0..<50 { try fixture.store.write { _ = try $0.insert([UInt8(value)], into: fixture.table) } }
        try fixture.store.checkpoint()
        for value in 50..<120 { try fixture.store.write { _ = try $0.insert([UInt8(value)], into: fixture.table) } }
        fixture.faulty.inject(
            .init(on: [.write], after: 1, code: code, persistent: true, pathContaining: "strata.pages"))
        Self.expectIOError(code) { try fixture.store.checkpoint() }
        let expected = Dictionary(uniqueKeysWithValues: (0..<120).map { (UInt64($0 + 1), [UInt8($0)]) })
        #expect(try fixture.rows() == expected)
        #expect(try fixture.rowsAfterPowerLoss() == expected)
        // Commits go on while the page file cannot be written.
        try fixture.store.write { _ = try $0.insert([200], into: fixture.table) }
        fixture.faulty.clearFaults()
        try fixture.store.checkpoint()
        var all = expected
        all[121] = [200]
        #expect(try fixture.rows() == all)
        #expect(try fixture.rowsAfterPowerLoss() == all)
        #expect(try fixture.store.verify().isClean)
    }

    @Test func failedBlobWriteAbortsItsTransactionOnly() throws {
        let fixture = try Fixture()
        fixture.faulty.inject(.init(on: [.write], code: .noSpace, pathContaining: "blob-"))
        Self.expectIOError(.noSpace) {
            try fixture.store.write { txn in
                let blob = try txn.storeBlob([UInt8](repeating: 7, count: 5000))
                _ = try txn.insert(withUnsafeBytes(of: blob.rawValue) { Array($0) }, into: fixture.table)
            }
        }
        #expect(try fixture.rows().isEmpty)
        let blob = try fixture.store.write { txn in try txn.storeBlob([UInt8](repeating: 8, count: 5000)) }
        #expect(try fixture.store.snapshot().readBlob(blob) == [UInt8](repeating: 8, count: 5000))
        #expect(try fixture.store.verify().isClean)
    }

    @Test func failedPageReadIsATypedError() throws {
        let fixture = try Fixture()
        for value in 0..<200 {
            try fixture.store.write { _ = try $0.insert([UInt8(value % 256)], into: fixture.table) }
        }
        try fixture.store.close()
        let faulty = FaultInjectingFileSystem(wrapping: fixture.memory)
        let store = try Store.open(at: "/db", configuration: Self.configuration(), fileSystem: faulty)
        faulty.inject(.init(on: [.read], code: .ioFailure, persistent: true, pathContaining: "strata.pages"))
        Self.expectIOError(.ioFailure) { _ = try store.snapshot().row(RowID(100), in: fixture.table) }
        faulty.clearFaults()
        #expect(try store.snapshot().row(RowID(100), in: fixture.table) == [99])
    }

    /// One transient fault at every operation index of a workload, in turn: every commit either succeeds
    /// or throws and leaves nothing; at the end the store (and what survives a power loss) holds exactly the
    /// transactions that succeeded.
    ///
    /// With `largeTransactionBytes` 500, every transaction with a 700-byte value is large: it commits by writing its
    /// pages, and a fault after its root record is written (its sync, the new log) must neither lose it once
    /// acknowledged nor let it appear once refused.
    @Test(arguments: [UInt64(8 << 20), 500])
    func aFaultAtEveryOperationLosesNothingAndAppliesNothingThatFailed(largeTransactionBytes: UInt64) throws {
        var tried = 0
        var largeCommits = 0
        var operationIndex = 0
        var exhausted = false
        let kinds: [(IOError.Code, Double?)] = [(.noSpace, nil), (.ioFailure, nil), (.noSpace, 0.5)]
        while !exhausted {
            let (code, fraction) = kinds[operationIndex % kinds.count]
            let fixture = try Fixture(largeTransactionBytes: largeTransactionBytes)
            fixture.faulty.inject(
                .init(
                    on: [.write, .sync, .truncate, .rename, .syncDirectory, .open], after: operationIndex, code: code,
                    shortWriteFraction: fraction))
            var model: [UInt64: [UInt8]] = [:]
            var nextRow: UInt64 = 1
            for k in 0..<40 {
                let value = [UInt8(k)] + [UInt8](repeating: UInt8(k), count: k % 7 == 0 ? 700 : k)
                let victim = k % 5 == 4 ? model.keys.min() : nil
                do {
                    try fixture.store.write { txn in
                        _ = try txn.insert(value, into: fixture.table)
                        if let victim { _ = try txn.delete(RowID(victim), from: fixture.table) }
                        if k % 9 == 8 { _ = try txn.storeBlob([UInt8](repeating: UInt8(k), count: 3000)) }
                    }
                    model[nextRow] = value
                    nextRow += 1
                    if let victim { model[victim] = nil }
                } catch StorageError.io {
                } catch StorageError.storeFailed {
                    // A failed large commit whose pages could not be cut off: nothing more is written here.
                    #expect(largeTransactionBytes < 8 << 20)
                    break
                }
                if k % 7 == 6 { try? fixture.store.checkpoint() }
            }
            largeCommits = max(largeCommits, fixture.store.statistics.largeCommitCount)
            exhausted = fixture.faulty.failuresInjected == 0
            if !exhausted {
                tried += 1
                #expect(try fixture.rows() == model, "operation \(operationIndex)")
                #expect(try fixture.rowsAfterPowerLoss() == model, "operation \(operationIndex)")
                #expect(try fixture.store.verify().isClean, "operation \(operationIndex)")
                try fixture.store.close()
                let reopened = try Store.open(
                    at: "/db", configuration: Self.configuration(), fileSystem: fixture.memory)
                #expect(try fixture.rows(reopened) == model, "operation \(operationIndex) after reopen")
                try reopened.close()
            }
            operationIndex += 1
        }
        print("injected errors tried: \(tried)")
        #expect(tried > 100)
        #expect(largeTransactionBytes < 8 << 20 ? largeCommits >= 5 : largeCommits == 0)
    }
}
