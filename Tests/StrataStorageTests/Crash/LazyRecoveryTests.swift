import Logging
import StrataFormat
import StrataIO
import StrataLock
import Testing

@testable import StrataStorage

/// Recovery that leaves the tables a crashed log filled unbuilt (``PendingTables``): open returns once the log is read,
/// and the first read of such a table builds it. Every read must see what an eager replay of the same log gives
/// (``ReadOnlyStore``, which replays one transaction at a time, and the model the test keeps), before and after the
/// build, from any thread; and a crash at any point, pending tables built or not, must recover every commit.
@Suite struct LazyRecoveryTests {
    /// No automatic checkpoint: the crash leaves every transaction in the log.
    static let configuration = StoreConfiguration(
        durability: .full, pageSize: 512, checkpointThresholdBytes: 1 << 40,
        logger: .init(label: "lazy-recovery-test") { _ in SwiftLogNoOpLogHandler() })

    /// What the crashed store holds, by table name: rows by row ID.
    typealias Model = [String: [UInt64: [UInt8]]]

    static func person(_ number: Int) -> [UInt8] {
        IndexReference.row([.int64(Int64(number % 7)), .string("person \(number)"), .int64(Int64(number))])
    }

    /// A store whose checkpoint holds table "old", and whose log (not checkpointed) creates "people" with two indexes
    /// and fills it in row order over several transactions (a pending table), fills "old" further (a table that was
    /// not empty: replayed in place), and updates rows of "counter" out of order (gathered, then built at open).
    static func crashedStore() throws -> (image: InMemoryFileSystem, model: Model) {
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/db")
        try memory.syncDirectory(at: "/")
        let store = try Store.open(at: "/db", configuration: configuration, fileSystem: memory)
        var model: Model = ["old": [:], "people": [:], "counter": [:]]
        let old = try store.write { try $0.createTable(named: "old") }
        try store.write { txn in
            for number in 0..<40 { model["old"]![try txn.insert(person(number), into: old).rawValue] = person(number) }
        }
        try store.checkpoint()
        let (people, counter) = try store.write { txn in
            let people = try txn.createTable(named: "people")
            try txn.createIndex(named: "people.group", on: people, fields: [0])
            try txn.createIndex(named: "people.name", on: people, fields: [1, 2])
            return (people, try txn.createTable(named: "counter"))
        }
        var next = 0
        for transaction in 0..<12 {
            try store.write { txn in
                for _ in 0..<150 {
                    model["people"]![try txn.insert(person(next), into: people).rawValue] = person(next)
                    next += 1
                }
                let added = person(1_000 + transaction)
                model["old"]![try txn.insert(added, into: old).rawValue] = added
                for row in [UInt64(3), 1, 2] {
                    let value = Array("counter \(transaction) \(row)".utf8)
                    if transaction == 0 {
                        try txn.insert(value, into: counter, at: RowID(row))
                    } else {
                        try txn.update(RowID(row), in: counter, to: value)
                    }
                    model["counter"]![row] = value
                }
            }
        }
        let image = memory.crashImage(policy: .dropUnsynced)
        withExtendedLifetime(store) {}
        return (image, model)
    }

    /// Opens `image` as a process would while another process holds the writer lock: recovery then neither
    /// checkpoints nor builds, and the pending tables stay pending until read. Returns the store and the other
    /// "process"'s lock.
    static func openLazily(_ image: InMemoryFileSystem) throws -> (Store, any FileLock) {
        let writer = try image.lockFile(
            at: StoreFileNames.path("/db", StoreFileNames.writerLock), mode: .exclusive, waiting: false)
        let store = try Store.open(at: "/db", configuration: configuration, fileSystem: image)
        return (store, writer)
    }

    /// The pending tables of the state new snapshots see, if any.
    static func pending(_ store: Store) -> PendingTables? { store.shared.withLock { $0.published.pending } }

    /// The in-memory root node of a table as `snapshot` reads it (nil when on disk or empty).
    static func rootNode(_ snapshot: Snapshot, _ table: TableID) throws -> ObjectIdentifier? {
        guard case .node(let node) = try snapshot.state.tables[table]?.root else { return nil }
        return ObjectIdentifier(node)
    }

