import Foundation
import Logging
import StrataFormat
import StrataIO
import StrataLock
import StrataTestSupport
import StrataWorkload
import Testing

@testable import StrataStorage

/// Compaction (Sources/StrataStorage/Compaction/, FORMAT.md §8): it keeps every row, row ID allocator and
/// blob, reclaims dead pages and dead blob bytes, leaves a store that takes further writes, refuses a store
/// that is open, changes nothing when it fails, and a crash at any instant of it leaves either the old store
/// or the new one.
@Suite struct CompactionTests {
    static let directory = TemporaryStore.directory

    /// Everything a store shows: its tables (rows, IDs, next row IDs) and its blobs.
    struct Contents: Equatable, CustomStringConvertible {
        var model: ReferenceModel
        var blobs: [UInt64: [UInt8]]

        static func capture(_ store: Store) throws -> Contents {
            let snapshot = store.snapshot()
            var blobs: [UInt64: [UInt8]] = [:]
            try snapshot.forEachBlob { blob, _ in
                blobs[blob.rawValue] = try snapshot.readBlob(blob)
                return true
            }
            return Contents(model: try ReferenceModel.capture(snapshot), blobs: blobs)
        }

        var description: String { "\(model), \(blobs.count) blobs" }
    }

    static func configuration(pageSize: Int = 512, segmentLimit: UInt64 = 64 << 10) -> StoreConfiguration {
        var configuration = StoreConfiguration.testing(pageSize: pageSize)
        configuration.blobSegmentSizeLimit = segmentLimit
        return configuration
    }

    static func compact(
        _ fileSystem: any FileSystem, configuration: StoreConfiguration = configuration(), bufferPages: Int = 256
    ) throws -> CompactionReport {
        try Store.compact(
            at: directory, configuration: configuration, fileSystem: fileSystem, progress: nil, bufferPages: bufferPages
        )
    }

    /// Opens, captures, verifies and closes the store of `fileSystem`.
    static func inspect(
        _ fileSystem: any FileSystem, configuration: StoreConfiguration = configuration()
    ) throws -> (Contents, VerificationReport) {
        let store = try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
        defer { try? store.close() }
        return (try Contents.capture(store), try store.verify())
    }

    static func size(_ fileSystem: InMemoryFileSystem, _ name: String) -> UInt64 {
        fileSystem.fileSize(of: StoreFileNames.path(directory, name)) ?? 0
    }

    /// A store with history: the seeded crash workload (tables, inserts, updates, deletes, overflow values,
    /// blobs stored and deleted, checkpoints), then many updates and deletes and a few blobs more.
    static func storeWithHistory(seed: UInt64, closeCleanly: Bool = true) throws -> InMemoryFileSystem {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.open(at: directory, configuration: configuration(), fileSystem: fileSystem)
        let workload = CrashWorkload(seed: seed)
        for k in workload.transactions.indices { try workload.run(k, on: store) }
        var random = RepeatableRandomNumberGenerator(seed: seed ^ 0xC0_4AC7)
        try store.write { txn in
            let table = try txn.createTable(named: "history")
            for index in 0..<400 { try txn.insert(random.bytes(Int(random.next() % 200) + index % 3), into: table) }
        }
        try store.checkpoint()
        for round in 0..<4 {
            try store.write { txn in
                let table = txn.table(named: "history")!
                for row in stride(from: UInt64(1 + round), through: 400, by: 4) {
                    if round % 2 == 0 {
                        try txn.update(RowID(row), in: table, to: random.bytes(Int(random.next() % 300)))
                    } else {
                        try txn.delete(RowID(row), from: table)
                    }
                }
                let blob = try txn.storeBlob(random.bytes(3000 + round * 10_000))
                try txn.insert(Array("blob \(blob.rawValue)".utf8), into: table)
                if round == 3 { try txn.deleteBlob(BlobID(blob.rawValue - 1)) }
            }
            try store.checkpoint()
        }
        // Commits after the last checkpoint: only the log holds them unless the store is closed.
        try store.write { txn in
            let table = txn.table(named: "history")!
            for row in stride(from: UInt64(3), through: 400, by: 8) { try txn.delete(RowID(row), from: table) }
            try txn.insert(random.bytes(2_000), into: table)
            _ = try txn.storeBlob(random.bytes(9_000))
        }
        try store.write { txn in try txn.update(RowID(1), in: txn.table(named: "history")!, to: [7, 7, 7]) }
        if closeCleanly { try store.close() }
        return fileSystem
    }

