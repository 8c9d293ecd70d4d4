import Foundation
import GRDB
import Logging
import Strata
import StrataStorage

// MARK: - Strata's object graph

/// The company model of WORKLOAD.md and of `strata demo` (Sources/strata/Model/CompanyModel.swift), copied: the demo
/// is an executable target, so its model cannot be imported.
///
/// ```
/// Department  name: String, budget: Double; employees: to-many Employee, inverse department, cascade
/// Employee    name: String, salary: Integer 64, hired: Date, photo: Binary (optional, external storage);
///             department: to-one Department, inverse employees, nullify
/// ```
enum GraphModel {
    /// The model; `salaryIndexed` marks `Employee.salary` `.indexed()` (W4b.graph's model: the version hash does
    /// not change, so it opens the same stores and creates the engine index `attr.Employee.salary` at the open).
    static func make(salaryIndexed: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            Entity("Department", className: "GraphDepartment") {
                Attribute("name", .string, optional: false)
                Attribute("budget", .double, optional: false, default: .double(0))
                Relationship.toMany("employees", "Employee", inverse: "department", deleteRule: .cascade)
            },
            Entity("Employee", className: "GraphEmployee") {
                Attribute("name", .string, optional: false)
                Attribute("salary", .integer64, optional: false, default: .integer(0)).indexed(salaryIndexed)
                Attribute("hired", .date, optional: false)
                Attribute("photo", .binaryData).allowsExternalStorage()
                Relationship.toOne("department", "Department", inverse: "employees", deleteRule: .nullify)
            },
        ])
    }

    static func registerClasses() {
        GraphDepartment.register(forEntityName: "Department")
        GraphEmployee.register(forEntityName: "Employee")
    }

    /// The engine's tables of the two hierarchies and the index behind `Department.employees`
    /// (``StrataStore``'s naming).
    static let employeeTable = "entity.Employee"
    static let departmentTable = "entity.Department"
    static let departmentIndex = "fk.Employee.department"

    /// A context for a figure, with undo off: GRDB has no undo, and a bulk import or delete through Core Data
    /// turns it off too (as `strata demo` does), since the undo stack holds every change and object it names.
    static func context(_ coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        context.undoManager = nil
        return context
    }

    /// A coordinator with the store at `directory` added, full durability.
    static func open(
        _ directory: String, model: ManagedObjectModel, create: Bool
    ) throws -> (coordinator: PersistentStoreCoordinator, store: StrataStore) {
        let coordinator = PersistentStoreCoordinator(model: model)
        var storage = StrataCompany.configuration()
        storage.createIfMissing = create
        let added = try coordinator.addPersistentStore(
            .strata(directory: directory, configuration: StrataStoreConfiguration(storage: storage)))
        guard let store = added as? StrataStore else { throw BenchmarkFailure("not a StrataStore") }
        return (coordinator, store)
    }

    /// The employees' rows in the engine: their count and salary total (the checks' own reading, untimed).
    static func storeTotals(_ store: StrataStore, model: ManagedObjectModel) throws -> (count: Int, salarySum: Int64) {
        let entity = model.entitiesByName["Employee"]!
        guard let salaryIndex = entity.persistentAttributes.firstIndex(where: { $0.name == "salary" }) else {
            throw BenchmarkFailure("Employee has no persistent salary")
        }
        var count = 0
        var sum: Int64 = 0
        for (_, row) in try store.rows(of: entity, includesSubentities: false) {
            guard case .integer(let salary) = row.values[salaryIndex] else {
                throw BenchmarkFailure("a salary is not an integer")
            }
            count += 1
            sum &+= salary
        }
        let snapshot = store.engine.snapshot()
        guard let table = snapshot.table(named: employeeTable) else { throw BenchmarkFailure("no \(employeeTable)") }
        try check(try snapshot.rowCount(in: table) == count, "the engine's row count differs from the decoded rows")
        // Every employee has a department: one entry each in the index behind `Department.employees`.
        guard let index = snapshot.index(named: departmentIndex) else {
            throw BenchmarkFailure("no \(departmentIndex)")
        }
        let entries = try snapshot.indexEntryCount(index)
        try check(entries == count, "\(departmentIndex) has \(entries) entries for \(count) employees")
        return (count, sum)
    }

    /// The number of department rows in the engine.
    static func departmentCount(_ store: StrataStore) throws -> Int {
        let snapshot = store.engine.snapshot()
        guard let table = snapshot.table(named: departmentTable) else {
            throw BenchmarkFailure("no \(departmentTable)")
        }
        return try snapshot.rowCount(in: table)
    }
}

final class GraphDepartment: ManagedObject {
    @Managed("name") var name: String
    @Managed("budget") var budget: Double
    @ManagedRelationship("employees") var employees: Set<GraphEmployee>
}

final class GraphEmployee: ManagedObject {
    @Managed("name") var name: String
    @Managed("salary") var salary: Int64
    @Managed("hired") var hired: Date
    @Managed("photo") var photo: Data?
    @ManagedRelationship("department") var department: GraphDepartment?
}

// MARK: - GRDB records

/// GRDB records of the same schema as the engine-level SQLite figures (SQLiteCompany.schema), with hand-written
/// row decoding and encoding (GRDB's Codable conformance would be slower still).
struct DepartmentRecord: FetchableRecord, MutablePersistableRecord, TableRecord {
    static let databaseTableName = "department"
    var id: Int64?
    var name: String
    var budget: Double

    init(id: Int64? = nil, name: String, budget: Double) {
        self.id = id
        self.name = name
        self.budget = budget
    }

    init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        budget = row["budget"]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
        container["budget"] = budget
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

struct EmployeeRecord: FetchableRecord, MutablePersistableRecord, TableRecord {
    static let databaseTableName = "employee"
    var id: Int64?
    var name: String
    var salary: Int64
    var hired: Date
    var departmentId: Int64?

    init(id: Int64? = nil, name: String, salary: Int64, hired: Date, departmentId: Int64?) {
        self.id = id
        self.name = name
        self.salary = salary
        self.hired = hired
        self.departmentId = departmentId
    }

    init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        salary = row["salary"]
        // The schema stores seconds since 1970 as REAL, like Strata's Date attribute.
        hired = Date(timeIntervalSince1970: row["hired"])
        departmentId = row["departmentId"]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
        container["salary"] = salary
        container["hired"] = hired.timeIntervalSince1970
        container["departmentId"] = departmentId
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
