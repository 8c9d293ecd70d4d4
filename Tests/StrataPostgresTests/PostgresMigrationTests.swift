#if Postgres
import Foundation
import Strata
import StrataPostgres
import Testing

/// Lightweight and custom migration of a PostgreSQL schema: the Strata store's inference and mappings, the
/// copy swapped in by one transaction, refusals before anything is written.
@Suite struct PostgresMigrationTests {
    static let v1 = try! ManagedObjectModel {
        Entity("PMPerson") {
            Attribute("name", .string, optional: false)
            Attribute("age", .integer16)
            Attribute("nickname", .string)
            Relationship.toOne("team", "PMTeam", inverse: "members")
        }
        Entity("PMTeam") {
            Attribute("title", .string)
            Relationship.toMany("members", "PMPerson", inverse: "team")
        }
    }

    /// Renamed attribute, widened type, new optional attribute, removed attribute, ordered to-many (a join table
    /// now), new entity.
    static let v2 = try! ManagedObjectModel {
        Entity("PMPerson") {
            Attribute("fullName", .string, optional: false).renamingIdentifier("name")
            Attribute("age", .integer64)
            Attribute("email", .string)
            Relationship.toOne("team", "PMTeam", inverse: "members")
        }
        Entity("PMTeam") {
            Attribute("title", .string)
            Relationship.toMany("members", "PMPerson", inverse: "team", ordered: true)
        }
        Entity("PMBadge") { Attribute("label", .string) }
    }

    /// A new required attribute with a default, a to-one made to-many (many-to-many), a renamed relationship, an
    /// entity removed.
    static let v3 = try! ManagedObjectModel {
        Entity("PMPerson") {
            Attribute("fullName", .string, optional: false).renamingIdentifier("name")
            Attribute("age", .decimal)
            Attribute("email", .string)
            Attribute("score", .double, optional: false, default: .double(0))
            Relationship.toMany("teams", "PMTeam", inverse: "members").renamingIdentifier("team")
        }
        Entity("PMTeam") {
            Attribute("title", .string)
            Relationship.toMany("members", "PMPerson", inverse: "teams")
        }
    }

    /// A change inference cannot cover: a new required attribute without a default.
    static let unmappable = try! ManagedObjectModel {
        Entity("PMPerson") {
            Attribute("name", .string, optional: false)
            Attribute("age", .integer16)
            Attribute("nickname", .string)
            Attribute("badge", .string, optional: false)
            Relationship.toOne("team", "PMTeam", inverse: "members")
        }
        Entity("PMTeam") {
            Attribute("title", .string)
            Relationship.toMany("members", "PMPerson", inverse: "team")
        }
    }

    static func options(_ sources: [ManagedObjectModel], migrate: Bool = true) -> MigrationOptions {
        MigrationOptions(
            shouldMigrateStoreAutomatically: migrate, shouldInferMappingModelAutomatically: migrate,
            sourceModels: sources)
    }

    /// Ada (36) and Bob (nil) in Research, Cy alone, saved with v1 in a new schema.
    static func seedV1() throws -> PostgresStoreConfiguration {
        let configuration = try postgresConfiguration()
        let coordinator = PersistentStoreCoordinator(model: v1)
        let store = try coordinator.addPersistentStore(.postgres(configuration))
        let context = ManagedObjectContext(coordinator: coordinator)
        let team = ManagedObject(entity: v1.entity(named: "PMTeam")!, insertInto: context)
        try team.setValue("Research", forKey: "title")
        for (name, age) in [("Ada", Int16(36)), ("Bob", nil), ("Cy", Int16(7))] {
            let person = ManagedObject(entity: v1.entity(named: "PMPerson")!, insertInto: context)
            try person.setValue(name, forKey: "name")
            try person.setValue(age, forKey: "age")
            try person.setValue("nick \(name)", forKey: "nickname")
            if name != "Cy" { try person.setValue(team, forKey: "team") }
        }
        try context.save()
        try coordinator.removePersistentStore(store)
        return configuration
    }