    // MARK: - Contents and space

    @Test(arguments: [UInt64(1), 2, 3])
    func compactionKeepsEveryRowAndBlobAndReclaimsTheDeadSpace(seed: UInt64) throws {
        let fileSystem = try Self.storeWithHistory(seed: seed)
        let (before, reportBefore) = try Self.inspect(fileSystem)
        #expect(reportBefore.isClean && reportBefore.unreferencedPages > 0 && reportBefore.orphanedBlobBytes > 0)
        let pageFileBefore = Self.size(fileSystem, StoreFileNames.pageFile)

        let report = try Self.compact(fileSystem)
        // What the report counts is what the directory holds, every file of the store included.
        let files = try fileSystem.contentsOfDirectory(at: Self.directory)
        #expect(report.bytesAfter == files.reduce(0) { $0 + Self.size(fileSystem, $1) }, "\(files)")
        let (after, verification) = try Self.inspect(fileSystem)
        #expect(after == before, "the compacted store differs: \(after) vs \(before)")
        #expect(verification.isClean, "\(verification)")
        #expect(verification.unreferencedPages == 0, "only live pages are left: \(verification)")
        #expect(verification.orphanedBlobBytes == 0, "only live blob bytes are left: \(verification)")
        #expect(report.pageFileBytesBefore == pageFileBefore)
        #expect(report.pageFileBytesAfter == Self.size(fileSystem, StoreFileNames.pageFile))
        #expect(report.pageFileBytesAfter < pageFileBefore / 2, "\(report)")
        #expect(report.bytesReclaimed == report.bytesBefore - report.bytesAfter && report.bytesReclaimed > 0)
        #expect(report.blobsCopied == before.blobs.count)
        #expect(report.rowCount == verification.rowCount)
        #expect(report.cleanupFailure == nil)
        // The old segments are gone; the new ones come after them.
        let segments = try fileSystem.contentsOfDirectory(at: Self.directory).compactMap(
            BlobSegmentFormat.segmentID(fileName:))
        #expect(segments == report.segmentsAfter)
        #expect(report.segmentsAfter.allSatisfy { $0 > (report.segmentsBefore.max() ?? 0) })
        #expect(!fileSystem.exists(at: StoreFileNames.path(Self.directory, StoreFileNames.pageFileCompacted)))
        // Compacting again changes nothing but the segment numbers.
        let again = try Self.compact(fileSystem)
        #expect(
            again.pageFileBytesAfter == report.pageFileBytesAfter && again.segmentBytesAfter == report.segmentBytesAfter
        )
        #expect(try Self.inspect(fileSystem).0 == before)
    }

    /// The issue's figure: deleting half the rows and compacting gives back at least 40% of the page file.
    @Test func deletingHalfTheRowsThenCompactingReclaimsAtLeastFortyPercent() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let configuration = Self.configuration(pageSize: 4096)
        let store = try Store.open(at: Self.directory, configuration: configuration, fileSystem: fileSystem)
        var random = RepeatableRandomNumberGenerator(seed: 40)
        try store.write { txn in
            let table = try txn.createTable(named: "employee")
            for _ in 0..<20_000 { try txn.insert(random.bytes(40 + Int(random.next() % 60)), into: table) }
        }
        try store.checkpoint()
        try store.write { txn in
            let table = txn.table(named: "employee")!
            for row in 1...10_000 { try txn.delete(RowID(UInt64(row * 2)), from: table) }
        }
        try store.close()
        let (before, _) = try Self.inspect(fileSystem, configuration: configuration)
        let report = try Self.compact(fileSystem, configuration: configuration)
        let (after, verification) = try Self.inspect(fileSystem, configuration: configuration)
        #expect(after == before)
        #expect(verification.isClean)
        let reclaimed =
            Double(report.pageFileBytesBefore - report.pageFileBytesAfter) / Double(report.pageFileBytesBefore)
        print(
            "compaction after deleting half of 20,000 rows: page file \(report.pageFileBytesBefore) -> \(report.pageFileBytesAfter) bytes (\(Int(reclaimed * 100))% reclaimed)"
        )
        #expect(reclaimed >= 0.4)
    }

    /// FORMAT.md §8.3: 37 rows of 24 bytes at 512-byte pages compact into three leaves of 18, 18 and 1 rows,
    /// one internal node and the root record.
    @Test func theWorkedExampleOfFormatMD() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.open(at: Self.directory, configuration: Self.configuration(), fileSystem: fileSystem)
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            for index in 0..<37 { try txn.insert(Array(repeating: UInt8(index), count: 24), into: table) }
        }
        try store.checkpoint()
        try store.close()
        let report = try Self.compact(fileSystem)
        #expect(report.pageFileBytesAfter == 6 * 512)
        let reader = try ReadOnlyStore.open(at: Self.directory, fileSystem: fileSystem)
        defer { reader.close() }
        let listing = try reader.pageListing()
        #expect(listing.map(\.kind) == ["header", "leaf", "leaf", "leaf", "internal", "root record"])
        #expect(listing[1...3].map(\.itemCount) == [18, 18, 1])
        #expect(listing[4].itemCount == 3 && listing[4].extra == 1)
        let separators = try reader.annotatedPage(4).filter { $0.note.hasPrefix("separator") }.map(\.note)
        #expect(separators == ["separator 19", "separator 37"])
        let record = try reader.annotatedPage(5).map(\.note)
        #expect(
            record.contains("root page 4") && record.contains("height 2")
                && record.contains("previous root record: none"))
        #expect(record.contains("next table ID 2") && record.contains("name 't'"))
    }

    /// Trees of every shape the bulk load can end in: empty, one leaf, a last leaf or internal node with
    /// a single entry (merged with the one before), several levels; overflow values among them.
    @Test(arguments: [0, 1, 2, 17, 18, 19, 40, 300, 301, 2_000, 9_000])
    func treesOfEverySizeAreRebuiltValid(rows: Int) throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.open(at: Self.directory, configuration: Self.configuration(), fileSystem: fileSystem)
        var random = RepeatableRandomNumberGenerator(seed: UInt64(rows))
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            _ = try txn.createTable(named: "empty")
            for index in 0..<rows {
                let length = index % 97 == 5 ? 1_500 : Int(random.next() % 24)
                try txn.insert(random.bytes(length), into: table)
            }
        }
        try store.close()
        let (before, _) = try Self.inspect(fileSystem)
        _ = try Self.compact(fileSystem)
        let (after, verification) = try Self.inspect(fileSystem)
        #expect(after == before)
        #expect(verification.isClean, "\(verification)")
        #expect(verification.unreferencedPages == 0)
    }

    /// A compacted store is an ordinary store: random transactions, checkpoints and reopenings on it keep
    /// matching a model (the bulk-loaded full nodes split and merge like any others).
    @Test func aCompactedStoreTakesFurtherWrites() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let configuration = Self.configuration()
        var workload = RandomWorkload(seed: 0xC0FE, pageSize: 512)
        var store = try Store.open(at: Self.directory, configuration: configuration, fileSystem: fileSystem)
        for _ in 0..<150 { try workload.runTransaction(on: store) }
        try store.close()
        for round in 0..<4 {
            _ = try Self.compact(fileSystem)
            store = try Store.open(at: Self.directory, configuration: configuration, fileSystem: fileSystem)
            workload.model.assertMatches(store.snapshot(), "after compaction \(round)")
            for step in 0..<80 {
                try workload.runTransaction(on: store, maximumOperations: 12)
                if step % 25 == 0 { try store.checkpoint() }
            }
            workload.model.assertMatches(store.snapshot(), "round \(round)")
            let report = try store.verify()
            #expect(report.isClean, "\(report)")
            try store.close()
        }
    }

    /// A store whose log holds commits the page file does not (it was not closed) is checkpointed first.
    @Test func commitsStillInTheLogAreCompactedToo() throws {
        let live = try Self.storeWithHistory(seed: 9, closeCleanly: false)
        let crashed = live.crashImage()
        let (before, _) = try Self.inspect(crashed.crashImage())
        let report = try Self.compact(crashed)
        #expect(report.checkpointedFirst)
        let (after, verification) = try Self.inspect(crashed)
        #expect(after == before)
        #expect(verification.isClean && verification.walRecords == 0)
    }

    // MARK: - Refusals and failures

    @Test func aStoreOpenElsewhereIsRefused() throws {
        let fileSystem = try Self.storeWithHistory(seed: 4)
        let store = try Store.open(at: Self.directory, configuration: Self.configuration(), fileSystem: fileSystem)
        #expect(throws: StorageError.storeInUse(path: Self.directory, processes: [])) { try Self.compact(fileSystem) }
        try store.close()
        _ = try Self.compact(fileSystem)
    }

    @Test func aMissingStoreIsNotCreated() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        #expect(throws: StorageError.storeNotFound(path: "/elsewhere")) {
            try Store.compact(at: "/elsewhere", configuration: Self.configuration(), fileSystem: fileSystem)
        }
        #expect(!fileSystem.exists(at: "/elsewhere"))
    }

    @Test func anEmptyStoreCompacts() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        try Store.open(at: Self.directory, configuration: Self.configuration(), fileSystem: fileSystem).close()
        let report = try Self.compact(fileSystem)
        #expect(report.tableCount == 0 && report.pageFileBytesAfter == 2 * 512)
        let (contents, verification) = try Self.inspect(fileSystem)
        #expect(contents.model.tables.isEmpty && contents.blobs.isEmpty && verification.isClean)
    }

    /// A damaged page stops compaction before its commit point: every file is as it was, the new ones are gone.
    @Test func aDamagedStoreIsLeftAsItWas() throws {
        let fileSystem = try Self.storeWithHistory(seed: 5)
        let store = try Store.open(at: Self.directory, configuration: Self.configuration(), fileSystem: fileSystem)
        let roots = try store.snapshot().state.tables.values.compactMap { table -> UInt64? in
            if case .page(let page) = table.root { return page }
            return nil
        }
        try store.close()
        let page = try #require(roots.max())
        try fileSystem.flipByte(at: page * 512 + 100, in: TemporaryStore.pageFile())
        let names = try fileSystem.contentsOfDirectory(at: Self.directory)
        let files = names.map { fileSystem.contents(of: StoreFileNames.path(Self.directory, $0)) }
        #expect(throws: StorageError.self) { try Self.compact(fileSystem) }
        #expect(try fileSystem.contentsOfDirectory(at: Self.directory) == names)
        #expect(names.map { fileSystem.contents(of: StoreFileNames.path(Self.directory, $0)) } == files)
    }

    /// What an interrupted compaction leaves (a partial `strata.pages.compact`, a new segment nothing
    /// references) is ignored by open and verification, and removed by the next compaction.
    @Test func leftoversOfAnInterruptedCompactionAreIgnoredThenRemoved() throws {
        let fileSystem = try Self.storeWithHistory(seed: 6)
        let (before, _) = try Self.inspect(fileSystem)
        let highest =
            try fileSystem.contentsOfDirectory(at: Self.directory)
            .compactMap(BlobSegmentFormat.segmentID(fileName:)).max() ?? 0
        try fileSystem.setContents(
            Array(repeating: 0xAB, count: 5000),
            of: StoreFileNames.path(Self.directory, StoreFileNames.pageFileCompacted))
        let store = try Store.open(at: Self.directory, configuration: Self.configuration(), fileSystem: fileSystem)
        let garbage = BlobSegmentHeader(storeID: store.storeID, segmentID: highest + 1).encoded() + [1, 2, 3]
        try store.close()
        try fileSystem.setContents(
            garbage, of: StoreFileNames.path(Self.directory, BlobSegmentFormat.fileName(segment: highest + 1)))
        let (withLeftovers, report) = try Self.inspect(fileSystem)
        #expect(withLeftovers == before && report.isClean, "\(report)")
        _ = try Self.compact(fileSystem)
        let names = try fileSystem.contentsOfDirectory(at: Self.directory)
        #expect(!names.contains(StoreFileNames.pageFileCompacted))
        #expect(!names.contains(BlobSegmentFormat.fileName(segment: highest + 1)))
        let (after, clean) = try Self.inspect(fileSystem)
        #expect(after == before && clean.isClean && clean.orphanedBlobBytes == 0)
    }

    /// An injected failure (a full disk, or a write cut short) at every file-system operation of a
    /// compaction, one at a time: compaction throws (or, if only the removal of old segments failed,
    /// succeeds and says so), and the store opens with everything, verifies clean, both as the file system
    /// is and after a power loss right then.
    @Test(arguments: [false, true])
    func aFailureAtAnyOperationLeavesTheStoreWithEverything(shortWrite: Bool) throws {
        let base = try Self.storeWithHistory(seed: 11)
        let (expected, _) = try Self.inspect(base.crashImage())
        let counting = FaultInjectingFileSystem(wrapping: base.crashImage())
        _ = try Self.compact(counting, bufferPages: 4)
        let operations = counting.operationCount
        var thrown = 0
        var cleanupFailures = 0
        var failures: [String] = []
        for index in 0..<operations {
            let image = base.crashImage()
            let faulty = FaultInjectingFileSystem(wrapping: image)
            faulty.inject(
                .init(
                    on: shortWrite ? [.write] : Set(FaultInjectingFileSystem.Operation.allCases), after: index,
                    code: shortWrite ? .ioFailure : .noSpace, shortWriteFraction: shortWrite ? 0.5 : nil))
            do {
                let report = try Self.compact(faulty, bufferPages: 4)
                if report.cleanupFailure != nil { cleanupFailures += 1 }
            } catch { thrown += 1 }
            for (name, fileSystem) in [("as is", image), ("after power loss", image.crashImage())] {
                do {
                    let (contents, report) = try Self.inspect(fileSystem)
                    if contents != expected { failures.append("operation \(index) \(name): contents differ") }
                    if !report.isClean { failures.append("operation \(index) \(name): \(report.problems.prefix(2))") }
                } catch { failures.append("operation \(index) \(name): \(error)") }
            }
            if shortWrite, faulty.failuresInjected == 0 { break }  // past the last write
        }
        print(
            "compaction \(shortWrite ? "short writes" : "ENOSPC") injected at \(operations) operations: "
                + "\(thrown) threw, \(cleanupFailures) succeeded with old segments left, \(failures.count) failures")
        for failure in failures.prefix(10) { print("failure: \(failure)") }
        #expect(failures.isEmpty)
        #expect(thrown > 20)
    }

    // MARK: - Crash points

    final class Tally: Sendable {
        struct Counts {
            var crashPoints = 0
            var oldStore = 0
            var newStore = 0
            var failures: [String] = []
        }
        let counts = Lock(Counts())
    }

    static let mutating: Set<FaultInjectingFileSystem.Operation> = [
        .write, .truncate, .sync, .rename, .removeFile, .syncDirectory, .createDirectory, .open,
    ]

    /// Crash-point enumeration over compaction: after every operation that can change the file system, the
    /// power goes (three policies: unsynced writes dropped; a random prefix kept, the last write torn; the same
    /// with the torn sector garbled); the store recovered from that picture must hold exactly what it held
    /// before compaction and verify clean. Half the stores start with commits still in the log, so the
    /// checkpoint compaction begins with is crashed too.
    @Test func everyCrashPointLeavesTheOldStoreOrTheNewOne() throws {
        let seeds: [UInt64] = TestEnvironment.seedOverride.map { [$0] } ?? Array(1...12)
        var total = Tally.Counts()
        for seed in seeds {
            let counts = try crashDuringCompaction(seed: seed)
            total.crashPoints += counts.crashPoints
            total.oldStore += counts.oldStore
            total.newStore += counts.newStore
            total.failures += counts.failures
        }
        print(
            "compaction crash points checked: \(total.crashPoints) (old store \(total.oldStore), new store "
                + "\(total.newStore)), failures: \(total.failures.count)")
        for failure in total.failures.prefix(20) { print("compaction crash failure: \(failure)") }
        #expect(total.failures.isEmpty)
        #expect(total.crashPoints >= (TestEnvironment.seedOverride == nil ? 3_000 : 1))
        #expect(total.oldStore > 0 && total.newStore > 0)
    }

    func crashDuringCompaction(seed: UInt64) throws -> Tally.Counts {
        let live = try Self.storeWithHistory(seed: seed, closeCleanly: seed % 2 == 0)
        let base = live.crashImage()
        let (expected, _) = try Self.inspect(base.crashImage())
        let pageFileBefore = Self.size(base, StoreFileNames.pageFile)
        let tally = Tally()
        let faulty = FaultInjectingFileSystem(wrapping: base) { index, operation in
            guard Self.mutating.contains(operation) else { return }
            let mixed = seed &* 1_000_003 &+ UInt64(index)
            let policies: [InMemoryFileSystem.CrashPolicy] = [
                .dropUnsynced, .keepUnsyncedPrefix(seed: mixed), .garbleLastSector(seed: mixed),
            ]
            for (number, policy) in policies.enumerated() {
                let image = base.crashImage(policy: policy)
                let isNew = Self.size(image, StoreFileNames.pageFile) < pageFileBefore
                var failure: String?
                do {
                    let (contents, report) = try Self.inspect(image)
                    if contents != expected {
                        failure = "contents differ (\(contents) vs \(expected))"
                    } else if !report.isClean {
                        failure = "verification: \(report.problems.prefix(3))"
                    }
                } catch { failure = "recovery failed: \(error)" }
                tally.counts.withLock { counts in
                    counts.crashPoints += 1
                    if isNew { counts.newStore += 1 } else { counts.oldStore += 1 }
                    if let failure {
                        counts.failures.append(
                            "seed \(seed) operation \(index) (\(operation)) policy \(number): \(failure)")
                    }
                }
            }
        }
        let report = try Self.compact(faulty, bufferPages: 4)
        #expect(report.bytesReclaimed > 0)
        let (after, verification) = try Self.inspect(base)
        #expect(after == expected && verification.isClean, "seed \(seed)")
        return tally.counts.withLock { $0 }
    }
}

