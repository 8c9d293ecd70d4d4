import Foundation
import GRDB
import StrataFormat
import StrataStorage
import StrataWorkload

/// The engine-level figures: StrataStorage against SQLite through prepared statements.
extension Benchmark {
    var engineStrata: String { scratch + "/engine-strata" }
    var engineSQLite: String { scratch + "/engine-sqlite/company.sqlite" }

    // MARK: - W1 bulk insert, and M1.engine (peak RSS of W1)

    /// Each repetition runs in a child process (a clean heap and a clean peak RSS); the last one's stores are the
    /// N-row stores of the figures after it.
    func bulkInsert() throws {
        try EmployeeRow.checkEncoding(company.employees[0])
        var strataPeaks: [Double] = []
        var sqlitePeaks: [Double] = []
        var strataCommits: [Double] = []
        var sqliteCommits: [Double] = []
        try FileManager.default.createDirectory(
            atPath: (engineSQLite as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let child = try ChildProcess.run("w1-engine-strata", [engineStrata, "\(company.count)"])
                strataPeaks.append(try child.number("peak_delta"))
                strataCommits.append(try child.number("commit_seconds"))
                note(
                    "W1.engine Strata: \(child.shown("seconds")) s (commit \(child.shown("commit_seconds")) s, log \(child.shown("log_bytes")) B), store \(child.shown("store_bytes")) B, peak RSS +\(child.shown("peak_delta")) B"
                )
                return try child.number("seconds")
            },
            sqlite: { _ in
                let child = try ChildProcess.run("w1-engine-sqlite", [engineSQLite, "\(company.count)"])
                sqlitePeaks.append(try child.number("peak_delta"))
                sqliteCommits.append(try child.number("commit_seconds"))
                note(
                    "W1.engine SQLite: \(child.shown("seconds")) s (commit \(child.shown("commit_seconds")) s, WAL \(child.shown("log_bytes")) B), database \(child.shown("store_bytes")) B, peak RSS +\(child.shown("peak_delta")) B"
                )
                return try child.number("seconds")
            })
        let rows = Double(company.count + Company.departmentCount)
        emitFigure("W1", "engine", strata: rows / strata, sqlite: rows / sqlite, unit: "rows/s", better: .higher)
        note(
            "W1.engine without the checkpoint (durable commit only): Strata \(format(rows / median(strataCommits))) rows/s, SQLite \(format(rows / median(sqliteCommits))) rows/s"
        )
        deferredFigures.append { [self] in
            emitFigure(
                "M1", "engine", strata: median(strataPeaks), sqlite: median(sqlitePeaks), unit: "bytes", better: .lower)
            note(
                "M1.engine = peak RSS during W1 (VmHWM, reset just before) minus RSS before it, in a child process holding the generated rows"
            )
            _ = self
        }
    }

    // MARK: - W2 durable commits, W2c concurrent commits

    static let commitCount = 5_000
    static let committerThreads = 8
    /// The commits of one repetition go in blocks, alternating between the sides block by block: this disk's
    /// fsync rate drifts by 10x within seconds, and fine interleaving makes both sides see the same disk.
    static let commitBlocks = 20

    /// The empty stores of one W2 or W2c repetition, both open at once, and a raw fsync probe beside them.
    private struct CommitStores {
        let strata: Store
        let employees: TableID
        let strataDirectory: String
        let sqlitePath: String
        let probe: Int32

