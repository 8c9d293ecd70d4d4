import Foundation
import GRDB
import StrataFormat
import StrataStorage

/// The engine-level figures that need secondary indexes: W4b (an index on salary), W4c (employees of a
/// department found by its name), W8 (cascade delete) and W12 (compaction after W7 and W8).
extension Benchmark {
    /// W8's victims: 10 departments, rows 1, 11, ..., 91 (about 10% of the employees).
    static let cascadeDepartments: [Int] = Array(stride(from: 1, through: 100, by: 10))
    /// W4c's 20 departments (rows 1, 6, ..., 96), looked up by name.
    static let relationshipDepartments: [Int] = Array(stride(from: 1, through: 100, by: 5))

    // MARK: - W4b predicate_indexed

    /// Builds an index on salary on both sides (timed, with a checkpoint, several times), then runs W4a's
    /// query through it 20 times; the index is dropped on both sides afterwards so that W7's updates and W8's
    /// deletes maintain the same indexes as before (the schema's `employee_department` only).
    func indexedPredicate(_ strataStore: Store, _ table: TableID, _ queue: DatabaseQueue) throws {
        let expected = company.totals(salaries: company.salaries)
        let range = Company.salaryRange
        var expectedIDs: UInt64 = 0
        for (index, salary) in company.salaries.enumerated() where range.contains(salary) {
            expectedIDs &+= UInt64(index + 1)
        }

        // The build: drop (untimed) and create again at each repetition; the last one's indexes stay.
        var strataIndex: IndexID?
        var sqliteHasIndex = false
        let (strataBuild, sqliteBuild) = try alternate(
            repetitions,
            strata: { _ in
                if let index = strataIndex {
                    try strataStore.write { try $0.dropIndex(index) }
                    try strataStore.checkpoint()
                }
                let time = try seconds {
                    strataIndex = try strataStore.write { txn in
                        try txn.createIndex(
                            named: StrataCompany.salaryIndex, on: table, fields: [EmployeeRow.salaryField])
                    }
                    try strataStore.checkpoint()
                }
                let entries = try strataStore.snapshot().indexEntryCount(strataIndex!)
                try check(entries == company.count, "W4b Strata: the salary index has \(entries) entries")
                return time
            },
            sqlite: { _ in
                if sqliteHasIndex {
                    try queue.write { try $0.execute(sql: "DROP INDEX employee_salary") }
                    try SQLiteCompany.checkpoint(queue)
                }
                let time = try seconds {
                    try queue.write { try $0.execute(sql: "CREATE INDEX employee_salary ON employee(salary)") }
                    try SQLiteCompany.checkpoint(queue)
                }
                sqliteHasIndex = true
                return time
            })
        note(
            "W4b index build (CREATE INDEX on salary, durable commit and checkpoint, median): Strata \(format(strataBuild)) s, SQLite \(format(sqliteBuild)) s (advantage \(String(format: "%.2f", sqliteBuild / strataBuild)))"
        )
        emitFigure("W4b_build", "engine", strata: strataBuild, sqlite: sqliteBuild, unit: "s", better: .lower)

        let sql = "SELECT id, salary FROM employee WHERE salary BETWEEN ? AND ?"
        try queue.read { db in
            let plan = try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN SELECT id, salary FROM employee WHERE salary BETWEEN 100000 AND 101800"
            ).map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
            note("W4b SQLite plan: \(plan)")
            try check(plan.contains("employee_salary"), "W4b: SQLite does not use the salary index (\(plan))")
        }
        let index = strataIndex!
        let lower = IndexBound([.int64(range.lowerBound)])
        let upper = IndexBound([.int64(range.upperBound)])
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                try seconds {
                    let snapshot = strataStore.snapshot()
                    for _ in 0..<Self.scanQueries {
                        var count = 0
                        var sum: Int64 = 0
                        var idSum: UInt64 = 0
                        // A covering range scan: the entry holds the salary (its key) and the row ID, as
                        // SQLite's index entry holds salary and rowid.
                        // Entries lent in place: only the salary is decoded (forEachIndexEntryView).
                        try snapshot.forEachIndexEntryView(in: index, from: lower, through: upper) { entry in
                            let key = try entry.keyPart(0)
                            guard case .int64(let salary) = key else {
                                throw BenchmarkFailure("W4b Strata: a salary key is \(key)")
                            }
                            count += 1
                            sum &+= salary
                            idSum &+= entry.row.rawValue
                            return true
                        }
                        try check(
                            count == expected.rangeCount && sum == expected.rangeSum && idSum == expectedIDs,
                            "W4b Strata: \(count) rows, sum \(sum), row-ID sum \(idSum)")
                    }
                }
            },
            sqlite: { _ in
                try queue.read { db in
                    let select = try RawStatement(db, sql)
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
                                count == expected.rangeCount && sum == expected.rangeSum && idSum == expectedIDs,
                                "W4b SQLite: \(count) rows, sum \(sum), row-ID sum \(idSum)")
                        }
                    }
                }
            })
        let queries = Double(Self.scanQueries)
        emitFigure(
            "W4b", "engine", strata: queries / strata, sqlite: queries / sqlite, unit: "queries/s", better: .higher)

        // Back to the schema's indexes for the figures after this one.
        try strataStore.write { try $0.dropIndex(index) }
        try strataStore.checkpoint()
        try queue.write { try $0.execute(sql: "DROP INDEX employee_salary") }
        try SQLiteCompany.checkpoint(queue)
        note("W4b: the salary index is dropped again on both sides after the queries")
    }

    // MARK: - W4c relationship

    /// What W4c must find for each of its departments: employee count, salary sum, sum of name hashes.
    func departmentTotals(salaries: [Int64]) -> [(count: Int, salaries: Int64, names: UInt64)] {
        var totals = [(count: Int, salaries: Int64, names: UInt64)](
            repeating: (0, 0, 0), count: Company.departmentCount + 1)
        for (index, employee) in company.employees.enumerated() {
            totals[employee.department].count += 1
            totals[employee.department].salaries &+= salaries[index]
            totals[employee.department].names &+= company.nameHashes[index]
        }
        return totals
    }

    /// Employees of 20 departments found by name: the department through an index on its name, its employees
    /// through the schema's index on their department, reading each one's name and salary. Both sides get
    /// the name index (`department_name`, built here, untimed).
    func relationshipQueries(
        _ strataStore: Store, _ departments: TableID, _ table: TableID, _ queue: DatabaseQueue
    ) throws {
        let perDepartment = departmentTotals(salaries: company.salaries)
        let chosen = Self.relationshipDepartments
        let names = chosen.map { company.departments[$0 - 1].name }
        try check(Set(names).count == names.count, "W4c: two departments share a name")

        let nameIndex = try strataStore.write { txn in
            try txn.index(named: StrataCompany.departmentNameIndex)
                ?? txn.createIndex(
                    named: StrataCompany.departmentNameIndex, on: departments, fields: [DepartmentRow.nameField])
        }
        try queue.write { try $0.execute(sql: "CREATE INDEX IF NOT EXISTS department_name ON department(name)") }
        guard let departmentIndex = strataStore.snapshot().index(named: StrataCompany.departmentIndex) else {
            throw BenchmarkFailure("W4c Strata: no \(StrataCompany.departmentIndex) index")
        }
        let sql = """
            SELECT e.name, e.salary FROM department d JOIN employee e ON e.departmentId = d.id WHERE d.name = ?
            """
        try queue.read { db in
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: [names[0]])
                .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
            note("W4c SQLite plan: \(plan)")
        }
        func checkDepartment(
            _ side: String, _ position: Int, _ found: (count: Int, salaries: Int64, names: UInt64)
        )
            throws
        {
            let want = perDepartment[chosen[position]]
            try check(
                found == want,
                "W4c \(side): department \(chosen[position]) gave \(found), expected \(want)")
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                try seconds {
                    let snapshot = strataStore.snapshot()
                    for (position, name) in names.enumerated() {
                        let found = try snapshot.rowIDs(in: nameIndex, matching: [.string(name)])
                        guard found.count == 1 else {
                            throw BenchmarkFailure("W4c Strata: \(found.count) departments named \(name)")
                        }
                        var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                        let rows = try snapshot.rowIDs(in: departmentIndex, matching: [.reference(found[0].rawValue)])
                        // The index gives the rows in increasing order: one walk of the tree reads them all, a
                        // row in the leaf of the row before needs no descent (as SQLite's cursor does in its join).
                        try snapshot.forEachRow(rows, in: table) { row, bytes in
                            guard let bytes else { throw BenchmarkFailure("W4c Strata: row \(row) missing") }
                            totals.count += 1
                            totals.salaries &+= EmployeeRow.salary(bytes)
                            totals.names &+= fnv1a(EmployeeRow.name(bytes).utf8)
                            return true
                        }
                        try checkDepartment("Strata", position, totals)
                    }
                }
            },
            sqlite: { _ in
                try queue.read { db in
                    let select = try RawStatement(db, sql)
                    return try seconds {
                        for (position, name) in names.enumerated() {
                            var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                            try select.text(1, name) {
                                while try select.step() {
                                    totals.count += 1
                                    totals.names &+= fnv1a(select.columnText(0).utf8)
                                    totals.salaries &+= select.columnInt64(1)
                                }
                            }
                            try checkDepartment("SQLite", position, totals)
                        }
                    }
                }
            })
        let queries = Double(names.count)
        emitFigure(
            "W4c", "engine", strata: queries / strata, sqlite: queries / sqlite, unit: "queries/s", better: .higher)
        let rows = chosen.reduce(0) { $0 + perDepartment[$1].count }
        note("W4c: \(names.count) departments by name, \(grouped(rows)) employees read (name and salary) per run")
    }

    // MARK: - W8 cascade_delete

    var cascadeStrata: String { scratch + "/w8-strata" }
    var cascadeSQLiteDirectory: String { scratch + "/w8-sqlite" }
    var cascadeSQLite: String { cascadeSQLiteDirectory + "/company.sqlite" }

    /// What is left after W8: employee count and salary sum, with `salaries` (the salaries after W7).
    func remainingAfterCascade(salaries: [Int64]) -> (count: Int, salarySum: Int64, deleted: Int) {
        let victims = Set(Self.cascadeDepartments)
        var count = 0
        var sum: Int64 = 0
        for (index, employee) in company.employees.enumerated() where !victims.contains(employee.department) {
            count += 1
            sum &+= salaries[index]
        }
        return (count, sum, company.count - count)
    }

    /// Deletes 10 departments and their employees in one transaction, then checkpoints, on a copy of the
    /// N-row store (after W7) made before each repetition. Strata finds the employees through the
    /// `employee_department` index; SQLite deletes the departments with `foreign_keys=ON` and its schema's
    /// `ON DELETE CASCADE`. The last repetition's stores stay for W12.
    func cascadeDelete() throws {
        let expected = remainingAfterCascade(salaries: engineSalaries)
        let victims = Self.cascadeDepartments
        var strataCommits: [Double] = []
        var sqliteCommits: [Double] = []
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                remove(cascadeStrata)
                try copyDurably(engineStrata, to: cascadeStrata)
                let (store, departments, employees) = try StrataCompany.open(at: cascadeStrata)
                guard let index = store.snapshot().index(named: StrataCompany.departmentIndex) else {
                    throw BenchmarkFailure("W8 Strata: no \(StrataCompany.departmentIndex) index")
                }
                var deleted = 0
                var committed = 0.0
                let time = try seconds {
                    committed = try seconds {
                        try store.write { txn in
                            for department in victims {
                                for row in try txn.rowIDs(in: index, matching: [.reference(UInt64(department))]) {
                                    guard try txn.delete(row, from: employees) else {
                                        throw BenchmarkFailure("W8 Strata: employee \(row) missing")
                                    }
                                    deleted += 1
                                }
                                guard try txn.delete(RowID(UInt64(department)), from: departments) else {
                                    throw BenchmarkFailure("W8 Strata: department \(department) missing")
                                }
                            }
                        }
                    }
                    try store.checkpoint()
                }
                strataCommits.append(committed)
                let snapshot = store.snapshot()
                let totals = try StrataCompany.totals(snapshot, employees)
                try check(
                    deleted == expected.deleted && totals.count == expected.count
                        && totals.salarySum == expected.salarySum,
                    "W8 Strata: deleted \(deleted), left \(totals), expected \(expected)")
                try check(
                    try snapshot.rowCount(in: departments) == Company.departmentCount - victims.count,
                    "W8 Strata: department count")
                try check(
                    try snapshot.indexEntryCount(index) == expected.count, "W8 Strata: index entries after the delete")
                try store.close()
                return time
            },
            sqlite: { _ in
                remove(cascadeSQLiteDirectory)
                try copyDurably((engineSQLite as NSString).deletingLastPathComponent, to: cascadeSQLiteDirectory)
                let queue = try SQLiteCompany.open(cascadeSQLite, foreignKeys: true)
                var committed = 0.0
                let time = try seconds {
                    committed = try seconds {
                        try queue.write { db in
                            let list = victims.map(String.init).joined(separator: ",")
                            try db.execute(sql: "DELETE FROM department WHERE id IN (\(list))")
                            try check(db.changesCount == victims.count, "W8 SQLite: \(db.changesCount) departments")
                        }
                    }
                    try SQLiteCompany.checkpoint(queue)
                }
                sqliteCommits.append(committed)
                let totals = try queue.read { try SQLiteCompany.totals($0) }
                try check(
                    totals.count == expected.count && totals.salarySum == expected.salarySum,
                    "W8 SQLite: left \(totals), expected \(expected)")
                let departments = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM department") }
                try check(departments == Company.departmentCount - victims.count, "W8 SQLite: department count")
                try queue.close()
                return time
            })
        emitFigure("W8", "engine", strata: strata, sqlite: sqlite, unit: "s", better: .lower)
        note(
            "W8: \(victims.count) departments and \(grouped(expected.deleted)) employees in one transaction, then a checkpoint, on a fresh copy of the store after W7; commit only (median): Strata \(format(median(strataCommits))) s, SQLite \(format(median(sqliteCommits))) s"
        )
    }

    // MARK: - W12 compact

    /// Compacts copies of W8's stores: Strata's offline `Store.compact` against SQLite's `VACUUM` (then a
    /// TRUNCATE checkpoint, so that the WAL's copy of the database is gone too). MB/s counts the compacted
    /// store's bytes (the live data each side rewrote).
    func compaction() throws {
        try check(
            FileManager.default.fileExists(atPath: cascadeStrata)
                && FileManager.default.fileExists(atPath: cascadeSQLite), "W12 needs W8's stores (run W8 too)")
        let expected = remainingAfterCascade(salaries: engineSalaries)
        let strataCopy = scratch + "/w12-strata"
        let sqliteDirectory = scratch + "/w12-sqlite"
        let sqlitePath = sqliteDirectory + "/company.sqlite"
        var strataSizes: [(before: Double, after: Double)] = []
        var sqliteSizes: [(before: Double, after: Double)] = []
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                remove(strataCopy)
                try copyDurably(cascadeStrata, to: strataCopy)
                var report = CompactionReport()
                let time = try seconds {
                    report = try Store.compact(at: strataCopy, configuration: StrataCompany.configuration())
                }
                try check(
                    report.bytesAfter == bytesOnDisk(strataCopy),
                    "W12 Strata: report says \(report.bytesAfter) B, the directory holds \(bytesOnDisk(strataCopy))")
                strataSizes.append((Double(report.bytesBefore), Double(report.bytesAfter)))
                let (store, _, employees) = try StrataCompany.open(at: strataCopy)
                let totals = try StrataCompany.totals(store.snapshot(), employees)
                try check(
                    totals.count == expected.count && totals.salarySum == expected.salarySum,
                    "W12 Strata: \(totals) after compaction, expected \(expected)")
                let verified = try store.verify()
                try check(verified.isClean, "W12 Strata: verify() after compaction found \(verified.problems)")
                try store.close()
                return time
            },
            sqlite: { _ in
                remove(sqliteDirectory)
                try copyDurably(cascadeSQLiteDirectory, to: sqliteDirectory)
                let before = Double(bytesOnDisk(sqliteDirectory))
                let queue = try SQLiteCompany.open(sqlitePath)
                let time = try seconds {
                    try queue.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
                    try SQLiteCompany.checkpoint(queue)
                }
                let totals = try queue.read { try SQLiteCompany.totals($0) }
                try check(
                    totals.count == expected.count && totals.salarySum == expected.salarySum,
                    "W12 SQLite: \(totals) after VACUUM, expected \(expected)")
                try queue.close()
                sqliteSizes.append((before, Double(bytesOnDisk(sqliteDirectory))))
                return time
            })
        let strataBefore = median(strataSizes.map(\.before))
        let strataAfter = median(strataSizes.map(\.after))
        let sqliteBefore = median(sqliteSizes.map(\.before))
        let sqliteAfter = median(sqliteSizes.map(\.after))
        emitFigure(
            "W12", "engine", strata: strataAfter / 1e6 / strata, sqlite: sqliteAfter / 1e6 / sqlite, unit: "MB/s",
            better: .higher)
        // Reclaimed bytes measure the dead space each design had left, not a better or worse result: no
        // advantage. The size after compaction is comparable (smaller is better).
        emit("W12_reclaimed.engine \(format(strataBefore - strataAfter)) \(format(sqliteBefore - sqliteAfter)) bytes -")
        emitFigure("W12_bytes", "engine", strata: strataAfter, sqlite: sqliteAfter, unit: "bytes", better: .lower)
        note(
            "W12: Strata \(grouped(Int(strataBefore))) -> \(grouped(Int(strataAfter))) B in \(format(strata)) s; SQLite \(grouped(Int(sqliteBefore))) -> \(grouped(Int(sqliteAfter))) B in \(format(sqlite)) s (VACUUM + checkpoint); MB/s = bytes after / s"
        )
        remove(strataCopy)
        remove(sqliteDirectory)
    }
}