// MARK: - W11 and W12 (WORKLOAD.md)

/// W11 (full verification of the N-row store) and W12 (compaction after W7 and W8) at the engine level, with
/// SQLite's `PRAGMA integrity_check` and `VACUUM` on the same data when `sqlite3` is installed. On demand, in
/// release: `STRATA_W11_EMPLOYEES=1000000 swift test -c release -Xswiftc -enable-testing --filter w11w12`.
@Suite struct WorkloadW11W12Tests {
    static let employees = Int(ProcessInfo.processInfo.environment["STRATA_W11_EMPLOYEES"] ?? "") ?? 0

    /// Employee rows as the object graph writes them (FORMAT.md §6): entity 2 with name, salary, hired date,
    /// photo (nil) and department; department rows are entity 1 with name and budget.
    static func employeeRow(_ employee: Employee, version: UInt64 = 1) -> [UInt8] {
        RowRecord.encode(
            entityID: 2, rowVersion: version,
            fields: [
                .string(employee.name), .int64(employee.salary),
                .date(secondsSinceReferenceDate: employee.hired - 978_307_200),
                .null, .reference(UInt64(employee.department)),
            ])
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    static func directoryBytes(_ path: String) throws -> UInt64 {
        try FileManager.default.contentsOfDirectory(atPath: path).reduce(0) { total, name in
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + name)
            return total + ((attributes[.size] as? NSNumber)?.uint64Value ?? 0)
        }
    }

