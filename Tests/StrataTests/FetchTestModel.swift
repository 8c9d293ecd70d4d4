import Foundation
import Strata
import Testing

// The fetch test model and data set, shared by the Fetch*Tests, PredicateStoreAgreementTests and
// BatchRequestTests suites. Names carry a `Fetch` prefix: the entity-class registry is process-wide.

final class FetchDepartment: ManagedObject {
    @Managed("name") var name: String?
    @Managed("floor") var floor: Int16
    @ManagedRelationship("employees") var employees: Set<FetchEmployee>
}

class FetchEmployee: ManagedObject {
    @Managed("serial") var serial: Int64
    @Managed("name") var name: String?
    @Managed("salary") var salary: Int64
    @Managed("rating") var rating: Double?
    @Managed("hired") var hired: Date?
    @Managed("active") var active: Bool
    @Managed("bonus") var bonus: Decimal?
    @ManagedRelationship("department") var department: FetchDepartment?
}

final class FetchContractor: FetchEmployee {
    @Managed("agency") var agency: String?
}

enum FetchTestModel {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func registerClasses() {
        FetchDepartment.register(forEntityName: "FetchDepartment")
        FetchEmployee.register(forEntityName: "FetchEmployee")
        FetchContractor.register(forEntityName: "FetchContractor")
    }

    /// Salary, serial and hire date are indexed (the Strata store answers comparisons on them with index
    /// ranges), as are the department's name (relationship key paths go through it) and floor (equal keys, for
    /// sorted fetches with a limit read from an index).
    static let model: ManagedObjectModel = {
        registerClasses()
        return try! ManagedObjectModel(entities: [
            Entity("FetchDepartment", className: "FetchDepartment") {
                Attribute("name", .string).indexed()
                Attribute("floor", .integer16, default: .integer(0)).indexed()
                Relationship.toMany("employees", "FetchEmployee", inverse: "department")
            },
            Entity("FetchEmployee", className: "FetchEmployee") {
                Attribute("serial", .integer64, default: .integer(0)).indexed()
                Attribute("name", .string)
                Attribute("salary", .integer64, default: .integer(0)).indexed()
                Attribute("rating", .double)
                Attribute("hired", .date).indexed()
                Attribute("active", .boolean, default: .boolean(true))
                Attribute("bonus", .decimal)
                Relationship.toOne("department", "FetchDepartment", inverse: "employees")
            },
            Entity("FetchContractor", parent: "FetchEmployee", className: "FetchContractor") {
                Attribute("agency", .string)
            },
        ])
    }()

    static let departmentNames: [String?] = ["Sales", "Engineering", "Émigré", "research", "Empty", nil]
    static let employeeNames: [String?] = [
        "Ada", "ada", "Ádám", "Bob", "bob", "Zoë", "Zoe", "Charlie", nil, "Dana", "Eve", "eve", "Frank", "Grace",
        "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor",
        "Walter", "Xena", "yusuf", "Zed", "Ümit",
    ]

    /// Inserts the data set into a context (not saved): departments first, then employees by serial
    /// (the last four are contractors), so that row order and insertion order agree.
    @discardableResult
    static func insertDataSet(
        into context: ManagedObjectContext
    ) -> (
        departments: [FetchDepartment], employees: [FetchEmployee]
    ) {
        let departments = departmentNames.enumerated().map { index, name in
            let department = FetchDepartment(context: context)
            department.name = name
            department.floor = Int16(index % 3)
            return department
        }
        var employees: [FetchEmployee] = []
        for (index, name) in employeeNames.enumerated() {
            let serial = Int64(index + 1)
            let employee = serial > 26 ? FetchContractor(context: context) : FetchEmployee(context: context)
            if let contractor = employee as? FetchContractor { contractor.agency = serial % 2 == 0 ? "Acme" : nil }
            employee.serial = serial
            employee.name = name
            employee.salary = (serial * 37) % 200 + 50
            employee.rating = serial % 5 == 0 ? nil : Double(serial % 7) + 0.5
            employee.hired = serial % 6 == 0 ? nil : epoch.addingTimeInterval(Double(serial) * 86_400)
            employee.active = serial % 3 != 0
            employee.bonus = serial % 4 == 0 ? nil : Decimal(string: "\(serial % 11).25")! - 3
            employee.department = serial % 9 == 0 ? nil : departments[Int(serial % 4)]
            employees.append(employee)
        }
        return (departments, employees)
    }

    /// A stack of a kind holding the data set, saved.
    static func savedStack(_ kind: StoreKind) throws -> TestStack {
        let stack = try TestStack(kind, model: model)
        let context = stack.context()
        insertDataSet(into: context)
        try context.save()
        return stack
    }
}

/// The serial of an employee, the name of a department: what results are compared by.
func fetchKey(_ object: ManagedObject) -> String {
    if let employee = object as? FetchEmployee { return "e\(employee.serial)" }
    if let department = object as? FetchDepartment { return "d:" + (department.name ?? "nil") }
    return "?"
}

/// The IDs of the data set's objects in one context, by serial and department name.
struct FetchLookup {
    var employees: [Int64: ManagedObjectID] = [:]
    var departments: [String: ManagedObjectID] = [:]

    init(_ objects: [ManagedObject]) {
        for object in objects {
            if let employee = object as? FetchEmployee { employees[employee.serial] = employee.objectID }
            if let department = object as? FetchDepartment, let name = department.name {
                departments[name] = department.objectID
            }
        }
    }

    init(context: ManagedObjectContext) throws {
        self.init(
            try context.fetch(FetchRequest<ManagedObject>(entityName: "FetchEmployee"))
                + context.fetch(FetchRequest<ManagedObject>(entityName: "FetchDepartment")))
    }
}
