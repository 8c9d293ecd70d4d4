import Foundation
import StrataIO
import StrataStorage
import Testing

@testable import Strata

/// The migration's row path (``RowMigrator``): which mappings take it, and that it leaves the same objects as the
/// object path (``ObjectCopier``) through renames, widenings, conversions, defaults, a renamed entity, renumbered
/// entity IDs, a to-one to a hierarchy, a join table whose owner side changes, an ordered join table, blobs, a
/// derived count and a removed entity.
@Suite struct RowMigrationTests {
    static let v1 = try! ManagedObjectModel {
        Entity("RowPerson") {
            Attribute("key", .string, optional: false)
            Attribute("name", .string, optional: false)
            Attribute("age", .integer16)
            Attribute("score", .float)
            Attribute("photo", .binaryData).allowsExternalStorage()
            Attribute("born", .date)
            Relationship.toOne("team", "RowTeam", inverse: "members")
            Relationship.toMany("clubs", "RowClub", inverse: "people")
        }
        Entity("RowEmployee", parent: "RowPerson") { Attribute("salary", .integer32) }
        Entity("RowTeam") {
            Attribute("key", .string, optional: false)
            Attribute("title", .string)
            Attribute("size", .integer32).derived("members.@count")
            Relationship.toMany("members", "RowPerson", inverse: "team")
            Relationship.toOne("leader", "RowPerson")
        }
        Entity("RowClub") {
            Attribute("key", .string, optional: false)
            Attribute("label", .string)
            Relationship.toMany("people", "RowPerson", inverse: "clubs")
            Relationship.toMany("ranked", "RowPerson", ordered: true)
        }
        Entity("RowOld") {
            Attribute("key", .string, optional: false)
            Attribute("junk", .string)
        }
    }

    /// Renamed, widened and converted attributes, a new optional one and a new required one with a default; the
    /// team entity renamed; the club entity renamed so that the people-clubs join table's owner side changes;
    /// RowOld removed, RowBadge added.
    static let v2 = try! ManagedObjectModel {
        Entity("RowPerson") {
            Attribute("key", .string, optional: false)
            Attribute("fullName", .string, optional: false).renamingIdentifier("name")
            Attribute("age", .integer64)
            Attribute("score", .double)
            Attribute("photo", .binaryData).allowsExternalStorage()
            Attribute("born", .date)
            Attribute("nick", .string)
            Attribute("level", .integer16, optional: false, default: .integer(1))
            Relationship.toOne("team", "RowSquad", inverse: "members")
            Relationship.toMany("clubs", "ZClub", inverse: "people")
        }
        Entity("RowEmployee", parent: "RowPerson") { Attribute("salary", .integer64) }
        Entity("RowSquad") {
            Attribute("key", .string, optional: false)
            Attribute("title", .string)
            Attribute("size", .integer32).derived("members.@count")
            Relationship.toMany("members", "RowPerson", inverse: "team")
            Relationship.toOne("leader", "RowPerson")
        }
        .renamingIdentifier("RowTeam")
        Entity("ZClub") {
            Attribute("key", .string, optional: false)
            Attribute("label", .string)
            Relationship.toMany("people", "RowPerson", inverse: "clubs")
            Relationship.toMany("ranked", "RowPerson", ordered: true)
        }
        .renamingIdentifier("RowClub")
        Entity("RowBadge") { Attribute("key", .string) }
    }

    /// A v1 store: two teams, two people and two employees (two photos long enough to be blobs), two clubs, one
    /// RowOld.
    static func seed() throws -> String {
        let directory = temporaryStoreDirectory()
        try seed(directory, configuration: testStoreConfiguration())
        return directory
    }

    /// The seed of ``seed()`` in `directory`, opened with `configuration`.
    static func seed(_ directory: String, configuration: StrataStoreConfiguration) throws {
        let coordinator = PersistentStoreCoordinator(model: v1)
        let store = try coordinator.addPersistentStore(.strata(directory: directory, configuration: configuration))
        let context = ManagedObjectContext(coordinator: coordinator)
        func insert(_ entity: String, _ values: [String: Any?]) throws -> ManagedObject {
            let object = ManagedObject(entity: v1.entity(named: entity)!, insertInto: context)
            for (key, value) in values { try object.setValue(value, forKey: key) }
            return object
        }
        let big = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let p1 = try insert(
            "RowPerson",
            [
                "key": "p1", "name": "Ada", "age": Int16(30), "score": Float(1.5), "photo": Data([1, 2, 3]),
                "born": Date(timeIntervalSinceReferenceDate: 12.25),
            ])
        let p2 = try insert("RowPerson", ["key": "p2", "name": "Bob", "photo": big])
        let e1 = try insert(
            "RowEmployee", ["key": "e1", "name": "Cy", "salary": Int32(1000), "photo": big + Data([9])])
        let e2 = try insert("RowEmployee", ["key": "e2", "name": "Di", "age": Int16(-4)])
        let a = try insert("RowTeam", ["key": "ta", "title": "A", "leader": e1])
        let b = try insert("RowTeam", ["key": "tb", "title": "B"])
        for (person, team) in [(p1, a), (p2, a), (e1, b)] { try person.setValue(team, forKey: "team") }
        _ = e2
        let c1 = try insert("RowClub", ["key": "c1", "label": "Chess"])
        let c2 = try insert("RowClub", ["key": "c2"])
        try c1.setValue(Set([p1, p2]), forKey: "people")
        try c2.setValue(Set([p1]), forKey: "people")
        try c1.setValue([e1, p1, p2], forKey: "ranked")
        _ = try insert("RowOld", ["key": "o1", "junk": "x"])
        try context.save()
        try coordinator.removePersistentStore(store)
    }

