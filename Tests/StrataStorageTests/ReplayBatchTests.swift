import Foundation
import StrataFormat
import StrataIO
import StrataLock
import StrataStorage
import StrataTestSupport
import Testing

/// Recovery of tables that were empty at the checkpoint (a crashed bulk load, W10): their puts are gathered and built
/// bottom-up (`ReplayBatch`), which must give exactly what applying them one by one gave the original store.
@Suite struct ReplayBatchTests {
    typealias Field = RowRecord.Field

    private static func employee(_ index: Int, department: Int, entity: UInt16 = 2) -> [UInt8] {
        IndexReference.row(
            entity: entity,
            [
                .int64(Int64(index * 7 % 1_000)), .reference(UInt64(department)),
                .string("employee of the month number \(index % 97)"),
            ])
    }

    /// A crashed store whose log fills two indexed tables that were empty at the checkpoint, with everything that
    /// interrupts a batch: updates of rows the log inserted, rows inserted out of order, reserved IDs, deletes, an
    /// index created halfway, rows an index filters out. Returns the crash image, the store's rows as it was, and the
    /// row ID the original store gave the next insert after the crash image was taken.
    private static func crashedLoad(
        pageSize: Int
    ) throws -> (
        image: InMemoryFileSystem, rows: [String: [(RowID, [UInt8])]], next: RowID
    ) {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize))
        let (departments, employees) = try store.write { txn in
            let departments = try txn.createTable(named: "department")
            let employees = try txn.createTable(named: "employee")
            try txn.createIndex(named: "employee_department", on: employees, fields: [1])
            try txn.createIndex(named: "entity_3_salary", on: employees, fields: [0], entityIDs: [3])
            // Entries longer than the 24 bytes the sort compares as integers, sharing their first 24 (a long name).
            try txn.createIndex(named: "employee_name", on: employees, fields: [2])
            return (departments, employees)
        }
        try store.checkpoint()
        var inserted: [RowID] = []
        for batch in 0..<12 {
            try store.write { txn in
                for index in 0..<150 {
                    let n = batch * 150 + index
                    let entity: UInt16 = n % 5 == 0 ? 3 : 2
                    inserted.append(try txn.insert(employee(n, department: n % 13, entity: entity), into: employees))
                }
                // Updates of rows this log inserted, earlier in the batch and in earlier transactions.
                for row in inserted.suffix(40).prefix(10) {
                    try txn.update(row, in: employees, to: employee(Int(row.rawValue) + 5, department: 99))
                }
                if batch == 3 {
                    try txn.insert(employee(1, department: 1), into: employees, at: RowID(100_000))
                    try txn.insert(employee(2, department: 2), into: employees, at: RowID(50_000))
                    _ = try txn.reserveRowIDs(10, in: employees)
                }
                if batch == 5 {
                    for row in inserted.prefix(30) { _ = try txn.delete(row, from: employees) }
                }
                if batch == 7 {
                    try txn.createIndex(named: "employee_salary", on: employees, fields: [0])
                    _ = try txn.insert(IndexReference.row([.string("d")]), into: departments)
                }
            }
        }
        let snapshot = store.snapshot()
        var rows: [String: [(RowID, [UInt8])]] = [:]
        rows["employee"] = try IndexReference.rows(of: employees, in: snapshot)
        rows["department"] = try IndexReference.rows(of: departments, in: snapshot)
        let image = fileSystem.crashImage()
        let next = try store.write { try $0.insert(employee(0, department: 0), into: employees) }
        withExtendedLifetime(store) {}
        return (image, rows, next)
    }

    @Test(arguments: [512, 4096])
    func aCrashedLoadIntoEmptyIndexedTablesRecoversAsWritten(pageSize: Int) throws {
        let (image, rows, original) = try Self.crashedLoad(pageSize: pageSize)
        let recovered = try Store.openForTesting(image, configuration: .testing(pageSize: pageSize))
        #expect(recovered.recoveryReport.replayedTransactions == 12)
        let snapshot = recovered.snapshot()
        for (name, expected) in rows {
            let table = try #require(snapshot.table(named: name))
            let actual = try IndexReference.rows(of: table, in: snapshot)
            #expect(actual.map(\.0) == expected.map(\.0), "\(name): row IDs")
            #expect(actual.map(\.1) == expected.map(\.1), "\(name): values")
            #expect(try snapshot.rowCount(in: table) == expected.count)
        }
        #expect(snapshot.indexNames.count == 4)
        try IndexReference.checkAllIndexes(snapshot, "recovered, page size \(pageSize)")
        #expect(try recovered.verify().isClean)
        // The next row ID is the one the original store gave: above the reserved ones and the explicit ones.
        let employees = try #require(snapshot.table(named: "employee"))
        let next = try recovered.write { try $0.insert(Self.employee(0, department: 0), into: employees) }
        #expect(next == original)
        try recovered.close()
        let reopened = try Store.openForTesting(image, configuration: .testing(pageSize: pageSize))
        #expect(reopened.recoveryReport.replayedTransactions == 0)
        try IndexReference.checkAllIndexes(reopened.snapshot(), "reopened, page size \(pageSize)")
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }

    /// Only inserts, so row IDs grow through the whole log (W10's shape): entries of a repeated key are placed by
    /// group, not sorted (`employee_department`), beside indexes that are sorted (long entries, mostly distinct keys).
    @Test func aCrashedLoadOfGrowingRowsRecoversItsIndexes() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        let employees = try store.write { txn in
            let employees = try txn.createTable(named: "employee")
            try txn.createIndex(named: "employee_department", on: employees, fields: [1])
            try txn.createIndex(named: "employee_salary", on: employees, fields: [0])
            try txn.createIndex(named: "employee_name", on: employees, fields: [2])
            return employees
        }
        try store.checkpoint()
        for batch in 0..<8 {
            try store.write { txn in
                for index in 0..<250 {
                    let n = batch * 250 + index
                    _ = try txn.insert(Self.employee(n, department: (n * 31) % 17), into: employees)
                }
            }
        }
        let expected = try IndexReference.rows(of: employees, in: store.snapshot())
        let image = fileSystem.crashImage()
        withExtendedLifetime(store) {}
        let recovered = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
        #expect(recovered.recoveryReport.replayedTransactions == 8)
        let snapshot = recovered.snapshot()
        let actual = try IndexReference.rows(of: employees, in: snapshot)
        #expect(actual.map(\.0) == expected.map(\.0))
        #expect(actual.map(\.1) == expected.map(\.1))
        try IndexReference.checkAllIndexes(snapshot, "recovered growing rows")
        #expect(try recovered.verify().isClean)
        try recovered.close()
    }

    /// Rows longer than a leaf holds inline (they go to overflow chains at the checkpoint), short and empty ones, in
    /// a table without indexes: gathered straight into leaves while row IDs grow, then back into log order when an
    /// update of a gathered row arrives.
    @Test(arguments: [false, true])
    func aCrashedLoadOfLongAndShortRowsRecoversThem(updatesAGatheredRow: Bool) throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        let table = try store.write { try $0.createTable(named: "blobs") }
        try store.checkpoint()
        func row(_ n: Int) -> [UInt8] {
            (0..<[0, 3, 40, 300, 2_000][n % 5]).map { UInt8(truncatingIfNeeded: $0 &* n) }
        }
        var inserted: [RowID] = []
        for batch in 0..<6 {
            try store.write { txn in
                for index in 0..<40 { inserted.append(try txn.insert(row(batch * 40 + index), into: table)) }
                if updatesAGatheredRow, batch == 4 {
                    try txn.update(inserted[7], in: table, to: row(1_003))
                    try txn.update(inserted[150], in: table, to: [])
                }
            }
        }
        let expected = try IndexReference.rows(of: table, in: store.snapshot())
        let image = fileSystem.crashImage()
        withExtendedLifetime(store) {}
        let recovered = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
        #expect(recovered.recoveryReport.replayedTransactions == 6)
        let actual = try IndexReference.rows(of: table, in: recovered.snapshot())
        #expect(actual.map(\.0) == expected.map(\.0))
        #expect(actual.map(\.1) == expected.map(\.1))
        #expect(try recovered.snapshot().rowCount(in: table) == 240)
        #expect(try recovered.verify().isClean)
        try recovered.close()
        let reopened = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
        let reread = try IndexReference.rows(of: table, in: reopened.snapshot())
        #expect(reread.map(\.1) == expected.map(\.1))
        try reopened.close()
    }

    @Test func aLargeRecoveryLeavesItsCheckpointToAfterOpen() throws {
        let (image, rows, _) = try Self.crashedLoad(pageSize: 512)
        var configuration = StoreConfiguration.testing(pageSize: 512)
        configuration.backgroundRecoveryCheckpointBytes = 0
        let recovered = try Store.openForTesting(image, configuration: configuration)
        #expect(recovered.recoveryReport.checkpointsAfterOpen)
        // Readers need not wait for it.
        let employees = try #require(recovered.snapshot().table(named: "employee"))
        #expect(try recovered.snapshot().rowCount(in: employees) == rows["employee"]!.count)
        // An explicit checkpoint waits for it, or does its work: either way one checkpoint, and the log is new.
        try recovered.checkpoint()
        #expect(recovered.statistics.checkpointCount == 1)
        #expect(recovered.statistics.walBytes == UInt64(WALFormat.fileHeaderSize))
        #expect(try recovered.verify().isClean)
        // What that checkpoint wrote is durable: a crash now replays nothing.
        let crashed = image.crashImage()
        withExtendedLifetime(recovered) {}
        let reopened = try Store.openForTesting(crashed, configuration: .testing(pageSize: 512))
        #expect(reopened.recoveryReport.replayedTransactions == 0)
        #expect(!reopened.recoveryReport.checkpointsAfterOpen)
        try IndexReference.checkAllIndexes(reopened.snapshot(), "after the checkpoint after open")
        try reopened.close()
    }

    @Test func aSmallRecoveryCheckpointsBeforeOpenReturns() throws {
        let (image, _, _) = try Self.crashedLoad(pageSize: 512)
        let recovered = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
        #expect(!recovered.recoveryReport.checkpointsAfterOpen)
        #expect(recovered.statistics.checkpointCount == 1)
        #expect(recovered.statistics.walBytes == UInt64(WALFormat.fileHeaderSize))
        try recovered.close()
    }

    /// A crashed store whose log fills an indexed table (`person`, index `person_name`) that was empty at the
    /// checkpoint, and a table without indexes (`note`); with `damaged`, the put of one row (its record returned) holds
    /// an indexed string that is not UTF-8, the record's checksum made valid again. Every row's indexed key is long,
    /// but fits.
    private static func crashedIndexedLoad(
        damaged: Bool
    ) throws -> (image: InMemoryFileSystem, person: TableID, note: TableID, record: WALLayout.Record) {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        let (person, note) = try store.write { txn in
            let table = try txn.createTable(named: "person")
            try txn.createIndex(named: "person_name", on: table, fields: [1])
            try txn.insert([7], into: try txn.createTable(named: "checkpointed"))
            return (table, try txn.createTable(named: "note"))
        }
        try store.checkpoint()
        // A key of 60 bytes: longer than the bound's shortcut allows (2 × 60 + 3 + 8 > 110), within the limit.
        let longName = String(repeating: "n", count: 60)
        for batch in 0..<3 {
            try store.write { txn in
                for number in 0..<20 {
                    let name = batch == 1 && number == 7 ? "MARKER" : (number == 3 ? longName : "person \(number)")
                    try txn.insert(IndexReference.row([.int64(Int64(number)), .string(name)]), into: person)
                    try txn.insert([UInt8(number)], into: note)
                }
            }
        }
        let image = fileSystem.crashImage()
        withExtendedLifetime(store) {}
        var log = try image.contentsOfFile(at: TemporaryStore.wal())
        let layout = try WALLayout(log)
        let marker = Array("MARKER".utf8)
        let at = try #require(
            (0...(log.count - marker.count)).first { Array(log[$0..<($0 + marker.count)]) == marker })
        let record = try #require(layout.records.first { Int($0.offset) < at && at < Int($0.end) })
        if damaged {
            log[at] = 0xFF
            WALLayout.recomputeChecksum(ofRecordAt: Int(record.offset), in: &log, salt: layout.header.salt)
        }
        try image.setContents(log, of: TemporaryStore.wal())
        return (image, person, note, record)
    }

    /// Whether `error` reports the damaged put of ``crashedIndexedLoad(damaged:)`` at its own record.
    private static func reportsTheDamagedPut(_ error: any Error, at record: WALLayout.Record) -> Bool {
        guard case StorageError.corruption(_, let offset, let reason) = error else { return false }
        return offset == record.offset && reason.contains("cannot be indexed by 'person_name'")
    }

    /// A put the log holds for a gathered table whose row the table's index cannot take is refused at its own record,
    /// as a put applied at once is: when the table is built, which a small recovery does before open returns (its
    /// checkpoint). A row whose indexed key is long, but fits, opens.
    @Test(arguments: [false, true])
    func aGatheredPutThatCannotBeIndexedIsRefusedAtItsRecord(damaged: Bool) throws {
        let (image, person, _, record) = try Self.crashedIndexedLoad(damaged: damaged)
        guard damaged else {
            let recovered = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
            #expect(try recovered.snapshot().rowCount(in: person) == 60)
            try IndexReference.checkAllIndexes(recovered.snapshot(), "long keys")
            try recovered.close()
            return
        }
        #expect {
            _ = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
        } throws: { Self.reportsTheDamagedPut($0, at: record) }
    }

    /// After a large recovery, whose open reads no row (the tables the log filled are built after it returns, all at
    /// once), the same damaged put is reported at its record by every read of those tables and every write, `verify()`
    /// names it, and the log keeps every commit; a table the log did not fill reads as it was.
    @Test func aLazyOpenReportsAPutThatCannotBeIndexedAtFirstUse() throws {
        let (image, person, note, record) = try Self.crashedIndexedLoad(damaged: true)
        var configuration = StoreConfiguration.testing(pageSize: 512)
        configuration.backgroundRecoveryCheckpointBytes = 0
        let recovered = try Store.openForTesting(image, configuration: configuration)
        #expect(recovered.recoveryReport.checkpointsAfterOpen)
        let snapshot = recovered.snapshot()
        // The catalog and the row counts need no tree.
        #expect(try snapshot.rowCount(in: person) == 60)
        #expect(snapshot.indexNames == ["person_name"])
        #expect { try snapshot.row(RowID(1), in: person) } throws: { Self.reportsTheDamagedPut($0, at: record) }
        #expect { try snapshot.row(RowID(1), in: note) } throws: { Self.reportsTheDamagedPut($0, at: record) }
        let checkpointed = try #require(snapshot.table(named: "checkpointed"))
        #expect(try snapshot.row(RowID(1), in: checkpointed) == [7])
        #expect {
            try recovered.write { try $0.insert([1], into: note) }
        } throws: { Self.reportsTheDamagedPut($0, at: record) }
        let report = try recovered.verify()
        #expect(report.problems.first.map { $0.offset == record.offset && $0.message.contains("person_name") } == true)
        try? recovered.close()
        // Nothing was checkpointed: the log still holds every commit (and the damaged put), as the crash left it.
        let reopened = try Store.openForTesting(image.crashImage(), configuration: configuration)
        #expect(reopened.recoveryReport.replayedTransactions == 3)
        #expect(try reopened.snapshot().rowCount(in: note) == 60)
        try? reopened.close()
    }

    /// A snapshot taken while the pending tables are being built (here by a read of another snapshot, held inside the
    /// build's first read of the log) does not wait for the build: the catalog and row counts need no tree. It once
    /// waited behind the build's lock (W10: the snapshot after `open` took 0.6 s instead of 0.02 s when the checkpoint
    /// after open began the build first).
    @Test func aSnapshotDoesNotWaitForABuildUnderWay() throws {
        let (image, person, _, _) = try Self.crashedIndexedLoad(damaged: false)
        // Another writer holds the writer lock: open leaves the tables pending and starts no checkpoint.
        let writers = try image.lockFile(
            at: StoreFileNames.path(TemporaryStore.directory, StoreFileNames.writerLock), mode: .exclusive,
            waiting: false)
        let armed = Lock(false)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let fileSystem = FaultInjectingFileSystem(wrapping: image) { _, operation in
            guard operation == .read else { return }
            let fires = armed.withLock { armed in
                defer { armed = false }
                return armed
            }
            guard fires else { return }
            entered.signal()
            release.wait()
        }
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        let early = store.snapshot()
        armed.withLock { $0 = true }
        let built = DispatchSemaphore(value: 0)
        // Threads of their own: a blocked thread of the dispatch pool could leave no other to run them.
        Thread {
            _ = try? early.row(RowID(1), in: person)
            built.signal()
        }.start()
        #expect(entered.wait(timeout: .now() + 30) == .success, "the build reads the log again")
        let counted = Lock<Int?>(nil)
        let taken = DispatchSemaphore(value: 0)
        Thread {
            let count = try? store.snapshot().rowCount(in: person)
            counted.withLock { $0 = count }
            taken.signal()
        }.start()
        let tookItAtOnce = taken.wait(timeout: .now() + 10) == .success
        #expect(tookItAtOnce, "a snapshot waited for the build")
        release.signal()
        built.wait()
        if !tookItAtOnce { taken.wait() }
        #expect(counted.withLock { $0 } == 60)
        #expect(try store.snapshot().row(RowID(1), in: person) != nil)
        writers.unlock()  // close waits for it
        try store.close()
    }

    /// A log cut back after open (another process's repair of a commit whose sync failed, FORMAT.md §11.5) is never
    /// misread by the build, which reads the pending tables' records again: it reports them as corruption.
    @Test func aBuildReportsALogCutBackSinceOpen() throws {
        let (image, person, _, record) = try Self.crashedIndexedLoad(damaged: false)
        // Another writer holds the writer lock: open leaves the tables pending and starts no checkpoint.
        let writers = try image.lockFile(
            at: StoreFileNames.path(TemporaryStore.directory, StoreFileNames.writerLock), mode: .exclusive,
            waiting: false)
        let store = try Store.openForTesting(image, configuration: .testing(pageSize: 512))
        let early = store.snapshot()
        #expect(try early.rowCount(in: person) == 60)
        let log = try image.contentsOfFile(at: TemporaryStore.wal())
        try image.setContents(Array(log.prefix(Int(record.offset) + 10)), of: TemporaryStore.wal())
        #expect {
            try early.row(RowID(1), in: person)
        } throws: { error in
            guard case StorageError.corruption(_, _, let reason) = error else { return false }
            return reason.contains("reads back otherwise")
        }
        writers.unlock()
        try? store.close()
    }
}