    static func people(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: "PMPerson")
        request.sortKeys = [SortKey("fullName")]
        return try context.fetch(request)
    }

    static func schemas(like prefix: String, _ configuration: PostgresStoreConfiguration) throws -> [String] {
        try withRawConnection(configuration) { connection in
            try connection.sql(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE '\(prefix)%' ORDER BY nspname"
            ).map { try $0.decode(String.self) }
        }
    }

    @Test func anIncompatibleSchemaMigratesWithTheInferredMapping() throws {
        var configuration = try Self.seedV1()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        configuration.migration = Self.options([Self.v1])
        let coordinator = PersistentStoreCoordinator(model: Self.v2)
        let store = try coordinator.addPersistentStore(.postgres(configuration))
        #expect(store.metadata[PersistentStoreMetadataKey.modelVersionHash] == Self.v2.versionHash)
        let context = ManagedObjectContext(coordinator: coordinator)
        let people = try Self.people(context)
        #expect(try people.map { try $0.value(forKey: "fullName") as? String } == ["Ada", "Bob", "Cy"])
        #expect(try people.map { try $0.value(forKey: "age") as? Int64 } == [36, nil, 7])
        #expect(try people.allSatisfy { try $0.value(forKey: "email") == nil })
        let team = try #require(try people[0].value(forKey: "team") as? ManagedObject)
        #expect(try team.value(forKey: "title") as? String == "Research")
        let members = try team.mutableOrderedSetValue(forKey: "members").objects
        #expect(Set(try members.map { try $0.value(forKey: "fullName") as? String }) == ["Ada", "Bob"])
        // The new entity's table exists and takes rows; no copy is left behind.
        let badge = ManagedObject(entity: Self.v2.entity(named: "PMBadge")!, insertInto: context)
        try badge.setValue("gold", forKey: "label")
        try context.save()
        #expect(try Self.schemas(like: configuration.schema, configuration) == [configuration.schema])
        // Reopened with v2 alone: nothing to migrate.
        var plain = configuration
        plain.migration = MigrationOptions()
        let again = PersistentStoreCoordinator(model: Self.v2)
        _ = try again.addPersistentStore(.postgres(plain))
        #expect(try Self.people(ManagedObjectContext(coordinator: again)).count == 3)
    }

    @Test func aChainOfVersionsMigratesStepByStep() throws {
        var configuration = try Self.seedV1()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        configuration.migration = Self.options([Self.v1, Self.v2])
        let coordinator = PersistentStoreCoordinator(model: Self.v3)
        _ = try coordinator.addPersistentStore(.postgres(configuration))
        let context = ManagedObjectContext(coordinator: coordinator)
        let people = try Self.people(context)
        #expect(try people.map { try $0.value(forKey: "age") as? Decimal } == [36, nil, 7])
        #expect(try people.map { try $0.value(forKey: "score") as? Double } == [0, 0, 0])
        #expect(try people.map { try $0.mutableSetValue(forKey: "teams").count } == [1, 1, 0])
    }

    @Test func aCustomMappingComputesValues() throws {
        var configuration = try Self.seedV1()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let mapping = try MappingModel(
            from: Self.v1, to: Self.v2,
            entityMappings: [
                EntityMapping(
                    source: "PMPerson", destination: "PMPerson",
                    attributes: [
                        "fullName": .source("name"), "age": .source("age"),
                        "email": .computed { person in
                            "\((try person.value(forKey: "name") as? String ?? "").lowercased())@example.com"
                        },
                    ], relationships: ["team": "team"]),
                EntityMapping(
                    source: "PMTeam", destination: "PMTeam", attributes: ["title": .source("title")],
                    relationships: ["members": "members"]),
            ])
        configuration.migration = MigrationOptions(
            shouldMigrateStoreAutomatically: true, sourceModels: [Self.v1], mappingModels: [mapping])
        let coordinator = PersistentStoreCoordinator(model: Self.v2)
        _ = try coordinator.addPersistentStore(.postgres(configuration))
        let context = ManagedObjectContext(coordinator: coordinator)
        let people = try Self.people(context)
        #expect(
            try people.map { try $0.value(forKey: "email") as? String } == [
                "ada@example.com", "bob@example.com", "cy@example.com",
            ])
    }

    @Test func aModelThatCannotBeMappedOrWasNotAskedForIsRefusedBeforeAnythingIsWritten() throws {
        var configuration = try Self.seedV1()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        configuration.migration = Self.options([Self.v1])
        #expect {
            _ = try PersistentStoreCoordinator(model: Self.unmappable).addPersistentStore(.postgres(configuration))
        } throws: { error in
            guard case MigrationError.cannotInferMapping(_, let property, _) = error else { return false }
            return property == "badge"
        }
        configuration.migration = Self.options([Self.v1], migrate: false)
        #expect(throws: MigrationError.self) {
            _ = try PersistentStoreCoordinator(model: Self.v2).addPersistentStore(.postgres(configuration))
        }
        configuration.migration = MigrationOptions()
        #expect(throws: ObjectGraphError.self) {
            _ = try PersistentStoreCoordinator(model: Self.v2).addPersistentStore(.postgres(configuration))
        }
        // The v1 schema is as it was.
        let coordinator = PersistentStoreCoordinator(model: Self.v1)
        _ = try coordinator.addPersistentStore(.postgres(configuration))
        let request = FetchRequest<ManagedObject>(entityName: "PMPerson")
        #expect(try ManagedObjectContext(coordinator: coordinator).fetch(request).count == 3)
        #expect(try Self.schemas(like: configuration.schema, configuration) == [configuration.schema])
    }

    @Test func aCopyLeftByACrashedMigrationIsDroppedAndTheMigrationRunsAgain() throws {
        var configuration = try Self.seedV1()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        // What a migration that crashed during its copy leaves: a partial `<schema>_migrating`, the old schema
        // untouched.
        try withRawConnection(configuration) { connection in
            try connection.sql("CREATE SCHEMA \"\(configuration.schema)_migrating\"")
            try connection.sql("CREATE TABLE \"\(configuration.schema)_migrating\".junk (x int)")
        }
        configuration.migration = Self.options([Self.v1])
        let coordinator = PersistentStoreCoordinator(model: Self.v2)
        _ = try coordinator.addPersistentStore(.postgres(configuration))
        #expect(try Self.people(ManagedObjectContext(coordinator: coordinator)).count == 3)
        #expect(try Self.schemas(like: configuration.schema, configuration) == [configuration.schema])
    }
}
#endif