    /// Every object of the model's concrete entities as one line: its entity, attributes and relationships, objects
    /// named by `key`.
    static func dump(
        _ directory: String, model: ManagedObjectModel,
        configuration: StrataStoreConfiguration = testStoreConfiguration()
    ) throws -> [String] {
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(.strata(directory: directory, configuration: configuration))
        defer { try? coordinator.removePersistentStore(store) }
        let context = ManagedObjectContext(coordinator: coordinator)
        func key(_ object: ManagedObject) throws -> String { try object.value(forKey: "key") as? String ?? "?" }
        var lines: [String] = []
        for entity in model.entities where !entity.isAbstract {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            for object in try context.fetch(request) {
                var parts = [entity.name]
                for attribute in entity.attributes {
                    parts.append("\(attribute.name)=\(String(describing: try object.value(forKey: attribute.name)))")
                }
                for relationship in entity.relationships {
                    let value = try object.value(forKey: relationship.name)
                    let keys: [String]
                    if let one = value as? ManagedObject {
                        keys = [try key(one)]
                    } else if let ordered = value as? [ManagedObject] {
                        keys = try ordered.map(key)
                    } else if let set = value as? Set<ManagedObject> {
                        keys = try set.map(key).sorted()
                    } else {
                        keys = []
                    }
                    parts.append("\(relationship.name)=\(keys)")
                }
                lines.append(parts.joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    static func migrate(_ directory: String, rows: Bool) throws {
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        var migrator = StoreMigrator(
            directory: directory, source: v1, destination: v2, mapping: mapping, configuration: testStoreConfiguration()
        )
        migrator.streamsRows = rows
        try migrator.migrate()
    }

    static func remove(_ directory: String) {
        for suffix in ["", ".migration", ".premigration", ".migration-complete"] {
            try? FileManager.default.removeItem(atPath: directory + suffix)
        }
    }

    @Test func lightweightMappingsThatKeepRelationshipStorageTakeTheRowPath() throws {
        #expect(
            RowMigrator(mapping: try .inferredMappingModel(forSourceModel: Self.v1, destinationModel: Self.v2)) != nil)
        // An unordered one-to-many made ordered (a join table instead of the foreign key), and a to-one made
        // to-many: their relationships change storage, so objects copy them.
        typealias L = LightweightMigrationTests
        #expect(RowMigrator(mapping: try .inferredMappingModel(forSourceModel: L.v1, destinationModel: L.v2)) == nil)
        #expect(RowMigrator(mapping: try .inferredMappingModel(forSourceModel: L.v2, destinationModel: L.v3)) == nil)
        // Computed values need objects.
        let custom = try MappingModel(
            from: L.v1, to: CustomMigrationTests.split,
            entityMappings: [
                EntityMapping(
                    source: "MigPerson", destination: "MigPerson",
                    attributes: ["givenName": .computed { try $0.value(forKey: "name") }])
            ])
        #expect(RowMigrator(mapping: custom) == nil)
        // A uniqueness constraint the source did not have may be broken by its rows.
        let unique = try ManagedObjectModel {
            Entity("MigPerson", uniquenessConstraints: [["name"]]) {
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
        #expect(RowMigrator(mapping: try .inferredMappingModel(forSourceModel: L.v1, destinationModel: unique)) == nil)
    }

    @Test func theRowPathLeavesTheObjectsTheObjectPathLeaves() throws {
        let (byRows, byObjects) = (try Self.seed(), try Self.seed())
        defer {
            Self.remove(byRows)
            Self.remove(byObjects)
        }
        let before = try StrataStore.metadataForPersistentStore(at: byRows)
        try Self.migrate(byRows, rows: true)
        try Self.migrate(byObjects, rows: false)
        let migrated = try Self.dump(byRows, model: Self.v2)
        #expect(migrated == (try Self.dump(byObjects, model: Self.v2)))
        #expect(migrated.count == 8)
        #expect(
            migrated.contains(
                "RowEmployee key=Optional(\"e1\") fullName=Optional(\"Cy\") age=nil score=nil photo=Optional(20001 bytes) born=nil nick=nil level=Optional(1) salary=Optional(1000) team=[\"tb\"] clubs=[]"
            ), "\(migrated)")
        #expect(
            migrated.contains {
                $0.hasPrefix(
                    "ZClub key=Optional(\"c1\") label=Optional(\"Chess\") people=[\"p1\", \"p2\"] ranked=[\"e1\", \"p1\", \"p2\"]"
                )
            })
        #expect(
            migrated.contains { $0.hasPrefix("RowSquad key=Optional(\"ta\") title=Optional(\"A\") size=Optional(2)") })
        // The same store: its UUID and the versions it was written with; the new one checks clean.
        let after = try StrataStore.metadataForPersistentStore(at: byRows)
        #expect(after[PersistentStoreMetadataKey.storeUUID] == before[PersistentStoreMetadataKey.storeUUID])
        #expect(after[PersistentStoreMetadataKey.modelVersionHistory] == Self.v1.versionHash)
        #expect(after[PersistentStoreMetadataKey.modelVersionHash] == Self.v2.versionHash)
        let coordinator = PersistentStoreCoordinator(model: Self.v2)
        let store = try #require(
            try coordinator.addPersistentStore(.strata(directory: byRows, configuration: testStoreConfiguration()))
                as? StrataStore)
        defer { try? coordinator.removePersistentStore(store) }
        let snapshot = store.engine.snapshot()
        #expect(RowRecordVerifier.verify(snapshot)?.isClean == true)
        // Every index agrees with its rows, the copied foreign-key indexes among them.
        #expect(try store.engine.verify().isClean)
        let relationships = try #require(RelationshipVerifier.verify(snapshot))
        #expect(relationships.layoutFound && relationships.isClean, "\(relationships.problems)")
        // Row IDs are kept, and the tables go on from the old next row IDs: a new object gets a new row.
        let context = ManagedObjectContext(coordinator: coordinator)
        let person = ManagedObject(entity: Self.v2.entity(named: "RowPerson")!, insertInto: context)
        try person.setValue("p3", forKey: "key")
        try person.setValue("Ed", forKey: "fullName")
        try context.save()
        #expect(try Self.dump(byRows, model: Self.v2).count == 9)
    }

    /// Indexes whose keys the migration keeps (the team foreign key of both person entities: a reference is copied
    /// as it is, though RowTeam's entity ID changes) are copied from the old store in order rather than sorted
    /// (``theRowPathLeavesTheObjectsTheObjectPathLeaves`` verifies the result).
    @Test func indexesWhoseKeysAreKeptAreCopied() throws {
        let directory = try Self.seed()
        defer { Self.remove(directory) }
        let rows = try #require(
            RowMigrator(mapping: try .inferredMappingModel(forSourceModel: Self.v1, destinationModel: Self.v2)))
        let engine = try Store.open(at: directory, configuration: testStoreConfiguration().storage)
        defer { try? engine.close() }
        let copied = try rows.copy(
            from: engine, into: directory + ".migration", configuration: testStoreConfiguration().storage,
            fileSystem: PosixFileSystem(), progress: nil)
        let team = Self.v2.entity(named: "RowPerson")!.relationshipsByName["team"]!
        #expect(
            Set(copied)
                == Set(
                    ["RowPerson", "RowEmployee"].map {
                        StrataStore.foreignKeyIndexName(team, of: Self.v2.entity(named: $0)!)
                    }))
    }

    /// A validation rule the old model did not have is checked row by row: a value that breaks it stops the
    /// migration before the commit, with the object path's error, and leaves the old store.
    @Test func aNewValidationRuleIsCheckedOnTheRowPath() throws {
        let directory = try Self.seed()
        defer { Self.remove(directory) }
        let strict = try ManagedObjectModel {
            Entity("RowPerson") {
                Attribute("key", .string, optional: false)
                Attribute("name", .string, optional: false).validated(.length(min: nil, max: 2))
                Relationship.toOne("team", "RowTeam", inverse: "members")
            }
            Entity("RowEmployee", parent: "RowPerson")
            Entity("RowTeam") {
                Attribute("key", .string, optional: false)
                Relationship.toMany("members", "RowPerson", inverse: "team")
            }
        }
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: Self.v1, destinationModel: strict)
        #expect(RowMigrator(mapping: mapping) != nil)
        let migrator = StoreMigrator(
            directory: directory, source: Self.v1, destination: strict, mapping: mapping,
            configuration: testStoreConfiguration())
        #expect(throws: ValidationError.self) { try migrator.migrate() }
        #expect(!FileManager.default.fileExists(atPath: directory + ".migration"))
        #expect(try Self.dump(directory, model: Self.v1).count == 9)
    }
}