        init(_ benchmark: Benchmark, name: String) throws {
            strataDirectory = benchmark.scratch + "/\(name)-strata"
            let (store, departments, employees) = try StrataCompany.create(at: strataDirectory)
            try store.write { txn in
                for department in benchmark.company.departments {
                    try txn.insert(DepartmentRow.encode(department), into: departments)
                }
            }
            self.strata = store
            self.employees = employees
            try FileManager.default.createDirectory(
                atPath: benchmark.scratch + "/\(name)-sqlite", withIntermediateDirectories: true)
            sqlitePath = benchmark.scratch + "/\(name)-sqlite/\(name).sqlite"
            let queue = try SQLiteCompany.create(sqlitePath)
            try queue.write { try SQLiteCompany.insertDepartments($0, benchmark.company.departments) }
            try queue.close()
            probe = open(benchmark.scratch + "/\(name)-fsync-probe", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
            try check(probe >= 0, "cannot create the fsync probe")
        }

        /// One durable append of 100 bytes to a plain file (write + fdatasync): the disk's own commit rate.
        func probeCommit() throws {
            let bytes = [UInt8](repeating: 0x2A, count: 100)
            try check(bytes.withUnsafeBytes { write(probe, $0.baseAddress, 100) } == 100, "fsync probe write")
            try check(fdatasync(probe) == 0, "fsync probe fdatasync")
        }

        func finish(_ benchmark: Benchmark, name: String, expectedSum: Int64) throws {
            let totals = try StrataCompany.totals(strata.snapshot(), employees)
            try check(
                totals.count == Benchmark.commitCount && totals.salarySum == expectedSum, "\(name) Strata: \(totals)")
            try strata.close()
            let queue = try SQLiteCompany.open(sqlitePath)
            let sqliteTotals = try queue.read { try SQLiteCompany.totals($0) }
            try check(
                sqliteTotals.count == Benchmark.commitCount && sqliteTotals.salarySum == expectedSum,
                "\(name) SQLite: \(sqliteTotals)")
            try queue.close()
            close(probe)
            remove(strataDirectory)
            removeDatabase(sqlitePath)
            remove(benchmark.scratch + "/\(name)-fsync-probe")
        }
    }

    /// Runs one repetition of W2 or W2c: `commitBlocks` blocks per side, alternating, and the fsync probe after
    /// each pair. Returns the seconds each side spent on its commits.
    private func interleavedCommits(
        repetition: Int, strata: (Range<Int>) throws -> Void, sqlite: (Range<Int>) throws -> Void,
        probe: () throws -> Void
    ) throws -> (strata: Double, sqlite: Double, disk: Double) {
        var times = (strata: 0.0, sqlite: 0.0, disk: 0.0)
        let perBlock = Self.commitCount / Self.commitBlocks
        for block in 0..<Self.commitBlocks {
            let range = (block * perBlock)..<((block + 1) * perBlock)
            if (block + repetition) % 2 == 0 {
                times.strata += try seconds { try strata(range) }
                times.sqlite += try seconds { try sqlite(range) }
            } else {
                times.sqlite += try seconds { try sqlite(range) }
                times.strata += try seconds { try strata(range) }
            }
            times.disk += try seconds { for _ in 0..<(perBlock / 5) { try probe() } } * 5
        }
        return times
    }

    func durableCommits() throws {
        let employees = company.employees
        let count = Self.commitCount
        let expectedSum = (0..<count).reduce(Int64(0)) { $0 &+ employees[$1 % employees.count].salary }
        var strataTimes: [Double] = []
        var sqliteTimes: [Double] = []
        var diskTimes: [Double] = []
        for repetition in 0..<repetitions {
            let stores = try CommitStores(self, name: "w2")
            let queue = try SQLiteCompany.open(stores.sqlitePath)
            let times = try interleavedCommits(
                repetition: repetition,
                strata: { range in
                    for index in range {
                        _ = try stores.strata.write { txn in
                            try txn.insert(
                                EmployeeRow.encode(employees[index % employees.count]), into: stores.employees)
                        }
                    }
                },
                sqlite: { range in
                    for index in range {
                        try queue.write { db in
                            try SQLiteCompany.insertEmployees(db, CollectionOfOne(employees[index % employees.count]))
                        }
                    }
                },
                probe: stores.probeCommit)
            try check(
                stores.strata.statistics.walSyncCount >= count,
                "W2 Strata: \(stores.strata.statistics.walSyncCount) log syncs for \(count) commits")
            try queue.close()
            try stores.finish(self, name: "W2", expectedSum: expectedSum)
            strataTimes.append(times.strata)
            sqliteTimes.append(times.sqlite)
            diskTimes.append(times.disk)
        }
        let total = Double(count)
        emitFigure(
            "W2", "engine", strata: total / median(strataTimes), sqlite: total / median(sqliteTimes), unit: "commits/s",
            better: .higher)
        note(
            "W2: the disk's own rate, measured between the blocks (append 100 B + fdatasync): \(format(total / median(diskTimes))) syncs/s; Strata reaches \(String(format: "%.0f", 100 * median(diskTimes) / median(strataTimes)))% of it"
        )
    }