    /// Every kind of read of `snapshot` against the model: rows (walked both ways, within bounds, looked up one by one
    /// and in runs), row counts, next row IDs, and every index (entries, reversed, counts, key lookups).
    static func checkReads(_ snapshot: Snapshot, _ model: Model, _ context: String) throws {
        #expect(Set(snapshot.tableNames) == Set(model.keys), "\(context)")
        for (name, rows) in model {
            let table = try #require(snapshot.table(named: name))
            #expect(try snapshot.rowCount(in: table) == rows.count, "\(context): \(name) row count")
            #expect(try snapshot.nextRowID(in: table).rawValue == (rows.keys.max() ?? 0) + 1, "\(context): \(name)")
            var walked: [UInt64: [UInt8]] = [:]
            try snapshot.forEachRow(in: table) { row, bytes in
                walked[row.rawValue] = Array(bytes)
                return true
            }
            #expect(walked == rows, "\(context): \(name) rows")
            let ids = rows.keys.sorted()
            var reversed: [UInt64] = []
            try snapshot.forEachRow(in: table, reverse: true) { row, _ in
                reversed.append(row.rawValue)
                return true
            }
            #expect(reversed == ids.reversed(), "\(context): \(name) reversed")
            if ids.count > 4 {
                var bounded: [UInt64] = []
                try snapshot.forEachRow(in: table, from: RowID(ids[1]), through: RowID(ids[ids.count - 2])) { row, _ in
                    bounded.append(row.rawValue)
                    return true
                }
                #expect(bounded == Array(ids[1...(ids.count - 2)]), "\(context): \(name) bounded")
            }
            for id in ids.prefix(5) + ids.suffix(5) {
                #expect(try snapshot.row(RowID(id), in: table) == rows[id], "\(context): \(name) row \(id)")
                #expect(try snapshot.withRow(RowID(id), in: table) { Array($0) } == rows[id], "\(context)")
            }
            #expect(try snapshot.row(RowID(ids.last! + 1), in: table) == nil, "\(context): \(name) past the end")
            var found = 0
            try snapshot.forEachRow(ids.map { RowID($0) } + [RowID(ids.last! + 5)], in: table) { row, bytes in
                #expect(bytes.map { Array($0) } == rows[row.rawValue], "\(context): \(name) row \(row)")
                found += bytes == nil ? 0 : 1
                return true
            }
            #expect(found == rows.count, "\(context): \(name) looked up")
        }
        #expect(snapshot.indexNames == ["people.group", "people.name"], "\(context)")
        #expect(try IndexReference.checkAllIndexes(snapshot, context))
        let group = try #require(snapshot.index(named: "people.group"))
        // Row r holds person r - 1, whose group is (r - 1) % 7.
        let expected = model["people"]!.filter { (Int($0.key) - 1) % 7 == 3 }
        #expect(
            try snapshot.rowIDs(in: group, matching: [.int64(3)]).map(\.rawValue) == expected.keys.sorted(),
            "\(context): key lookup")
    }

    /// What an eager replay (``ReadOnlyStore``: one transaction at a time, nothing gathered) reads from `image`.
    static func eagerModel(_ image: InMemoryFileSystem) throws -> Model {
        let store = try ReadOnlyStore.open(at: "/db", fileSystem: image)
        let snapshot = store.snapshot()
        var model: Model = [:]
        for name in snapshot.tableNames {
            var rows: [UInt64: [UInt8]] = [:]
            try snapshot.forEachRow(in: snapshot.table(named: name)!) { row, bytes in
                rows[row.rawValue] = Array(bytes)
                return true
            }
            model[name] = rows
        }
        return model
    }

    @Test func readsAfterALazyOpenSeeWhatAnEagerReplaySees() throws {
        let (image, model) = try Self.crashedStore()
        #expect(try Self.eagerModel(image) == model)
        let (store, writer) = try Self.openLazily(image)
        let pending = try #require(Self.pending(store), "the log's bulk-loaded table is left pending")
        #expect(pending.tables.count == 1)
        #expect(store.recoveryReport.replayedTransactions == 13)
        // The catalog and the row counts need no tree.
        let early = store.snapshot()
        let people = try #require(early.table(named: "people"))
        #expect(pending.tables == [people])
        #expect(try early.rowCount(in: people) == 1_800)
        #expect(try early.nextRowID(in: people) == RowID(1_801))
        #expect(early.indexNames == ["people.group", "people.name"])
        #expect(!pending.isBuilt)
        // The first read of a row builds the tables, for this snapshot and every other.
        try Self.checkReads(early, model, "the first snapshot")
        #expect(pending.isBuilt)
        let later = store.snapshot()
        #expect(later.committed.pending == nil, "a snapshot after the build carries the trees itself")
        try Self.checkReads(later, model, "a snapshot after the build")
        #expect(try Self.rootNode(early, people) != nil)
        #expect(try Self.rootNode(early, people) == Self.rootNode(later, people), "one build for all")
        #expect(try store.verify().isClean)

        writer.unlock()
        try store.checkpoint()
        try store.close()
        let reopened = try Store.open(at: "/db", configuration: Self.configuration, fileSystem: image)
        #expect(reopened.recoveryReport.replayedTransactions == 0)
        try Self.checkReads(reopened.snapshot(), model, "after the checkpoint")
        try reopened.close()
    }

    @Test func verifyStatisticsAndAWriteBuildThePendingTables() throws {
        let (image, model) = try Self.crashedStore()
        var (store, writer) = try Self.openLazily(image)
        #expect(Self.pending(store) != nil)
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.rowCount == UInt64(model.values.reduce(0) { $0 + $1.count }))
        #expect(Self.pending(store) == nil, "verify reads every tree: it builds them")
        #expect(store.statistics.lastLSN == store.snapshot().lsn)
        writer.unlock()
        try store.close()

        // A write to a pending table starts from its built tree.
        let copy = try Self.crashedStore()
        (store, writer) = try Self.openLazily(copy.image)
        let early = store.snapshot()
        writer.unlock()
        let people = early.table(named: "people")!
        let added = try store.write { txn in
            _ = try txn.delete(RowID(5), from: people)
            return try txn.insert(Self.person(99_999), into: people)
        }
        var changed = copy.model
        changed["people"]![5] = nil
        changed["people"]![added.rawValue] = Self.person(99_999)
        #expect(added == RowID(1_801))
        try Self.checkReads(early, copy.model, "a snapshot taken before the write")
        let after = store.snapshot()
        #expect(try after.rowCount(in: people) == 1_800)
        var rows: [UInt64: [UInt8]] = [:]
        try after.forEachRow(in: people) { row, bytes in
            rows[row.rawValue] = Array(bytes)
            return true
        }
        #expect(rows == changed["people"])
        #expect(try IndexReference.checkAllIndexes(after, "after the write"))
        #expect(try store.verify().isClean)
        try store.close()
    }

    @Test func aCrashAfterALazyOpenRecoversEveryCommit() throws {
        let (image, model) = try Self.crashedStore()
        let (store, writer) = try Self.openLazily(image)
        #expect(Self.pending(store) != nil)
        func crashAndRecover(_ context: String) throws {
            for (number, policy) in CrashPointTests.policies(seed: 7, index: 0).enumerated() {
                let crashed = image.crashImage(policy: policy)
                let recovered = try Store.open(at: "/db", configuration: Self.configuration, fileSystem: crashed)
                try Self.checkReads(recovered.snapshot(), model, "\(context), policy \(number)")
                #expect(try recovered.verify().isClean)
                try recovered.close()
            }
        }
        // Before anything is built: nothing was written, the log holds it all.
        try crashAndRecover("pending tables not built")
        try Self.checkReads(store.snapshot(), model, "the lazy store")
        #expect(Self.pending(store)?.isBuilt == true)
        // The next snapshot puts the built trees into the states the store shares.
        _ = store.snapshot()
        #expect(Self.pending(store) == nil)
        // Built, not checkpointed (the writer lock is still held elsewhere): the same.
        try crashAndRecover("pending tables built, not checkpointed")
        writer.unlock()
        try store.close()
        try crashAndRecover("checkpointed")
    }

    /// A second crash at every operation of the checkpoint after a lazy open (on another thread, as a large recovery's
    /// is), which builds the pending tables first: every picture recovers every commit, and so does the store.
    @Test func everyCrashPointOfTheCheckpointAfterALazyOpenKeepsEveryCommit() throws {
        let (image, model) = try Self.crashedStore()
        let failures = Lock<[String]>([])
        let crashPoints = Lock(0)
        let recovering = FaultInjectingFileSystem(wrapping: image) { index, operation in
            guard CrashPointTests.mutating.contains(operation) else { return }
            for (number, policy) in CrashPointTests.policies(seed: 11, index: index).enumerated() {
                crashPoints.withLock { $0 += 1 }
                do {
                    let crashed = image.crashImage(policy: policy)
                    if try Self.eagerModel(crashed) != model {
                        failures.withLock { $0.append("operation \(index) policy \(number): an eager replay differs") }
                    }
                    let store = try Store.open(at: "/db", configuration: Self.configuration, fileSystem: crashed)
                    defer { try? store.close() }
                    let snapshot = store.snapshot()
                    for (name, rows) in model {
                        var read: [UInt64: [UInt8]] = [:]
                        try snapshot.forEachRow(in: snapshot.table(named: name)!) { row, bytes in
                            read[row.rawValue] = Array(bytes)
                            return true
                        }
                        if read != rows {
                            failures.withLock { $0.append("operation \(index) policy \(number): \(name) differs") }
                        }
                    }
                    if try !store.verify().isClean {
                        failures.withLock { $0.append("operation \(index) policy \(number): verify") }
                    }
                } catch {
                    failures.withLock { $0.append("operation \(index) policy \(number): \(error)") }
                }
            }
        }
        var configuration = Self.configuration
        configuration.backgroundRecoveryCheckpointBytes = 0
        let store = try Store.open(at: "/db", configuration: configuration, fileSystem: recovering)
        #expect(store.recoveryReport.checkpointsAfterOpen)
        try Self.checkReads(store.snapshot(), model, "while the checkpoint after open runs")
        try store.close()
        #expect(Self.pending(store) == nil)
        let found = failures.withLock { $0 }
        for failure in found.prefix(20) { Issue.record("\(failure)") }
        #expect(crashPoints.withLock { $0 } >= 3 * 4)
    }

    @Test func snapshotsOnManyThreadsReadAPendingTableAtOnce() throws {
        let (image, model) = try Self.crashedStore()
        let (store, writer) = try Self.openLazily(image)
        let pending = try #require(Self.pending(store))
        let people = store.snapshot().table(named: "people")!
        let openLSN = store.snapshot().lsn
        writer.unlock()
        let roots = Lock<[ObjectIdentifier]>([])
        let (failures, reads) = runReaders(
            8, minimumReads: 2,
            whileWriting: {
                // A writer to another table meanwhile: it builds the pending tables too, under the writer gate.
                _ = try store.write { txn in try txn.insert(Array("late".utf8), into: txn.table(named: "counter")!) }
            },
            read: { _ in
                let snapshot = store.snapshot()
                var rows: [UInt64: [UInt8]] = [:]
                try snapshot.forEachRow(in: people) { row, bytes in
                    rows[row.rawValue] = Array(bytes)
                    return true
                }
                guard rows == model["people"]!, try snapshot.rowCount(in: people) == rows.count else {
                    throw StorageError.invalidArgument("snapshot at LSN \(snapshot.lsn) read \(rows.count) rows")
                }
                let group = snapshot.index(named: "people.group")!
                guard try snapshot.rowIDs(in: group, matching: [.int64(2)]).count == 257 else {
                    throw StorageError.invalidArgument("snapshot at LSN \(snapshot.lsn): index lookup")
                }
                guard let node = try Self.rootNode(snapshot, people) else {
                    throw StorageError.invalidArgument("the built tree is not in memory")
                }
                roots.withLock { $0.append(node) }
            })
        #expect(failures.isEmpty, "\(failures)")
        #expect(reads >= 16)
        #expect(pending.isBuilt)
        #expect(Set(roots.withLock { $0 }).count == 1, "every snapshot read the one build")
        let last = store.snapshot()
        #expect(last.lsn > openLSN)
        #expect(try last.rowCount(in: last.table(named: "counter")!) == 4)
        #expect(try store.verify().isClean)
        try store.close()
    }
}
