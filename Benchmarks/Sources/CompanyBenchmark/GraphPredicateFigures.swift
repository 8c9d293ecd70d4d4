import Foundation
import GRDB
import Strata
import StrataStorage

/// The object-graph figures that need predicates in fetch requests: W4a.graph (`salary BETWEEN 100000 AND
/// 101800`, no index), W4b.graph (the same with an index on salary, and its build) and W5.graph (average salary
/// grouped by department). They run after M1.graph and before W4c.graph and W7.graph, on the graph stores built by
/// W1.graph, which still hold the generated salaries (`graphSalaries`); W4b.graph drops its indexes again on both
/// sides, so that W7.graph and W8.graph maintain the same indexes as before.
extension Benchmark {
    func graphPredicateFigures() throws {
        func step(_ id: String, _ body: () throws -> Void) throws {
            guard wants(id) else { return }
            let start = now()
            try body()
            note("\(id) took \(format(now() - start)) s")
        }
        try step("W4a.graph") { try graphPredicateScan(indexed: false) }
        try step("W4b.graph") { try graphPredicateScan(indexed: true) }
        try step("W5.graph") { try graphAggregate() }
    }

    /// The engine index that `Employee.salary` marked `.indexed()` gives (``StrataStore``'s naming).
    static let graphSalaryIndex = "attr.Employee.salary"

    // MARK: - W4a.graph, W4b.graph

    /// What W4a's range must find among the graph store's employees: count, salary sum, sum of name hashes.
    func graphRangeTotals() -> (count: Int, salaries: Int64, names: UInt64) {
        var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
        for (index, salary) in graphSalaries.enumerated() where Company.salaryRange.contains(salary) {
            totals.count += 1
            totals.salaries &+= salary
            totals.names &+= company.nameHashes[index]
        }
        return totals
    }

    /// W4a.graph (`indexed` false) and W4b.graph (true), 20 queries per measurement.
    ///
    /// Strata: a fetch request `salary BETWEEN {100000, 101800}` of managed objects (faults whose rows the fetch
    /// cached), each query in a new context (undo off), reading each employee's name and salary (firing the
    /// fault from the cached row). Without an index the store scans the employee table and tests the predicate
    /// on each encoded row; with `salary` marked `.indexed()` in the model, the store opens the engine index
    /// `attr.Employee.salary` (building it on the existing store: that open is W4b_build.graph) and reads the
    /// candidate rows from its range. GRDB: `EmployeeRecord.fetchAll` of `SELECT * FROM employee WHERE salary
    /// BETWEEN ? AND ?` through a cached statement (a table scan, or `employee_salary` made with GRDB's
    /// `create(index:)`), reading name and salary of each record.
    func graphPredicateScan(indexed: Bool) throws {
        let id = indexed ? "W4b" : "W4a"
        let plainModel = try GraphModel.make()
        GraphModel.registerClasses()
        let model = indexed ? try GraphModel.make(salaryIndexed: true) : plainModel
        let expected = graphRangeTotals()
        let range = Company.salaryRange
        let queue = try SQLiteCompany.open(graphSQLite)

        if indexed {
            // The build, as W4b_build: each repetition drops the indexes (untimed), then on the Strata side opens
            // the store with the indexed model (the open creates `attr.Employee.salary` over the N rows) and
            // checkpoints; GRDB creates `employee_salary` and checkpoints. The last build stays for the queries.
            var opens: [Double] = []
            let (strataBuild, sqliteBuild) = try alternate(
                repetitions,
                strata: { _ in
                    try dropGraphSalaryIndex(plainModel)
                    // The same open without the index build, for the note (untimed for the figure).
                    let plainOpen = try seconds {
                        let (coordinator, store) = try GraphModel.open(graphStrata, model: plainModel, create: false)
                        try coordinator.removePersistentStore(store)
                    }
                    opens.append(plainOpen)
                    var opened: (coordinator: PersistentStoreCoordinator, store: StrataStore)?
                    let time = try seconds {
                        opened = try GraphModel.open(graphStrata, model: model, create: false)
                        try opened!.store.engine.checkpoint()
                    }
                    let snapshot = opened!.store.engine.snapshot()
                    guard let index = snapshot.index(named: Self.graphSalaryIndex) else {
                        throw BenchmarkFailure("W4b.graph Strata: no \(Self.graphSalaryIndex) after the open")
                    }
                    let entries = try snapshot.indexEntryCount(index)
                    try check(entries == company.count, "W4b.graph Strata: the salary index has \(entries) entries")
                    try opened!.coordinator.removePersistentStore(opened!.store)
                    return time
                },
                sqlite: { _ in
                    try queue.write { db in
                        if try db.indexes(on: "employee").contains(where: { $0.name == "employee_salary" }) {
                            try db.drop(index: "employee_salary")
                        }
                    }
                    try SQLiteCompany.checkpoint(queue)
                    return try seconds {
                        try queue.write { try $0.create(index: "employee_salary", on: "employee", columns: ["salary"]) }
                        try SQLiteCompany.checkpoint(queue)
                    }
                })
            note(
                "W4b.graph index build (Strata: the store opened with salary marked indexed, which creates attr.Employee.salary over the N rows, then a checkpoint; GRDB: db.create(index:) on salary, then a checkpoint; median): Strata \(format(strataBuild)) s (the same open without the build: \(format(median(opens))) s), GRDB \(format(sqliteBuild)) s"
            )
            emitFigure("W4b_build", "graph", strata: strataBuild, sqlite: sqliteBuild, unit: "s", better: .lower)
        }

        let (coordinator, store) = try GraphModel.open(graphStrata, model: model, create: false)
        let request = FetchRequest<GraphEmployee>(entityName: "Employee")
        try request.setPredicate(format: "salary BETWEEN {%d, %d}", range.lowerBound, range.upperBound)
        let sql = "SELECT * FROM employee WHERE salary BETWEEN ? AND ?"
        try queue.read { db in
            let plan = try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: [range.lowerBound, range.upperBound]
            )
            .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
            note("\(id).graph SQLite plan: \(plan)")
            try check(
                plan.contains("employee_salary") == indexed,
                "\(id).graph: SQLite's plan is not the expected one (\(plan))")
        }
        // Untimed checks: the store's count, and the rows one query examines (the index range, or every row).
        let examinedBefore = store.rowsExamined
        let counted = try GraphModel.context(coordinator).count(for: request)
        let examined = store.rowsExamined - examinedBefore
        try check(
            counted == expected.count, "\(id).graph Strata: count(for:) gave \(counted), expected \(expected.count)")
        try check(
            examined == (indexed ? expected.count : company.count),
            "\(id).graph Strata: a query examined \(examined) rows (index range \(expected.count), table \(company.count))"
        )

