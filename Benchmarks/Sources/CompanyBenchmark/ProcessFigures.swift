import Foundation
import GRDB
import StrataStorage
import StrataWorkload

/// Several processes on one store (issue 25, FORMAT.md §11), against SQLite with as many processes:
/// - W2p: WORKLOAD.md's W2 commits (5,000 one-row durable transactions) from 8 processes at once, each with its own
///   open of the store (Strata: group commit across processes; SQLite: one connection per process, `busy_timeout`
///   10 s, as a user of several processes sets it).
/// - W3w: W3's lookups in one process while another process commits one-row durable transactions all along; the
///   reader takes a new snapshot (SQLite: a new read transaction) every 1,000 lookups, so it keeps up with the writer.
extension Benchmark {
    static let committerProcesses = 8
    /// How many employees the children generate: the first ones of the N (the generator makes them in order).
    static let childEmployees = 5_000

    // MARK: - W2p

    func multiProcessCommits() throws {
        let count = Self.commitCount
        let processes = Self.committerProcesses
        let generated = min(company.count, Self.childEmployees)
        let expectedSum = (0..<count).reduce(Int64(0)) { $0 &+ company.employees[$1 % generated].salary }
        let strataDirectory = scratch + "/w2p-strata"
        let sqlitePath = scratch + "/w2p-sqlite/w2p.sqlite"
        let go = scratch + "/w2p-go"
        var syncs: [Int] = []
        var syncsPerRepetition: [Int] = []

        /// Starts the children on commits `range`, lets them go at once when all are ready, and times them to the
        /// last one's end.
        func run(_ task: String, _ target: String, _ range: Range<Int>) throws -> Double {
            remove(go)
            let children = try (0..<processes).map { worker in
                try ChildProcess(
                    task: task,
                    arguments: [target, "\(range.lowerBound + worker)", "\(processes)", "\(range.upperBound)", go])
            }
            for child in children { _ = try child.waitFor("ready") }
            let start = now()
            try check(FileManager.default.createFile(atPath: go, contents: nil), "W2p: cannot create \(go)")
            for child in children { _ = try child.waitFor("done") }
            let elapsed = now() - start
            let reports = try children.map { try $0.finish() }
            if task == "w2p-strata" { syncs.append(Int(try reports.reduce(0) { $0 + (try $1.number("syncs")) })) }
            return elapsed
        }

        // As W2 and W2c, in blocks alternating between the sides (this disk's sync rate drifts by 10x within
        // seconds), each block a new set of processes started before its clock starts.
        var strataTimes: [Double] = []
        var sqliteTimes: [Double] = []
        let blocks = 5
        for repetition in 0..<repetitions {
            let (store, departments, _) = try StrataCompany.create(at: strataDirectory)
            try store.write { txn in
                for department in company.departments {
                    try txn.insert(DepartmentRow.encode(department), into: departments)
                }
            }
            try store.close()
            try FileManager.default.createDirectory(atPath: scratch + "/w2p-sqlite", withIntermediateDirectories: true)
            let queue = try SQLiteCompany.create(sqlitePath)
            try queue.write { try SQLiteCompany.insertDepartments($0, company.departments) }
            try queue.close()
            var times = (strata: 0.0, sqlite: 0.0)
            for block in 0..<blocks {
                let range = (block * count / blocks)..<((block + 1) * count / blocks)
                if (block + repetition) % 2 == 0 {
                    times.strata += try run("w2p-strata", strataDirectory, range)
                    times.sqlite += try run("w2p-sqlite", sqlitePath, range)
                } else {
                    times.sqlite += try run("w2p-sqlite", sqlitePath, range)
                    times.strata += try run("w2p-strata", strataDirectory, range)
                }
            }
            let (reopened, _, table) = try StrataCompany.open(at: strataDirectory)
            let totals = try StrataCompany.totals(reopened.snapshot(), table)
            try check(totals.count == count && totals.salarySum == expectedSum, "W2p Strata: \(totals)")
            try reopened.close()
            remove(strataDirectory)
            let sqliteQueue = try SQLiteCompany.open(sqlitePath)
            let sqliteTotals = try sqliteQueue.read { try SQLiteCompany.totals($0) }
            try check(
                sqliteTotals.count == count && sqliteTotals.salarySum == expectedSum, "W2p SQLite: \(sqliteTotals)")
            try sqliteQueue.close()
            removeDatabase(sqlitePath)
            strataTimes.append(times.strata)
            sqliteTimes.append(times.sqlite)
            syncsPerRepetition.append(syncs.suffix(blocks).reduce(0, +))
        }
        let strata = median(strataTimes)
        let sqlite = median(sqliteTimes)
        remove(go)
        emitFigure(
            "W2p", "engine", strata: Double(count) / strata, sqlite: Double(count) / sqlite, unit: "commits/s",
            better: .higher)
        note(
            "W2p: \(blocks) blocks of \(count / blocks) durable one-row commits per side, alternating, each from \(processes) new processes started together; Strata's processes made \(syncsPerRepetition.map(String.init).joined(separator: ", ")) log syncs for their \(count) commits (group commit shares a sync between the threads of one process; each process syncs its own commits)"
        )
    }