    @discardableResult
    static func sqlite(_ database: String, _ script: String) throws -> (output: String, seconds: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(script.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        // `.timer on` prints "Run Time: real 0.123 user ... sys ..." after each statement: the last one is timed.
        let times = text.split(separator: "\n").filter { $0.hasPrefix("Run Time: real ") }
        let last = times.last.flatMap { Double($0.dropFirst("Run Time: real ".count).prefix { $0 != " " }) } ?? 0
        return (text, last)
    }

    @Test(.enabled(if: employees > 0)) func w11w12Figures() throws {
        try TemporaryStore.withPosixDirectory { root in
            let path = root + "/store"
            let workload = CompanyWorkload(employeeCount: Self.employees)
            let clock = ContinuousClock()
            var configuration = StoreConfiguration.testing(durability: .off, checkpointThresholdBytes: 64 << 20)
            var store = try Store.open(at: path, configuration: configuration)
            try store.write { txn in
                let departments = try txn.createTable(named: "entity.Department")
                let employees = try txn.createTable(named: "entity.Employee")
                for department in workload.departments {
                    try txn.insert(
                        RowRecord.encode(
                            entityID: 1, rowVersion: 1, fields: [.string(department.name), .double(department.budget)]),
                        into: departments)
                }
                for employee in workload.employees { try txn.insert(Self.employeeRow(employee), into: employees) }
            }
            try store.close()

            // W11: fsck's full verification.
            let storeBytes = try Self.directoryBytes(path)
            let started = clock.now
            let reader = try ReadOnlyStore.open(at: path)
            let report = reader.verify()
            reader.close()
            let w11 = Self.seconds(clock.now - started)
            #expect(report.isClean && report.rowCount == UInt64(Self.employees + 100))

            // W7: 100,000 random salary updates in one transaction; W8: delete departments 1...10 and their employees.
            configuration.durability = .full
            store = try Store.open(at: path, configuration: configuration)
            var random = SplitMix64(seed: 7)
            var updates: [UInt64: Int64] = [:]
            try store.write { txn in
                let employees = txn.table(named: "entity.Employee")!
                for _ in 0..<100_000 {
                    let id = random.uniform(1, UInt64(Self.employees))
                    let salary = Int64(random.uniform(30_000, 200_000))
                    var (header, fields) = try RowRecord.decodeAll(try txn.row(RowID(id), in: employees)!)
                    fields[1] = .int64(salary)
                    try txn.update(
                        RowID(id), in: employees,
                        to: RowRecord.encode(entityID: 2, rowVersion: header.rowVersion + 1, fields: fields))
                    updates[id] = salary
                }
            }
            var deleted = 0
            try store.write { txn in
                let employees = txn.table(named: "entity.Employee")!
                var doomed: [RowID] = []
                try txn.forEachRow(in: employees) { row, bytes in
                    if case .reference(let department) = try RowRecord.field(at: 4, in: bytes), department <= 10 {
                        doomed.append(row)
                    }
                    return true
                }
                for row in doomed { try txn.delete(row, from: employees) }
                for department in 1...10 {
                    try txn.delete(RowID(UInt64(department)), from: txn.table(named: "entity.Department")!)
                }
                deleted = doomed.count
            }
            try store.close()

            // W12: compaction.
            let compaction = try Store.compact(at: path, configuration: configuration)
            #expect(compaction.bytesReclaimed > 0)
            let after = try ReadOnlyStore.open(at: path)
            #expect(after.verify().isClean)
            after.close()
            let megabytes = { (bytes: UInt64, seconds: Double) in Double(bytes) / 1_048_576 / seconds }
            print(
                String(
                    format: "W11.engine strata: %.1f MB/s (%.3f s for %@ bytes, %@ rows)", megabytes(storeBytes, w11),
                    w11,
                    "\(storeBytes)", "\(report.rowCount)"))
            print(
                String(
                    format:
                        "W12.engine strata: %.1f MB/s (%.3f s for %@ bytes), %@ bytes reclaimed (%@ -> %@); W8 deleted %d employees",
                    megabytes(compaction.bytesBefore, compaction.seconds), compaction.seconds,
                    "\(compaction.bytesBefore)",
                    "\(compaction.bytesReclaimed)", "\(compaction.bytesBefore)", "\(compaction.bytesAfter)", deleted))

            // SQLite on the same data.
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { return }
            var departmentsCSV = ""
            for (index, department) in workload.departments.enumerated() {
                departmentsCSV += "\(index + 1),\(department.name),\(department.budget)\n"
            }
            try departmentsCSV.write(toFile: root + "/departments.csv", atomically: false, encoding: .utf8)
            let employeesFile = FileManager.default.createFile(atPath: root + "/employees.csv", contents: nil)
            #expect(employeesFile)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/employees.csv"))
            var buffer = ""
            for (index, employee) in workload.employees.enumerated() {
                buffer += "\(index + 1),\(employee.name),\(employee.salary),\(employee.hired),\(employee.department)\n"
                if buffer.utf8.count > 1 << 20 {
                    try handle.write(contentsOf: Data(buffer.utf8))
                    buffer = ""
                }
            }
            try handle.write(contentsOf: Data(buffer.utf8))
            try handle.close()
            try updates.map { "\($0.key),\($0.value)" }.joined(separator: "\n").appending("\n")
                .write(toFile: root + "/updates.csv", atomically: false, encoding: .utf8)
            let database = root + "/company.sqlite"
            try Self.sqlite(
                database,
                """
                PRAGMA journal_mode=WAL;
                CREATE TABLE department(id INTEGER PRIMARY KEY, name TEXT NOT NULL, budget REAL NOT NULL);
                CREATE TABLE employee(id INTEGER PRIMARY KEY, name TEXT NOT NULL, salary INTEGER NOT NULL, hired REAL NOT NULL,
                    departmentId INTEGER REFERENCES department(id) ON DELETE CASCADE);
                CREATE INDEX employee_department ON employee(departmentId);
                .mode csv
                .import \(root)/departments.csv department
                .import \(root)/employees.csv employee
                PRAGMA wal_checkpoint(TRUNCATE);
                """)
            let databaseBytes =
                ((try FileManager.default.attributesOfItem(atPath: database)[.size]) as? NSNumber)?.uint64Value ?? 0
            let check = try Self.sqlite(database, ".timer on\nPRAGMA integrity_check;\n")
            #expect(check.output.contains("ok"))
            try Self.sqlite(
                database,
                """
                PRAGMA foreign_keys=ON;
                PRAGMA synchronous=FULL;
                CREATE TEMP TABLE upd(id INTEGER PRIMARY KEY, salary INTEGER);
                .mode csv
                .import \(root)/updates.csv upd
                BEGIN;
                UPDATE employee SET salary = (SELECT salary FROM upd WHERE upd.id = employee.id) WHERE id IN (SELECT id FROM upd);
                COMMIT;
                DELETE FROM department WHERE id <= 10;
                PRAGMA wal_checkpoint(TRUNCATE);
                """)
            let beforeVacuum =
                ((try FileManager.default.attributesOfItem(atPath: database)[.size]) as? NSNumber)?.uint64Value ?? 0
            let vacuum = try Self.sqlite(database, "PRAGMA synchronous=FULL;\n.timer on\nVACUUM;\n")
            try Self.sqlite(database, "PRAGMA wal_checkpoint(TRUNCATE);\n")
            let afterVacuum =
                ((try FileManager.default.attributesOfItem(atPath: database)[.size]) as? NSNumber)?.uint64Value ?? 0
            print(
                String(
                    format: "W11.engine sqlite: %.1f MB/s (%.3f s for %@ bytes)",
                    megabytes(databaseBytes, check.seconds),
                    check.seconds, "\(databaseBytes)"))
            print(
                String(
                    format: "W12.engine sqlite: %.1f MB/s (%.3f s for %@ bytes), %@ bytes reclaimed (%@ -> %@)",
                    megabytes(beforeVacuum, vacuum.seconds), vacuum.seconds, "\(beforeVacuum)",
                    "\(beforeVacuum > afterVacuum ? beforeVacuum - afterVacuum : 0)", "\(beforeVacuum)",
                    "\(afterVacuum)"))
        }
    }
}
