#if Postgres
import Foundation
import Logging
import PostgresNIO
import Strata
import StrataPostgres
import StrataTestSupport

/// The graph-pg level: the object-graph figures W1, W3, W4a, W4b, W5, W4c, W7 and W8 with the PostgreSQL store
/// (module StrataPostgres) in place of the Strata store, against the same GRDB figures: the cost of a server
/// behind a socket. It runs after the graph level, in the same order, on a throwaway PostgreSQL cluster of its own
/// (``PostgresTestCluster``, durable: `fsync`, `synchronous_commit` and `full_page_writes` on, as GRDB's side
/// syncs), reached over TCP on 127.0.0.1. The GRDB column repeats the graph level's GRDB figure of this run (the
/// same statements on the same data); without that figure in the run it is `-`.
///
/// Differences from the graph level, each stated in a note: W3 makes 20,000 lookups (each a round trip); W5 runs
/// 3 queries per measurement; W8 runs once (no copy of the schema is made per repetition).
extension Benchmark {
    static let postgresLookups = 20_000
    static let postgresAggregateQueries = 3

    /// The figures of this level, in the order they run.
    static let graphPostgresFigureIDs = [
        "W1.graph-pg", "W3.graph-pg", "W4a.graph-pg", "W4b.graph-pg", "W5.graph-pg", "W4c.graph-pg", "W7.graph-pg",
        "W8.graph-pg",
    ]

    func graphPostgresFigures() throws {
        guard Self.graphPostgresFigureIDs.contains(where: wants) else { return }
        let start = now()
        let cluster = try PostgresTestCluster(durable: true)
        defer { cluster.destroy() }
        note(
            "graph-pg: PostgreSQL cluster started in \(format(now() - start)) s on 127.0.0.1:\(cluster.port) (fsync on)"
        )
        var configuration = PostgresStoreConfiguration(
            host: "127.0.0.1", port: cluster.port, username: cluster.user, database: cluster.database)
        configuration.schema = "company"
        configuration.poolSize = 2
        configuration.logger.logLevel = .warning
        let run = try GraphPostgresRun(benchmark: self, configuration: configuration)
        func step(_ id: String, _ body: () throws -> Void) throws {
            guard wants(id) else { return }
            let start = now()
            try body()
            note("\(id) took \(format(now() - start)) s")
        }
        if wants("W1.graph-pg") {
            try step("W1.graph-pg") { try run.bulkInsert() }
        } else {
            _ = try run.insertOnce()
        }
        try step("W3.graph-pg") { try run.lookups() }
        try step("W4a.graph-pg") { try run.predicateScan(indexed: false) }
        try step("W4b.graph-pg") { try run.predicateScan(indexed: true) }
        try step("W5.graph-pg") { try run.aggregate() }
        try step("W4c.graph-pg") { try run.relationship() }
        try step("W7.graph-pg") { try run.updates() }
        try step("W8.graph-pg") { try run.cascadeDelete() }
    }
}

/// One graph-pg run: the PostgreSQL side of each figure, and the salaries its store holds.
final class GraphPostgresRun {
    let benchmark: Benchmark
    let configuration: PostgresStoreConfiguration
    var company: Company { benchmark.company }
    var repetitions: Int { benchmark.repetitions }
    /// The employees' salaries in the PostgreSQL store (W7 changes them).
    var salaries: [Int64]
    let model: ManagedObjectModel

    init(benchmark: Benchmark, configuration: PostgresStoreConfiguration) throws {
        self.benchmark = benchmark
        self.configuration = configuration
        salaries = benchmark.company.salaries
        GraphModel.registerClasses()
        model = try GraphModel.make()
    }

    /// The graph level's GRDB figure of this run, or nil.
    func grdb(_ id: String) -> Double? { printedFigures.withLock { $0[id + ".graph"]?.sqlite } }

    func open(_ model: ManagedObjectModel? = nil) throws -> (PersistentStoreCoordinator, PostgresStore) {
        let coordinator = PersistentStoreCoordinator(model: model ?? self.model)
        let store = try coordinator.addPersistentStore(.postgres(configuration))
        return (coordinator, store)
    }

