import Foundation
import Strata
import StrataStorage
import StrataWorkload

/// `__child profile <figure> <directory> <N>`: Strata's side of one figure alone, on a store built beforehand, for
/// `perf record -g` (README.md, "Profiling"). No SQLite, no alternation, one pass; checks as in the figure.
///
/// - `w2 <directory> <N>`: 5,000 durable one-row commits on a new store.
/// - `w4a <engine store> <N>`: 20 predicate scans. `w7 <engine store> <N>`: 100,000 updates, one transaction.
/// - `w6-read <directory> <N>`: stores the 10,000 compressible blobs, then reads them back three times.
/// - `w10-open <crashed store> <N>`: opens a store a crash writer left (`__child w10-writer-strata`).
/// - `w3-graph`, `w7-graph <graph store> <N>`: the object-graph lookups and updates.
enum Profile {
    static func run(_ figure: String, directory: String, count: Int) throws {
        let start = now()
        switch figure {
        case "w2": try commits(directory)
        case "w4a": try scans(directory, count: count)
        case "w7": try updates(directory, count: count)
        case "w6-read": try blobReads(directory)
        case "w10-open": try recovery(directory)
        case "w3-graph": try graphLookups(directory, count: count)
        case "w7-graph": try graphUpdates(directory, count: count)
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
        try store.write { txn in
            for update in updates {
                let row = RowID(UInt64(update.row))
                guard let old = try txn.row(row, in: table) else { throw BenchmarkFailure("profile w7: row missing") }
                try txn.update(row, in: table, to: EmployeeRow.withSalary(old, update.salary))
            }
        }
        try store.checkpoint()
        try store.close()
    }

    static func blobReads(_ directory: String) throws {
        let pool = BlobPool(.compressible)
        remove(directory)
        let store = try Store.open(at: directory, configuration: StrataCompany.configuration())
        let ids = try store.write { txn in
            try (0..<BlobPool.blobCount).map { try txn.storeBlob(Array(pool.chunk($0))) }
        }
        let snapshot = store.snapshot()
        var bytes = 0
        for _ in 0..<3 {
            for id in ids { bytes += try snapshot.readBlob(id)!.count }
        }
        try check(bytes == 3 * BlobPool.blobCount * BlobPool.chunkSize, "profile w6-read: bytes")
        try store.close()
    }

    static func recovery(_ directory: String) throws {
        let (store, _, table) = try StrataCompany.open(at: directory)
        try check(store.recoveryReport.replayedTransactions > 0, "profile w10-open: nothing replayed")
        report("rows", try store.snapshot().rowCount(in: table))
        try store.close()
    }

    static func graphLookups(_ directory: String, count: Int) throws {
        let company = Company(employeeCount: count)
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(directory, model: model, create: false)
        let ids = try {
            let context = ManagedObjectContext(coordinator: coordinator)
            return try context.fetch(FetchRequest<GraphEmployee>(entityName: "Employee")).map(\.objectID)
        }()
        let rows = company.lookupRows(min(1_000_000, 10 * count), seed: 3)
        let context = ManagedObjectContext(coordinator: coordinator)
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
            let context = ManagedObjectContext(coordinator: coordinator)
            return try context.fetch(FetchRequest<GraphEmployee>(entityName: "Employee")).map(\.objectID)
        }()
        let updates = company.salaryUpdates(min(100_000, count), seed: 199)
        let start = now()
        let context = ManagedObjectContext(coordinator: coordinator)
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
}