        func checkTotals(_ side: String, _ found: (count: Int, salaries: Int64, names: UInt64)) throws {
            try check(found == expected, "\(id).graph \(side): found \(found), expected \(expected)")
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                try seconds {
                    for _ in 0..<Self.scanQueries {
                        let context = GraphModel.context(coordinator)
                        var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                        for employee in try context.fetch(request) {
                            totals.count += 1
                            totals.salaries &+= employee.salary
                            totals.names &+= fnv1a(employee.name.utf8)
                        }
                        try checkTotals("Strata", totals)
                    }
                }
            },
            sqlite: { _ in
                try queue.read { db in
                    let select = try db.cachedStatement(sql: sql)
                    return try seconds {
                        for _ in 0..<Self.scanQueries {
                            var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                            for employee in try EmployeeRecord.fetchAll(
                                select, arguments: [range.lowerBound, range.upperBound])
                            {
                                totals.count += 1
                                totals.salaries &+= employee.salary
                                totals.names &+= fnv1a(employee.name.utf8)
                            }
                            try checkTotals("GRDB", totals)
                        }
                    }
                }
            })
        try coordinator.removePersistentStore(store)
        if indexed {
            // Back to the graph stores' own indexes for the figures after this one.
            try dropGraphSalaryIndex(plainModel)
            try queue.write { try $0.drop(index: "employee_salary") }
            try SQLiteCompany.checkpoint(queue)
            note("W4b.graph: the salary index is dropped again on both sides after the queries")
        }
        try queue.close()
        let queries = Double(Self.scanQueries)
        emitFigure(
            id, "graph", strata: queries / strata, sqlite: queries / sqlite, unit: "queries/s", better: .higher)
        note(
            "\(id).graph method: Strata fetches GraphEmployee with the predicate salary BETWEEN {100000, 101800} (\(indexed ? "salary marked indexed: a range of attr.Employee.salary" : "no index: a scan testing each encoded row")), a new context per query, reading name and salary of each of the \(grouped(expected.count)) results; GRDB: EmployeeRecord.fetchAll through a cached statement (\(indexed ? "employee_salary" : "a table scan")), reading name and salary"
        )
    }

    /// Drops `attr.Employee.salary` from the Strata graph store if it is there, and checkpoints (untimed).
    func dropGraphSalaryIndex(_ plainModel: ManagedObjectModel) throws {
        let (coordinator, store) = try GraphModel.open(graphStrata, model: plainModel, create: false)
        let dropped = try store.engine.write { txn -> Bool in
            guard let index = txn.index(named: Self.graphSalaryIndex) else { return false }
            try txn.dropIndex(index)
            return true
        }
        if dropped { try store.engine.checkpoint() }
        try coordinator.removePersistentStore(store)
    }

    // MARK: - W5.graph

    /// Average salary grouped by department, 10 queries per measurement. Strata: a dictionary fetch of
    /// Employee with `propertiesToFetch` = `department`, `average:(salary)` (as a double) and `count:`,
    /// `propertiesToGroupBy` = `department` (the to-one: its object ID), in a new context per query. GRDB:
    /// `Row.fetchAll` of `SELECT departmentId, avg(salary), count(*) FROM employee GROUP BY departmentId`
    /// through a cached statement. Both check 100 groups, each department's count and average, and the overall
    /// mean.
    func graphAggregate() throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(graphStrata, model: model, create: false)
        let queue = try SQLiteCompany.open(graphSQLite)
        let expected = company.totals(salaries: graphSalaries)
        let averages = Company.averages(expected)
        let departments = Company.departmentCount
        let overallMean = Double(expected.salarySum) / Double(expected.count)

        // Each department's object ID to its number (1...100, by its generated name), untimed.
        let numbers: [UInt64: Int] = try {
            let byName = Dictionary(
                uniqueKeysWithValues: company.departments.enumerated().map { ($0.element.name, $0.offset + 1) })
            let context = GraphModel.context(coordinator)
            var numbers: [UInt64: Int] = [:]
            for department in try context.fetch(FetchRequest<GraphDepartment>(entityName: "Department")) {
                guard let number = byName[department.name], let row = department.objectID.rowID else {
                    throw BenchmarkFailure("W5.graph Strata: unknown department \(department.name)")
                }
                numbers[row] = number
            }
            return numbers
        }()
        try check(numbers.count == departments, "W5.graph Strata: \(numbers.count) departments")

        func checkGroups(_ side: String, _ groups: Int, _ counts: [Int], _ values: [Double]) throws {
            try check(groups == departments, "W5.graph \(side): \(groups) groups")
            var total = 0.0
            for d in 1...departments {
                try check(
                    counts[d] == expected.departmentCounts[d],
                    "W5.graph \(side): department \(d) has \(counts[d]) employees")
                try check(
                    abs(values[d] - averages[d]) <= 1e-9 * averages[d],
                    "W5.graph \(side): department \(d) average \(values[d]), expected \(averages[d])")
                total += values[d] * Double(counts[d])
            }
            let mean = total / Double(expected.count)
            try check(
                abs(mean - overallMean) <= 1e-9 * overallMean, "W5.graph \(side): mean \(mean), expected \(overallMean)"
            )
        }

        let request = FetchRequest<[String: QueryValue]>(entityName: "Employee")
        request.propertiesToFetch = [
            "department",
            .expression(ExpressionDescription(name: "average", .average("salary"), resultType: .double)),
            .expression(ExpressionDescription(name: "count", .count(nil))),
        ]
        request.propertiesToGroupBy = ["department"]
        let sql = "SELECT departmentId, avg(salary), count(*) FROM employee GROUP BY departmentId"
        try queue.read { db in
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql)
            note("W5.graph SQLite plan: \(plan.map { $0["detail"] as String? ?? "" }.joined(separator: "; "))")
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                try seconds {
                    for _ in 0..<Self.aggregateQueries {
                        let context = GraphModel.context(coordinator)
                        var values = [Double](repeating: 0, count: departments + 1)
                        var counts = [Int](repeating: 0, count: departments + 1)
                        let groups = try context.fetch(request)
                        for group in groups {
                            guard case .identity(let identity)? = group["department"],
                                let id = identity.base as? ManagedObjectID, let row = id.rowID,
                                let department = numbers[row],
                                case .double(let average)? = group["average"], case .int(let count)? = group["count"]
                            else {
                                throw BenchmarkFailure("W5.graph Strata: a group is \(group)")
                            }
                            values[department] = average
                            counts[department] = Int(count)
                        }
                        try checkGroups("Strata", groups.count, counts, values)
                    }
                }
            },
            sqlite: { _ in
                try queue.read { db in
                    let select = try db.cachedStatement(sql: sql)
                    return try seconds {
                        for _ in 0..<Self.aggregateQueries {
                            var values = [Double](repeating: 0, count: departments + 1)
                            var counts = [Int](repeating: 0, count: departments + 1)
                            let rows = try Row.fetchAll(select)
                            for row in rows {
                                let department: Int = row[0]
                                guard (1...departments).contains(department) else {
                                    throw BenchmarkFailure("W5.graph GRDB: department \(department)")
                                }
                                values[department] = row[1]
                                counts[department] = row[2]
                            }
                            try checkGroups("GRDB", rows.count, counts, values)
                        }
                    }
                }
            })
        try queue.close()
        try coordinator.removePersistentStore(store)
        let queries = Double(Self.aggregateQueries)
        emitFigure("W5", "graph", strata: strata / queries, sqlite: sqlite / queries, unit: "s/query", better: .lower)
        note(
            "W5.graph method: Strata: a dictionary fetch grouped by the to-one department (propertiesToFetch department, average:(salary) as double, count:), a new context per query; GRDB: Row.fetchAll of SELECT departmentId, avg(salary), count(*) ... GROUP BY departmentId through a cached statement"
        )
    }
}
