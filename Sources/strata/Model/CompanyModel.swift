import Strata

/// The company model of WORKLOAD.md, defined in Swift with Strata's model DSL: what `strata demo` stores.
///
/// ```
/// Department  name: String (required), budget: Double (required)
/// Employee    name: String (required), salary: Integer 64 (required), hired: Date (required),
///             photo: Binary (optional, external storage), departmentRow: Integer 64 (optional)
/// ```
///
/// Each entity has its ``ManagedObject`` subclass (``Department``, ``Employee``), registered by
/// ``registerClasses()``.
enum CompanyModel {
    /// Builds the model. Both entities name their subclass, so faults and fetched objects are made of it.
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            Entity("Department", className: "Department") {
                Attribute("name", .string, optional: false)
                Attribute("budget", .double, optional: false, default: .double(0))
                Relationship.toMany("employees", "Employee", inverse: "department", deleteRule: .cascade)
            },
            Entity("Employee", className: "Employee") {
                Attribute("name", .string, optional: false)
                Attribute("salary", .integer64, optional: false, default: .integer(0))
                Attribute("hired", .date, optional: false)
                // Photos of at least the engine's blob threshold (16 KiB by default) go to blob segments;
                // the row keeps the blob's ID.
                Attribute("photo", .binaryData).allowsExternalStorage()
                Relationship.toOne("department", "Department", inverse: "employees", deleteRule: .nullify)
            },
        ])
    }

    /// Registers ``Department`` and ``Employee`` as the classes of their entities' objects: Swift on Linux
    /// cannot find a class by its name, and a fault must be made of the right class before anyone reads it.
    static func registerClasses() {
        Department.register(forEntityName: "Department")
        Employee.register(forEntityName: "Employee")
    }
}
