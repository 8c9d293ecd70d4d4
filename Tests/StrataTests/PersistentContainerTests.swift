import Foundation
import Strata
import StrataStorage
import Testing

/// The persistent container: loading stores from descriptions, the view context, background contexts and
/// background tasks.
@Suite struct PersistentContainerTests {
    static func container(
        _ kind: StoreKind, directory: String = temporaryStoreDirectory()
    ) -> PersistentContainer {
        RelationshipModel.registerClasses()
        let container = PersistentContainer(name: "Company", managedObjectModel: RelationshipModel.model)
        var description =
            kind == .inMemory
            ? PersistentStoreDescription(type: .inMemory)
            : PersistentStoreDescription(url: URL(fileURLWithPath: directory))
        description.storeConfiguration = testStoreConfiguration()
        container.persistentStoreDescriptions = [description]
        return container
    }

    static func load(_ container: PersistentContainer) throws {
        var failure: (any Error)?
        var calls = 0
        container.loadPersistentStores { _, error in
            calls += 1
            failure = failure ?? error
        }
        #expect(calls == container.persistentStoreDescriptions.count)
        if let failure { throw failure }
    }

    /// The fire-and-forget `performBackgroundTask(_:)`, which an async function would not choose.
    static func startBackgroundTask(
        in container: PersistentContainer, _ block: @escaping @Sendable (ManagedObjectContext) -> Void
    ) {
        container.performBackgroundTask(block)
    }

    /// Removes the container's stores (closing them) and their directories.
    static func close(_ container: PersistentContainer) throws {
        let coordinator = container.persistentStoreCoordinator
        for store in coordinator.persistentStores { try coordinator.removePersistentStore(store) }
        for case let url? in container.persistentStoreDescriptions.map(\.url) {
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test func theDefaultDescriptionIsAStrataStoreNamedAfterTheContainer() {
        let container = PersistentContainer(name: "Company", managedObjectModel: RelationshipModel.model)
        let description = container.persistentStoreDescriptions
        #expect(description.count == 1)
        #expect(description[0].type == .strata)
        #expect(description[0].url?.lastPathComponent == "Company")
        #expect(description[0].shouldMigrateStoreAutomatically)
        #expect(description[0].shouldInferMappingModelAutomatically)
    }

    @Test(arguments: StoreKind.allCases)
    func backgroundTasksSaveWhatANewContextReads(kind: StoreKind) async throws {
        let container = Self.container(kind)
        try Self.load(container)
        defer { try? Self.close(container) }
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)
        #expect(container.persistentStoreCoordinator.persistentStores[0].type == kind.storeType)
        let id = try await container.performBackgroundTask { context in
            let department = try context.make("RelDepartment", ["name": "Research"])
            try context.save()
            return department.objectID
        }
        let background = container.newBackgroundContext()
        let name = try background.performAndWait { context in
            try context.existingObject(with: id).value(forKey: "name") as? String
        }
        #expect(name == "Research")
        // The fire-and-forget form: its save is seen once it ran; a task on the same context waits for it.
        let done = AsyncStream<Void>.makeStream()
        Self.startBackgroundTask(in: container) { context in
            _ = try? context.make("RelDepartment", ["name": "Sales"])
            try? context.save()
            done.continuation.yield()
        }
        for await _ in done.stream { break }
        let count = try await background.perform { context in
            try context.count(for: FetchRequest<ManagedObject>(entityName: "RelDepartment"))
        }
        #expect(count == 2)
    }

    @MainActor
    @Test func theViewContextIsAMainQueueContextThatMergesBackgroundSavesWhenAsked() async throws {
        let container = Self.container(.strata)
        try Self.load(container)
        defer { try? Self.close(container) }
        let view = container.viewContext
        #expect(view === container.viewContext)
        #expect(view.concurrencyType == .mainQueue)
        view.automaticallyMergesChangesFromParent = true
        let department = try view.make("RelDepartment", ["name": "Research"])
        try view.save()
        let id = department.objectID
        try await container.performBackgroundTask { context in
            try context.existingObject(with: id).setValue("Renamed", forKey: "name")
            try context.save()
        }
        // The merge was queued on the main queue by the background save; an enqueued perform runs after it.
        await view.perform(schedule: .enqueued) {}
        #expect(try department.value(forKey: "name") as? String == "Renamed")
    }

    @Test func storeOptionsReachTheEngine() throws {
        let container = Self.container(.strata)
        defer { try? Self.close(container) }
        container.persistentStoreDescriptions[0].storeConfiguration.storage.durability = .normal(
            maxDelayMilliseconds: 7)
        container.persistentStoreDescriptions[0].setOption("kept", forKey: "custom")
        #expect(container.persistentStoreDescriptions[0].options["custom"] as? String == "kept")
        try Self.load(container)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first as? StrataStore)
        #expect(store.engine.configuration.durability == .normal(maxDelayMilliseconds: 7))
        // Loading again adds nothing: the store of that directory is loaded.
        try Self.load(container)
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)
    }

    @Test func aDescriptionThatCannotLoadReportsItsError() throws {
        let container = PersistentContainer(name: "Broken", managedObjectModel: RelationshipModel.model)
        container.persistentStoreDescriptions = [
            PersistentStoreDescription(type: .strata), PersistentStoreDescription(type: .inMemory),
        ]
        var errors: [String] = []
        container.loadPersistentStores { description, error in
            errors.append(error.map { "\(description.type): \($0)" } ?? "\(description.type): loaded")
        }
        #expect(errors == ["Strata: the description of a Strata store has no URL", "InMemory: loaded"])
    }
}

extension StoreKind {
    var storeType: PersistentStoreType { self == .inMemory ? .inMemory : .strata }
}
