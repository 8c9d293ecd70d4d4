import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// How compaction writes secondary indexes (FORMAT.md §8.1 step 2): an index that the check before compaction found
/// whole and in agreement with its table, in a store that opening and checkpointing did not change, is copied entry
/// for entry; every other index is rebuilt from its table's rows. Either way the compacted index holds exactly what a
/// rebuild gives and the store verifies clean.
@Suite struct CompactionIndexTests {
    static let configuration = StoreConfiguration.testing(pageSize: 512)

    static func compact(_ fileSystem: any FileSystem) throws -> CompactionReport {
        try Store.compact(at: TemporaryStore.directory, configuration: configuration, fileSystem: fileSystem)
    }

    /// Every index's entries, by index name.
    static func allEntries(_ snapshot: Snapshot) throws -> [String: [IndexEntry]] {
        var all: [String: [IndexEntry]] = [:]
        for name in snapshot.indexNames {
            all[name] = try IndexReference.entries(of: snapshot.index(named: name)!, in: snapshot)
        }
        return all
    }

    /// A store with three indexes after inserts, updates and deletes across checkpoints; its last commits only in
    /// the log when `closeCleanly` is false (the file system returned is then a power-loss image).
    static func storeWithIndexes(closeCleanly: Bool) throws -> InMemoryFileSystem {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: configuration)
        let table = try store.write { txn in try txn.createTable(named: "person") }
        var workload = IndexTests.Workload(random: RepeatableRandomNumberGenerator(seed: 0xC0_91), table: table)
        try store.write { txn in try IndexTests.createIndexes(txn, on: table) }
        for step in 0..<60 {
            try store.write { try workload.transaction($0) }
            if step % 10 == 9, step < 50 { try store.checkpoint() }
        }
        guard closeCleanly else { return fileSystem.crashImage() }
        try store.close()
        return fileSystem
    }

    /// Opens the compacted store, checks every index against a rebuild and verification, and returns the entries.
    static func inspectCompacted(_ fileSystem: any FileSystem) throws -> [String: [IndexEntry]] {
        let store = try Store.openForTesting(fileSystem, configuration: configuration)
        defer { try? store.close() }
        #expect(try IndexReference.checkAllIndexes(store.snapshot(), "after compaction"))
        let verification = try store.verify()
        #expect(verification.isClean, "\(verification)")
        #expect(verification.unreferencedPages == 0)
        return try allEntries(store.snapshot())
    }

    @Test func verifiedIndexesAreCopiedEntryForEntry() throws {
        let fileSystem = try Self.storeWithIndexes(closeCleanly: true)
        let store = try Store.openForTesting(fileSystem, configuration: Self.configuration)
        let before = try Self.allEntries(store.snapshot())
        try store.close()
        let report = try Self.compact(fileSystem)
        #expect(!report.checkpointedFirst)
        #expect(report.indexCount == 3 && report.indexesCopied == 3)
        #expect(report.indexEntryCount == UInt64(before.values.reduce(0) { $0 + $1.count }))
        #expect(try Self.inspectCompacted(fileSystem) == before)
    }

    @Test func indexesOfAStoreWhoseLogHeldCommitsAreRebuiltFromTheRows() throws {
        let image = try Self.storeWithIndexes(closeCleanly: false)
        let report = try Self.compact(image)
        #expect(report.checkpointedFirst)
        #expect(report.indexCount == 3 && report.indexesCopied == 0)
        _ = try Self.inspectCompacted(image)
    }

    @Test func aDamagedIndexPageIsRebuiltFromTheRows() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: Self.configuration)
        let index = try store.write { txn -> IndexID in
            let table = try txn.createTable(named: "t")
            for number in 0..<300 { try txn.insert(IndexReference.row([.int64(Int64(number % 17))]), into: table) }
            return try txn.createIndex(named: "i", on: table, fields: [0])
        }
        try store.close()
        let check = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: fileSystem)
        let root = try #require(check.verify().indexes.first?.rootPage)
        check.close()
        try fileSystem.flipByte(at: root * 512 + 100, in: TemporaryStore.pageFile())

        let report = try Self.compact(fileSystem)
        #expect(report.indexCount == 1 && report.indexesCopied == 0 && report.indexEntryCount == 300)
        _ = try Self.inspectCompacted(fileSystem)
        let compacted = try Store.openForTesting(fileSystem, configuration: Self.configuration)
        #expect(try compacted.snapshot().rowIDs(in: index, matching: [.int64(3)]).count == 18)
        try compacted.close()
    }

    @Test func anIndexThatDisagreesWithItsTableIsRebuiltNotCopied() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: Self.configuration)
        let index = try store.write { try IndexReference.makeIndexDisagreeingWithItsTable($0) }
        try store.close()

        let report = try Self.compact(fileSystem)
        #expect(report.indexCount == 1 && report.indexesCopied == 0 && report.indexEntryCount == 50)
        _ = try Self.inspectCompacted(fileSystem)
        let compacted = try Store.openForTesting(fileSystem, configuration: Self.configuration)
        #expect(try compacted.snapshot().rowIDs(in: index, matching: [.int64(7)]) == [RowID(8)])
        #expect(try compacted.snapshot().rowIDs(in: index, matching: [.int64(9)]) == [RowID(10)])
        try compacted.close()
    }
}
