import Foundation
import Logging
import Strata
import StrataStorage
import Testing

#if Postgres
import StrataPostgres
import StrataTestSupport
#endif

// The object-graph test model, shared by ContextTests, FaultingTests, UniquingAndMemoryTests, SaveTests,
// RefreshTests, ObjectIDTests, KeyValueCodingTests, StoreTests and LifecycleTests.
//
// Entity and class names carry a `Graph` prefix: the entity-class registry is process-wide and keyed by
// entity name, and other suites (the smoke test registers `SmokeEmployee` for "Employee") run in parallel.

/// An employee with a transient `fullName` that `awakeFromFetch` computes from the first and last names
/// (the seed's example for COREDATA.md §5 #11), and hooks that record when they run.
final class GraphEmployee: ManagedObject {
    @Managed("firstName") var firstName: String
    @Managed("lastName") var lastName: String
    @Managed("fullName") var fullName: String?
    @Managed("salary") var salary: Int64
    @Managed("photo") var photo: Data?

    /// The hooks that ran, in order.
    var events: [String] = []
    /// When set, `willSave` turns a negative salary into 0 (a hook that changes a persistent value).
    var clampsSalaryInWillSave = false
    /// When set, `awakeFromFetch` also writes this salary (change processing is off there).
    var salaryWrittenInAwakeFromFetch: Int64?

    /// The first and last names through key-value coding: never traps on a missing value.
    var names: (first: String, last: String) {
        ((try? value(forKey: "firstName")) as? String ?? "", (try? value(forKey: "lastName")) as? String ?? "")
    }

    override func awakeFromInsert() {
        super.awakeFromInsert()
        events.append("awakeFromInsert")
    }

    override func awakeFromFetch() {
        super.awakeFromFetch()
        events.append("awakeFromFetch")
        fullName = "\(names.first) \(names.last)"
        if let salaryWrittenInAwakeFromFetch { salary = salaryWrittenInAwakeFromFetch }
    }

    override func willSave() {
        super.willSave()
        events.append("willSave")
        if clampsSalaryInWillSave, !isDeleted, ((try? value(forKey: "salary")) as? Int64 ?? 0) < 0 { salary = 0 }
    }

    override func didSave() {
        super.didSave()
        events.append("didSave")
    }

    override func prepareForDeletion() {
        super.prepareForDeletion()
        events.append("prepareForDeletion")
    }

    override func willTurnIntoFault() {
        super.willTurnIntoFault()
        events.append("willTurnIntoFault(isFault: \(isFault))")
    }

    override func didTurnIntoFault() {
        super.didTurnIntoFault()
        events.append("didTurnIntoFault(isFault: \(isFault))")
    }
}

/// The root of a two-entity hierarchy.
class GraphPerson: ManagedObject {
    @Managed("name") var name: String?
}

/// A subentity of `GraphPerson`, with its own class.
final class GraphManager: GraphPerson {
    @Managed("level") var level: Int16
}

/// The value of the transformable attributes (through `CodableValueTransformer`).
struct GraphAddress: Codable, Hashable, Sendable {
    var street: String
    var city: String
    var zip: Int
}

enum TestModel {
    static let addressTransformerName = "GraphAddress"

    /// Entity definitions; `extra` is appended to GraphEmployee (to make an incompatible model).
    static func entities(extraEmployeeAttributes extra: [Attribute] = []) -> [Entity] {
        var employee = Entity("GraphEmployee", className: "GraphEmployee") {
            Attribute("firstName", .string, optional: false)
            Attribute("lastName", .string, optional: false, default: .string(""))
            Attribute("fullName", .string).transient()
            Attribute("salary", .integer64, default: .integer(0)).validated(.range(min: .integer(0), max: nil))
            Attribute("photo", .binaryData).allowsExternalStorage()
        }
        employee.properties += extra.map { .attribute($0) }
        return [
            employee,
            // No class: objects are plain ManagedObjects, used through key-value coding.
            Entity("GraphThing") {
                Attribute("name", .string)
                Attribute("count", .integer32, default: .integer(0))
                Attribute("small", .integer16)
                Attribute("address", .transformable, valueTransformerName: addressTransformerName)
                Attribute("scratch", .string).transient()
            },
            Entity("GraphPerson", className: "GraphPerson") {
                Attribute("name", .string)
            },
            Entity("GraphManager", parent: "GraphPerson", className: "GraphManager") {
                Attribute("level", .integer16, default: .integer(1))
            },
            Entity("GraphAllTypes") {
                Attribute("i16", .integer16)
                Attribute("i32", .integer32)
                Attribute("i64", .integer64)
                Attribute("double", .double)
                Attribute("float", .float)
                Attribute("decimal", .decimal)
                Attribute("bool", .boolean)
                Attribute("string", .string)
                Attribute("date", .date)
                Attribute("data", .binaryData)
                Attribute("uuid", .uuid)
                Attribute("url", .uri)
                Attribute("address", .transformable, valueTransformerName: addressTransformerName)
            },
        ]
    }