    func concurrentCommits() throws {
        let employees = company.employees
        let count = Self.commitCount
        let threads = Self.committerThreads
        let expectedSum = (0..<count).reduce(Int64(0)) { $0 &+ employees[$1 % employees.count].salary }
        var strataTimes: [Double] = []
        var sqliteTimes: [Double] = []
        var diskTimes: [Double] = []
        var syncs: [Int] = []
        for repetition in 0..<repetitions {
            let stores = try CommitStores(self, name: "w2c")
            // A pool: one writer connection on which GRDB serializes the threads' writes (SQLite has no group
            // commit), readers beside it; synchronous=FULL set on the writer.
            let pool = try DatabasePool(path: stores.sqlitePath, configuration: SQLiteCompany.configuration())
            try pool.writeWithoutTransaction { try SQLiteCompany.setUp($0) }
            let store = stores.strata
            let table = stores.employees
            let syncsBefore = store.statistics.walSyncCount
            let times = try interleavedCommits(
                repetition: repetition,
                strata: { range in
                    _ = try runThreads(threads) { thread in
                        for index in stride(from: range.lowerBound + thread, to: range.upperBound, by: threads) {
                            _ = try store.write { txn in
                                try txn.insert(EmployeeRow.encode(employees[index % employees.count]), into: table)
                            }
                        }
                    }
                },
                sqlite: { range in
                    _ = try runThreads(threads) { thread in
                        for index in stride(from: range.lowerBound + thread, to: range.upperBound, by: threads) {
                            try pool.write { db in
                                try SQLiteCompany.insertEmployees(
                                    db, CollectionOfOne(employees[index % employees.count]))
                            }
                        }
                    }
                },
                probe: stores.probeCommit)
            syncs.append(store.statistics.walSyncCount - syncsBefore)
            try pool.close()
            try stores.finish(self, name: "W2c", expectedSum: expectedSum)
            strataTimes.append(times.strata)
            sqliteTimes.append(times.sqlite)
            diskTimes.append(times.disk)
        }
        let total = Double(count)
        emitFigure(
            "W2c", "engine", strata: total / median(strataTimes), sqlite: total / median(sqliteTimes),
            unit: "commits/s", better: .higher)
        note(
            "W2c: \(threads) threads; Strata's \(count) commits shared \(syncs.map(String.init).joined(separator: ", ")) log syncs; the disk's own rate between the blocks: \(format(total / median(diskTimes))) syncs/s"
        )
    }

    // MARK: - W3 point lookups