    /// Runs one SQL statement of the benchmark's own (dropping an index) on a connection of its own.
    func execute(_ sql: String) throws {
        guard case .tcp(let host, let port) = configuration.endpoint else { return }
        let connection = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(),
            configuration: PostgresConnection.Configuration(
                host: host, port: port, username: configuration.username, password: nil,
                database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "graph-pg")
        ).wait()
        defer { try? connection.close().wait() }
        _ = try connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "graph-pg")).wait()
    }

    // MARK: - W1

    /// A new schema, then 100 departments and N employees inserted in one context and saved: the seconds of the
    /// inserts and the save.
    func insertOnce() throws -> Double {
        try PostgresStore.destroyPersistentStore(configuration: configuration)
        let (coordinator, store) = try open()
        defer { try? coordinator.removePersistentStore(store) }
        let departmentEntity = model.entitiesByName["Department"]!
        let employeeEntity = model.entitiesByName["Employee"]!
        let time = try seconds {
            let context = GraphModel.context(coordinator)
            let departments = company.departments.map { row in
                let department = GraphDepartment(entity: departmentEntity, insertInto: context)
                department.name = row.name
                department.budget = row.budget
                return department
            }
            for row in company.employees {
                let employee = GraphEmployee(entity: employeeEntity, insertInto: context)
                employee.name = row.name
                employee.salary = row.salary
                employee.hired = Date(timeIntervalSince1970: row.hired)
                employee.department = departments[row.department - 1]
            }
            try context.save()
            try context.refreshAllObjects()
        }
        var count = StoreFetchRequest(entity: employeeEntity)
        count.resultKind = .count
        let stored = try store.fetch(count).count
        try check(stored == company.count, "W1.graph-pg: \(stored) employees stored")
        salaries = company.salaries
        return time
    }

    func bulkInsert() throws {
        var times: [Double] = []
        for _ in 0..<repetitions { times.append(try insertOnce()) }
        let objects = Double(company.count + Company.departmentCount)
        emitFigure(
            "W1", "graph-pg", strata: objects / median(times), sqlite: grdb("W1"), unit: "rows/s",
            better: .higher)
        note("W1.graph-pg: one context, one save (one transaction, multi-row INSERTs); GRDB column: W1.graph's")
    }

    /// Every employee's object ID by row (row `i + 1` at index `i`).
    func employeeIDs(_ coordinator: PersistentStoreCoordinator) throws -> [ManagedObjectID] {
        let request = FetchRequest<ManagedObjectID>(entityName: "Employee")
        let ids = try GraphModel.context(coordinator).fetch(request)
        try check(ids.count == company.count, "graph-pg: \(ids.count) employees")
        for (index, id) in ids.enumerated() where id.rowID != UInt64(index + 1) {
            throw BenchmarkFailure("graph-pg: employee \(index) has row \(id.rowID ?? 0)")
        }
        return ids
    }

    // MARK: - W3

    func lookups() throws {
        let (coordinator, store) = try open()
        defer { try? coordinator.removePersistentStore(store) }
        let ids = try employeeIDs(coordinator)
        let rows = company.lookupRows(min(Benchmark.postgresLookups, benchmark.lookupCount), seed: 3)
        let expected = company.lookupChecksum(rows, salaries: salaries)
        var times: [Double] = []
        for _ in 0..<repetitions {
            let context = GraphModel.context(coordinator)
            var sum: Int64 = 0
            var names: UInt64 = 0
            times.append(
                seconds {
                    for row in rows {
                        let employee = context.object(with: ids[Int(row) - 1]) as! GraphEmployee
                        names &+= fnv1a(employee.name.utf8)
                        sum &+= employee.salary
                    }
                })
            try check(sum == expected.salaries && names == expected.names, "W3.graph-pg: wrong names or salaries")
        }
        emitFigure(
            "W3", "graph-pg", strata: Double(rows.count) / median(times), sqlite: grdb("W3"), unit: "lookups/s",
            better: .higher)
        note("W3.graph-pg: \(grouped(rows.count)) lookups (each fault a round trip), a new context per repetition")
    }

    // MARK: - W4a, W4b

    func predicateScan(indexed: Bool) throws {
        let id = indexed ? "W4b" : "W4a"
        var expected = (count: 0, salaries: Int64(0), names: UInt64(0))
        for (index, salary) in salaries.enumerated() where Company.salaryRange.contains(salary) {
            expected.count += 1
            expected.salaries &+= salary
            expected.names &+= company.nameHashes[index]
        }
        let range = Company.salaryRange
        var opened: (PersistentStoreCoordinator, PostgresStore)?
        if indexed {
            // The build: the store opened with salary marked indexed creates the index (CREATE INDEX).
            var builds: [Double] = []
            for _ in 0..<repetitions {
                try execute("DROP INDEX IF EXISTS \"company\".\"ix_Employee_salary\"")
                if let (coordinator, store) = opened { try coordinator.removePersistentStore(store) }
                builds.append(try seconds { opened = try open(try GraphModel.make(salaryIndexed: true)) })
            }
            emitFigure(
                "W4b_build", "graph-pg", strata: median(builds), sqlite: grdb("W4b_build"), unit: "s", better: .lower)
        } else {
            opened = try open()
        }
        let (coordinator, store) = opened!
        let request = FetchRequest<GraphEmployee>(entityName: "Employee")
        try request.setPredicate(format: "salary BETWEEN {%d, %d}", range.lowerBound, range.upperBound)
        var times: [Double] = []
        for _ in 0..<repetitions {
            times.append(
                try seconds {
                    for _ in 0..<Benchmark.scanQueries {
                        let context = GraphModel.context(coordinator)
                        var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                        for employee in try context.fetch(request) {
                            totals.count += 1
                            totals.salaries &+= employee.salary
                            totals.names &+= fnv1a(employee.name.utf8)
                        }
                        try check(totals == expected, "\(id).graph-pg: found \(totals), expected \(expected)")
                    }
                })
        }
        try coordinator.removePersistentStore(store)
        if indexed { try execute("DROP INDEX IF EXISTS \"company\".\"ix_Employee_salary\"") }
        let queries = Double(Benchmark.scanQueries)
        emitFigure(
            id, "graph-pg", strata: queries / median(times), sqlite: grdb(id), unit: "queries/s", better: .higher)
        note(
            "\(id).graph-pg: the predicate is SQL (\(indexed ? "index ix_Employee_salary" : "a sequential scan")); \(grouped(expected.count)) objects per query"
        )
    }

    // MARK: - W5

    func aggregate() throws {
        let (coordinator, store) = try open()
        defer { try? coordinator.removePersistentStore(store) }
        let expected = company.totals(salaries: salaries)
        let averages = Company.averages(expected)
        let request = FetchRequest<[String: QueryValue]>(entityName: "Employee")
        request.propertiesToFetch = [
            "department",
            .expression(ExpressionDescription(name: "average", .average("salary"), resultType: .double)),
            .expression(ExpressionDescription(name: "count", .count(nil))),
        ]
        request.propertiesToGroupBy = ["department"]
        // Department object ID (row) to its number, by name.
        let byName = Dictionary(
            uniqueKeysWithValues: company.departments.enumerated().map { ($0.element.name, $0.offset + 1) })
        var numbers: [UInt64: Int] = [:]
        let context = GraphModel.context(coordinator)
        for department in try context.fetch(FetchRequest<GraphDepartment>(entityName: "Department")) {
            numbers[department.objectID.rowID!] = byName[department.name]
        }
        var times: [Double] = []
        for _ in 0..<repetitions {
            times.append(
                try seconds {
                    for _ in 0..<Benchmark.postgresAggregateQueries {
                        let groups = try GraphModel.context(coordinator).fetch(request)
                        try check(groups.count == Company.departmentCount, "W5.graph-pg: \(groups.count) groups")
                        for group in groups {
                            guard case .identity(let identity)? = group["department"],
                                let id = identity.base as? ManagedObjectID, let number = numbers[id.rowID ?? 0],
                                case .double(let average)? = group["average"], case .int(let count)? = group["count"]
                            else { throw BenchmarkFailure("W5.graph-pg: a group is \(group)") }
                            try check(
                                Int(count) == expected.departmentCounts[number]
                                    && abs(average - averages[number]) <= 1e-9 * averages[number],
                                "W5.graph-pg: department \(number): \(count), \(average)")
                        }
                    }
                })
        }
        let queries = Double(Benchmark.postgresAggregateQueries)
        emitFigure(
            "W5", "graph-pg", strata: median(times) / queries, sqlite: grdb("W5"), unit: "s/query", better: .lower)
        note(
            "W5.graph-pg: the dictionary fetch grouped by department, \(Benchmark.postgresAggregateQueries) queries per measurement"
        )
    }

    // MARK: - W4c

    func relationship() throws {
        let (coordinator, store) = try open()
        defer { try? coordinator.removePersistentStore(store) }
        let perDepartment = benchmark.departmentTotals(salaries: salaries)
        let chosen = Benchmark.relationshipDepartments
        let names = chosen.map { company.departments[$0 - 1].name }
        var times: [Double] = []
        for _ in 0..<repetitions {
            let context = GraphModel.context(coordinator)
            times.append(
                try seconds {
                    for (position, name) in names.enumerated() {
                        let request = FetchRequest<GraphDepartment>(
                            entityName: "Department", predicate: try ObjectPredicate(format: "name == %@", name))
                        let found = try context.fetch(request)
                        guard found.count == 1, let department = found.first else {
                            throw BenchmarkFailure("W4c.graph-pg: \(found.count) departments named \(name)")
                        }
                        var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                        for employee in department.employees {
                            totals.count += 1
                            totals.salaries &+= employee.salary
                            totals.names &+= fnv1a(employee.name.utf8)
                        }
                        let want = perDepartment[chosen[position]]
                        try check(totals == want, "W4c.graph-pg: department \(chosen[position]) gave \(totals)")
                    }
                })
            try context.refreshAllObjects()
        }
        let queries = Double(names.count)
        emitFigure(
            "W4c", "graph-pg", strata: queries / median(times), sqlite: grdb("W4c"), unit: "queries/s",
            better: .higher)
    }

    // MARK: - W7

    func updates() throws {
        let (coordinator, store) = try open()
        defer { try? coordinator.removePersistentStore(store) }
        let ids = try employeeIDs(coordinator)
        let count = min(100_000, company.count)
        var times: [Double] = []
        for repetition in 0..<repetitions {
            let updates = company.salaryUpdates(count, seed: 170 + UInt64(repetition))
            times.append(
                try seconds {
                    let context = GraphModel.context(coordinator)
                    for update in updates {
                        let employee = context.object(with: ids[Int(update.row) - 1]) as! GraphEmployee
                        employee.salary = update.salary
                    }
                    try context.save()
                })
            for update in updates { salaries[Int(update.row) - 1] = update.salary }
        }
        let reader = GraphModel.context(coordinator)
        let totals = try reader.fetch(FetchRequest<GraphEmployee>(entityName: "Employee")).reduce(Int64(0)) {
            $0 &+ $1.salary
        }
        try check(totals == salaries.reduce(Int64(0), &+), "W7.graph-pg: salary sum \(totals)")
        emitFigure(
            "W7", "graph-pg", strata: Double(count) / median(times), sqlite: grdb("W7"), unit: "rows/s",
            better: .higher)
        note(
            "W7.graph-pg: each object faulted by ID (a round trip each), salary set, one save (one UPDATE … FROM VALUES)"
        )
    }

    // MARK: - W8

    func cascadeDelete() throws {
        let (coordinator, store) = try open()
        defer { try? coordinator.removePersistentStore(store) }
        let expected = benchmark.remainingAfterCascade(salaries: salaries)
        let victims = Set(Benchmark.cascadeDepartments.map { company.departments[$0 - 1].name })
        let context = GraphModel.context(coordinator)
        let ids = try context.fetch(FetchRequest<GraphDepartment>(entityName: "Department"))
            .filter { victims.contains($0.name) }.map(\.objectID)
        try check(ids.count == victims.count, "W8.graph-pg: found \(ids.count) departments")
        let time = try seconds {
            let deleting = GraphModel.context(coordinator)
            for id in ids { deleting.delete(deleting.object(with: id)) }
            try deleting.save()
        }
        var count = StoreFetchRequest(entity: model.entitiesByName["Employee"]!)
        count.resultKind = .count
        let left = try store.fetch(count).count
        try check(left == expected.count, "W8.graph-pg: \(left) employees left, expected \(expected.count)")
        emitFigure("W8", "graph-pg", strata: time, sqlite: grdb("W8"), unit: "s", better: .lower)
        note(
            "W8.graph-pg: run once (no copy of the schema per repetition); cascade to \(grouped(expected.deleted)) employees"
        )
    }
}
#endif