    /// Registers the classes and the value transformer (idempotent).
    static func registerClassesAndTransformers() {
        GraphEmployee.register(forEntityName: "GraphEmployee")
        GraphPerson.register(forEntityName: "GraphPerson")
        GraphManager.register(forEntityName: "GraphManager")
        ValueTransformerRegistry.shared.register(CodableValueTransformer<GraphAddress>(), named: addressTransformerName)
    }

    /// The model every test uses (built once; registration happens with it).
    static let model: ManagedObjectModel = {
        registerClassesAndTransformers()
        return try! ManagedObjectModel(entities: entities())
    }()
}

/// The two store types every scenario runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case strata
    #if Postgres
    /// A PostgreSQL store in a schema of its own, in the test process's throwaway cluster
    /// (`swift test --traits Postgres`).
    case postgres
    #endif

    var testDescription: String { rawValue }

    /// Whether every statement is a round trip to a server: long random walks take fewer steps there.
    var isServer: Bool {
        #if Postgres
        self == .postgres
        #else
        false
        #endif
    }
}

#if Postgres
/// A schema name no test used yet.
func temporaryPostgresSchema() -> String {
    "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
}

/// Settings for a PostgreSQL store in `schema` of the test process's throwaway cluster (started on first
/// use): two connections, quiet logs.
func postgresTestConfiguration(schema: String, recordsHistory: Bool = false) throws -> PostgresStoreConfiguration {
    let cluster = try PostgresTestCluster.shared()
    var configuration = PostgresStoreConfiguration(
        host: "127.0.0.1", port: cluster.port, username: cluster.user, database: cluster.database)
    configuration.schema = schema
    configuration.poolSize = 2
    configuration.recordsPersistentHistory = recordsHistory
    configuration.logger.logLevel = .warning
    return configuration
}
#endif

/// A fresh, empty temporary directory path (not created: the engine creates it).
func temporaryStoreDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("strata-graph-\(UUID().uuidString)").path
}

/// Engine settings for tests: no syncs (close still checkpoints), optional blob threshold.
func testStoreConfiguration(blobThreshold: Int = 16 << 10) -> StrataStoreConfiguration {
    var logger = Logger(label: "strata.graph-tests")
    logger.logLevel = .warning
    return StrataStoreConfiguration(
        storage: StoreConfiguration(durability: .off, blobThreshold: blobThreshold, logger: logger))
}

/// A coordinator with one store of a kind (a Strata store lives in a temporary directory, removed at the end).
final class TestStack {
    let kind: StoreKind
    let model: ManagedObjectModel
    let coordinator: PersistentStoreCoordinator
    let store: any PersistentStore
    let directory: String?
    /// Whether deinit removes the directory (handed on by `reopened()`).
    var ownsDirectory: Bool

    /// A new coordinator on the same store object (how an in-memory store is "reopened").
    init(sharing other: TestStack) throws {
        kind = other.kind
        model = other.model
        coordinator = PersistentStoreCoordinator(model: other.model)
        store = other.store
        directory = other.directory
        ownsDirectory = false
        coordinator.addPersistentStore(other.store)
    }

    init(
        _ kind: StoreKind, model: ManagedObjectModel = TestModel.model, directory: String? = nil,
        configuration: StrataStoreConfiguration = testStoreConfiguration(), recordsHistory: Bool = false
    ) throws {
        TestModel.registerClassesAndTransformers()
        self.kind = kind
        self.model = model
        coordinator = PersistentStoreCoordinator(model: model)
        switch kind {
        case .inMemory:
            self.directory = nil
            ownsDirectory = false
            store = InMemoryStore(model: model, recordsPersistentHistory: recordsHistory)
            coordinator.addPersistentStore(store)
        case .strata:
            let path = directory ?? temporaryStoreDirectory()
            self.directory = path
            ownsDirectory = directory == nil
            var configuration = configuration
            configuration.recordsPersistentHistory = configuration.recordsPersistentHistory || recordsHistory
            store = try coordinator.addPersistentStore(.strata(directory: path, configuration: configuration))
        #if Postgres
        case .postgres:
            // The "directory" of a PostgreSQL store is its schema: the same name reopens the same store.
            let schema = directory ?? temporaryPostgresSchema()
            self.directory = schema
            ownsDirectory = directory == nil
            store = try coordinator.addPersistentStore(
                .postgres(
                    try postgresTestConfiguration(
                        schema: schema,
                        recordsHistory: configuration.recordsPersistentHistory || recordsHistory)))
        #endif
        }
    }

