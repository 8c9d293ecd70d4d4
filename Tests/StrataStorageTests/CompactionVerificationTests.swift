import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// Compaction of a store whose log holds no record verifies it while copying it (FORMAT.md §8.1 step 0): each page
/// is checked as it is read, with the checks of `verify()`. Damage met on the way removes the new files, and the full
/// verification then refuses the compaction with the error it would have given first (the store as it was), or, for
/// an index to rebuild, lets the copy run again.
@Suite struct CompactionVerificationTests {
    typealias Contents = CompactionTests.Contents

    /// `CompactionTests.storeWithHistory` (tables, overflow values, blobs, an index-free history), closed cleanly,
    /// on a file system that records its events.
    static func cleanStore(seed: UInt64) throws -> InMemoryFileSystem {
        let source = try CompactionTests.storeWithHistory(seed: seed)
        let recording = InMemoryFileSystem(recordsEvents: true)
        try recording.createDirectory(at: TemporaryStore.directory)
        for name in try source.contentsOfDirectory(at: TemporaryStore.directory) {
            let path = StoreFileNames.path(TemporaryStore.directory, name)
            try recording.setContents(try #require(source.contents(of: path)), of: path)
        }
        return recording
    }

    /// Every file of the store's directory, by name.
    static func files(_ fileSystem: InMemoryFileSystem) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try fileSystem.contentsOfDirectory(at: TemporaryStore.directory) {
            files[name] = fileSystem.contents(of: StoreFileNames.path(TemporaryStore.directory, name))
        }
        return files
    }

