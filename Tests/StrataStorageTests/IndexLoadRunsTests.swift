import Foundation
import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

/// A large transaction's load into an empty index writes the index entries it noted as sorted runs at each spill, and
/// at commit merges them into the index, writing its leaves as the build closes them (FORMAT.md §7.2.1): the index
/// is exactly the one built in memory, rollbacks and crashes leave the store as it was, and changes that interrupt the
/// load still end in the right index.
@Suite struct IndexLoadRunsTests {
    typealias Spill = LargeTransactionSpillTests

    /// What the model remembers of a row: its two indexed fields.
    struct Fields: Equatable {
        var group: Int64
        var text: String
    }

    /// Texts short and grouped, and long ones (past the sort's 24-byte words).
    static func text(_ k: Int, _ tag: String) -> String {
        k % 3 == 0 ? "\(tag)\(String(repeating: "x", count: 30))\(k)" : "\(tag)\(k)"
    }

    static func entries(_ store: Store, _ index: IndexID) throws -> [IndexEntry] {
        var entries: [IndexEntry] = []
        try store.snapshot().forEachIndexEntry(in: index) { entry in
            entries.append(entry)
            return true
        }
        return entries
    }

    /// The entries of the group index (field 0) and the text index (field 1) for the model's rows, in index order.
    static func expected(_ model: [UInt64: Fields]) -> (groups: [IndexEntry], texts: [IndexEntry]) {
        let byGroup = model.sorted { ($0.value.group, $0.key) < ($1.value.group, $1.key) }
        let byText = model.sorted { a, b in
            a.value.text == b.value.text
                ? a.key < b.key : Array(a.value.text.utf8).lexicographicallyPrecedes(Array(b.value.text.utf8))
        }
        return (
            byGroup.map { IndexEntry(key: [.int64($0.value.group)], row: RowID($0.key)) },
            byText.map { IndexEntry(key: [.string($0.value.text)], row: RowID($0.key)) }
        )
    }

    /// Checks both indexes of `store` against the model, and verification.
    static func check(
        _ store: Store, _ indexes: (groups: IndexID, texts: IndexID), _ model: [UInt64: Fields],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (groups, texts) = expected(model)
        #expect(try entries(store, indexes.groups) == groups, sourceLocation: sourceLocation)
        #expect(try entries(store, indexes.texts) == texts, sourceLocation: sourceLocation)
        #expect(try store.snapshot().indexEntryCount(indexes.groups) == model.count, sourceLocation: sourceLocation)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)", sourceLocation: sourceLocation)
    }