    func context() -> ManagedObjectContext { ManagedObjectContext(coordinator: coordinator) }

    /// A context without an undo manager (the default, as in Core Data): only the context's own references keep
    /// its objects alive. Spelled out for the memory tests, which depend on it.
    func contextWithoutUndo() -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        context.undoManager = nil
        return context
    }

    /// A context with an undo manager (undo is off by default; this is the one line that turns it on).
    func contextWithUndo() -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        context.undoManager = ContextUndoManager()
        return context
    }

    /// Entities of the model by name.
    func entity(_ name: String) -> EntityDescription { model.entity(named: name)! }

    /// The rows the store holds for an entity (straight from the store: no context, no row cache).
    func storedRows(_ entityName: String) throws -> [StoredRow] {
        try store.rows(of: entity(entityName), includesSubentities: true).map(\.row)
    }

    /// The stored value of one attribute of every row of an entity, in row order.
    func storedValues(_ entityName: String, _ key: String) throws -> [AttributeValue?] {
        let attribute = entity(entityName).attributesByName[key]!
        return try storedRows(entityName).map { $0.values[attribute.storageIndex!] }
    }

    /// Closes every store (the directory stays).
    func close() throws {
        for store in coordinator.persistentStores { try coordinator.removePersistentStore(store) }
    }

    deinit {
        for store in coordinator.persistentStores { try? coordinator.removePersistentStore(store) }
        #if Postgres
        if kind == .postgres {
            if ownsDirectory, let directory, let configuration = try? postgresTestConfiguration(schema: directory) {
                try? PostgresStore.destroyPersistentStore(configuration: configuration)
            }
            return
        }
        #endif
        if ownsDirectory, let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

// MARK: - Seeding and fetching

/// Saves employees through a context of their own that is gone afterwards: the row cache holds nothing
/// for them when this returns. Returns their permanent IDs in the order given.
@inline(never)
func seedEmployees(
    _ stack: TestStack, _ people: [(first: String, last: String, salary: Int64)]
) throws -> [ManagedObjectID] {
    let context = stack.context()
    let employees = people.map { person in
        let employee = GraphEmployee(context: context)
        employee.firstName = person.first
        employee.lastName = person.last
        employee.salary = person.salary
        return employee
    }
    try context.save()
    return employees.map(\.objectID)
}

/// One saved employee, Ada Lovelace earning 100.
@inline(never)
func seedAda(_ stack: TestStack) throws -> ManagedObjectID {
    try seedEmployees(stack, [("Ada", "Lovelace", 100)])[0]
}

/// Every employee, filled (not faults), in row order.
func fetchEmployees(_ context: ManagedObjectContext) throws -> [GraphEmployee] {
    let request = FetchRequest<GraphEmployee>(entityName: "GraphEmployee")
    request.returnsObjectsAsFaults = false
    return try context.fetch(request)
}

/// The object for an ID, filled, as a GraphEmployee.
func employee(_ id: ManagedObjectID, in context: ManagedObjectContext) throws -> GraphEmployee {
    try #require(try context.existingObject(with: id) as? GraphEmployee)
}

/// The error an expression throws, as an ObjectGraphError (nil when it does not throw or throws another type).
func objectGraphError(_ body: () throws -> Void) -> ObjectGraphError? {
    do {
        try body()
        return nil
    } catch let error as ObjectGraphError {
        return error
    } catch {
        return nil
    }
}

extension ObjectGraphError {
    /// The IDs of an `objectInaccessible` or `optimisticLockingConflict` error.
    var objectIDs: [ManagedObjectID] {
        switch self {
        case .objectInaccessible(let id): [id]
        case .optimisticLockingConflict(let ids): ids
        case .mergeConflicts(let conflicts): conflicts.map(\.objectID)
        default: []
        }
    }

    var isObjectInaccessible: Bool {
        if case .objectInaccessible = self { return true }
        return false
    }

    var isOptimisticLockingConflict: Bool {
        switch self {
        case .optimisticLockingConflict, .mergeConflicts: true
        default: false
        }
    }

    var isInvalidURI: Bool {
        if case .invalidURI = self { return true }
        return false
    }
}