    /// The error step 0's full verification gives for the store as it is: its first problem without a remedy.
    static func refusal(_ fileSystem: any FileSystem) throws -> (file: String, offset: UInt64, message: String) {
        let check = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem)
        defer { check.close() }
        let first = try #require(check.verify().problems.first { $0.remedy == nil })
        return (first.file, first.offset ?? 0, first.message)
    }

    /// A leaf of table `name` that is not its first: the copy has written rows before it meets it.
    static func laterLeaf(of name: String, _ fileSystem: any FileSystem) throws -> UInt64 {
        let check = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem)
        defer { check.close() }
        var page = try #require(check.verify().tables.first { $0.name == name }?.rootPage)
        while true {
            let children = try check.pages.withPage(page, fully: true) { bytes, header -> [UInt64]? in
                guard header.type == .internal else { return nil }
                return try InternalPage.decode(bytes, header: header).children
            }
            guard let children else { return page }
            page = children[children.count / 2]
        }
    }

    /// A leaf of the store's first index that is not its first.
    static func laterIndexLeaf(_ fileSystem: any FileSystem) throws -> UInt64 {
        let check = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem)
        defer { check.close() }
        var page = try #require(check.verify().indexes.first?.rootPage)
        while true {
            let children = try check.pages.withPage(page, fully: true) { bytes, header -> [IndexNodeRef]? in
                guard header.type == .indexInternal else { return nil }
                return try PageStore.decodeIndexNode(bytes, header: header).children
            }
            guard let children else { return page }
            guard case .page(let child) = children[children.count / 2] else {
                throw StorageError.corrupt(TemporaryStore.pageFile(), at: 0, "a closed store's node in memory")
            }
            page = child
        }
    }

    /// Compacts, expecting a refusal: the corruption error names what the full verification names first, the copy had
    /// begun (the damage was met while copying), and every file is as it was, the new ones gone.
    static func expectRefusal(
        _ fileSystem: InMemoryFileSystem, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let expected = try refusal(fileSystem)
        let before = try files(fileSystem)
        let eventsBefore = fileSystem.events.count
        do {
            _ = try CompactionTests.compact(fileSystem)
            Issue.record("the damaged store was compacted", sourceLocation: sourceLocation)
        } catch StorageError.corruption(let file, let offset, let reason) {
            #expect(file == expected.file && offset == expected.offset, sourceLocation: sourceLocation)
            #expect(reason.hasPrefix(expected.message), "\(reason)", sourceLocation: sourceLocation)
            #expect(reason.contains("compaction refused"), sourceLocation: sourceLocation)
        }
        let compactPath = StoreFileNames.path(TemporaryStore.directory, StoreFileNames.pageFileCompacted)
        #expect(
            fileSystem.events[eventsBefore...].contains { $0 == .open(path: compactPath, mode: .truncate) },
            "the copy never began: step 0 refused it", sourceLocation: sourceLocation)
        #expect(
            try files(fileSystem) == before, "a refused compaction changed the store", sourceLocation: sourceLocation)
    }

    @Test func aStoreWhoseLogHoldsNoRecordIsVerifiedWhileCopied() throws {
        let fileSystem = try Self.cleanStore(seed: 21)
        let (before, _) = try CompactionTests.inspect(fileSystem)
        let report = try CompactionTests.compact(fileSystem)
        #expect(report.verifiedWhileCopying && !report.checkpointedFirst && report.blobsCopied > 0)
        let (after, verification) = try CompactionTests.inspect(fileSystem)
        #expect(after == before)
        #expect(verification.isClean && verification.unreferencedPages == 0, "\(verification)")
    }

    @Test func aStoreWhoseLogHoldsCommitsIsVerifiedFirst() throws {
        let image = try CompactionTests.storeWithHistory(seed: 22, closeCleanly: false).crashImage()
        let (before, _) = try CompactionTests.inspect(image.crashImage())
        let report = try CompactionTests.compact(image)
        #expect(!report.verifiedWhileCopying && report.checkpointedFirst)
        let (after, verification) = try CompactionTests.inspect(image)
        #expect(after == before && verification.isClean)
    }

    @Test func aDamagedLeafMetWhileCopyingRefusesAndChangesNoFile() throws {
        let fileSystem = try Self.cleanStore(seed: 23)
        let leaf = try Self.laterLeaf(of: "history", fileSystem)
        try fileSystem.flipByte(at: leaf * 512 + 100, in: TemporaryStore.pageFile())
        try Self.expectRefusal(fileSystem)
    }

    @Test func aDamagedOverflowPageMetWhileCopyingRefusesAndChangesNoFile() throws {
        let fileSystem = try Self.cleanStore(seed: 24)
        let check = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem)
        var overflow: UInt64?
        for table in check.state.tables.values where overflow == nil {
            _ = try check.tree.forEachCell(table.root, from: 0, through: .max, reverse: false) { _, cell in
                if case .overflow(let first, _) = cell { overflow = first }
                return overflow == nil
            }
        }
        check.close()
        let page = try #require(overflow, "the workload stores overflow values")
        try fileSystem.flipByte(at: page * 512 + 60, in: TemporaryStore.pageFile())
        try Self.expectRefusal(fileSystem)
    }

    @Test func aDamagedBlobRefusesAndChangesNoFile() throws {
        let fileSystem = try Self.cleanStore(seed: 25)
        let check = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem)
        var live: BlobCatalogEntry?
        try BlobVerifier.forEachEntry(in: check.state, tree: check.tree) { _, entry in live = live ?? entry }
        check.close()
        let entry = try #require(live, "the workload stores blobs")
        try fileSystem.flipByte(
            at: entry.offset + entry.storedBytes / 2,
            in: StoreFileNames.path(TemporaryStore.directory, BlobSegmentFormat.fileName(segment: entry.segmentID)))
        try Self.expectRefusal(fileSystem)
    }

    @Test func aDamagedIndexLeafMetWhileCopyingIsRebuiltFromTheRows() throws {
        let fileSystem = InMemoryFileSystem(recordsEvents: true)
        let store = try Store.openForTesting(fileSystem, configuration: CompactionIndexTests.configuration)
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            for number in 0..<2_000 { try txn.insert(IndexReference.row([.int64(Int64(number % 17))]), into: table) }
            _ = try txn.createIndex(named: "i", on: table, fields: [0])
        }
        try store.close()
        let page = try Self.laterIndexLeaf(fileSystem)
        try fileSystem.flipByte(at: page * 512 + 100, in: TemporaryStore.pageFile())

        let report = try CompactionIndexTests.compact(fileSystem)
        // The copy met the damage, the full verification found it repairable, and the second copy rebuilt the index.
        #expect(!report.verifiedWhileCopying && !report.checkpointedFirst)
        #expect(report.indexCount == 1 && report.indexesCopied == 0 && report.indexEntryCount == 2_000)
        _ = try CompactionIndexTests.inspectCompacted(fileSystem)
    }
}