    /// A table "t" with an empty index on each of its two fields.
    static func create(_ store: Store) throws -> (table: TableID, indexes: (groups: IndexID, texts: IndexID)) {
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            let groups = try txn.createIndex(named: "t_group", on: table, fields: [0])
            let texts = try txn.createIndex(named: "t_text", on: table, fields: [1])
            return (table, (groups, texts))
        }
    }

    static func insert(
        _ k: Int, group: Int64, tag: String, _ txn: WriteTransaction, _ table: TableID, _ model: inout [UInt64: Fields]
    ) throws {
        let fields = Fields(group: group, text: text(k, tag))
        model[try txn.insert(Spill.row(group: fields.group, fields.text), into: table).rawValue] = fields
    }

    @Test func aLoadIntoEmptyIndexesWritesSortedRunsAndBuildsThemFromTheRuns() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Spill.open(faulty)
        let (table, indexes) = try Self.create(store)
        var model: [UInt64: Fields] = [:]
        try store.write { txn in
            for k in 0..<3_000 { try Self.insert(k, group: Int64(k % 7), tag: "n", txn, table, &model) }
        }
        #expect(store.statistics.largeCommitCount == 1)
        try Self.check(store, indexes, model)
        try store.close()
        let recovered = try Spill.open(memory.crashImage())
        try Self.check(recovered, indexes, model)
        try recovered.close()
    }

    /// The same load into a store whose transactions are never large builds the same indexes in memory.
    @Test func theIndexBuiltFromRunsIsTheOneBuiltInMemory() throws {
        func load(spilling: Bool) throws -> [[IndexEntry]] {
            let (_, faulty) = try SharedStoreReviewTests.fileSystem()
            var configuration = Spill.configuration()
            if !spilling { configuration.largeTransactionBytes = 1 << 40 }
            let store = try Store.open(at: "/db", configuration: configuration, fileSystem: faulty)
            let (table, indexes) = try Self.create(store)
            var model: [UInt64: Fields] = [:]
            try store.write { txn in
                for k in 0..<2_500 { try Self.insert(k, group: Int64(k % 13), tag: "m", txn, table, &model) }
            }
            #expect(store.statistics.largeCommitCount == (spilling ? 1 : 0))
            try Self.check(store, indexes, model)
            let result = [try Self.entries(store, indexes.groups), try Self.entries(store, indexes.texts)]
            try store.close()
            return result
        }
        #expect(try load(spilling: true) == load(spilling: false))
    }

    /// Reading an index in the middle of a load merges the runs written so far into the index; the load goes on into
    /// an index that is no longer empty.
    @Test func anIndexReadInTheMiddleOfALoadMergesItsRuns() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Spill.open(faulty)
        let (table, indexes) = try Self.create(store)
        var model: [UInt64: Fields] = [:]
        try store.write { txn in
            for k in 0..<1_500 { try Self.insert(k, group: Int64(k % 5), tag: "a", txn, table, &model) }
            #expect(try txn.rowIDs(in: indexes.groups, matching: [.int64(2)]).count == 300)
            #expect(try txn.rowIDs(in: indexes.texts, matching: [.string(Self.text(9, "a"))]) == [RowID(10)])
            for k in 1_500..<2_500 { try Self.insert(k, group: Int64(k % 5), tag: "a", txn, table, &model) }
            #expect(try txn.rowIDs(in: indexes.groups, matching: [.int64(2)]).count == 500)
        }
        try Self.check(store, indexes, model)
        try store.close()
        let reopened = try Spill.open(memory)
        try Self.check(reopened, indexes, model)
        try reopened.close()
    }

    /// Updates and deletes of loaded rows (whose entries are in runs already) and inserts after them: the runs are
    /// merged into the index, the other changes put into it.
    @Test func aLoadInterruptedByUpdatesAndDeletesEndsInTheRightIndex() throws {
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Spill.open(faulty)
        let (table, indexes) = try Self.create(store)
        var model: [UInt64: Fields] = [:]
        try store.write { txn in
            for k in 0..<2_000 { try Self.insert(k, group: Int64(k % 6), tag: "b", txn, table, &model) }
            for row in stride(from: UInt64(1), through: 2_000, by: 7) {
                let fields = Fields(group: 40, text: "updated \(row)")
                try txn.update(RowID(row), in: table, to: Spill.row(group: fields.group, fields.text))
                model[row] = fields
            }
            for row in stride(from: UInt64(2), through: 2_000, by: 11) where model[row] != nil {
                #expect(try txn.delete(RowID(row), from: table))
                model[row] = nil
            }
            for k in 2_000..<3_000 { try Self.insert(k, group: Int64(k % 6), tag: "c", txn, table, &model) }
        }
        try Self.check(store, indexes, model)
        try store.close()
        let recovered = try Spill.open(memory.crashImage())
        try Self.check(recovered, indexes, model)
        try recovered.close()
    }

    /// A load that wrote runs, merged them (a read) and changed the written leaves, then threw: the page file is byte
    /// for byte what it was, and the next load, writing the same pages, reads none of the abandoned one's.
    @Test func aLoadWithRunsThatThrowsLeavesThePageFileAsItWas() throws {
        struct Abandon: Error {}
        let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
        let store = try Spill.open(faulty)
        let (table, indexes) = try Self.create(store)
        try store.checkpoint()
        let pagesBefore = memory.contents(of: Spill.pageFile)
        var abandoned: [UInt64: Fields] = [:]
        #expect(throws: Abandon.self) {
            try store.write { txn in
                for k in 0..<1_500 { try Self.insert(k, group: Int64(k % 4), tag: "d", txn, table, &abandoned) }
                #expect(try txn.rowIDs(in: indexes.groups, matching: [.int64(1)]).count == 375)
                for k in 1_500..<2_000 { try Self.insert(k, group: 1, tag: "d", txn, table, &abandoned) }
                #expect(try txn.rowIDs(in: indexes.groups, matching: [.int64(1)]).count == 875)
                throw Abandon()
            }
        }
        #expect(memory.contents(of: Spill.pageFile) == pagesBefore)
        try Self.check(store, indexes, [:])
        var model: [UInt64: Fields] = [:]
        try store.write { txn in
            for k in 0..<1_500 { try Self.insert(k, group: Int64(k % 3), tag: "e", txn, table, &model) }
            #expect(try txn.rowIDs(in: indexes.groups, matching: [.int64(1)]).count == 500)
            for k in 1_500..<2_000 { try Self.insert(k, group: 1, tag: "e", txn, table, &model) }
            #expect(try txn.rowIDs(in: indexes.groups, matching: [.int64(1)]).count == 1_000)
        }
        try Self.check(store, indexes, model)
        try store.close()
        let reopened = try Spill.open(memory)
        try Self.check(reopened, indexes, model)
        try reopened.close()
    }

    /// One fault (a full disk, an I/O error, a short write) at every file-system operation of an indexed load, in
    /// turn: it commits whole or throws and leaves the store as it was, live, after a power loss and after a reopen.
    @Test func aFaultAtEveryOperationOfAnIndexedLoadLeavesAllOrNothing() throws {
        var operationIndex = 0
        var tried = 0
        let kinds: [(IOError.Code, Double?)] = [(.noSpace, nil), (.ioFailure, nil), (.noSpace, 0.5)]
        while true {
            let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
            let store = try Spill.open(faulty)
            let (table, indexes) = try Self.create(store)
            var model: [UInt64: Fields] = [:]
            let (code, fraction) = kinds[operationIndex % kinds.count]
            faulty.inject(
                .init(
                    on: [.write, .sync, .truncate, .rename, .syncDirectory, .open], after: operationIndex, code: code,
                    shortWriteFraction: fraction))
            var loaded = model
            let committed: Bool
            do {
                try store.write { txn in
                    for k in 0..<1_200 { try Self.insert(k, group: Int64(k % 9), tag: "g", txn, table, &loaded) }
                }
                committed = true
            } catch StorageError.io {
                committed = false
            } catch StorageError.storeFailed {
                committed = false
            }
            if committed { model = loaded }
            guard faulty.failuresInjected > 0 else {
                #expect(committed)
                #expect(store.statistics.spilledPageCount > 20)
                try store.close()
                break
            }
            tried += 1
            let recovered = try Spill.open(memory.crashImage())
            try Self.check(recovered, indexes, model)
            try recovered.close()
            try? store.checkpoint()
            try Self.check(store, indexes, model)
            try? store.close()
            let reopened = try Spill.open(memory)
            try Self.check(reopened, indexes, model)
            try reopened.close()
            operationIndex += 1
        }
        print("indexed load: injected errors tried: \(tried)")
        #expect(tried > 30)
    }

    /// A power loss at every operation of an indexed load and its close (each crash picture of
    /// ``CrashPointTests/policies(seed:index:)``): the recovered store holds the state before the load or, once the
    /// load was acknowledged, after it, with both indexes exact and verification clean.
    @Test func everyCrashPointOfAnIndexedLoadRecoversAllOrNothing() throws {
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/db")
        try memory.syncDirectory(at: "/")
        let tally = CrashTally()
        let faulty = FaultInjectingFileSystem(wrapping: memory) { index, operation in
            guard CrashPointTests.mutating.contains(operation) else { return }
            let (armed, acknowledged, table, indexes, after) = tally.state.withLock {
                ($0.armed, $0.acknowledged, $0.table, $0.indexes, $0.after)
            }
            guard armed, let table, let indexes else { return }
            for (number, policy) in CrashPointTests.policies(seed: 41, index: index).enumerated() {
                var failure: String?
                var isAfter = false
                do {
                    let store = try Spill.open(memory.crashImage(policy: policy))
                    defer { try? store.close() }
                    let found = try Self.entries(store, indexes.groups)
                    let (groups, texts) = Self.expected(after)
                    let rows = try Spill.rows(store, table).count
                    isAfter = !found.isEmpty || rows > 0
                    if isAfter {
                        let foundTexts = try Self.entries(store, indexes.texts)
                        failure =
                            found != groups || foundTexts != texts || rows != after.count
                            ? "a load partly recovered" : nil
                    } else {
                        failure = acknowledged ? "an acknowledged load lost" : nil
                    }
                    if failure == nil, !(try store.verify().isClean) { failure = "verification not clean" }
                } catch {
                    failure = "recovery failed: \(error)"
                }
                tally.state.withLock { tally in
                    tally.crashPoints += 1
                    if isAfter { tally.sawAfter += 1 }
                    if let failure { tally.failures.append("operation \(index) policy \(number): \(failure)") }
                }
            }
        }
        let store = try Spill.open(faulty)
        let (table, indexes) = try Self.create(store)
        try store.checkpoint()
        var model: [UInt64: Fields] = [:]
        for k in 0..<1_000 { model[UInt64(k + 1)] = Fields(group: Int64(k % 5), text: Self.text(k, "h")) }
        tally.state.withLock {
            $0.table = table
            $0.indexes = indexes
            $0.after = model
            $0.armed = true
        }
        var loaded: [UInt64: Fields] = [:]
        try store.write { txn in
            for k in 0..<1_000 { try Self.insert(k, group: Int64(k % 5), tag: "h", txn, table, &loaded) }
        }
        #expect(loaded == model)
        tally.state.withLock { $0.acknowledged = true }
        try store.close()
        let result = tally.state.withLock { $0 }
        print("indexed load: crash points checked: \(result.crashPoints), after the load: \(result.sawAfter)")
        for failure in result.failures.prefix(20) { print("crash failure: \(failure)") }
        #expect(result.failures.isEmpty)
        #expect(result.crashPoints >= 100)
        #expect(result.sawAfter > 0)
    }

    /// What the crash-point checks of an indexed load share with the test.
    final class CrashTally: Sendable {
        struct State {
            var armed = false
            var acknowledged = false
            var table: TableID?
            var indexes: (groups: IndexID, texts: IndexID)?
            var after: [UInt64: Fields] = [:]
            var crashPoints = 0
            var sawAfter = 0
            var failures: [String] = []
        }

        let state = Mutex(State())
    }
}
