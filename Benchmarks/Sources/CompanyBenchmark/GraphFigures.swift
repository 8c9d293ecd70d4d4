import Foundation
import GRDB
import Strata
import StrataStorage

/// The object-graph figures: Strata's contexts and managed objects against GRDB records.
extension Benchmark {
    var graphStrata: String { scratch + "/graph-strata" }
    var graphSQLite: String { scratch + "/graph-sqlite/company.sqlite" }

    // MARK: - W1.graph

    func graphBulkInsert() throws {
        try FileManager.default.createDirectory(
            atPath: (graphSQLite as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let child = try ChildProcess.run("w1-graph-strata", [graphStrata, "\(company.count)"])
                note(
                    "W1.graph Strata: \(child.shown("seconds")) s (objects \(child.shown("insert_seconds")) s, save \(child.shown("save_seconds")) s, then checkpoint), peak RSS +\(child.shown("peak_delta")) B, store \(child.shown("store_bytes")) B"
                )
                return try child.number("seconds")
            },
            sqlite: { _ in
                let child = try ChildProcess.run("w1-graph-sqlite", [graphSQLite, "\(company.count)"])
                note(
                    "W1.graph GRDB: \(child.shown("seconds")) s (commit \(child.shown("commit_seconds")) s, then checkpoint), peak RSS +\(child.shown("peak_delta")) B, database \(child.shown("store_bytes")) B"
                )
                return try child.number("seconds")
            })
        let objects = Double(company.count + Company.departmentCount)
        emitFigure("W1", "graph", strata: objects / strata, sqlite: objects / sqlite, unit: "rows/s", better: .higher)
    }

    /// The permanent IDs of every employee of the graph store, by row (row `i + 1` at index `i`), read with one
    /// fetch whose objects are then released.
    func employeeIDs(_ coordinator: PersistentStoreCoordinator) throws -> [ManagedObjectID] {
        let context = GraphModel.context(coordinator)
        let employees = try context.fetch(FetchRequest<GraphEmployee>(entityName: "Employee"))
        try check(employees.count == company.count, "graph store: \(employees.count) employees")
        let ids = employees.map(\.objectID)
        for (index, id) in ids.enumerated() {
            guard id.rowID == UInt64(index + 1) else {
                throw BenchmarkFailure("graph store: employee \(index) has row \(id.rowID ?? 0)")
            }
        }
        return ids
    }

    // MARK: - W3.graph and M1.graph

    func graphLookups() throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(graphStrata, model: model, create: false)
        let ids = try employeeIDs(coordinator)
        try check(coordinator.rowCacheStatistics.entries == 0, "W3.graph: the row cache still holds the fetch's rows")
        let queue = try SQLiteCompany.open(graphSQLite)