    /// A W2p child: waits for `go`, then commits employees `first`, `first + processes`, ... below `end`, each in a
    /// durable transaction of its own.
    static func multiProcessCommitter(
        strata: Bool, target: String, first: Int, processes: Int, end: Int, go: String
    ) throws {
        let company = CompanyWorkload(employeeCount: childEmployees)
        let employees = Array(company.employees)
        let indexes = Array(stride(from: first, to: end, by: processes))
        func waitForGo() {
            report("ready", first)
            while access(go, F_OK) != 0 { usleep(50) }
        }
        if strata {
            let (store, _, table) = try StrataCompany.open(at: target)
            waitForGo()
            for index in indexes {
                _ = try store.write { txn in
                    try txn.insert(EmployeeRow.encode(employees[index % employees.count]), into: table)
                }
            }
            report("done", indexes.count)
            report("syncs", store.statistics.walSyncCount)
            try store.close()
        } else {
            var configuration = SQLiteCompany.configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: target, configuration: configuration)
            try queue.writeWithoutTransaction { try SQLiteCompany.setUp($0) }
            waitForGo()
            for index in indexes {
                try queue.write { db in
                    try SQLiteCompany.insertEmployees(db, CollectionOfOne(employees[index % employees.count]))
                }
            }
            report("done", indexes.count)
            try queue.close()
        }
    }

    // MARK: - W3w

    static let lookupsPerSnapshot = 1_000

    func readerBesideWriter() throws {
        let rows = company.lookupRows(lookupCount, seed: 3)
        let expected = company.lookupChecksum(rows, salaries: company.salaries)
        let strataCopy = scratch + "/w3w-strata"
        let sqliteCopy = scratch + "/w3w-sqlite/company.sqlite"
        remove(strataCopy)
        try copyDurably(engineStrata, to: strataCopy)
        remove(scratch + "/w3w-sqlite")
        try FileManager.default.createDirectory(atPath: scratch + "/w3w-sqlite", withIntermediateDirectories: true)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: engineSQLite + suffix) {
            try copyDurably(engineSQLite + suffix, to: sqliteCopy + suffix)
        }
        var writes: (strata: [Int], sqlite: [Int]) = ([], [])

        let (strataStore, _, table) = try StrataCompany.open(at: strataCopy)
        let queue = try SQLiteCompany.open(sqliteCopy)
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let before = try strataStore.snapshot().rowCount(in: table)
                let writer = try ChildProcess(task: "w3w-writer-strata", arguments: [strataCopy])
                _ = try writer.waitFor("writing")
                var salaries: Int64 = 0
                var names: UInt64 = 0
                let time = try seconds {
                    var start = 0
                    while start < rows.count {
                        let snapshot = strataStore.snapshot()
                        for row in rows[start..<min(start + Self.lookupsPerSnapshot, rows.count)] {
                            let found: Void? = try snapshot.withRow(RowID(UInt64(row)), in: table) { bytes in
                                salaries &+= EmployeeRow.salary(bytes)
                                names &+= fnv1a(EmployeeRow.name(bytes).utf8)
                            }
                            if found == nil { throw BenchmarkFailure("W3w Strata: row \(row) missing") }
                        }
                        start += Self.lookupsPerSnapshot
                    }
                }
                writer.kill()
                try check(salaries == expected.salaries && names == expected.names, "W3w Strata: wrong rows")
                writes.strata.append(try strataStore.snapshot().rowCount(in: table) - before)
                return time
            },
            sqlite: { _ in
                let before = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM employee") ?? 0 }
                let writer = try ChildProcess(task: "w3w-writer-sqlite", arguments: [sqliteCopy])
                _ = try writer.waitFor("writing")
                var salaries: Int64 = 0
                var names: UInt64 = 0
                let time = try seconds {
                    var start = 0
                    while start < rows.count {
                        try queue.read { db in
                            let select = try RawStatement(db, "SELECT name, salary FROM employee WHERE id = ?")
                            for row in rows[start..<min(start + Self.lookupsPerSnapshot, rows.count)] {
                                select.int64(1, row)
                                guard try select.step() else {
                                    throw BenchmarkFailure("W3w SQLite: row \(row) missing")
                                }
                                names &+= fnv1a(select.columnText(0).utf8)
                                salaries &+= select.columnInt64(1)
                                select.reset()
                            }
                        }
                        start += Self.lookupsPerSnapshot
                    }
                }
                writer.kill()
                try check(salaries == expected.salaries && names == expected.names, "W3w SQLite: wrong rows")
                writes.sqlite.append(
                    try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM employee") ?? 0 } - before)
                return time
            })
        try strataStore.close()
        try queue.close()
        remove(strataCopy)
        remove(scratch + "/w3w-sqlite")
        emitFigure(
            "W3w", "engine", strata: Double(rows.count) / strata, sqlite: Double(rows.count) / sqlite,
            unit: "lookups/s", better: .higher)
        note(
            "W3w: a new snapshot or read transaction every \(Self.lookupsPerSnapshot) lookups; the other process committed \(writes.strata.map(String.init).joined(separator: ", ")) rows beside Strata's reader and \(writes.sqlite.map(String.init).joined(separator: ", ")) beside SQLite's (durable one-row commits)"
        )
    }

    /// A W3w writer: commits one employee per durable transaction until it is killed.
    static func besideWriter(strata: Bool, target: String) throws {
        let employees = Array(CompanyWorkload(employeeCount: childEmployees).employees)
        var index = 0
        if strata {
            let (store, _, table) = try StrataCompany.open(at: target)
            report("writing", 0)
            while true {
                _ = try store.write { txn in
                    try txn.insert(EmployeeRow.encode(employees[index % employees.count]), into: table)
                }
                index += 1
            }
        } else {
            var configuration = SQLiteCompany.configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: target, configuration: configuration)
            try queue.writeWithoutTransaction { try SQLiteCompany.setUp($0) }
            report("writing", 0)
            while true {
                try queue.write { db in
                    try SQLiteCompany.insertEmployees(db, CollectionOfOne(employees[index % employees.count]))
                }
                index += 1
            }
        }
    }
}
