import Foundation
import Strata
import Testing

final class SmokeEmployee: ManagedObject {
    @Managed("name") var name: String
    @Managed("salary") var salary: Int64
    @Managed("photo") var photo: Data?
}

@Suite struct ObjectGraphSmokeTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            Entity("Employee", className: "SmokeEmployee") {
                Attribute("name", .string, optional: false)
                Attribute("salary", .integer64, default: .integer(0))
                Attribute("photo", .binaryData).allowsExternalStorage()
            }
        ])
    }

    @Test func insertSaveReopenAndFaultBackIn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smoke-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let model = try Self.model()
        SmokeEmployee.register(forEntityName: "Employee")
        var id: ManagedObjectID?
        do {
            let coordinator = PersistentStoreCoordinator(model: model)
            try coordinator.addPersistentStore(.strata(directory: directory))
            let context = ManagedObjectContext(coordinator: coordinator)
            let ada = SmokeEmployee(context: context)
            ada.name = "Ada"
            ada.salary = 100
            ada.photo = Data(repeating: 7, count: 100_000)
            #expect(ada.objectID.isTemporaryID)
            try context.save()
            #expect(!ada.objectID.isTemporaryID)
            id = ada.objectID
            for store in coordinator.persistentStores { try coordinator.removePersistentStore(store) }
        }
        let coordinator = PersistentStoreCoordinator(model: model)
        try coordinator.addPersistentStore(.strata(directory: directory))
        let context = ManagedObjectContext(coordinator: coordinator)
        let uri = id!.uriRepresentation()
        let again = try coordinator.managedObjectID(forURIRepresentation: uri)
        let object = context.object(with: again) as! SmokeEmployee
        #expect(object.isFault)
        #expect(object.name == "Ada")
        #expect(!object.isFault)
        #expect(object.salary == 100)
        #expect(object.photo == Data(repeating: 7, count: 100_000))
        let all = try context.fetch(FetchRequest<SmokeEmployee>(entityName: "Employee"))
        #expect(all.count == 1 && all[0] === object)
    }
}