        let rows = company.lookupRows(lookupCount, seed: 3)
        let expected = company.lookupChecksum(rows, salaries: company.salaries)
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                // A new context: every lookup makes a fault and fires it from the store (nothing else holds the
                // object, so it leaves the context again and the row cache keeps nothing).
                let context = GraphModel.context(coordinator)
                var salaries: Int64 = 0
                var names: UInt64 = 0
                let time = seconds {
                    for row in rows {
                        let employee = context.object(with: ids[Int(row) - 1]) as! GraphEmployee
                        names &+= fnv1a(employee.name.utf8)
                        salaries &+= employee.salary
                    }
                }
                try check(
                    salaries == expected.salaries && names == expected.names, "W3.graph Strata: wrong names or salaries"
                )
                return time
            },
            sqlite: { _ in
                try graphLookupsGRDB(queue, rows, expected, cached: true)
            })
        emitFigure(
            "W3", "graph", strata: Double(rows.count) / strata, sqlite: Double(rows.count) / sqlite, unit: "lookups/s",
            better: .higher)
        note(
            "W3.graph SQLite = EmployeeRecord.fetchOne(cachedStatement, arguments: [id]) (GRDB's plain fetchOne(db, key:) below)"
        )

        // GRDB's plain `fetchOne(db, key:)` prepares its SQL at every call: fewer lookups, reported as a note.
        let plainRows = Array(rows.prefix(min(rows.count, 100_000)))
        let plainExpected = company.lookupChecksum(plainRows, salaries: company.salaries)
        var plainTimes: [Double] = []
        for _ in 0..<repetitions {
            plainTimes.append(try graphLookupsGRDB(queue, plainRows, plainExpected, cached: false))
        }
        let plainRate = Double(plainRows.count) / median(plainTimes)
        note(
            "W3.graph GRDB plain EmployeeRecord.fetchOne(db, key:): \(format(plainRate)) lookups/s over \(grouped(plainRows.count)) lookups (Strata/plain \(String(format: "%.2f", Double(rows.count) / strata / plainRate)))"
        )
        try queue.close()
        try coordinator.removePersistentStore(store)
    }

    private func graphLookupsGRDB(
        _ queue: DatabaseQueue, _ rows: [Int64], _ expected: (salaries: Int64, names: UInt64), cached: Bool
    ) throws -> Double {
        var salaries: Int64 = 0
        var names: UInt64 = 0
        let time = try queue.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM employee WHERE id = ?")
            return try seconds {
                for row in rows {
                    let record =
                        cached
                        ? try EmployeeRecord.fetchOne(statement, arguments: [row])
                        : try EmployeeRecord.fetchOne(db, key: row)
                    guard let record else { throw BenchmarkFailure("W3.graph GRDB: row \(row) missing") }
                    names &+= fnv1a(record.name.utf8)
                    salaries &+= record.salary
                }
            }
        }
        try check(salaries == expected.salaries && names == expected.names, "W3.graph GRDB: wrong names or salaries")
        return time
    }

    /// M1.graph, in child processes: RSS per employee with every employee registered as a fault (one fetch),
    /// against RSS per GRDB record fetched with `fetchAll`.
    func graphMemory() throws {
        let sum = "\(company.salaries.reduce(Int64(0), &+))"
        var strataFired: [Double] = []
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let child = try ChildProcess.run("m1-graph-strata", [graphStrata, "\(company.count)", sum])
                strataFired.append(try child.number("bytes_per_fired"))
                return try child.number("bytes_per_fault")
            },
            sqlite: { _ in
                try ChildProcess.run("m1-graph-sqlite", [graphSQLite, "\(company.count)", sum]).number(
                    "bytes_per_record")
            })
        deferredFigures.append {
            emitFigure("M1", "graph", strata: strata, sqlite: sqlite, unit: "bytes", better: .lower)
            note(
                "M1.graph: Strata = RSS per employee registered as a fault by one fetch of \(grouped(self.company.count)) (\(format(median(strataFired))) B once every fault is fired); SQLite = RSS per GRDB record of EmployeeRecord.fetchAll"
            )
        }
    }

    // MARK: - W7.graph

    func graphUpdates() throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(graphStrata, model: model, create: false)
        let ids = try employeeIDs(coordinator)
        let queue = try SQLiteCompany.open(graphSQLite)
        let count = min(100_000, company.count)
        var strataSalaries = company.salaries
        var sqliteSalaries = company.salaries
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { repetition in
                let updates = company.salaryUpdates(count, seed: 170 + UInt64(repetition))
                let time = try seconds {
                    let context = GraphModel.context(coordinator)
                    for update in updates {
                        let employee = context.object(with: ids[Int(update.row) - 1]) as! GraphEmployee
                        employee.salary = update.salary
                    }
                    try context.save()
                    try store.engine.checkpoint()
                }
                for update in updates { strataSalaries[Int(update.row) - 1] = update.salary }
                let totals = try GraphModel.storeTotals(store, model: model)
                let expected = strataSalaries.reduce(Int64(0), &+)
                try check(
                    totals.count == company.count && totals.salarySum == expected,
                    "W7.graph Strata: salary sum \(totals.salarySum), expected \(expected)")
                return time
            },
            sqlite: { repetition in
                let updates = company.salaryUpdates(count, seed: 170 + UInt64(repetition))
                let time = try seconds {
                    try queue.write { db in
                        let select = try db.cachedStatement(sql: "SELECT * FROM employee WHERE id = ?")
                        for update in updates {
                            guard var employee = try EmployeeRecord.fetchOne(select, arguments: [update.row]) else {
                                throw BenchmarkFailure("W7.graph GRDB: row \(update.row) missing")
                            }
                            employee.salary = update.salary
                            try employee.update(db)
                        }
                    }
                    try SQLiteCompany.checkpoint(queue)
                }
                for update in updates { sqliteSalaries[Int(update.row) - 1] = update.salary }
                let totals = try queue.read { try SQLiteCompany.totals($0) }
                let expected = sqliteSalaries.reduce(Int64(0), &+)
                try check(
                    totals.count == company.count && totals.salarySum == expected,
                    "W7.graph GRDB: salary sum \(totals.salarySum), expected \(expected)")
                return time
            })
        try queue.close()
        try coordinator.removePersistentStore(store)
        try check(strataSalaries == sqliteSalaries, "W7.graph: the two sides applied different updates")
        graphSalaries = strataSalaries
        emitFigure(
            "W7", "graph", strata: Double(count) / strata, sqlite: Double(count) / sqlite, unit: "rows/s",
            better: .higher)
        note(
            "W7.graph: Strata faults each object by ID, sets salary, one save; GRDB fetches each record with a cached statement and calls update(db), one transaction; both then checkpoint"
        )
    }
}
