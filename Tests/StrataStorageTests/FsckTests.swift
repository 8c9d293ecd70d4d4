import Foundation
import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// Read-only verification, salvage and annotated dumps (Sources/StrataStorage/Verification/): what
/// `strata fsck`, `strata info` and `strata dump` stand on. Verification never changes a byte; each kind of
/// damage is reported with its file and offset; salvage copies what is readable into a store that
/// verifies clean.
@Suite struct FsckTests {
    static let directory = TemporaryStore.directory
    static let pagePath = TemporaryStore.pageFile()
    static let walPath = TemporaryStore.wal()

    static func segmentPath(_ id: UInt32) -> String {
        StoreFileNames.path(directory, BlobSegmentFormat.fileName(segment: id))
    }

    /// Every file of the directory and its bytes.
    static func files(_ fileSystem: InMemoryFileSystem, _ directory: String = directory) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try fileSystem.contentsOfDirectory(at: directory) {
            files[name] = fileSystem.contents(of: StoreFileNames.path(directory, name))
        }
        return files
    }

    static func verify(_ fileSystem: any FileSystem, checkBlobContents: Bool = true) throws -> VerificationReport {
        let store = try ReadOnlyStore.open(at: directory, fileSystem: fileSystem)
        defer { store.close() }
        return store.verify(checkBlobContents: checkBlobContents)
    }

    /// A store with one table of 300 rows (some long: overflow chains), three blobs, and checkpoints.
    static func simpleStore(pageSize: Int = 512) throws -> (InMemoryFileSystem, CompactionTests.Contents) {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.open(
            at: directory, configuration: CompactionTests.configuration(pageSize: pageSize), fileSystem: fileSystem)
        var random = RepeatableRandomNumberGenerator(seed: 77)
        try store.write { txn in
            let table = try txn.createTable(named: "items")
            for index in 0..<300 { try txn.insert(random.bytes(index % 50 == 0 ? 1_200 : 30), into: table) }
            for length in [100, 5_000, 70_000] { _ = try txn.storeBlob(random.bytes(length)) }
        }
        try store.checkpoint()
        try store.write { txn in
            let table = txn.table(named: "items")!
            for row in stride(from: 1, through: 300, by: 7) {
                try txn.update(RowID(UInt64(row)), in: table, to: random.bytes(20))
            }
        }
        let contents = try CompactionTests.Contents.capture(store)
        try store.close()
        return (fileSystem, contents)
    }

    // MARK: - Clean stores, and nothing changes

    @Test func aHealthyStoreIsCleanAndVerifyingChangesNothing() throws {
        let (fileSystem, contents) = try Self.simpleStore()
        let before = try Self.files(fileSystem)
        let store = try ReadOnlyStore.open(at: Self.directory, fileSystem: fileSystem)
        var progress: [OperationProgress] = []
        let report = store.verify { progress.append($0) }
        #expect(
            try CompactionTests.Contents(model: ReferenceModel.capture(store.snapshot()), blobs: contents.blobs)
                == contents)
        store.close()
        #expect(report.isClean, "\(report)")
        #expect(try Self.files(fileSystem) == before, "verification wrote to the store")
        let items = try #require(report.tables.first { $0.name == "items" })
        #expect(items.rowCount == 300 && items.height >= 2 && items.leafPages > 1 && items.internalPages >= 1)
        #expect(items.overflowPages > 0 && items.unwrittenNodes == 0)
        #expect(report.tables.contains { $0.name == "strata.blobs" && $0.isEngineTable && $0.rowCount == 3 })
        #expect(report.blobCount == 3 && report.segments.count == 1 && report.segments[0].headerIsValid)
        #expect(report.segments[0].rawBytes == 75_100)
        #expect(report.header?.pageSize == 512 && report.header?.formatVersion == StoreHeader.currentVersion)
        #expect(report.reachablePages + report.unreferencedPages == report.pageFilePages)
        #expect(report.log?.transactionsToReplay == 0 && report.log?.records == 0)
        #expect(
            progress.last.map { $0.completed == $0.total && $0.total > 300 } ?? false,
            "\(progress.last.map { "\($0)" } ?? "none")")
    }

    /// A store left by a crash (commits only in the log): the read-only view shows what recovery would
    /// produce, and says what it would replay, without replaying anything on disk.
    @Test func whatRecoveryWouldReplayIsReportedNotDone() throws {
        let live = try CompactionTests.storeWithHistory(seed: 3, closeCleanly: false)
        let crashed = live.crashImage()
        let before = try Self.files(crashed)
        let store = try ReadOnlyStore.open(at: Self.directory, fileSystem: crashed)
        let report = store.verify()
        let seen = try ReferenceModel.capture(store.snapshot())
        store.close()
        #expect(report.isClean, "\(report)")
        let log = try #require(report.log)
        #expect(log.transactionsToReplay > 0 && log.operationsToReplay > 0 && log.records > log.coveredRecords)
        #expect(report.tables.contains { $0.unwrittenNodes > 0 }, "replayed changes live in memory")
        #expect(try Self.files(crashed) == before)
        let recovered = try Store.open(
            at: Self.directory, configuration: CompactionTests.configuration(), fileSystem: crashed)
        #expect(recovered.recoveryReport.replayedTransactions == log.transactionsToReplay)
        #expect(try ReferenceModel.capture(recovered.snapshot()) == seen)
        try recovered.close()
    }

    // MARK: - Each kind of damage, named with its place

    @Test func aFlippedByteInAPageIsReportedAtThatPage() throws {
        let (fileSystem, _) = try Self.simpleStore()
        let report0 = try Self.verify(fileSystem)
        let leaf = try #require(report0.tables.first { $0.name == "items" }?.rootPage)
        try fileSystem.flipByte(at: leaf * 512 + 40, in: Self.pagePath)
        let report = try Self.verify(fileSystem)
        #expect(!report.isClean)
        #expect(
            report.problems.contains { $0.file == Self.pagePath && $0.offset == leaf * 512 && $0.remedy == nil },
            "\(report)")
    }

    @Test func aFlippedByteInABlobNamesTheBlob() throws {
        let (fileSystem, _) = try Self.simpleStore()
        try fileSystem.flipByte(at: 48 + 40, in: Self.segmentPath(1))
        let report = try Self.verify(fileSystem)
        #expect(
            report.problems.contains { $0.file == Self.segmentPath(1) && $0.message.contains("blob#1") }, "\(report)")
        // Accounting only (info): the damage is inside a record, which only a full read sees.
        #expect(try Self.verify(fileSystem, checkBlobContents: false).isClean)
    }

    @Test func aMissingSegmentIsReported() throws {
        let (fileSystem, _) = try Self.simpleStore()
        try fileSystem.removeFile(at: Self.segmentPath(1))
        let report = try Self.verify(fileSystem)
        #expect(
            report.problems.contains { $0.file == Self.segmentPath(1) && $0.message.contains("missing") }, "\(report)")
    }

    @Test func aTornLogTailIsRepairableByRecovery() throws {
        let (fileSystem, _) = try Self.simpleStore()
        let store = try Store.open(
            at: Self.directory, configuration: CompactionTests.configuration(), fileSystem: fileSystem)
        _ = try store.write { txn in try txn.insert([1, 2, 3], into: txn.table(named: "items")!) }
        store.closeWithoutCheckpoint()  // the commit stays in the log only
        var log = try #require(fileSystem.contents(of: Self.walPath))
        // The records, then garbage where a log without reserved space would end.
        let end = try WALLayout(log).recordsEnd
        log = Array(log[..<Int(end)]) + [0x55, 0x66, 0x77, 0x88, 0x99]
        try fileSystem.setContents(log, of: Self.walPath)
        let report = try Self.verify(fileSystem)
        let torn = try #require(report.problems.first { $0.file == Self.walPath })
        #expect(torn.offset == end && torn.remedy == .recovery && torn.message.contains("torn tail"), "\(report)")
        #expect(report.log?.transactionsToReplay == 1 && report.log?.discardedBytes == 5)
        // Recovery repairs it: the commit is kept, the tail cut.
        let recovered = try Store.open(
            at: Self.directory, configuration: CompactionTests.configuration(), fileSystem: fileSystem)
        try recovered.close()
        #expect(try Self.verify(fileSystem).isClean)
    }

    @Test func damageInTheMiddleOfTheLogIsNotCalledATornTail() throws {
        let (fileSystem, _) = try Self.simpleStore()
        let store = try Store.open(
            at: Self.directory, configuration: CompactionTests.configuration(), fileSystem: fileSystem)
        for value in 0..<3 as Range<UInt8> {
            _ = try store.write { txn in try txn.insert([value], into: txn.table(named: "items")!) }
        }
        store.closeWithoutCheckpoint()
        try fileSystem.flipByte(at: UInt64(WALFormat.fileHeaderSize + WALFormat.recordHeaderSize + 2), in: Self.walPath)
        let report = try Self.verify(fileSystem)
        let damage = try #require(report.problems.first { $0.file == Self.walPath })
        #expect(damage.offset == UInt64(WALFormat.fileHeaderSize) && damage.remedy == nil, "\(report)")
        #expect(damage.message.contains("middle") && report.log?.validRecordAfterDamage != nil)
    }

    @Test func aTruncatedPageFileIsReported() throws {
        let (fileSystem, _) = try Self.simpleStore()
        try fileSystem.truncate(path: Self.pagePath, by: 512 * 3)
        let report = try Self.verify(fileSystem)
        #expect(!report.isClean, "the newest root record is gone, the log was emptied after it: \(report)")
        #expect(report.problems.contains { $0.file == Self.walPath && $0.offset == 32 })
    }

    /// Pages of a first checkpoint that never wrote its root record: the log still holds every commit.
    @Test func pagesOfAnInterruptedFirstCheckpointAreANote() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.open(
            at: Self.directory, configuration: CompactionTests.configuration(), fileSystem: fileSystem)
        try store.write { txn in _ = try txn.insert([1], into: try txn.createTable(named: "t")) }
        store.closeWithoutCheckpoint()
        let pages = try #require(fileSystem.contents(of: Self.pagePath))
        try fileSystem.setContents(pages + Array(repeating: 0x5A, count: 2 * 512), of: Self.pagePath)
        let report = try Self.verify(fileSystem)
        #expect(report.isClean, "\(report)")
        #expect(report.tailPages == 2 && report.notes.contains { $0.message.contains("there is none") })
        #expect(report.rowCount == 1)
    }

    @Test func aDamagedHeaderStopsTheReadOnlyOpenAsCorruption() throws {
        let (fileSystem, _) = try Self.simpleStore()
        try fileSystem.flipByte(at: 20, in: Self.pagePath)
        #expect {
            try ReadOnlyStore.open(at: Self.directory, fileSystem: fileSystem)
        } throws: { error in
            guard case StorageError.corruption(let file, let offset, _) = error else { return false }
            return file == Self.pagePath && offset == 0
        }
    }

    @Test func leftoversAreNotesNotProblems() throws {
        let (fileSystem, _) = try Self.simpleStore()
        try fileSystem.setContents(
            [1, 2, 3], of: StoreFileNames.path(Self.directory, StoreFileNames.pageFileCompacted))
        let report = try Self.verify(fileSystem)
        #expect(report.isClean)
        #expect(
            report.notes.contains { $0.remedy == .compaction && $0.file.hasSuffix(StoreFileNames.pageFileCompacted) })
    }

    @Test func aStoreOpenElsewhereIsReadAndSaysSo() throws {
        let (fileSystem, _) = try Self.simpleStore()
        let writer = try Store.open(
            at: Self.directory, configuration: CompactionTests.configuration(), fileSystem: fileSystem)
        let report = try Self.verify(fileSystem)
        #expect(report.isClean && report.lockHeldElsewhere)
        try writer.close()
    }

    // MARK: - Salvage

    static func salvage(_ fileSystem: any FileSystem, to destination: String = "/out") throws -> SalvageReport {
        try Store.salvage(
            from: directory, to: destination, configuration: .testing(), fileSystem: fileSystem)
    }

    static func contents(
        at directory: String, _ fileSystem: any FileSystem
    ) throws -> (CompactionTests.Contents, VerificationReport) {
        let store = try Store.open(
            at: directory, configuration: .testing(createIfMissing: false), fileSystem: fileSystem)
        defer { try? store.close() }
        return (try CompactionTests.Contents.capture(store), try store.verify())
    }

    @Test func salvageOfAHealthyStoreCopiesEverything() throws {
        let live = try CompactionTests.storeWithHistory(seed: 8, closeCleanly: false)
        let fileSystem = live.crashImage()
        let (expected, _) = try Self.contents(at: Self.directory, fileSystem.crashImage())
        let report = try Self.salvage(fileSystem)
        #expect(report.isComplete, "\(report.problems)")
        #expect(report.logTransactionsApplied > 0)
        let (copied, verification) = try Self.contents(at: "/out", fileSystem)
        #expect(verification.isClean, "\(verification)")
        #expect(copied == expected)
    }

    @Test func salvageSkipsADamagedLeafAndKeepsTheRest() throws {
        let (fileSystem, expected) = try Self.simpleStore()
        let store = try ReadOnlyStore.open(at: Self.directory, fileSystem: fileSystem)
        let listing = try store.pageListing()
        store.close()
        // The first leaf of the newest tree: rows 1... of "items".
        let leaves = listing.filter { $0.kind == "leaf" && $0.generation == 2 }
        let victim = try #require(leaves.first)
        try fileSystem.flipByte(at: victim.page * 512 + 100, in: Self.pagePath)
        let report = try Self.salvage(fileSystem)
        #expect(report.pagesSkipped == 1 && !report.isComplete)
        #expect(report.problems.contains { $0.contains("@\(victim.page * 512)") }, "\(report.problems)")
        let (copied, verification) = try Self.contents(at: "/out", fileSystem)
        #expect(verification.isClean, "\(verification)")
        let items = try #require(copied.model.tables["items"])
        let original = try #require(expected.model.tables["items"])
        let lost = Set(original.rows.keys).subtracting(items.rows.keys)
        #expect(!lost.isEmpty && lost.count == victim.itemCount)
        #expect(
            items.rows.allSatisfy { original.rows[$0.key] == $0.value }, "every salvaged row is intact, under its ID")
        #expect(items.nextRowID == original.nextRowID && items.id == original.id)
        #expect(copied.blobs == expected.blobs)
    }

    @Test func salvageFallsBackToAnOlderCheckpointWhenARootIsUnreadable() throws {
        let (fileSystem, expected) = try Self.simpleStore()
        let report0 = try Self.verify(fileSystem)
        let root = try #require(report0.tables.first { $0.name == "items" }?.rootPage)
        try fileSystem.flipByte(at: root * 512 + 50, in: Self.pagePath)
        let report = try Self.salvage(fileSystem)
        let items = try #require(report.tables.first { $0.name == "items" })
        #expect(items.generation == 1, "\(report)")
        let (copied, verification) = try Self.contents(at: "/out", fileSystem)
        #expect(verification.isClean)
        // Generation 1 has every row, with the values before the updates.
        #expect(copied.model.tables["items"]?.rows.count == 300)
        #expect(copied.model.tables["items"]?.rows != expected.model.tables["items"]?.rows)
    }

    @Test func salvageRebuildsADamagedHeader() throws {
        let (fileSystem, expected) = try Self.simpleStore()
        try fileSystem.flipByte(at: 40, in: Self.pagePath)
        let report = try Self.salvage(fileSystem)
        #expect(report.headerRebuilt)
        let (copied, verification) = try Self.contents(at: "/out", fileSystem)
        #expect(verification.isClean && copied == expected)
    }

    @Test func salvageRefusesADestinationThatIsNotEmpty() throws {
        let (fileSystem, _) = try Self.simpleStore()
        try fileSystem.createDirectory(at: "/out")
        try fileSystem.setContents([1], of: "/out/something")
        #expect(throws: StorageError.self) { try Self.salvage(fileSystem) }
    }

    // MARK: - Annotated dumps

    /// FORMAT.md §3.3's worked example, as `strata dump --wal` annotates it: the offsets of the document.
    @Test func theLogDumpMatchesTheWorkedExampleOfFormatMD() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.open(at: Self.directory, configuration: .testing(), fileSystem: fileSystem)
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            try txn.insert([0x41, 0x42], into: table)
        }
        store.closeWithoutCheckpoint()
        let reader = try ReadOnlyStore.open(at: Self.directory, fileSystem: fileSystem)
        let lines = try reader.annotatedLog().map(\.description)
        let ranges = lines.map { String($0.prefix { $0 != ":" }) }
        #expect(
            ranges == [
                "0-7", "8-11", "12-15", "16-31", "32-39", "40-43", "44-47", "48-51", "52-55", "56", "57-59", "60-67",
                "68-75", "76-94", "95-98", "99-102", "103", "104-106", "107-114", "115-118", "119-126", "127",
            ], "\(lines.joined(separator: "\n"))")
        #expect(lines.last?.contains("reserved space") == true, "zeros written ahead follow the records (§3.3)")
        #expect(lines[8] == "52-55: x 1b000000 # payload length 27")
        #expect(lines[12] == "68-75: x 0101000000010074 # createTable 1 't'")
        #expect(lines[13].hasPrefix("76-94: x 03010000000100000000000000020000004142 # put table 1 row 1 (2 bytes)"))
    }

    @Test func thePageDumpAnnotatesEveryField() throws {
        let (fileSystem, _) = try Self.simpleStore()
        let store = try ReadOnlyStore.open(at: Self.directory, fileSystem: fileSystem)
        defer { store.close() }
        let listing = try store.pageListing()
        #expect(listing[0].kind == "header" && listing.contains { $0.kind == "root record" })
        let header = try store.annotatedPage(0).map(\.description)
        #expect(header[0] == "0-7: x 89535452410d0a1a # magic \\x89STRA\\r\\n\\x1a")
        #expect(header[3] == "16-19: x 00020000 # page size 512")
        let leaf = try #require(listing.first { $0.kind == "leaf" })
        let lines = try store.annotatedPage(leaf.page).map(\.description)
        let base = leaf.page * 512
        #expect(
            lines[0].hasPrefix("\(base)-\(base + 3): x ")
                && lines[0].hasSuffix("# checksum (masked CRC-32C of the salt and bytes 4..<512)"))
        #expect(lines[1] == "\(base + 4): x 01 # type 1 (leaf)")
        #expect(lines.contains { $0.contains("# row ") } && lines.last!.contains("zero padding"))
        let internalPage = try #require(listing.first { $0.kind == "internal" })
        #expect(try store.annotatedPage(internalPage.page).contains { $0.note.hasPrefix("child 1: page") })
        #expect(throws: StorageError.self) { try store.annotatedPage(UInt64(listing.count)) }
    }
}
