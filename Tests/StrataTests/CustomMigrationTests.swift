import Foundation
import Testing

@testable import Strata

/// Custom migration: a mapping model written in Swift (computed values, an entity migration policy), alone and
/// in a chain with an inferred step, on both stores.
@Suite struct CustomMigrationTests {
    typealias V1 = LightweightMigrationTests

    /// `name` split into `givenName` and `familyName`; teams renamed to groups.
    static let split = try! ManagedObjectModel {
        Entity("MigPerson") {
            Attribute("givenName", .string, optional: false)
            Attribute("familyName", .string)
            Attribute("age", .integer16)
            Relationship.toOne("group", "MigGroup", inverse: "members")
        }
        Entity("MigGroup") {
            Attribute("title", .string)
            Attribute("headcount", .integer16)
            Relationship.toMany("members", "MigPerson", inverse: "group")
        }
    }

    /// One more optional attribute: an inferred step after the custom one.
    static let splitWithEmail = try! ManagedObjectModel {
        Entity("MigPerson") {
            Attribute("givenName", .string, optional: false)
            Attribute("familyName", .string)
            Attribute("age", .integer16)
            Attribute("email", .string)
            Relationship.toOne("group", "MigGroup", inverse: "members")
        }
        Entity("MigGroup") {
            Attribute("title", .string)
            Attribute("headcount", .integer16)
            Relationship.toMany("members", "MigPerson", inverse: "group")
        }
    }

    /// Drops people under 21 and counts each group's members once its relationships are set.
    struct AdultsOnly: EntityMigrationPolicy {
        func createDestinationInstance(forSource source: ManagedObject, destination: ManagedObject) throws -> Bool {
            guard let age = try source.value(forKey: "age") as? Int else { return true }
            return age >= 21
        }
    }

    struct CountMembers: EntityMigrationPolicy {
        func createRelationships(forDestination destination: ManagedObject, source: ManagedObject) throws {
            let members = try destination.value(forKey: "members") as? Set<ManagedObject> ?? []
            try destination.setValue(Int16(members.count), forKey: "headcount")
        }
    }

    static func mapping() throws -> MappingModel {
        try MappingModel(
            from: V1.v1, to: split,
            entityMappings: [
                EntityMapping(
                    source: "MigPerson", destination: "MigPerson",
                    attributes: [
                        "givenName": .computed { try ($0.value(forKey: "name") as? String).map { "\($0)!" } },
                        "familyName": .computed { _ in "Doe" },
                        "age": .source("age"),
                    ],
                    relationships: ["group": "team"], policy: AdultsOnly()),
                EntityMapping(
                    source: "MigTeam", destination: "MigGroup", attributes: ["title": .source("title")],
                    relationships: ["members": "members"], policy: CountMembers()),
            ])
    }

    /// Checks a store of `splitWithEmail` (or `split`) migrated from the v1 seed.
    static func check(_ context: ManagedObjectContext) throws {
        let people = try LightweightMigrationTests.people(context, key: "givenName")
        // Cy (20) was dropped by the policy; Bob (no age) kept.
        #expect(people.keys.sorted() == ["Ada!", "Bob!"])
        #expect(try people["Ada!"]!.value(forKey: "familyName") as? String == "Doe")
        let group = try #require(try people["Ada!"]!.value(forKey: "group") as? ManagedObject)
        #expect(try group.value(forKey: "title") as? String == "Research")
        #expect(try group.value(forKey: "headcount") as? Int == 2)
    }

    @Test func aCustomMappingIsCheckedAgainstBothModels() throws {
        #expect(try Self.mapping().description.contains("[policy AdultsOnly]"))
        func refusal(_ mapping: EntityMapping) -> MigrationError? {
            do {
                _ = try MappingModel(from: V1.v1, to: Self.split, entityMappings: [mapping])
                return nil
            } catch { return error }
        }
        #expect(
            refusal(EntityMapping(source: "MigPerson", destination: "MigPerson"))
                == .cannotInferMapping(
                    entity: "MigPerson", property: "givenName",
                    reason: "a required attribute without default is not mapped"))
        guard
            case .cannotInferMapping("MigPerson", "givenName", _) = refusal(
                EntityMapping(
                    source: "MigPerson", destination: "MigPerson", attributes: ["givenName": .source("first")]))
        else {
            Issue.record("an unknown source attribute was accepted")
            return
        }
        guard
            case .cannotInferMapping("MigGroup", nil, _) = refusal(
                EntityMapping(source: "Nobody", destination: "MigGroup"))
        else {
            Issue.record("an unknown source entity was accepted")
            return
        }
    }

    @Test func aChainOfACustomAndAnInferredStepOnAStrataStore() throws {
        let directory = try V1.seedV1()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = testStoreConfiguration()
        configuration.migration = MigrationOptions(
            shouldMigrateStoreAutomatically: true, shouldInferMappingModelAutomatically: true,
            sourceModels: [V1.v1, Self.split], mappingModels: [try Self.mapping()])
        let coordinator = PersistentStoreCoordinator(model: Self.splitWithEmail)
        let store = try coordinator.addPersistentStore(.strata(directory: directory, configuration: configuration))
        #expect(
            store.metadata[PersistentStoreMetadataKey.modelVersionHistory]
                == "\(V1.v1.versionHash),\(Self.split.versionHash)")
        try Self.check(ManagedObjectContext(coordinator: coordinator))
        // Without inference, only the custom step is possible: the store stops being migrated at `split`.
        let second = try V1.seedV1()
        defer { try? FileManager.default.removeItem(atPath: second) }
        configuration.migration.shouldInferMappingModelAutomatically = false
        #expect(throws: MigrationError.self) {
            try PersistentStoreCoordinator(model: Self.splitWithEmail).addPersistentStore(
                .strata(directory: second, configuration: configuration))
        }
        let atSplit = PersistentStoreCoordinator(model: Self.split)
        try atSplit.addPersistentStore(.strata(directory: second, configuration: testStoreConfiguration()))
        try Self.check(ManagedObjectContext(coordinator: atSplit))
    }

    @Test func aCustomMappingOnAnInMemoryStore() throws {
        let coordinator = PersistentStoreCoordinator(model: V1.v1)
        let store = try #require(try coordinator.addPersistentStore(.inMemory) as? InMemoryStore)
        try V1.seed(coordinator)
        let migrated = try store.migrated(from: V1.v1, to: Self.split, mapping: try Self.mapping())
        let next = try migrated.migrated(from: Self.split, to: Self.splitWithEmail)
        let after = PersistentStoreCoordinator(model: Self.splitWithEmail)
        after.addPersistentStore(next)
        try Self.check(ManagedObjectContext(coordinator: after))
    }
}
