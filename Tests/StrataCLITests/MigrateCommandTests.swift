import Foundation
import Strata
import Testing

/// `strata migrate`: a store of the Library model's first version migrated to its current one.
@Suite struct MigrateCommandTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ModelFiles/Library.xcdatamodeld")

    /// A store of version "Library" with one branch and two shelves.
    static func seed() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrate-\(UUID())").path
        let model = try ModelBundle(path: library.path).model(named: "Library")
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(.strata(directory: directory))
        let context = ManagedObjectContext(coordinator: coordinator)
        let branch = ManagedObject(entity: model.entity(named: "Branch")!, insertInto: context)
        try branch.setValue("Lyon", forKey: "city")
        for label in ["A1", "B7"] {
            let shelf = ManagedObject(entity: model.entity(named: "Shelf")!, insertInto: context)
            try shelf.setValue(label, forKey: "label")
            try shelf.setValue(branch, forKey: "branch")
        }
        try context.save()
        try coordinator.removePersistentStore(store)
        return directory
    }

    @Test func aDryRunPrintsTheMappingAndTheRunMigrates() throws {
        let directory = try Self.seed()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bundle = try ModelBundle(path: Self.library.path)
        let (v1, v2) = (try bundle.model(named: "Library"), try bundle.model(named: "Library 2"))

        let dry = try ToolRunner.strata("migrate", directory, "--model", Self.library.path, "--dry-run")
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.standardOutput.contains("store model: \(v1.versionHash) (Library)"))
        #expect(dry.standardOutput.contains("destination: \(v2.versionHash) (Library 2)"))
        #expect(dry.standardOutput.contains("  Shelf <- Shelf: label, items <- (new)"))
        #expect(dry.standardOutput.contains("  (removed) Branch"))
        #expect(
            try StrataStore.metadataForPersistentStore(at: directory)[PersistentStoreMetadataKey.modelVersionHash]
                == v1.versionHash)

        let run = try ToolRunner.strata("migrate", directory, "--model", Self.library.path)
        #expect(run.status == 0, "\(run)")
        let metadata = try StrataStore.metadataForPersistentStore(at: directory)
        #expect(metadata[PersistentStoreMetadataKey.modelVersionHash] == v2.versionHash)
        #expect(metadata[PersistentStoreMetadataKey.modelVersionHistory] == v1.versionHash)
        let coordinator = PersistentStoreCoordinator(model: v2)
        try coordinator.addPersistentStore(.strata(directory: directory))
        let context = ManagedObjectContext(coordinator: coordinator)
        let shelves = try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf"))
        #expect(Set(try shelves.map { try $0.value(forKey: "label") as! String }) == ["A1", "B7"])

        let info = try ToolRunner.strata("info", directory)
        #expect(info.standardOutput.contains("model version: \(v2.versionHash)"), "\(info)")
        #expect(info.standardOutput.contains("earlier model versions: \(v1.versionHash)"))
        let json = try ToolRunner.strata("info", directory, "--json").json()
        let model = try #require(json["model"] as? [String: Any])
        #expect(model["earlierVersionHashes"] as? [String] == [v1.versionHash])

        let again = try ToolRunner.strata("migrate", directory, "--model", Self.library.path)
        #expect(again.status == 0 && again.standardOutput.contains("nothing to migrate"), "\(again)")
        #expect(again.standardOutput.contains("  earlier: \(v1.versionHash) (Library)"))
    }

    @Test func aStoreOfAnotherModelIsRefused() throws {
        let directory = try Self.seed()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ModelFiles/Hostile/composite-attribute.xml")
        let refused = try ToolRunner.strata("migrate", directory, "--model", other.path)
        #expect(refused.status == 8)
        #expect(refused.standardError.contains("line 5"))
        let missing = try ToolRunner.strata("migrate", directory + "-nowhere", "--model", Self.library.path)
        #expect(missing.status == 8, "\(missing)")
    }
}
