import Foundation
import GRDB
import Strata
import StrataStorage
import StrataWorkload

/// The hidden subcommand `__child <task> <arguments...>`: work that needs a process of its own. Each task reports
/// `key value` lines (``report(_:_:)``) that the parent reads.
enum Child {
    static func run(_ arguments: [String]) throws {
        guard let task = arguments.first else { throw BenchmarkFailure("__child needs a task") }
        let rest = Array(arguments.dropFirst())
        func argument(_ index: Int) throws -> String {
            guard index < rest.count else { throw BenchmarkFailure("__child \(task): missing argument \(index + 1)") }
            return rest[index]
        }
        func integer(_ index: Int) throws -> Int {
            guard let value = Int(try argument(index)) else { throw BenchmarkFailure("__child \(task): bad number") }
            return value
        }
        switch task {
        case "w1-engine-strata": try bulkInsertEngineStrata(directory: argument(0), count: integer(1))
        case "w1-engine-sqlite": try bulkInsertEngineSQLite(path: argument(0), count: integer(1))
        case "w1-graph-strata": try bulkInsertGraphStrata(directory: argument(0), count: integer(1))
        case "w1-graph-sqlite": try bulkInsertGraphSQLite(path: argument(0), count: integer(1))
        case "w10-writer-strata": try crashWriterStrata(directory: argument(0), logBytes: UInt64(integer(1)))
        case "w10-writer-sqlite": try crashWriterSQLite(path: argument(0), logBytes: UInt64(integer(1)))
        case "m1-graph-strata": try faultMemoryStrata(directory: argument(0), count: integer(1), salarySum: integer(2))
        case "m1-graph-sqlite": try recordMemorySQLite(path: argument(0), count: integer(1), salarySum: integer(2))
        case "read-memory-strata": try readMemoryStrata(directory: argument(0), count: integer(1))
        case "read-memory-sqlite": try readMemorySQLite(path: argument(0), count: integer(1))
        case "profile": try Profile.run(argument(0), directory: argument(1), count: integer(2))
        case "w2p-strata", "w2p-sqlite":
            try Benchmark.multiProcessCommitter(
                strata: task == "w2p-strata", target: argument(0), first: integer(1), processes: integer(2),
                end: integer(3), go: argument(4))
        case "w3w-writer-strata", "w3w-writer-sqlite":
            try Benchmark.besideWriter(strata: task == "w3w-writer-strata", target: argument(0))
        default: throw BenchmarkFailure("unknown child task \(task)")
        }
    }

    // MARK: - Peak RSS

    /// Resets the kernel's peak RSS (VmHWM) to the current RSS (`echo 5 > /proc/self/clear_refs`, Linux 4.0+),
    /// so that the peak reported after a figure is the figure's own, not that of the data generation before it.
    static func resetPeakRSS() throws {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { throw BenchmarkFailure("cannot open /proc/self/clear_refs to reset the peak RSS") }
        defer { close(fd) }
        let written = "5".withCString { write(fd, $0, 1) }
        guard written == 1 else { throw BenchmarkFailure("cannot reset the peak RSS (clear_refs)") }
    }

    /// Reports the RSS before a figure and the peak during it.
    static func reportMemory(before: Int) {
        let peak = processStatus("VmHWM")
        report("rss_before", before)
        report("hwm", peak)
        report("peak_delta", max(0, peak - before))
    }

    // MARK: - W1 and M1.engine

    static func bulkInsertEngineStrata(directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let (store, departments, employees) = try StrataCompany.create(at: directory)
        try resetPeakRSS()
        let before = processStatus("VmRSS")
        let start = now()
        try store.write { txn in
            for department in company.departments {
                try txn.insert(DepartmentRow.encode(department), into: departments)
            }
            for employee in company.employees { try txn.insert(EmployeeRow.encode(employee), into: employees) }
        }
        let committed = now()
        let walBytes = store.statistics.walBytes
        try store.checkpoint()
        let end = now()
        reportMemory(before: before)
        let snapshot = store.snapshot()
        try check(try snapshot.rowCount(in: departments) == Company.departmentCount, "W1 Strata: department count")
        let totals = try StrataCompany.totals(snapshot, employees)
        let expected = company.totals(salaries: company.salaries)
        try check(totals.count == count, "W1 Strata: \(totals.count) employees, expected \(count)")
        let entries = try snapshot.index(named: StrataCompany.departmentIndex).map { try snapshot.indexEntryCount($0) }
        try check(entries == count, "W1 Strata: \(entries ?? -1) entries in \(StrataCompany.departmentIndex)")
        try check(
            totals.salarySum == expected.salarySum,
            "W1 Strata: salary sum \(totals.salarySum), expected \(expected.salarySum)")
        try store.close()
        report("seconds", end - start)
        report("commit_seconds", committed - start)
        report("log_bytes", walBytes)
        report("store_bytes", bytesOnDisk(directory))
    }

