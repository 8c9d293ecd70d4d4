import Foundation
import GRDB
import Strata
import StrataStorage

/// The object-graph figures that need relationships: W4c.graph (employees of a department found by its name)
/// and W8.graph (cascade delete through a context).
extension Benchmark {
    // MARK: - W4c.graph

    /// Strata fetches each department with the predicate `name == %@` (a scan of the 100 department rows: the
    /// model has no index on the name, as the GRDB schema has none), then reads `department.employees` (faults
    /// from the `fk.Employee.department` index range) and each employee's name and salary (firing the faults).
    /// GRDB fetches the department by name (a scan of 100 rows) and its employees with `EmployeeRecord.fetchAll`
    /// on `employee_department`, both through cached statements.
    func graphRelationship() throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let (coordinator, store) = try GraphModel.open(graphStrata, model: model, create: false)
        let queue = try SQLiteCompany.open(graphSQLite)
        let perDepartment = departmentTotals(salaries: graphSalaries)
        let chosen = Self.relationshipDepartments
        let names = chosen.map { company.departments[$0 - 1].name }
        func checkDepartment(
            _ side: String, _ position: Int, _ found: (count: Int, salaries: Int64, names: UInt64)
        )
            throws
        {
            let want = perDepartment[chosen[position]]
            try check(
                found == want, "W4c.graph \(side): department \(chosen[position]) gave \(found), expected \(want)")
        }
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                let context = GraphModel.context(coordinator)
                let time = try seconds {
                    for (position, name) in names.enumerated() {
                        let request = FetchRequest<GraphDepartment>(
                            entityName: "Department", predicate: try ObjectPredicate(format: "name == %@", name))
                        let found = try context.fetch(request)
                        guard found.count == 1, let department = found.first else {
                            throw BenchmarkFailure("W4c.graph Strata: \(found.count) departments named \(name)")
                        }
                        var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                        for employee in department.employees {
                            totals.count += 1
                            totals.salaries &+= employee.salary
                            totals.names &+= fnv1a(employee.name.utf8)
                        }
                        try checkDepartment("Strata", position, totals)
                    }
                }
                // Employees and departments hold each other: faulting them breaks the cycles (untimed).
                try context.refreshAllObjects()
                return time
            },
            sqlite: { _ in
                try queue.read { db in
                    let byName = try db.cachedStatement(sql: "SELECT * FROM department WHERE name = ?")
                    let byDepartment = try db.cachedStatement(sql: "SELECT * FROM employee WHERE departmentId = ?")
                    return try seconds {
                        for (position, name) in names.enumerated() {
                            guard let department = try DepartmentRecord.fetchOne(byName, arguments: [name]) else {
                                throw BenchmarkFailure("W4c.graph GRDB: no department named \(name)")
                            }
                            var totals = (count: 0, salaries: Int64(0), names: UInt64(0))
                            for employee in try EmployeeRecord.fetchAll(byDepartment, arguments: [department.id]) {
                                totals.count += 1
                                totals.salaries &+= employee.salary
                                totals.names &+= fnv1a(employee.name.utf8)
                            }
                            try checkDepartment("GRDB", position, totals)
                        }
                    }
                }
            })
        try queue.close()
        try coordinator.removePersistentStore(store)
        let queries = Double(names.count)
        emitFigure(
            "W4c", "graph", strata: queries / strata, sqlite: queries / sqlite, unit: "queries/s", better: .higher)
        note(
            "W4c.graph method: Strata fetches the department with the predicate name == %@, then traverses department.employees (faults) reading name and salary; GRDB: cached statements by name, then EmployeeRecord.fetchAll by departmentId"
        )
    }

    // MARK: - W8.graph

    /// Deletes 10 departments through a context (their `employees` rule, cascade, deletes the employees) and
    /// saves, then checkpoints, on a copy of the graph store after W7.graph made before each repetition. GRDB
    /// fetches each department record by key and deletes it with `foreign_keys=ON` (the schema's `ON DELETE
    /// CASCADE` deletes the employees), in one transaction, then checkpoints.
    func graphCascadeDelete() throws {
        let model = try GraphModel.make()
        GraphModel.registerClasses()
        let expected = remainingAfterCascade(salaries: graphSalaries)
        let victims = Self.cascadeDepartments
        let victimNames = Set(victims.map { company.departments[$0 - 1].name })
        let strataCopy = scratch + "/w8-graph-strata"
        let sqliteDirectory = scratch + "/w8-graph-sqlite"
        let sqlitePath = sqliteDirectory + "/company.sqlite"
        var strataSaves: [Double] = []
        let (strata, sqlite) = try alternate(
            repetitions,
            strata: { _ in
                remove(strataCopy)
                try copyDurably(graphStrata, to: strataCopy)
                let (coordinator, store) = try GraphModel.open(strataCopy, model: model, create: false)
                // The victims' object IDs, from a fetch (untimed), as GRDB's side knows their keys.
                let ids: [ManagedObjectID] = try {
                    let context = GraphModel.context(coordinator)
                    return try context.fetch(FetchRequest<GraphDepartment>(entityName: "Department"))
                        .filter { victimNames.contains($0.name) }.map(\.objectID)
                }()
                try check(ids.count == victims.count, "W8.graph Strata: found \(ids.count) departments")
                var saved = 0.0
                let time = try seconds {
                    let context = GraphModel.context(coordinator)
                    for id in ids { context.delete(context.object(with: id)) }
                    saved = try seconds {
                        try context.save()
                    }
                    try store.engine.checkpoint()
                }
                strataSaves.append(saved)
                let totals = try GraphModel.storeTotals(store, model: model)
                try check(
                    totals.count == expected.count && totals.salarySum == expected.salarySum,
                    "W8.graph Strata: left \(totals), expected \(expected)")
                let departments = try GraphModel.departmentCount(store)
                try check(
                    departments == Company.departmentCount - victims.count,
                    "W8.graph Strata: \(departments) departments")
                try coordinator.removePersistentStore(store)
                return time
            },
            sqlite: { _ in
                remove(sqliteDirectory)
                try copyDurably((graphSQLite as NSString).deletingLastPathComponent, to: sqliteDirectory)
                let queue = try SQLiteCompany.open(sqlitePath, foreignKeys: true)
                let time = try seconds {
                    try queue.write { db in
                        for key in victims {
                            guard let department = try DepartmentRecord.fetchOne(db, key: key) else {
                                throw BenchmarkFailure("W8.graph GRDB: department \(key) missing")
                            }
                            try check(try department.delete(db), "W8.graph GRDB: department \(key) not deleted")
                        }
                    }
                    try SQLiteCompany.checkpoint(queue)
                }
                let totals = try queue.read { try SQLiteCompany.totals($0) }
                try check(
                    totals.count == expected.count && totals.salarySum == expected.salarySum,
                    "W8.graph GRDB: left \(totals), expected \(expected)")
                let departments = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM department") }
                try check(departments == Company.departmentCount - victims.count, "W8.graph GRDB: department count")
                try queue.close()
                return time
            })
        remove(strataCopy)
        remove(sqliteDirectory)
        emitFigure("W8", "graph", strata: strata, sqlite: sqlite, unit: "s", better: .lower)
        note(
            "W8.graph: \(victims.count) departments deleted through a context (cascade to \(grouped(expected.deleted)) employees, left faults: the cascade gives each its department) and saved, then a checkpoint; save alone (median) \(format(median(strataSaves))) s. GRDB: DepartmentRecord.fetchOne + delete with foreign_keys=ON, one transaction, then a checkpoint"
        )
    }
}
