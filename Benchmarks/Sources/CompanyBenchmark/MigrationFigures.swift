import Foundation
import Strata
import StrataFormat
import StrataStorage

// MARK: - M2.graph: lightweight migration against compaction of the same store

extension Benchmark {
    /// M2.graph: a lightweight migration of the company graph store (N employees, 100 departments, every 1,000th
    /// employee with a 64 KiB photo in a blob segment) to a model with one more optional attribute on `Employee`,
    /// against `Store.compact` of the same store just before. Printed as `M2.graph <migration> <compaction> s
    /// <compaction/migration>`: above 1 means the migration is faster than the compaction. Each repetition compacts
    /// version k's store, then migrates it to version k + 1 (one more attribute), so both work on the same rows.
    ///
    /// The store is loaded through the engine with the object store's rows (RowCoder, as the object graph writes
    /// them): W1.graph's load through contexts would take minutes at N = 1,000,000 and is not what is measured.
    func graphMigration() throws {
        let directory = scratch + "/m2-graph"
        remove(directory)
        var models = [try GraphModel.make()]
        for version in 1...repetitions {
            models.append(try Self.migrationModel(extraAttributes: version))
        }
        try loadGraphStore(directory, model: models[0])
        var compactions: [Double] = []
        var migrations: [Double] = []
        for version in 1...repetitions {
            compactions.append(
                try seconds {
                    _ = try Store.compact(at: directory, configuration: StrataCompany.configuration())
                })
            var configuration = StrataStoreConfiguration(storage: StrataCompany.configuration())
            configuration.migration = MigrationOptions(
                shouldMigrateStoreAutomatically: true, shouldInferMappingModelAutomatically: true,
                sourceModels: Array(models[..<version]))
            let coordinator = PersistentStoreCoordinator(model: models[version])
            var store: (any PersistentStore)?
            migrations.append(
                try seconds {
                    store = try coordinator.addPersistentStore(
                        .strata(directory: directory, configuration: configuration))
                })
            // Check (untimed): every employee is there with its salary, the new attribute is nil, a photo reads.
            guard let strata = store as? StrataStore else { throw BenchmarkFailure("not a StrataStore") }
            let totals = try GraphModel.storeTotals(strata, model: models[version])
            try check(totals.count == company.count, "M2.graph: \(totals.count) employees after migration")
            try check(totals.salarySum == company.salaries.reduce(0, +), "M2.graph: salary sum after migration")
            let entity = models[version].entitiesByName["Employee"]!
            guard let first = try strata.row(1, of: entity) else { throw BenchmarkFailure("M2.graph: no row 1") }
            let value = { (name: String) in first.values[entity.attributesByName[name]!.storageIndex!] }
            try check(value("name") == .string(company.employees[0].name), "M2.graph: employee 1's name")
            try check(value("extra\(version)") == nil, "M2.graph: the new attribute is not nil")
            try check(first.externalReferences.count == 1, "M2.graph: employee 1's photo is not a blob")
            try check(first.references.first??.rowID == UInt64(company.employees[0].department), "M2.graph: department")
            try coordinator.removePersistentStore(strata)
            note(
                "M2.graph repetition \(version): compaction \(format(compactions.last)) s, migration v\(version) -> v\(version + 1) \(format(migrations.last)) s"
            )
        }
        emitFigure("M2", "graph", strata: median(migrations), sqlite: median(compactions), unit: "s", better: .lower)
        note(
            "M2.graph: Strata = lightweight migration (one optional attribute added to Employee) of the \(grouped(company.count))-employee graph store; second column = Store.compact of the same store just before (not SQLite); advantage = compaction/migration"
        )
        remove(directory)
    }

    /// The company model with `extraAttributes` optional string attributes `extra1`... added to `Employee`.
    static func migrationModel(extraAttributes: Int) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            Entity("Department", className: "GraphDepartment") {
                Attribute("name", .string, optional: false)
                Attribute("budget", .double, optional: false, default: .double(0))
                Relationship.toMany("employees", "Employee", inverse: "department", deleteRule: .cascade)
            },
            Entity("Employee", className: "GraphEmployee") {
                Attribute("name", .string, optional: false)
                Attribute("salary", .integer64, optional: false, default: .integer(0))
                Attribute("hired", .date, optional: false)
                Attribute("photo", .binaryData).allowsExternalStorage()
                for index in 1...extraAttributes { Attribute("extra\(index)", .string) }
                Relationship.toOne("department", "Department", inverse: "employees", deleteRule: .nullify)
            },
        ])
    }

    /// Writes the company into a new graph store of `model` through the engine, in transactions of 50,000 rows.
    private func loadGraphStore(_ directory: String, model: ManagedObjectModel) throws {
        let start = now()
        let (coordinator, created) = try GraphModel.open(directory, model: model, create: true)
        try coordinator.removePersistentStore(created)
        let store = try Store.open(at: directory, configuration: StrataCompany.configuration())
        let department = RowCoder(entity: model.entitiesByName["Department"]!)
        let employee = RowCoder(entity: model.entitiesByName["Employee"]!)
        let departmentEntity = model.entitiesByName["Department"]!
        let photo = [UInt8](repeating: 0xA5, count: 65_536)
        try store.write { txn in
            let table = txn.table(named: GraphModel.departmentTable)!
            for item in company.departments {
                try txn.insert(
                    try department.encode([.string(item.name), .double(item.budget)], rowVersion: 1), into: table)
            }
        }
        let batch = 50_000
        for start in stride(from: 0, to: company.count, by: batch) {
            try store.write { txn in
                let table = txn.table(named: GraphModel.employeeTable)!
                for index in start..<min(start + batch, company.count) {
                    let item = company.employees[index]
                    var fields = try employee.fields(
                        for: [
                            .string(item.name), .integer(item.salary),
                            .date(Date(timeIntervalSinceReferenceDate: item.hired)), nil,
                        ],
                        references: [StoredReference(entity: departmentEntity, rowID: UInt64(item.department))])
                    if index % 1000 == 0 {
                        let photoField = model.entitiesByName["Employee"]!.attributesByName["photo"]!.fieldIndex!
                        fields[photoField] = .blobReference(try txn.storeBlob(photo).rawValue)
                    }
                    try txn.insert(RowRecord.encode(entityID: 2, rowVersion: 1, fields: fields), into: table)
                }
            }
        }
        try store.close()
        note("M2.graph: loaded \(grouped(company.count)) employees through the engine in \(format(now() - start)) s")
    }
}
