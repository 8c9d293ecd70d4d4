import Foundation
import Strata
import StrataStorage
import StrataWorkload

/// `__child profile <figure> <directory> <N>`: Strata's side of one figure alone, on a store built beforehand, for
/// `perf record -g` (README.md, "Profiling"). No SQLite, no alternation, one pass; checks as in the figure.
///
/// - `w2 <directory> <N>`: 5,000 durable one-row commits on a new store.
/// - `w3 <engine store> <N>`: W3's random lookups by row ID. `w11 <engine store> <N>`: verify() three times.
/// - `w4a <engine store> <N>`: 20 predicate scans. `w7 <engine store> <N>`: 100,000 updates, one transaction.
/// - `w6-read <directory> <N>`: stores the 10,000 compressible blobs, then reads them back three times, each time
///   after a reopen (as W6 reads them: every read is the first of its open).
/// - `w10-open <crashed store> <N>`: opens a store a crash writer left (`__child w10-writer-strata`).
/// - `w3-graph`, `w7-graph <graph store> <N>`: the object-graph lookups and updates.
/// - `w8 <engine store> <N>`: W8's cascade delete (10 departments through `employee_department`), then a
///   checkpoint. It deletes: profile a copy.
/// - `w4a-graph <graph store> <N>`: W4a.graph's 20 salary-range fetches without an index (new context each).
/// - `w4b-graph <graph store> <N>`: the same with `salary` marked indexed (the open builds `attr.Employee.salary`
///   when the store does not have it yet: `open_seconds`; it stays in the store).
/// - `w5-graph <graph store> <N>`: W5.graph's 10 dictionary fetches, average salary and count grouped by department.
/// - `w4c-graph <graph store> <N>`: W4c.graph's 20 departments by name and their employees through the
///   relationship, 3 times. `w8-graph <graph store> <N>`: W8.graph's delete through a context (a copy!).
/// - `w1-index <directory> <N>`: the engine's bulk load three ways (no index; `employee_department` kept from
///   the start; built after the load) and the cost per index entry.
/// - `w12 <engine store after W8> <N>`: W12's `Store.compact` of the store (the benchmark's `w8-strata` after
///   `--keep`). It rewrites the store: profile a copy.
enum Profile {
    static func run(_ figure: String, directory: String, count: Int) throws {
        let start = now()
        switch figure {
        case "w2": try commits(directory)
        case "w4a": try scans(directory, count: count)
        case "w3": try lookups(directory, count: count)
        case "w11": try verification(directory)
        case "w7": try updates(directory, count: count)
        case "w6-read": try blobReads(directory)
        case "w10-open": try recovery(directory)
        case "w3-graph": try graphLookups(directory, count: count)
        case "w7-graph": try graphUpdates(directory, count: count)
        case "w8": try cascade(directory, count: count)
        case "w4c-graph": try graphRelationship(directory, count: count)
        case "w4a-graph": try graphPredicateScan(directory, count: count)
        case "w4b-graph": try graphPredicateScan(directory, count: count, indexed: true)
        case "w5-graph": try graphAggregate(directory, count: count)
        case "w8-graph": try graphCascade(directory, count: count)
        case "w1-index": try indexCost(directory, count: count)
        case "w12": try compaction(directory)
        default: throw BenchmarkFailure("unknown profile \(figure)")
        }
        report("seconds", now() - start)
    }

    static func commits(_ directory: String) throws {
        let company = Company(employeeCount: 5_000)
        let (store, _, table) = try StrataCompany.create(at: directory)
        for employee in company.employees {
            _ = try store.write { txn in try txn.insert(EmployeeRow.encode(employee), into: table) }
        }
        try check(try store.snapshot().rowCount(in: table) == 5_000, "profile w2: row count")
        try store.close()
    }

    static func lookups(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let (store, _, table) = try StrataCompany.open(at: directory)
        let snapshot = store.snapshot()
        var salaries: Int64 = 0
        var names: UInt64 = 0
        for row in company.lookupRows(min(1_000_000, 10 * count), seed: 3) {
            _ = try snapshot.withRow(RowID(UInt64(row)), in: table) { bytes in
                salaries &+= EmployeeRow.salary(bytes)
                names &+= fnv1a(EmployeeRow.name(bytes).utf8)
            }
        }
        try check(salaries != 0, "profile w3: nothing read")
        try store.close()
    }

    static func verification(_ directory: String) throws {
        let (store, _, _) = try StrataCompany.open(at: directory)
        for _ in 0..<3 { try check(try store.verify().isClean, "profile w11: not clean") }
        try store.close()
    }

    static func scans(_ directory: String, count: Int) throws {
        let (store, _, table) = try StrataCompany.open(at: directory)
        var found = 0
        for _ in 0..<Benchmark.scanQueries {
            try store.snapshot().forEachRow(in: table) { _, bytes in
                if Company.salaryRange.contains(EmployeeRow.salary(bytes)) { found += 1 }
                return true
            }
        }
        try check(found > 0, "profile w4a: nothing found")
        try store.close()
    }

