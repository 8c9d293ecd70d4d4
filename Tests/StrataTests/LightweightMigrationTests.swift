import Foundation
import StrataStorage
import Testing

@testable import Strata

/// Lightweight migration of Strata stores: inferred mappings, the data after migration and after a reopen, a
/// chain of versions, refusals before anything is written, and a crash after every step.
@Suite struct LightweightMigrationTests {
    static let v1 = try! ManagedObjectModel {
        Entity("MigPerson") {
            Attribute("name", .string, optional: false)
            Attribute("age", .integer16)
            Attribute("nickname", .string)
            Relationship.toOne("team", "MigTeam", inverse: "members")
        }
        Entity("MigTeam") {
            Attribute("title", .string)
            Relationship.toMany("members", "MigPerson", inverse: "team")
        }
    }

    /// Renamed attribute, widened type, new optional attribute, removed attribute, ordered to-many, new entity.
    static let v2 = try! ManagedObjectModel {
        Entity("MigPerson") {
            Attribute("fullName", .string, optional: false).renamingIdentifier("name")
            Attribute("age", .integer64)
            Attribute("email", .string)
            Relationship.toOne("team", "MigTeam", inverse: "members")
        }
        Entity("MigTeam") {
            Attribute("title", .string)
            Relationship.toMany("members", "MigPerson", inverse: "team", ordered: true)
        }
        Entity("MigBadge") { Attribute("label", .string) }
    }

    /// A new required attribute with a default, a to-one made to-many (many-to-many), a derived count. The
    /// renaming identifier stays, so that v1 stores migrate straight to v3 too.
    static let v3 = try! ManagedObjectModel {
        Entity("MigPerson") {
            Attribute("fullName", .string, optional: false).renamingIdentifier("name")
            Attribute("age", .decimal)
            Attribute("email", .string)
            Attribute("score", .double, optional: false, default: .double(0))
            Relationship.toMany("teams", "MigTeam", inverse: "members").renamingIdentifier("team")
        }
        Entity("MigTeam") {
            Attribute("title", .string)
            Attribute("size", .integer32).derived("members.@count")
            Relationship.toMany("members", "MigPerson", inverse: "teams")
        }
        Entity("MigBadge") { Attribute("label", .string) }
    }

    static func configuration(
        _ sources: [ManagedObjectModel], migrate: Bool = true, progress: (@Sendable (Double) -> Void)? = nil
    ) -> StrataStoreConfiguration {
        var configuration = testStoreConfiguration()
        configuration.migration = MigrationOptions(
            shouldMigrateStoreAutomatically: migrate, shouldInferMappingModelAutomatically: migrate,
            sourceModels: sources, progress: progress)
        return configuration
    }

    /// A v1 store: Ada (36) and Bob (nil) in Research, Cy alone.
    static func seedV1() throws -> String {
        let directory = temporaryStoreDirectory()
        let coordinator = PersistentStoreCoordinator(model: v1)
        let store = try coordinator.addPersistentStore(
            .strata(directory: directory, configuration: testStoreConfiguration()))
        try seed(coordinator)
        try coordinator.removePersistentStore(store)
        return directory
    }

    /// Ada (36) and Bob (nil) in Research, Cy alone, saved through `coordinator` (of model v1).
    static func seed(_ coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(coordinator: coordinator)
        let team = ManagedObject(entity: v1.entity(named: "MigTeam")!, insertInto: context)
        try team.setValue("Research", forKey: "title")
        for (name, age) in [("Ada", 36 as Int16?), ("Bob", nil), ("Cy", 20)] {
            let person = ManagedObject(entity: v1.entity(named: "MigPerson")!, insertInto: context)
            try person.setValue(name, forKey: "name")
            try person.setValue(age, forKey: "age")
            try person.setValue("nick-\(name)", forKey: "nickname")
            if name != "Cy" { try person.setValue(team, forKey: "team") }
        }
        try context.save()
    }

    /// The people of a store by name (`fullName` in v2 and v3).
    static func people(_ context: ManagedObjectContext, key: String = "fullName") throws -> [String: ManagedObject] {
        var people: [String: ManagedObject] = [:]
        for person in try context.fetch(FetchRequest<ManagedObject>(entityName: "MigPerson")) {
            people[try person.value(forKey: key) as! String] = person
        }
        return people
    }