    static func bulkInsertEngineSQLite(path: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let queue = try SQLiteCompany.create(path)
        try resetPeakRSS()
        let before = processStatus("VmRSS")
        let start = now()
        try queue.write { db in
            try SQLiteCompany.insertDepartments(db, company.departments)
            try SQLiteCompany.insertEmployees(db, company.employees)
        }
        let committed = now()
        let walBytes = fileSize(path + "-wal")
        try SQLiteCompany.checkpoint(queue)
        let end = now()
        reportMemory(before: before)
        let totals = try queue.read { try SQLiteCompany.totals($0) }
        let departments = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM department") }
        let expected = company.totals(salaries: company.salaries)
        try check(departments == Company.departmentCount, "W1 SQLite: department count")
        try check(totals.count == count, "W1 SQLite: \(totals.count) employees, expected \(count)")
        try check(
            totals.salarySum == expected.salarySum,
            "W1 SQLite: salary sum \(totals.salarySum), expected \(expected.salarySum)")
        try queue.close()
        report("seconds", end - start)
        report("commit_seconds", committed - start)
        report("log_bytes", walBytes)
        report("store_bytes", bytesOnDisk(path))
    }

    // MARK: - W1.graph

    static func bulkInsertGraphStrata(directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        remove(directory)
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: true)
        let departmentEntity = model.entitiesByName["Department"]!
        let employeeEntity = model.entitiesByName["Employee"]!
        try resetPeakRSS()
        let before = processStatus("VmRSS")
        let start = now()
        let context = GraphModel.context(coordinator)
        let departments = company.departments.map { row in
            let department = GraphDepartment(entity: departmentEntity, insertInto: context)
            department.name = row.name
            department.budget = row.budget
            return department
        }
        for row in company.employees {
            // The context keeps inserted objects until the save; setting the to-one adds the employee to its
            // department's `employees` (the inverse), as Core Data does.
            let employee = GraphEmployee(entity: employeeEntity, insertInto: context)
            employee.name = row.name
            employee.salary = row.salary
            employee.hired = Date(timeIntervalSince1970: row.hired)
            employee.department = departments[row.department - 1]
        }
        let inserted = now()
        try context.save()
        let saved = now()
        try store.engine.checkpoint()
        let end = now()
        reportMemory(before: before)
        try check(!context.hasChanges, "W1.graph Strata: changes left after the save")
        try check(departments.allSatisfy { !$0.objectID.isTemporaryID }, "W1.graph Strata: a temporary department ID")
        let perDepartment = company.employees.reduce(into: [Int](repeating: 0, count: Company.departmentCount + 1)) {
            $0[$1.department] += 1
        }
        for (index, department) in departments.enumerated() {
            try check(
                department.employees.count == perDepartment[index + 1],
                "W1.graph Strata: department \(index + 1) has \(department.employees.count) employees")
        }
        // Each employee and its department hold each other: turning them into faults breaks the cycles.
        try context.refreshAllObjects()
        let totals = try GraphModel.storeTotals(store, model: model)
        let expected = company.totals(salaries: company.salaries)
        try check(totals.count == count, "W1.graph Strata: \(totals.count) employees, expected \(count)")
        try check(
            totals.salarySum == expected.salarySum,
            "W1.graph Strata: salary sum \(totals.salarySum), expected \(expected.salarySum)")
        try coordinator.removePersistentStore(store)
        report("seconds", end - start)
        report("insert_seconds", inserted - start)
        report("save_seconds", saved - inserted)
        report("store_bytes", bytesOnDisk(directory))
    }

    static func bulkInsertGraphSQLite(path: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let queue = try SQLiteCompany.create(path)
        try resetPeakRSS()
        let before = processStatus("VmRSS")
        let start = now()
        try queue.write { db in
            var departmentIDs: [Int64] = []
            for row in company.departments {
                var department = DepartmentRecord(name: row.name, budget: row.budget)
                try department.insert(db)
                departmentIDs.append(department.id!)
            }
            for row in company.employees {
                var employee = EmployeeRecord(
                    name: row.name, salary: row.salary, hired: Date(timeIntervalSince1970: row.hired),
                    departmentId: departmentIDs[row.department - 1])
                try employee.insert(db)
            }
        }
        let committed = now()
        try SQLiteCompany.checkpoint(queue)
        let end = now()
        reportMemory(before: before)
        let totals = try queue.read { try SQLiteCompany.totals($0) }
        let expected = company.totals(salaries: company.salaries)
        try check(totals.count == count, "W1.graph SQLite: \(totals.count) employees, expected \(count)")
        try check(totals.salarySum == expected.salarySum, "W1.graph SQLite: salary sum \(totals.salarySum)")
        try queue.close()
        report("seconds", end - start)
        report("commit_seconds", committed - start)
        report("store_bytes", bytesOnDisk(path))
    }

    // MARK: - W10: writers killed with SIGKILL

    /// Rows per transaction of the crash writers.
    static let crashBatch = 10_000

    /// Writes employees, 10,000 per transaction, with no checkpoint and no log sync (a process crash keeps what
    /// was written; a power cut is not simulated), until the log holds `logBytes`; then says `ready <rows>
    /// <log bytes> <transactions>` and waits to be killed.
    static func crashWriterStrata(directory: String, logBytes: UInt64) throws {
        let configuration = StrataCompany.configuration(durability: .off, checkpointThresholdBytes: .max)
        let (store, departments, employees) = try StrataCompany.create(at: directory, configuration: configuration)
        let workload = CompanyWorkload(employeeCount: 1 << 40)
        try store.write { txn in
            for department in workload.departments {
                try txn.insert(DepartmentRow.encode(department), into: departments)
            }
        }
        var iterator = workload.employees.makeIterator()
        var rows = 0
        var transactions = 2  // the tables, the departments
        while store.statistics.walBytes < logBytes {
            try store.write { txn in
                for _ in 0..<crashBatch { try txn.insert(EmployeeRow.encode(iterator.next()!), into: employees) }
            }
            rows += crashBatch
            transactions += 1
        }
        try check(store.statistics.checkpointCount == 0, "W10 Strata writer: a checkpoint ran")
        emit("ready \(rows) \(store.statistics.walBytes) \(transactions)")
        while true { sleep(3600) }
    }

    static func crashWriterSQLite(path: String, logBytes: UInt64) throws {
        let queue = try SQLiteCompany.create(path, synchronous: "OFF")
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let workload = CompanyWorkload(employeeCount: 1 << 40)
        try queue.write { try SQLiteCompany.insertDepartments($0, workload.departments) }
        var iterator = workload.employees.makeIterator()
        var rows = 0
        var transactions = 2
        while fileSize(path + "-wal") < logBytes {
            try queue.write { db in
                try SQLiteCompany.insertEmployees(db, (0..<crashBatch).lazy.map { _ in iterator.next()! })
            }
            rows += crashBatch
            transactions += 1
        }
        emit("ready \(rows) \(fileSize(path + "-wal")) \(transactions)")
        while true { sleep(3600) }
    }

    // MARK: - M1.graph

    /// Registers every employee of the graph store as a fault (one fetch) and reports the RSS it costs per object;
    /// then fires every fault and reports that too.
    static func faultMemoryStrata(directory: String, count: Int, salarySum: Int) throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        // Warm the engine's page cache first, so that the delta is the objects', not the cache's.
        let snapshot = store.engine.snapshot()
        var rows = 0
        try snapshot.forEachRow(in: snapshot.table(named: GraphModel.employeeTable)!) { _, _ in
            rows += 1
            return true
        }
        try check(rows == count, "M1.graph Strata: \(rows) rows")
        let context = GraphModel.context(coordinator)
        let before = processStatus("VmRSS")
        let employees = try context.fetch(FetchRequest<GraphEmployee>(entityName: "Employee"))
        let registered = processStatus("VmRSS")
        try check(employees.count == count, "M1.graph Strata: fetched \(employees.count) employees")
        try check(employees.allSatisfy(\.isFault), "M1.graph Strata: a fetched employee is not a fault")
        var sum: Int64 = 0
        for employee in employees { sum &+= employee.salary }
        let fired = processStatus("VmRSS")
        try check(sum == Int64(salarySum), "M1.graph Strata: salary sum \(sum), expected \(salarySum)")
        try check(context.registeredObjects.count == count, "M1.graph Strata: registered objects")
        report("bytes_per_fault", Double(registered - before) / Double(count))
        report("bytes_per_fired", Double(fired - before) / Double(count))
        withExtendedLifetime(employees) {}
        try coordinator.removePersistentStore(store)
    }

    /// GRDB's counterpart: every employee fetched as a record (`EmployeeRecord.fetchAll`), RSS per record.
    static func recordMemorySQLite(path: String, count: Int, salarySum: Int) throws {
        let queue = try SQLiteCompany.open(path)
        // Warm SQLite's page cache first, as the Strata side warms its own.
        let warm = try queue.read { try SQLiteCompany.totals($0) }
        try check(warm.count == count, "M1.graph SQLite: \(warm.count) rows")
        let before = processStatus("VmRSS")
        let employees = try queue.read { try EmployeeRecord.fetchAll($0) }
        let loaded = processStatus("VmRSS")
        try check(employees.count == count, "M1.graph SQLite: fetched \(employees.count) records")
        let sum = employees.reduce(Int64(0)) { $0 &+ $1.salary }
        try check(sum == Int64(salarySum), "M1.graph SQLite: salary sum \(sum), expected \(salarySum)")
        report("bytes_per_record", Double(loaded - before) / Double(count))
        withExtendedLifetime(employees) {}
        try queue.close()
    }
}
