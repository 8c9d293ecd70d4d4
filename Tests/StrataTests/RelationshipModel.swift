import Foundation
import Strata

// The relationship test model, shared by RelationshipTests, DeleteRuleTests and OrderedRelationshipTests.
// Entity and class names carry a `Rel` prefix: the entity-class registry is process-wide.

final class RelDepartment: ManagedObject {
    @Managed("name") var name: String?
    @ManagedRelationship("employees") var employees: Set<RelEmployee>

    /// The employees in the order their rows were inserted (by row ID): the batches' order.
    var employeesInRowOrder: [RelEmployee] { employees.sorted { $0.objectID.rowID! < $1.objectID.rowID! } }
}

final class RelEmployee: ManagedObject {
    @Managed("name") var name: String?
    @Managed("salary") var salary: Int64
    @ManagedRelationship("department") var department: RelDepartment?
    @ManagedRelationship("manager") var manager: RelEmployee?
    @ManagedRelationship("reports") var reports: Set<RelEmployee>
}

final class RelPlaylist: ManagedObject {
    @Managed("name") var name: String?
    @ManagedRelationship("tracks") var tracks: [RelTrack]
}

final class RelTrack: ManagedObject {
    @Managed("title") var title: String?
    @ManagedRelationship("playlist") var playlist: RelPlaylist?
}

enum RelationshipModel {
    static func entities() -> [Entity] {
        [
            Entity("RelDepartment", className: "RelDepartment") {
                Attribute("name", .string)
                Relationship.toMany("employees", "RelEmployee", inverse: "department")
                Relationship.toMany("projects", "RelProject", inverse: "department", deleteRule: .cascade)
            },
            Entity("RelEmployee", className: "RelEmployee") {
                Attribute("name", .string)
                Attribute("salary", .integer64, default: .integer(0))
                Relationship.toOne("department", "RelDepartment", inverse: "employees")
                Relationship.toOne("manager", "RelEmployee", inverse: "reports")
                Relationship.toMany("reports", "RelEmployee", inverse: "manager")
                Relationship.toOne("badge", "RelBadge", inverse: "holder")
            },
            Entity("RelBadge") {
                Attribute("code", .string)
                Relationship.toOne("holder", "RelEmployee", inverse: "badge")
            },
            Entity("RelProject") {
                Attribute("title", .string)
                Relationship.toOne("department", "RelDepartment", inverse: "projects")
                Relationship.toMany("tasks", "RelTask", inverse: "project", deleteRule: .cascade)
            },
            Entity("RelTask") {
                Attribute("title", .string)
                Relationship.toOne("project", "RelProject", inverse: "tasks")
            },
            Entity("RelPerson") {
                Attribute("name", .string)
                Relationship.toOne("parent", "RelPerson", inverse: "children")
                Relationship.toMany("children", "RelPerson", inverse: "parent", deleteRule: .cascade)
            },
            Entity("RelPost") {
                Attribute("title", .string)
                Relationship.toMany("tags", "RelTag", inverse: "posts")
            },
            Entity("RelTag") {
                Attribute("name", .string)
                Relationship.toMany("posts", "RelPost", inverse: "tags")
            },
            Entity("RelPlaylist", className: "RelPlaylist") {
                Attribute("name", .string)
                Relationship.toMany("tracks", "RelTrack", inverse: "playlist", ordered: true)
            },
            Entity("RelTrack", className: "RelTrack") {
                Attribute("title", .string)
                Relationship.toOne("playlist", "RelPlaylist", inverse: "tracks")
            },
            Entity("RelOwner") {
                Attribute("name", .string)
                Relationship.toMany("pets", "RelPet", inverse: "owner", deleteRule: .deny)
            },
            Entity("RelPet") {
                Attribute("name", .string)
                Relationship.toOne("owner", "RelOwner", inverse: "pets")
            },
            Entity("RelLibrary") {
                Attribute("name", .string)
                Relationship.toMany("books", "RelBook", inverse: "library", deleteRule: .noAction)
            },
            Entity("RelBook") {
                Attribute("title", .string)
                Relationship.toOne("library", "RelLibrary", inverse: "books")
            },
            Entity("RelTeam") {
                Attribute("name", .string)
                Relationship.toMany("players", "RelPlayer", inverse: "team", minCount: 1, maxCount: 3)
            },
            Entity("RelPlayer") {
                Attribute("name", .string)
                Relationship.toOne("team", "RelTeam", inverse: "players")
                Relationship.toOne("coach", "RelPerson", optional: false)
            },
            Entity("RelGarage") {
                Attribute("name", .string)
                Relationship.toMany("vehicles", "RelVehicle", inverse: "garage")
            },
            Entity("RelVehicle") {
                Attribute("plate", .string)
                Relationship.toOne("garage", "RelGarage", inverse: "vehicles")
            },
            Entity("RelCar", parent: "RelVehicle") {
                Attribute("seats", .integer16, default: .integer(4))
                Relationship.toMany("passengers", "RelPerson")
            },
            Entity("RelDriver") {
                Attribute("name", .string)
                Relationship.toOne("vehicle", "RelVehicle")
            },
        ]
    }

    static func registerClasses() {
        RelDepartment.register(forEntityName: "RelDepartment")
        RelEmployee.register(forEntityName: "RelEmployee")
        RelPlaylist.register(forEntityName: "RelPlaylist")
        RelTrack.register(forEntityName: "RelTrack")
    }

    static let model: ManagedObjectModel = {
        registerClasses()
        return try! ManagedObjectModel(entities: entities())
    }()
}

extension TestStack {
    /// A stack on the relationship model.
    static func relationships(_ kind: StoreKind, directory: String? = nil) throws -> TestStack {
        RelationshipModel.registerClasses()
        return try TestStack(kind, model: RelationshipModel.model, directory: directory)
    }

    /// A new stack on the same store: for a Strata store, this one is closed and the directory reopened by a
    /// new coordinator; an in-memory store cannot be reopened, so a new coordinator gets the same store.
    func reopened() throws -> TestStack {
        switch kind {
        case .inMemory:
            return try TestStack(sharing: self)
        case .strata:
            try close()
            let stack = try TestStack(.strata, model: model, directory: directory)
            stack.ownsDirectory = ownsDirectory
            ownsDirectory = false
            return stack
        #if Postgres
        case .postgres:
            // A new coordinator and a new store object (new connections) on the same schema.
            try close()
            let stack = try TestStack(.postgres, model: model, directory: directory)
            stack.ownsDirectory = ownsDirectory
            ownsDirectory = false
            return stack
        #endif
        }
    }
}

extension ManagedObjectContext {
    /// Makes an object of `entityName` with its attributes set through key-value coding.
    func make(_ entityName: String, _ values: [String: Any] = [:]) throws -> ManagedObject {
        let entity = coordinator.model.entity(named: entityName)!
        let type = entity.managedObjectClassName == nil ? ManagedObject.self : classFor(entityName)
        let object = type.init(entity: entity, insertInto: self)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    private func classFor(_ entityName: String) -> ManagedObject.Type {
        switch entityName {
        case "RelDepartment": RelDepartment.self
        case "RelEmployee": RelEmployee.self
        case "RelPlaylist": RelPlaylist.self
        case "RelTrack": RelTrack.self
        default: ManagedObject.self
        }
    }
}