    func pointLookups(_ strataStore: Store, _ table: TableID, _ queue: DatabaseQueue) throws {
        let rows = company.lookupRows(lookupCount, seed: 3)
        let expected = company.lookupChecksum(rows, salaries: company.salaries)
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                var salaries: Int64 = 0
                var names: UInt64 = 0
                let snapshot = strataStore.snapshot()
                let time = try seconds {
                    for row in rows {
                        let found: Void? = try snapshot.withRow(RowID(UInt64(row)), in: table) { bytes in
                            salaries &+= EmployeeRow.salary(bytes)
                            names &+= fnv1a(EmployeeRow.name(bytes).utf8)
                        }
                        if found == nil { throw BenchmarkFailure("W3 Strata: row \(row) missing") }
                    }
                }
                try check(
                    salaries == expected.salaries && names == expected.names, "W3 Strata: wrong names or salaries")
                return time
            },
            sqlite: { _ in
                var salaries: Int64 = 0
                var names: UInt64 = 0
                let time = try queue.read { db in
                    let select = try RawStatement(db, "SELECT name, salary FROM employee WHERE id = ?")
                    return try seconds {
                        for row in rows {
                            select.int64(1, row)
                            guard try select.step() else { throw BenchmarkFailure("W3 SQLite: row \(row) missing") }
                            names &+= fnv1a(select.columnText(0).utf8)
                            salaries &+= select.columnInt64(1)
                            select.reset()
                        }
                    }
                }
                try check(
                    salaries == expected.salaries && names == expected.names, "W3 SQLite: wrong names or salaries")
                return time
            })
        emitFigure(
            "W3", "engine", strata: Double(rows.count) / strata, sqlite: Double(rows.count) / sqlite, unit: "lookups/s",
            better: .higher)
        if rows.count != 1_000_000 {
            note("W3: \(grouped(rows.count)) lookups (10 per employee at most 1,000,000), not 1,000,000")
        }
    }

    // MARK: - W4a predicate scan

    static let scanQueries = 20

    func predicateScan(_ strataStore: Store, _ table: TableID, _ queue: DatabaseQueue) throws {
        let expected = company.totals(salaries: company.salaries)
        let range = Company.salaryRange
        var strataIDs: UInt64 = 0
        var sqliteIDs: UInt64 = 0
        try queue.read { db in
            let plan = try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN SELECT id, salary FROM employee WHERE salary BETWEEN 100000 AND 101800")
            note("W4a SQLite plan: \(plan.map { $0["detail"] as String? ?? "" }.joined(separator: "; "))")
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                try seconds {
                    for _ in 0..<Self.scanQueries {
                        var count = 0
                        var sum: Int64 = 0
                        var idSum: UInt64 = 0
                        try strataStore.snapshot().forEachRow(in: table) { id, bytes in
                            let salary = EmployeeRow.salary(bytes)
                            if range.contains(salary) {
                                count += 1
                                sum &+= salary
                                idSum &+= id.rawValue
                            }
                            return true
                        }
                        try check(
                            count == expected.rangeCount && sum == expected.rangeSum,
                            "W4a Strata: \(count) rows, sum \(sum)")
                        strataIDs = idSum
                    }
                }
            },
            sqlite: { _ in
                try queue.read { db in
                    let select = try RawStatement(db, "SELECT id, salary FROM employee WHERE salary BETWEEN ? AND ?")
                    return try seconds {
                        for _ in 0..<Self.scanQueries {
                            var count = 0
                            var sum: Int64 = 0
                            var idSum: UInt64 = 0
                            select.int64(1, range.lowerBound)
                            select.int64(2, range.upperBound)
                            while try select.step() {
                                count += 1
                                idSum &+= UInt64(select.columnInt64(0))
                                sum &+= select.columnInt64(1)
                            }
                            try check(
                                count == expected.rangeCount && sum == expected.rangeSum,
                                "W4a SQLite: \(count) rows, sum \(sum)")
                            sqliteIDs = idSum
                        }
                    }
                }
            })
        try check(strataIDs == sqliteIDs, "W4a: the two sides found different rows")
        let queries = Double(Self.scanQueries)
        emitFigure(
            "W4a", "engine", strata: queries / strata, sqlite: queries / sqlite, unit: "queries/s", better: .higher)
    }

    // MARK: - W5 aggregate

    static let aggregateQueries = 10

    func aggregate(_ strataStore: Store, _ table: TableID, _ queue: DatabaseQueue) throws {
        let expected = company.totals(salaries: company.salaries)
        let averages = Company.averages(expected)
        let departments = Company.departmentCount
        func checkAverages(_ side: String, _ counts: [Int], _ values: [Double]) throws {
            for d in 1...departments {
                try check(
                    counts[d] == expected.departmentCounts[d], "W5 \(side): department \(d) has \(counts[d]) employees")
                try check(
                    abs(values[d] - averages[d]) <= 1e-9 * averages[d],
                    "W5 \(side): department \(d) average \(values[d]), expected \(averages[d])")
            }
        }
        let sql = "SELECT departmentId, avg(salary), count(*) FROM employee GROUP BY departmentId"
        try queue.read { db in
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql)
            note("W5 SQLite plan: \(plan.map { $0["detail"] as String? ?? "" }.joined(separator: "; "))")
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                try seconds {
                    for _ in 0..<Self.aggregateQueries {
                        var sums = [Int64](repeating: 0, count: departments + 1)
                        var counts = [Int](repeating: 0, count: departments + 1)
                        try strataStore.snapshot().forEachRow(in: table) { _, bytes in
                            let department = EmployeeRow.department(bytes)
                            sums[department] &+= EmployeeRow.salary(bytes)
                            counts[department] += 1
                            return true
                        }
                        let values = (0...departments).map {
                            counts[$0] == 0 ? 0 : Double(sums[$0]) / Double(counts[$0])
                        }
                        try checkAverages("Strata", counts, values)
                    }
                }
            },
            sqlite: { _ in
                try queue.read { db in
                    let select = try RawStatement(db, sql)
                    return try seconds {
                        for _ in 0..<Self.aggregateQueries {
                            var values = [Double](repeating: 0, count: departments + 1)
                            var counts = [Int](repeating: 0, count: departments + 1)
                            while try select.step() {
                                let department = Int(select.columnInt64(0))
                                guard (1...departments).contains(department) else {
                                    throw BenchmarkFailure("W5 SQLite: department \(department)")
                                }
                                values[department] = select.columnDouble(1)
                                counts[department] = Int(select.columnInt64(2))
                            }
                            try checkAverages("SQLite", counts, values)
                        }
                    }
                }
            })
        let queries = Double(Self.aggregateQueries)
        emitFigure("W5", "engine", strata: strata / queries, sqlite: sqlite / queries, unit: "s/query", better: .lower)
        // The planner walks employee_department and reads each row through it; a plain scan may be faster.
        let scan = try queue.read { db in
            let select = try RawStatement(
                db, "SELECT departmentId, avg(salary), count(*) FROM employee NOT INDEXED GROUP BY departmentId")
            return try seconds {
                for _ in 0..<Self.aggregateQueries {
                    var counts = [Int](repeating: 0, count: departments + 1)
                    while try select.step() { counts[Int(select.columnInt64(0))] = Int(select.columnInt64(2)) }
                    try check(counts == expected.departmentCounts, "W5 SQLite NOT INDEXED: counts differ")
                }
            }
        }
        note(
            "W5 SQLite with NOT INDEXED (a table scan and a temporary B-tree): \(format(scan / queries)) s/query, once")
    }

    // MARK: - W6 blobs

    func blobs() throws {
        let strataDirectory = scratch + "/w6-strata"
        let sqliteDirectory = scratch + "/w6-sqlite"
        let sqlitePath = sqliteDirectory + "/blobs.sqlite"
        let count = BlobPool.blobCount
        let megabytes = Double(count * BlobPool.chunkSize) / 1e6
        for kind in [BlobPool.Kind.compressible, .random] {
            let name = kind == .compressible ? "compressible" : "random"
            let pool = BlobPool(kind)
            var strataReads: [Double] = []
            var strataRereads: [Double] = []
            var sqliteReads: [Double] = []
            var strataBytes: [Double] = []
            var sqliteBytes: [Double] = []
            func checkBlob(_ side: String, _ index: Int, _ bytes: UnsafeRawBufferPointer) throws {
                let same = pool.chunk(index).withUnsafeBytes { expected in
                    expected.count == bytes.count && memcmp(expected.baseAddress!, bytes.baseAddress!, bytes.count) == 0
                }
                if !same { throw BenchmarkFailure("W6 \(side): blob \(index) (\(name)) differs") }
            }
            let (strataWrite, sqliteWrite) = try alternate(
                repetitions,
                strata: { _ in
                    remove(strataDirectory)
                    var store = try Store.open(at: strataDirectory, configuration: StrataCompany.configuration())
                    var ids: [BlobID] = []
                    ids.reserveCapacity(count)
                    let write = try seconds {
                        _ = try store.write { txn in
                            try pool.bytes.withUnsafeBytes { all in
                                for index in 0..<count {
                                    let start = (index % pool.chunkCount) * BlobPool.chunkSize
                                    let writer = try txn.makeBlobWriter()
                                    try writer.write(
                                        UnsafeRawBufferPointer(rebasing: all[start..<(start + BlobPool.chunkSize)]))
                                    ids.append(try writer.finish())
                                }
                            }
                        }
                        try store.checkpoint()
                    }
                    try store.close()
                    strataBytes.append(Double(bytesOnDisk(strataDirectory)))
                    store = try Store.open(at: strataDirectory, configuration: StrataCompany.configuration())
                    let snapshot = store.snapshot()
                    strataReads.append(
                        try seconds {
                            for (index, id) in ids.enumerated() {
                                guard let blob = try snapshot.readBlob(id) else {
                                    throw BenchmarkFailure("W6 Strata: blob \(index) missing")
                                }
                                try blob.withUnsafeBytes { try checkBlob("Strata", index, $0) }
                            }
                        })
                    // Untimed for the figure: the same reads again in the same open, where every blob was verified
                    // by its first read (FORMAT.md §5.5) and is read checking bounds and headers only.
                    strataRereads.append(
                        try seconds {
                            for (index, id) in ids.enumerated() {
                                guard let blob = try snapshot.readBlob(id) else {
                                    throw BenchmarkFailure("W6 Strata: blob \(index) missing on the second read")
                                }
                                try blob.withUnsafeBytes { try checkBlob("Strata", index, $0) }
                            }
                        })
                    try store.close()
                    remove(strataDirectory)
                    return write
                },
                sqlite: { _ in
                    remove(sqliteDirectory)
                    try FileManager.default.createDirectory(atPath: sqliteDirectory, withIntermediateDirectories: true)
                    var queue = try SQLiteCompany.open(sqlitePath)
                    try queue.write {
                        try $0.execute(sql: "CREATE TABLE blob(id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
                    }
                    let write = try seconds {
                        try queue.write { db in
                            let insert = try RawStatement(db, "INSERT INTO blob(data) VALUES (?)")
                            try pool.bytes.withUnsafeBytes { all in
                                for index in 0..<count {
                                    let start = (index % pool.chunkCount) * BlobPool.chunkSize
                                    try insert.blob(
                                        1, UnsafeRawBufferPointer(rebasing: all[start..<(start + BlobPool.chunkSize)])
                                    ) {
                                        try insert.run()
                                    }
                                }
                            }
                        }
                        try SQLiteCompany.checkpoint(queue)
                    }
                    try queue.close()
                    sqliteBytes.append(Double(bytesOnDisk(sqliteDirectory)))
                    queue = try SQLiteCompany.open(sqlitePath)
                    sqliteReads.append(
                        try queue.read { db in
                            let select = try RawStatement(db, "SELECT data FROM blob WHERE id = ?")
                            return try seconds {
                                for index in 0..<count {
                                    select.int64(1, Int64(index + 1))
                                    guard try select.step() else {
                                        throw BenchmarkFailure("W6 SQLite: blob \(index) missing")
                                    }
                                    try checkBlob("SQLite", index, select.columnBlob(0))
                                    select.reset()
                                }
                            }
                        })
                    try queue.close()
                    remove(sqliteDirectory)
                    return write
                })
            emitFigure(
                "W6_write_\(name)", "engine", strata: megabytes / strataWrite, sqlite: megabytes / sqliteWrite,
                unit: "MB/s", better: .higher)
            emitFigure(
                "W6_read_\(name)", "engine", strata: megabytes / median(strataReads),
                sqlite: megabytes / median(sqliteReads), unit: "MB/s", better: .higher)
            emitFigure(
                "W6_bytes_\(name)", "engine", strata: median(strataBytes), sqlite: median(sqliteBytes), unit: "bytes",
                better: .lower)
            note(
                "W6 \(name): Strata's second read of the same blobs in the same open (each verified by its first read, "
                    + "FORMAT.md §5.5): \(format(megabytes / median(strataRereads))) MB/s; the figure is the first read"
            )
            if kind == .compressible { try noteDecompressionFloor(pool, sqliteRead: megabytes / median(sqliteReads)) }
        }
    }

    /// The floor under W6's read of compressible blobs: LZ4 decompression alone of the same chunks (compressed as the
    /// blob store compresses them), in memory, with nothing else, measured in the same run as SQLite's read.
    func noteDecompressionFloor(_ pool: BlobPool, sqliteRead: Double) throws {
        let count = BlobPool.blobCount
        let compressed = try (0..<BlobPool.defaultChunkCount).map { index in
            guard let block = pool.chunk(index).withUnsafeBytes({ LZ4Block.compress($0) }) else {
                throw BenchmarkFailure("W6: a chunk of the compressible pool does not compress")
            }
            return block
        }
        var output = [UInt8](repeating: 0, count: BlobPool.chunkSize)
        let time = try seconds {
            for index in 0..<count {
                try compressed[index % compressed.count].withUnsafeBytes { source in
                    try output.withUnsafeMutableBytes { try LZ4Block.decompress(source, into: $0) }
                }
            }
        }
        let megabytes = Double(count * BlobPool.chunkSize) / 1e6
        note(
            "W6: LZ4 decompression alone of the same \(grouped(count)) compressible chunks, in memory: \(format(megabytes / time)) MB/s, the floor of Strata's read (SQLite reads at \(format(sqliteRead)) MB/s)"
        )
    }

    // MARK: - W7 random updates

    func updates() throws {
        var strataSalaries = company.salaries
        var sqliteSalaries = company.salaries
        let count = min(100_000, company.count)
        let (strataStore, _, table) = try StrataCompany.open(at: engineStrata)
        let queue = try SQLiteCompany.open(engineSQLite)
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { repetition in
                // Other values at each repetition, so that no update writes the value a row already has.
                let updates = company.salaryUpdates(count, seed: 70 + UInt64(repetition))
                let time = try seconds {
                    try strataStore.write { txn in
                        for update in updates {
                            try txn.update(RowID(UInt64(update.row)), in: table) { old, new in
                                EmployeeRow.rewrite(old, salary: update.salary, into: &new)
                            }
                        }
                    }
                    try strataStore.checkpoint()
                }
                for update in updates { strataSalaries[Int(update.row) - 1] = update.salary }
                let totals = try StrataCompany.totals(strataStore.snapshot(), table)
                let expected = strataSalaries.reduce(Int64(0), &+)
                try check(
                    totals.count == company.count && totals.salarySum == expected,
                    "W7 Strata: salary sum \(totals.salarySum), expected \(expected)")
                return time
            },
            sqlite: { repetition in
                let updates = company.salaryUpdates(count, seed: 70 + UInt64(repetition))
                let time = try seconds {
                    try queue.write { db in
                        let update = try RawStatement(db, "UPDATE employee SET salary = ? WHERE id = ?")
                        for change in updates {
                            update.int64(1, change.salary)
                            update.int64(2, change.row)
                            try update.run()
                            if update.changes != 1 {
                                throw BenchmarkFailure("W7 SQLite: row \(change.row) not updated")
                            }
                        }
                    }
                    try SQLiteCompany.checkpoint(queue)
                }
                for update in updates { sqliteSalaries[Int(update.row) - 1] = update.salary }
                let totals = try queue.read { try SQLiteCompany.totals($0) }
                let expected = sqliteSalaries.reduce(Int64(0), &+)
                try check(
                    totals.count == company.count && totals.salarySum == expected,
                    "W7 SQLite: salary sum \(totals.salarySum), expected \(expected)")
                return time
            })
        try strataStore.close()
        try queue.close()
        try check(strataSalaries == sqliteSalaries, "W7: the two sides applied different updates")
        engineSalaries = strataSalaries
        emitFigure(
            "W7", "engine", strata: Double(count) / strata, sqlite: Double(count) / sqlite, unit: "rows/s",
            better: .higher)
    }

    // MARK: - W9 reopen

    func reopen() throws {
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                var rows = 0
                var opened: Store?
                let time = try seconds {
                    let (store, _, table) = try StrataCompany.open(at: engineStrata)
                    rows = try store.snapshot().rowCount(in: table)
                    opened = store
                }
                try check(rows == company.count, "W9 Strata: \(rows) employees")
                try check(
                    opened!.recoveryReport.replayedTransactions == 0, "W9 Strata: the store was not closed cleanly")
                try opened!.close()
                return time
            },
            sqlite: { _ in
                var rows = 0
                var opened: DatabaseQueue?
                let time = try seconds {
                    let queue = try SQLiteCompany.open(engineSQLite)
                    rows = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM employee")! }
                    opened = queue
                }
                try check(rows == company.count, "W9 SQLite: \(rows) employees")
                try opened!.close()
                return time
            })
        emitFigure("W9", "engine", strata: strata, sqlite: sqlite, unit: "s", better: .lower)
        note("W9: Strata keeps each table's row count (no scan); SQLite's count(*) scans the smallest index")
    }

    // MARK: - W10 recovery

    /// The un-checkpointed log a crash leaves behind: 100 MiB.
    static let crashLogBytes = 100 << 20

    func recovery() throws {
        let strataDirectory = scratch + "/w10-strata"
        let sqliteDirectory = scratch + "/w10-sqlite"
        let sqlitePath = sqliteDirectory + "/w10.sqlite"
        try FileManager.default.createDirectory(atPath: sqliteDirectory, withIntermediateDirectories: true)
        func crash(_ task: String, _ path: String) throws -> (rows: Int, logBytes: Int, transactions: Int) {
            let writer = try ChildProcess(task: task, arguments: [path, "\(Self.crashLogBytes)"])
            let ready = try writer.waitFor("ready").split(separator: " ").compactMap { Int($0) }
            writer.kill()
            try check(ready.count == 3, "W10: the writer's report")
            return (ready[0], ready[1], ready[2])
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let crashed = try crash("w10-writer-strata", strataDirectory)
                let logBytes = crashed.logBytes
                var opened: (store: Store, departments: TableID, employees: TableID)?
                var rows = 0
                let time = try seconds {
                    opened = try StrataCompany.open(at: strataDirectory)
                    rows = try opened!.store.snapshot().rowCount(in: opened!.employees)
                }
                let report = opened!.store.recoveryReport
                try check(
                    rows == crashed.rows, "W10 Strata: \(rows) employees after recovery, \(crashed.rows) committed")
                try check(
                    report.replayedTransactions == crashed.transactions,
                    "W10 Strata: replayed \(report.replayedTransactions) of \(crashed.transactions) transactions")
                // A large recovery checkpoints after open returns (RecoveryReport.checkpointsAfterOpen): close waits
                // for that checkpoint, so its time says when the replayed rows were in the page file.
                let closeTime = try seconds { try opened!.store.close() }
                let checkpoint =
                    report.checkpointsAfterOpen
                    ? "checkpointed after open returned (close waited \(format(closeTime)) s more)"
                    : "checkpointed before open returned"
                note(
                    "W10 Strata: replayed \(crashed.transactions) transactions (\(grouped(crashed.rows)) rows, log \(grouped(logBytes)) B, \(format(Double(logBytes) / 1e6 / time)) MB/s) in \(format(time)) s, \(checkpoint)"
                )
                remove(strataDirectory)
                return time
            },
            sqlite: { _ in
                let crashed = try crash("w10-writer-sqlite", sqlitePath)
                let walBytes = fileSize(sqlitePath + "-wal")
                try check(walBytes >= UInt64(Self.crashLogBytes), "W10 SQLite: the WAL holds only \(walBytes) B")
                var opened: DatabaseQueue?
                var rows = 0
                let time = try seconds {
                    let queue = try SQLiteCompany.open(sqlitePath)
                    rows = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM employee")! }
                    opened = queue
                }
                try check(
                    rows == crashed.rows, "W10 SQLite: \(rows) employees after recovery, \(crashed.rows) committed")
                note(
                    "W10 SQLite: recovered a WAL of \(grouped(Int(walBytes))) B (\(grouped(crashed.rows)) rows) in \(format(time)) s (no checkpoint on open)"
                )
                try opened!.close()
                removeDatabase(sqlitePath)
                return time
            })
        emitFigure("W10", "engine", strata: strata, sqlite: sqlite, unit: "s", better: .lower)
    }

    // MARK: - W11 fsck

    func verification() throws {
        var strataBytes = 0.0
        var strataFileBytes = 0.0
        var sqliteBytes = 0.0
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let (store, _, _) = try StrataCompany.open(at: engineStrata)
                var report: VerificationReport?
                let time = try seconds { report = try store.verify() }
                try check(report!.isClean, "W11 Strata: verify() found \(report!.problems)")
                try check(
                    report!.rowCount >= UInt64(company.count), "W11 Strata: verify() saw \(report!.rowCount) rows")
                // What verify() reads: the pages reachable from the newest checkpoint and the log. The page file
                // also holds the pages earlier checkpoints left behind (copy-on-write), which it skips.
                strataBytes = Double(report!.reachablePages * UInt64(store.pageSize) + report!.walBytes)
                strataFileBytes = Double(report!.pageFileBytes + report!.walBytes)
                try store.close()
                return time
            },
            sqlite: { _ in
                let queue = try SQLiteCompany.open(engineSQLite)
                var result: [String] = []
                let time = try seconds {
                    result = try queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
                }
                try check(result == ["ok"], "W11 SQLite: integrity_check says \(result)")
                sqliteBytes = Double(fileSize(engineSQLite) + fileSize(engineSQLite + "-wal"))
                try queue.close()
                return time
            })
        emitFigure(
            "W11", "engine", strata: strataBytes / 1e6 / strata, sqlite: sqliteBytes / 1e6 / sqlite, unit: "MB/s",
            better: .higher)
        note(
            "W11: Strata verified \(grouped(Int(strataBytes))) B of reachable pages and log (its files: \(grouped(Int(strataFileBytes))) B after W7's checkpoints) in \(format(strata)) s; SQLite checked \(grouped(Int(sqliteBytes))) B in \(format(sqlite)) s"
        )
    }
}

/// Runs `body(thread)` on `count` threads started together; returns the wall-clock seconds until all finish.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> Double {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let failures = Failures()
    for thread in 0..<count {
        done.enter()
        let worker = Thread {
            start.wait()
            do { try body(thread) } catch { failures.append(error) }
            done.leave()
        }
        worker.start()
    }
    let time = seconds {
        for _ in 0..<count { start.signal() }
        done.wait()
    }
    if let failure = failures.first { throw failure }
    return time
}

/// Errors of worker threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func append(_ error: Error) { lock.withLock { errors.append(error) } }
    var first: Error? { lock.withLock { errors.first } }
}
