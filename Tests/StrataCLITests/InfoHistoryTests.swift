import Foundation
import Strata
import StrataStorage
import StrataTestSupport
import Testing

/// `strata info` on an object store that records persistent history: the history's size is shown.
@Suite struct InfoHistoryTests {
    @Test func infoShowsTheSizeOfThePersistentHistory() throws {
        try TemporaryStore.withPosixDirectory { root in
            let directory = root + "/store"
            let model = try ManagedObjectModel(entities: [Entity("InfoNote") { Attribute("text", .string) }])
            let coordinator = PersistentStoreCoordinator(model: model)
            var configuration = StrataStoreConfiguration()
            configuration.recordsPersistentHistory = true
            let store = try coordinator.addPersistentStore(.strata(directory: directory, configuration: configuration))
            let context = ManagedObjectContext(coordinator: coordinator)
            for index in 0..<3 {
                try ManagedObject(entity: model.entity(named: "InfoNote")!, insertInto: context)
                    .setValue("note \(index)", forKey: "text")
                try context.save()
            }
            try coordinator.removePersistentStore(store)

            let json = try StrataToolTests.strata("info", directory, "--json")
            #expect(json.status == 0, "\(json)")
            let history = try #require(try json.json()["persistentHistory"] as? [String: Any])
            #expect(history["transactions"] as? Int == 3)
            #expect((history["bytes"] as? Int ?? 0) > 0)
            let text = try StrataToolTests.strata("info", directory)
            #expect(text.standardOutput.contains("persistent history: 3 transactions"), "\(text)")
        }
    }
}