    static func updates(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let (store, _, table) = try StrataCompany.open(at: directory)
        let updates = company.salaryUpdates(min(100_000, count), seed: 99)
        let start = now()
        try store.write { txn in
            for update in updates {
                try txn.update(RowID(UInt64(update.row)), in: table) { old, new in
                    EmployeeRow.rewrite(old, salary: update.salary, into: &new)
                }
            }
        }
        let committed = now()
        try store.checkpoint()
        report("commit_seconds", committed - start)
        report("checkpoint_seconds", now() - committed)
        try store.close()
    }

    static func blobReads(_ directory: String) throws {
        let pool = BlobPool(.compressible)
        remove(directory)
        var store = try Store.open(at: directory, configuration: StrataCompany.configuration())
        let ids = try store.write { txn in
            try (0..<BlobPool.blobCount).map { try txn.storeBlob(Array(pool.chunk($0))) }
        }
        var bytes = 0
        // As in W6, every pass reads after a reopen: each blob's first read in that open.
        for _ in 0..<3 {
            try store.close()
            store = try Store.open(at: directory, configuration: StrataCompany.configuration())
            let snapshot = store.snapshot()
            for id in ids { bytes += try snapshot.readBlob(id)!.count }
        }
        try check(bytes == 3 * BlobPool.blobCount * BlobPool.chunkSize, "profile w6-read: bytes")
        try store.close()
    }

    static func recovery(_ directory: String) throws {
        let start = now()
        let (store, _, table) = try StrataCompany.open(at: directory)
        let rows = try store.snapshot().rowCount(in: table)
        report("open_seconds", now() - start)
        try check(store.recoveryReport.replayedTransactions > 0, "profile w10-open: nothing replayed")
        report("rows", rows)
        // Waits for the checkpoint after open, when the recovery left it to another thread.
        try store.close()
    }

    static func graphLookups(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        let ids = try {
            let context = GraphModel.context(coordinator)
            return try context.fetch(FetchRequest<GraphEmployee>(entityName: "Employee")).map(\.objectID)
        }()
        let rows = company.lookupRows(min(1_000_000, 10 * count), seed: 3)
        let context = GraphModel.context(coordinator)
        let start = now()
        var salaries: Int64 = 0
        for row in rows {
            let employee = context.object(with: ids[Int(row) - 1]) as! GraphEmployee
            salaries &+= employee.salary
        }
        report("lookup_seconds", now() - start)
        try check(
            salaries == company.lookupChecksum(rows, salaries: company.salaries).salaries, "profile w3-graph: salaries")
        try coordinator.removePersistentStore(store)
    }

    static func graphUpdates(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        let ids = try {
            let context = GraphModel.context(coordinator)
            return try context.fetch(FetchRequest<GraphEmployee>(entityName: "Employee")).map(\.objectID)
        }()
        let updates = company.salaryUpdates(min(100_000, count), seed: 199)
        let start = now()
        let context = GraphModel.context(coordinator)
        for update in updates {
            let employee = context.object(with: ids[Int(update.row) - 1]) as! GraphEmployee
            employee.salary = update.salary
        }
        let changed = now()
        try context.save()
        let saved = now()
        try store.engine.checkpoint()
        report("change_seconds", changed - start)
        report("save_seconds", saved - changed)
        report("checkpoint_seconds", now() - saved)
        try coordinator.removePersistentStore(store)
    }

    static func cascade(_ directory: String, count: Int) throws {
        let (store, departments, employees) = try StrataCompany.open(at: directory)
        let index = store.snapshot().index(named: StrataCompany.departmentIndex)!
        var deleted = 0
        let start = now()
        try store.write { txn in
            for department in Benchmark.cascadeDepartments {
                for row in try txn.rowIDs(in: index, matching: [.reference(UInt64(department))]) {
                    if try txn.delete(row, from: employees) { deleted += 1 }
                }
                _ = try txn.delete(RowID(UInt64(department)), from: departments)
            }
        }
        let committed = now()
        try store.checkpoint()
        report("commit_seconds", committed - start)
        report("checkpoint_seconds", now() - committed)
        report("deleted", deleted)
        try store.close()
    }

    static func compaction(_ directory: String) throws {
        let start = now()
        let compacted = try Store.compact(at: directory, configuration: StrataCompany.configuration())
        let seconds = now() - start
        report("compact_seconds", seconds)
        report("bytes_before", Int(compacted.bytesBefore))
        report("bytes_after", Int(compacted.bytesAfter))
        report("rows", Int(compacted.rowCount))
        report("indexes", compacted.indexCount)
        report("indexes_copied", compacted.indexesCopied)
        report("index_entries", Int(compacted.indexEntryCount))
        report("mb_per_second", Double(compacted.bytesAfter) / 1e6 / seconds)
        let (store, _, _) = try StrataCompany.open(at: directory)
        try check(try store.verify().isClean, "profile w12: not clean after compaction")
        try store.close()
    }

