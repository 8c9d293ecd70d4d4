import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Files whose checksums are right but whose values are extreme (what a hostile or buggy writer could
/// produce): the engine must answer with a typed error, never trap (ARCHITECTURE: "a damaged or hostile
/// file gives a typed error, never a crash"). Each case runs in a child process (an exit test), so that a
/// trap fails the one test instead of ending the whole run.
@Suite struct HostileInputTests {
    // MARK: - Forging files

    /// A closed store with a table "t" holding rows 1 and 2, on a new in-memory file system.
    static func makeStore() throws -> InMemoryFileSystem {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            try txn.insert([1], into: table)
            try txn.insert([2], into: table)
        }
        try store.close()
        return fileSystem
    }

    /// Appends one transaction of `operations`, with correct checksums, LSNs and counts, to the store's log.
    static func appendTransaction(_ operations: [WALOperation], to fileSystem: InMemoryFileSystem) throws {
        let path = TemporaryStore.wal()
        let log = try fileSystem.contentsOfFile(at: path)
        let layout = try WALLayout(log)
        var builder = WALRecordBuilder(
            salt: layout.header.salt,
            firstLSN: (layout.records.last?.lsn ?? layout.header.startLSN - 1) + 1
        )
        for operation in operations { builder.appendOperation { operation.encode(into: &$0) } }
        try fileSystem.replaceContentsOfFile(at: path, with: log + builder.finish().bytes)
    }

    /// Rewrites the newest root record (the last page, one part) through `edit`, with a valid checksum.
    static func editRootRecord(of fileSystem: InMemoryFileSystem, _ edit: (inout RootRecord) -> Void) throws {
        let path = TemporaryStore.pageFile()
        var pages = try fileSystem.contentsOfFile(at: path)
        let header = try pages.withUnsafeBytes { try StoreHeader.decode($0) }
        let pageSize = header.pageSize
        let number = UInt64(pages.count / pageSize - 1)
        let start = Int(number) * pageSize
        var page = Array(pages[start..<(start + pageSize)])
        let (pageHeader, payload) = try page.withUnsafeBytes { buffer in
            let decoded = try PageHeader.decode(buffer, expectedPageNumber: number, salt: header.checksumSalt)
            return (decoded, Array(decoded.body(of: buffer)))
        }
        precondition(pageHeader.type == .rootRecord && pageHeader.extra == 1, "a one-page root record")
        var record = try payload.withUnsafeBytes { try RootRecord.decode($0, firstPage: number) }
        edit(&record)
        page = [UInt8](repeating: 0, count: pageSize)
        page.withUnsafeMutableBytes {
            RootRecord.encodePart(
                record.encodedPayload(),
                index: 0,
                count: 1,
                into: $0,
                pageNumber: number,
                generation: pageHeader.generation,
                salt: header.checksumSalt
            )
        }
        pages.replaceSubrange(start..<(start + pageSize), with: page)
        try fileSystem.replaceContentsOfFile(at: path, with: pages)
    }

    /// Opens the forged store and uses it (reads everything, then inserts and deletes every row of "t").
    /// A typed StorageError anywhere is an acceptable answer; so is success.
    static func openAndUse(_ fileSystem: InMemoryFileSystem) {
        do {
            let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
            let snapshot = store.snapshot()
            for name in snapshot.tableNames {
                let table = snapshot.table(named: name)!
                _ = try snapshot.rowCount(in: table)
                _ = try snapshot.nextRowID(in: table)
                try snapshot.forEachRow(in: table) { _, _ in true }
            }
            if let table = snapshot.table(named: "t") {
                try store.write { txn in
                    _ = try txn.insert([3], into: table)
                    var rows: [RowID] = []
                    try txn.forEachRow(in: table) { row, _ in
                        rows.append(row)
                        return true
                    }
                    for row in rows { _ = try txn.delete(row, from: table) }
                }
            }
            try store.close()
        } catch is StorageError {
            // A typed answer.
        } catch {
            fatalError("an untyped error: \(error)")
        }
    }

    // MARK: - The log

    /// Replay applies the put and overflows `nextRowID = row + 1` in `StoreState.put`.
    @Test func logPutOfTheLargestRowIDIsNotATrap() async {
        await #expect(processExitsWith: .success) {
            let fileSystem = try HostileInputTests.makeStore()
            try HostileInputTests.appendTransaction([.put(tableID: 1, rowID: .max, value: [9])], to: fileSystem)
            HostileInputTests.openAndUse(fileSystem)
        }
    }

    /// Replay overflows `nextTableID = max(nextTableID, id.rawValue + 1)` in `StoreState.createTable`.
    @Test func logTableOfTheLargestTableIDIsNotATrap() async {
        await #expect(processExitsWith: .success) {
            let fileSystem = try HostileInputTests.makeStore()
            try HostileInputTests.appendTransaction([.createTable(tableID: .max, name: "x")], to: fileSystem)
            HostileInputTests.openAndUse(fileSystem)
        }
    }

    // MARK: - The root record

    /// The root record is accepted; the next insert overflows `row + 1` in `StoreState.put`.
    @Test func rootRecordRowAllocatorAtTheLargestRowIDIsNotATrap() async {
        await #expect(processExitsWith: .success) {
            let fileSystem = try HostileInputTests.makeStore()
            try HostileInputTests.editRootRecord(of: fileSystem) { $0.tables[0].nextRowID = .max }
            HostileInputTests.openAndUse(fileSystem)
        }
    }

    /// The root record is accepted; `Snapshot.rowCount(in:)` traps converting the count to `Int`.
    @Test func rootRecordRowCountBeyondIntIsNotATrap() async {
        await #expect(processExitsWith: .success) {
            let fileSystem = try HostileInputTests.makeStore()
            try HostileInputTests.editRootRecord(of: fileSystem) { $0.tables[0].rowCount = 1 << 63 }
            HostileInputTests.openAndUse(fileSystem)
        }
    }

    /// The root record is accepted; deleting the rows underflows `rowCount -= 1` in `StoreState.delete`.
    @Test func rootRecordRowCountBelowTheRowsIsNotATrap() async {
        await #expect(processExitsWith: .success) {
            let fileSystem = try HostileInputTests.makeStore()
            try HostileInputTests.editRootRecord(of: fileSystem) { $0.tables[0].rowCount = 1 }
            HostileInputTests.openAndUse(fileSystem)
        }
    }

    /// The root record is accepted; the next table creation overflows `id.rawValue + 1`.
    @Test func rootRecordNextTableIDAtTheLimitIsNotATrap() async {
        await #expect(processExitsWith: .success) {
            let fileSystem = try HostileInputTests.makeStore()
            try HostileInputTests.editRootRecord(of: fileSystem) { $0.nextTableID = .max }
            HostileInputTests.openAndUse(fileSystem)
            // And creating a table there.
            let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
            _ = try? store.write { try $0.createTable(named: "one-more") }
            try store.close()
        }
    }

    /// Control: the forging helpers themselves produce stores that open (so the cases above test what
    /// they say).
    @Test func forgedFilesWithOrdinaryValuesOpen() throws {
        let fileSystem = try Self.makeStore()
        try Self.editRootRecord(of: fileSystem) { $0.tables[0].nextRowID = 10 }
        try Self.appendTransaction([.put(tableID: 1, rowID: 20, value: [7])], to: fileSystem)
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        let table = store.snapshot().table(named: "t")!
        #expect(try store.snapshot().row(RowID(20), in: table) == [7])
        #expect(try store.snapshot().nextRowID(in: table) == RowID(21))
        #expect(store.recoveryReport.replayedTransactions == 1)
        try store.close()
    }
}