    @Test func theInferredMappingNamesEachSource() throws {
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: Self.v1, destinationModel: Self.v2)
        #expect(
            mapping.description == """
                MigBadge <- (new): label <- (new)
                MigPerson <- MigPerson: fullName <- name, age, email <- (new), team
                MigTeam <- MigTeam: title, members
                """)
        #expect(
            try MappingModel.inferredMappingModel(forSourceModel: Self.v1, destinationModel: Self.v1).entityMappings
                .allSatisfy(\.isCopy))
    }

    @Test func changesThatCannotBeInferredAreNamed() {
        func refusal(_ destination: ManagedObjectModel) -> MigrationError? {
            do {
                _ = try MappingModel.inferredMappingModel(forSourceModel: Self.v1, destinationModel: destination)
                return nil
            } catch { return error }
        }
        let required = try! ManagedObjectModel {
            Entity("MigPerson") {
                Attribute("name", .string, optional: false)
                Attribute("badge", .string, optional: false)
            }
        }
        #expect(
            refusal(required)
                == .cannotInferMapping(
                    entity: "MigPerson", property: "badge", reason: "a new required attribute needs a default value"))
        let narrowed = try! ManagedObjectModel {
            Entity("MigPerson") {
                Attribute("name", .string, optional: false)
                Attribute("age", .string)
            }
        }
        #expect(
            refusal(narrowed)
                == .cannotInferMapping(
                    entity: "MigPerson", property: "age",
                    reason: "Integer 16 values do not convert to String without loss"))
        let madeRequired = try! ManagedObjectModel {
            Entity("MigPerson") {
                Attribute("name", .string, optional: false)
                Attribute("nickname", .string, optional: false)
            }
        }
        guard case .cannotInferMapping("MigPerson", "nickname", _) = refusal(madeRequired) else {
            Issue.record("optional to required without default was inferred")
            return
        }
    }

    /// A container migrates a store as its description's flags say (Core Data's defaults: both on), from the
    /// source models of the description's store configuration; with them off it refuses the store.
    @Test func aContainerMigratesAsItsDescriptionSays() throws {
        let directory = try Self.seedV1()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func container(migrating: Bool) -> (PersistentContainer, (any Error)?) {
            let container = PersistentContainer(name: "Migration", managedObjectModel: Self.v2)
            var description = PersistentStoreDescription(url: URL(fileURLWithPath: directory))
            // The configuration's own flags are off: the description's decide.
            description.storeConfiguration = Self.configuration([Self.v1], migrate: false)
            description.shouldMigrateStoreAutomatically = migrating
            description.shouldInferMappingModelAutomatically = migrating
            container.persistentStoreDescriptions = [description]
            var failure: (any Error)?
            container.loadPersistentStores { _, error in failure = failure ?? error }
            return (container, failure)
        }
        let (_, refusal) = container(migrating: false)
        #expect(refusal != nil, "a store of v1 loaded into a v2 container without migration")
        let (migrated, failure) = container(migrating: true)
        #expect(failure == nil, "\(String(describing: failure))")
        let context = ManagedObjectContext(coordinator: migrated.persistentStoreCoordinator)
        #expect(try Self.people(context).keys.sorted() == ["Ada", "Bob", "Cy"])
    }

    @Test func aStoreIsMigratedAndKeepsItsDataAfterReopening() throws {
        let directory = try Self.seedV1()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reports = LockedValues()
        var coordinator = PersistentStoreCoordinator(model: Self.v2)
        let store = try coordinator.addPersistentStore(
            .strata(
                directory: directory, configuration: Self.configuration([Self.v1], progress: { reports.append($0) })))
        #expect(store.metadata[PersistentStoreMetadataKey.modelVersionHash] == Self.v2.versionHash)
        #expect(store.metadata[PersistentStoreMetadataKey.modelVersionHistory] == Self.v1.versionHash)
        let values = reports.values
        #expect(values.last == 1 && values == values.sorted() && values.count > 2)
        for pass in 0..<2 {
            let context = ManagedObjectContext(coordinator: coordinator)
            let people = try Self.people(context)
            #expect(people.keys.sorted() == ["Ada", "Bob", "Cy"], "pass \(pass)")
            #expect(try people["Ada"]!.value(forKey: "age") as? Int64 == 36)
            #expect(try people["Bob"]!.value(forKey: "age") == nil)
            #expect(try people["Ada"]!.value(forKey: "email") == nil)
            let team = try #require(try people["Ada"]!.value(forKey: "team") as? ManagedObject)
            #expect(try team.value(forKey: "title") as? String == "Research")
            let members = try #require(try team.value(forKey: "members") as? [ManagedObject])
            #expect(Set(members) == [people["Ada"]!, people["Bob"]!])
            #expect(try people["Cy"]!.value(forKey: "team") == nil)
            // Reopen with a new coordinator, without migration options: the store is a v2 store now.
            try coordinator.removePersistentStore(coordinator.persistentStores[0])
            coordinator = PersistentStoreCoordinator(model: Self.v2)
            try coordinator.addPersistentStore(.strata(directory: directory, configuration: testStoreConfiguration()))
        }
        for leftover in [".migration", ".premigration", ".migration-complete"] {
            #expect(!FileManager.default.fileExists(atPath: directory + leftover))
        }
    }

    /// A migration replaces the store's directory, so it needs the store to itself: while another open holds it (as
    /// another process would), it is refused, naming the process, and the old store stays as it was.
    @Test func aStoreOpenElsewhereIsNotMigrated() throws {
        let directory = try Self.seedV1()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let elsewhere = try Store.open(at: directory, configuration: StoreConfiguration(createIfMissing: false))
        let coordinator = PersistentStoreCoordinator(model: Self.v2)
        #expect {
            try coordinator.addPersistentStore(
                .strata(directory: directory, configuration: Self.configuration([Self.v1])))
        } throws: { error in
            guard case ObjectGraphError.storage(.storeInUse(let path, let processes)) = error else { return false }
            return path == directory && processes == [getpid()]
        }
        try elsewhere.close()
        #expect(!FileManager.default.fileExists(atPath: directory + ".migration"))
        let old = PersistentStoreCoordinator(model: Self.v1)
        try old.addPersistentStore(.strata(directory: directory, configuration: testStoreConfiguration()))
        #expect(try Self.people(ManagedObjectContext(coordinator: old), key: "name").count == 3)
    }

    @Test func aChainOfVersionsMigratesStepByStepOrAtOnce() throws {
        for direct in [false, true] {
            let directory = try Self.seedV1()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            if !direct {
                let second = PersistentStoreCoordinator(model: Self.v2)
                try second.addPersistentStore(
                    .strata(directory: directory, configuration: Self.configuration([Self.v1])))
                try second.removePersistentStore(second.persistentStores[0])
            }
            let third = PersistentStoreCoordinator(model: Self.v3)
            let store = try third.addPersistentStore(
                .strata(directory: directory, configuration: Self.configuration([Self.v1, Self.v2])))
            let history = direct ? Self.v1.versionHash : "\(Self.v1.versionHash),\(Self.v2.versionHash)"
            #expect(store.metadata[PersistentStoreMetadataKey.modelVersionHistory] == history)
            let context = ManagedObjectContext(coordinator: third)
            let people = try Self.people(context)
            #expect(try people["Ada"]!.value(forKey: "age") as? Decimal == 36)
            #expect(try people["Ada"]!.value(forKey: "score") as? Double == 0)  // the new attribute's default
            let teams = try #require(try people["Ada"]!.value(forKey: "teams") as? Set<ManagedObject>)
            #expect(teams.count == 1)
            #expect(try teams.first!.value(forKey: "size") as? Int32 == 2)  // derived, computed by the migration's save
            #expect((try people["Cy"]!.value(forKey: "teams") as? Set<ManagedObject>)?.isEmpty == true)
        }
    }

    @Test func inMemoryStoresMigrateThroughTheSameCopy() throws {
        let coordinator = PersistentStoreCoordinator(model: Self.v1)
        let store = try #require(try coordinator.addPersistentStore(.inMemory) as? InMemoryStore)
        try Self.seed(coordinator)
        let reports = LockedValues()
        let second = try store.migrated(from: Self.v1, to: Self.v2, progress: { reports.append($0) })
        #expect(reports.values.last == 1)
        let third = try second.migrated(from: Self.v2, to: Self.v3)
        let v3 = PersistentStoreCoordinator(model: Self.v3)
        v3.addPersistentStore(third)
        let context = ManagedObjectContext(coordinator: v3)
        let people = try Self.people(context)
        #expect(people.keys.sorted() == ["Ada", "Bob", "Cy"])
        #expect(try people["Ada"]!.value(forKey: "age") as? Decimal == 36)
        let teams = try #require(try people["Bob"]!.value(forKey: "teams") as? Set<ManagedObject>)
        #expect(try teams.first?.value(forKey: "size") as? Int32 == 2)
        // The source store is unchanged, and a mapping that cannot be inferred is refused.
        let old = ManagedObjectContext(coordinator: coordinator)
        #expect(try Self.people(old, key: "name").count == 3)
        let required = try ManagedObjectModel {
            Entity("MigPerson") {
                Attribute("name", .string, optional: false)
                Attribute("badge", .string, optional: false)
            }
        }
        #expect(throws: MigrationError.self) { try store.migrated(from: Self.v1, to: required) }
    }

    @Test func refusalsLeaveTheOldStoreAsItWas() throws {
        let directory = try Self.seedV1()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Without source models: the error says the model differs, as before migration existed.
        #expect(throws: ObjectGraphError.self) {
            try PersistentStoreCoordinator(model: Self.v2).addPersistentStore(
                .strata(directory: directory, configuration: testStoreConfiguration()))
        }
        // Source models but no request to migrate: what differs is named.
        do {
            try PersistentStoreCoordinator(model: Self.v2).addPersistentStore(
                .strata(directory: directory, configuration: Self.configuration([Self.v1], migrate: false)))
            Issue.record("a store was migrated without being asked")
        } catch let error as MigrationError {
            #expect(
                error
                    == .migrationNotRequested(differences: [
                        "entity MigBadge added", "entity MigPerson changed", "entity MigTeam changed",
                    ]))
        }
        #expect(throws: MigrationError.unknownSourceModel(storeHash: Self.v1.versionHash)) {
            try PersistentStoreCoordinator(model: Self.v2).addPersistentStore(
                .strata(directory: directory, configuration: Self.configuration([Self.v3])))
        }
        // A mapping the data does not fit: two team members, and MigTeam.members made a to-one.
        let toOne = try ManagedObjectModel {
            Entity("MigPerson") {
                Attribute("name", .string, optional: false)
                Relationship.toOne("team", "MigTeam", inverse: "members")
            }
            Entity("MigTeam") {
                Attribute("title", .string)
                Relationship.toOne("members", "MigPerson", inverse: "team")
            }
        }
        do {
            try PersistentStoreCoordinator(model: toOne).addPersistentStore(
                .strata(directory: directory, configuration: Self.configuration([Self.v1])))
            Issue.record("two members became one")
        } catch let error as MigrationError {
            guard case .dataDoesNotFit("MigTeam", "members", _) = error else {
                Issue.record("\(error)")
                return
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory + ".migration"))
        let old = PersistentStoreCoordinator(model: Self.v1)
        try old.addPersistentStore(.strata(directory: directory, configuration: testStoreConfiguration()))
        #expect(try Self.people(ManagedObjectContext(coordinator: old), key: "name").count == 3)
    }

    /// A crash after each step of the migration leaves the old store (which the old model opens) or the new one
    /// (which the new model opens), whole.
    @Test(arguments: StoreMigrator.Step.allCases)
    func aCrashAfterAnyStepLeavesTheOldOrTheNewStore(step: StoreMigrator.Step) throws {
        struct Crash: Error {}
        let directory = try Self.seedV1()
        defer {
            for suffix in ["", ".migration", ".premigration", ".migration-complete"] {
                try? FileManager.default.removeItem(atPath: directory + suffix)
            }
        }
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: Self.v1, destinationModel: Self.v2)
        var migrator = StoreMigrator(
            directory: directory, source: Self.v1, destination: Self.v2, mapping: mapping,
            configuration: testStoreConfiguration())
        migrator.stopAfter = { if $0 == step { throw Crash() } }
        #expect(throws: Crash.self) { try migrator.migrate() }
        let committed = step != .copied
        // Opening recovers first: the old model opens the old store until the commit, the new one after it.
        let oldModel = PersistentStoreCoordinator(model: Self.v1)
        let newModel = PersistentStoreCoordinator(model: Self.v2)
        if committed {
            #expect(throws: ObjectGraphError.self) {
                try oldModel.addPersistentStore(.strata(directory: directory, configuration: testStoreConfiguration()))
            }
            try newModel.addPersistentStore(.strata(directory: directory, configuration: testStoreConfiguration()))
            #expect(try Self.people(ManagedObjectContext(coordinator: newModel)).keys.sorted() == ["Ada", "Bob", "Cy"])
        } else {
            try oldModel.addPersistentStore(.strata(directory: directory, configuration: testStoreConfiguration()))
            let context = ManagedObjectContext(coordinator: oldModel)
            #expect(try Self.people(context, key: "name").keys.sorted() == ["Ada", "Bob", "Cy"])
        }
        for leftover in [".migration", ".premigration", ".migration-complete"] {
            #expect(!FileManager.default.fileExists(atPath: directory + leftover), "\(leftover) after \(step)")
        }
    }
}

/// Progress values reported from the migration (a `Sendable` closure collects them).
final class LockedValues: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var stored: [Double] = []
    func append(_ value: Double) { lock.withLock { stored.append(value) } }
    var values: [Double] { lock.withLock { stored } }
}