    static func graphRelationship(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        let names = Benchmark.relationshipDepartments.map { company.departments[$0 - 1].name }
        var read = 0
        let start = now()
        for _ in 0..<3 {
            let context = GraphModel.context(coordinator)
            for name in names {
                let request = FetchRequest<GraphDepartment>(
                    entityName: "Department", predicate: try ObjectPredicate(format: "name == %@", name))
                guard let department = try context.fetch(request).first else {
                    throw BenchmarkFailure("profile w4c-graph: no department \(name)")
                }
                for employee in department.employees {
                    read += 1
                    _ = employee.salary
                }
            }
            try context.refreshAllObjects()
        }
        report("read", read)
        report("query_seconds", now() - start)
        try coordinator.removePersistentStore(store)
    }

    /// W4a.graph's Strata side: 20 fetches with the salary range predicate (no index), a new context each,
    /// reading each result's name and salary.
    static func graphPredicateScan(_ directory: String, count: Int, indexed: Bool = false) throws {
        let model = try GraphModel.make(salaryIndexed: indexed)
        GraphModel.registerClasses()
        let opening = now()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        report("open_seconds", now() - opening)
        var read = 0
        let start = now()
        for _ in 0..<20 {
            let context = GraphModel.context(coordinator)
            let request = FetchRequest<GraphEmployee>(
                entityName: "Employee",
                predicate: try ObjectPredicate(
                    format: "salary BETWEEN {%d, %d}", Company.salaryRange.lowerBound, Company.salaryRange.upperBound))
            for employee in try context.fetch(request) {
                read += 1
                _ = employee.name
                _ = employee.salary
            }
        }
        report("read", read)
        report("query_seconds", now() - start)
        try coordinator.removePersistentStore(store)
    }

    static func graphAggregate(_ directory: String, count: Int) throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        let request = FetchRequest<[String: QueryValue]>(entityName: "Employee")
        request.propertiesToFetch = [
            "department",
            .expression(ExpressionDescription(name: "average", .average("salary"), resultType: .double)),
            .expression(ExpressionDescription(name: "count", .count(nil))),
        ]
        request.propertiesToGroupBy = ["department"]
        var counted: Int64 = 0
        let start = now()
        for _ in 0..<10 {
            let context = GraphModel.context(coordinator)
            for group in try context.fetch(request) {
                guard case .int(let number)? = group["count"] else {
                    throw BenchmarkFailure("w5-graph: a group is \(group)")
                }
                counted += number
            }
        }
        try check(counted == 10 * Int64(count), "w5-graph: counted \(counted)")
        report("query_seconds", now() - start)
        try coordinator.removePersistentStore(store)
    }

    static func graphCascade(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        let names = Set(Benchmark.cascadeDepartments.map { company.departments[$0 - 1].name })
        let ids = try {
            let context = GraphModel.context(coordinator)
            return try context.fetch(FetchRequest<GraphDepartment>(entityName: "Department"))
                .filter { names.contains($0.name) }.map(\.objectID)
        }()
        let start = now()
        let context = GraphModel.context(coordinator)
        for id in ids { context.delete(context.object(with: id)) }
        try context.save()
        let saved = now()
        try store.engine.checkpoint()
        report("save_seconds", saved - start)
        report("checkpoint_seconds", now() - saved)
        try coordinator.removePersistentStore(store)
    }

    /// The engine's bulk load without an index, with `employee_department` from the start, and with the index
    /// built after the load: the difference is the cost of the index entries.
    static func indexCost(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        func load(index: Bool) throws -> (seconds: Double, store: Store, employees: TableID) {
            remove(directory)
            let store = try Store.open(at: directory, configuration: StrataCompany.configuration())
            let (departments, employees) = try store.write { txn in
                let tables = (
                    try txn.createTable(named: StrataCompany.departmentTable),
                    try txn.createTable(named: StrataCompany.employeeTable)
                )
                if index {
                    try txn.createIndex(
                        named: StrataCompany.departmentIndex, on: tables.1, fields: [EmployeeRow.departmentField])
                }
                return tables
            }
            let time = try seconds {
                try store.write { txn in
                    for department in company.departments {
                        try txn.insert(DepartmentRow.encode(department), into: departments)
                    }
                    for employee in company.employees {
                        try txn.insert(EmployeeRow.encode(employee), into: employees)
                    }
                }
                try store.checkpoint()
            }
            return (time, store, employees)
        }
        let plain = try load(index: false)
        let build = try seconds {
            try plain.store.write { txn in
                _ = try txn.createIndex(
                    named: StrataCompany.departmentIndex, on: plain.employees, fields: [EmployeeRow.departmentField])
            }
            try plain.store.checkpoint()
        }
        try plain.store.close()
        let indexed = try load(index: true)
        try indexed.store.close()
        remove(directory)
        report("load_seconds_no_index", plain.seconds)
        report("index_build_after_load_seconds", build)
        report("load_seconds_with_index", indexed.seconds)
        report("microseconds_per_index_entry", (indexed.seconds - plain.seconds) / Double(count) * 1e6)
        report("microseconds_per_unindexed_row", plain.seconds / Double(count) * 1e6)
    }
}
