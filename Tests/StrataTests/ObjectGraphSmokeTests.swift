import Foundation
import Testing

@testable import Strata

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

    @Test func externalBinaryValuesStayOutOfFaultsAndTheRowCacheUntilRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("external-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        SmokeEmployee.register(forEntityName: "Employee")
        let coordinator = PersistentStoreCoordinator(model: try Self.model())
        let store = try coordinator.addPersistentStore(.strata(directory: directory)) as! StrataStore
        let writer = ManagedObjectContext(coordinator: coordinator)
        let ada = SmokeEmployee(context: writer)
        ada.name = "Ada"
        ada.photo = Data(repeating: 9, count: 50_000)
        try writer.save()
        let id = ada.objectID
        func liveBlobs() throws -> [UInt64] {
            var blobs: [UInt64] = []
            try store.engine.snapshot().forEachBlob { blob, _ in
                blobs.append(blob.rawValue)
                return true
            }
            return blobs
        }
        let original = try liveBlobs()
        #expect(original.count == 1)

        let reader = ManagedObjectContext(coordinator: coordinator)
        let object = try reader.existingObject(with: id) as! SmokeEmployee
        // The fault is filled, the photo is not: the cached row holds only the blob's ID.
        let cached = try #require(try coordinator.row(for: id, maximumAge: nil, retaining: false))
        #expect(cached.values[2] == nil && cached.externalReferences == [2: original[0]])
        #expect(object.values[2] == nil)
        #expect(object.name == "Ada")
        #expect(object.photo == Data(repeating: 9, count: 50_000))
        #expect(!object.hasChanges)

        // A save that does not touch the photo keeps its blob; replacing the photo replaces the blob.
        object.name = "Ada L."
        try reader.save()
        #expect(try liveBlobs() == original)
        object.photo = Data(repeating: 1, count: 60_000)
        try reader.save()
        let replaced = try liveBlobs()
        #expect(replaced.count == 1 && replaced != original)
        #expect(try store.engine.verify().isClean)
    }
}
