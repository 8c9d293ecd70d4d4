#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataLock
import StrataPostgres
import StrataQuery
import Testing

/// The value of the transformable attribute of ``PostgresStoreTests/model``.
struct PGPostalAddress: Codable, Hashable, Sendable {
    var street: String
    var zip: Int
}

/// The PostgreSQL store on its own: the schema it makes from a model, values of every type, the model check,
/// optimistic locking and remote changes between coordinators with their own connections, and SQL doing the
/// filtering. The behaviour suites of StrataTests run against it too (`StoreKind.postgres`).
@Suite struct PostgresStoreTests {
    static let transformerName = "PGPostalAddressTransformer"

    static let model: ManagedObjectModel = {
        ValueTransformerRegistry.shared.register(CodableValueTransformer<PGPostalAddress>(), named: transformerName)
        return try! ManagedObjectModel {
            Entity(
                "PGPerson", uniquenessConstraints: [["email"]],
                indexes: [FetchIndex("byNameAndAge", .ascending("name"), .descending("age"))]
            ) {
                Attribute("name", .string)
                Attribute("email", .string)
                Attribute("age", .integer16, default: .integer(0)).indexed()
                Relationship.toOne("team", "PGTeam", inverse: "members")
                Relationship.toMany("clubs", "PGClub", inverse: "people", ordered: true)
            }
            Entity("PGEmployee", parent: "PGPerson") {
                Attribute("salary", .integer64, default: .integer(0))
            }
            Entity("PGTeam") {
                Attribute("name", .string)
                Relationship.toMany("members", "PGPerson", inverse: "team")
            }
            Entity("PGClub") {
                Attribute("name", .string)
                Relationship.toMany("people", "PGPerson", inverse: "clubs")
            }
            Entity("PGValues") {
                Attribute("i16", .integer16)
                Attribute("i32", .integer32)
                Attribute("i64", .integer64)
                Attribute("decimal", .decimal)
                Attribute("double", .double)
                Attribute("float", .float)
                Attribute("string", .string)
                Attribute("flag", .boolean)
                Attribute("date", .date)
                Attribute("bytes", .binaryData)
                Attribute("photo", .binaryData).allowsExternalStorage()
                Attribute("uuid", .uuid)
                Attribute("uri", .uri)
                Attribute("address", .transformable, valueTransformerName: transformerName)
            }
        }
    }()

    static func coordinator(
        _ configuration: PostgresStoreConfiguration
    ) throws -> (
        PersistentStoreCoordinator, PostgresStore
    ) {
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(.postgres(configuration))
        return (coordinator, store)
    }

    @Test func theSchemaIsMadeFromTheModelOnFirstUse() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (_, store) = try Self.coordinator(configuration)
        #expect(store.type == .postgres)
        #expect(store.metadata[PersistentStoreMetadataKey.modelVersionHash] == Self.model.versionHash)
        let schema = configuration.schema
        try withRawConnection(configuration) { connection in
            let tables = try connection.sql(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = '\(schema)' ORDER BY 1"
            ).map { try $0.decode(String.self) }
            // One table per hierarchy (PGEmployee lives in PGPerson's), one join table for the many-to-many.
            #expect(
                tables == [
                    "e_PGClub", "e_PGPerson", "e_PGTeam", "e_PGValues", "j_PGClub_people", "strata_external",
                    "strata_metadata",
                ])
            let columns = try connection.sql(
                """
                SELECT column_name || ':' || data_type FROM information_schema.columns
                WHERE table_schema = '\(schema)' AND table_name = 'e_PGValues' ORDER BY ordinal_position
                """
            ).map { try $0.decode(String.self) }
            #expect(
                columns == [
                    "strata_row_id:bigint", "strata_entity:smallint", "strata_version:bigint", "i16:smallint",
                    "i32:integer", "i64:bigint", "decimal:numeric", "double:double precision", "float:real",
                    "string:text", "flag:boolean", "date:double precision", "bytes:bytea", "photo:bigint",
                    "uuid:uuid", "uri:text", "address:bytea",
                ])
            let indexes = try connection.sql(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = '\(schema)' AND tablename = 'e_PGPerson'"
            ).map { try $0.decode(String.self) }
            // The uniqueness constraint of PGPerson (and PGEmployee), checked at commit.
            let unique = try connection.sql(
                """
                SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
                WHERE n.nspname = '\(schema)' AND c.conname = 'uq_PGPerson_email'
                """
            ).map { try $0.decode(String.self) }
            #expect(unique.count == 1)
            #expect(unique.first?.hasPrefix("EXCLUDE USING btree (email WITH =) WHERE") == true)
            #expect(unique.first?.hasSuffix("DEFERRABLE INITIALLY DEFERRED") == true)
            #expect(indexes.contains { $0.contains("(email)") })
            #expect(indexes.contains { $0.contains("(age)") && !$0.contains("UNIQUE") })
            #expect(indexes.contains { $0.contains("(name, age DESC)") })
            #expect(indexes.contains { $0.contains("(team_id)") })
            let foreignKeys = try connection.sql(
                """
                SELECT count(*) FROM information_schema.table_constraints
                WHERE table_schema = '\(schema)' AND constraint_type = 'FOREIGN KEY'
                """
            )[0].decode(Int64.self)
            #expect(foreignKeys == 3)  // team_id, and both sides of the join table
        }
        // A second store on the schema finds it made and takes its identity from it.
        let (_, second) = try Self.coordinator(configuration)
        #expect(second.identifier == store.identifier)
    }

    @Test func aModelOfAnotherHashIsRefused() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        _ = try Self.coordinator(configuration)
        let other = try ManagedObjectModel { Entity("PGOther") { Attribute("name", .string) } }
        #expect {
            try PostgresStore(model: other, configuration: configuration)
        } throws: { error in
            guard case ObjectGraphError.incompatibleModel(let storeHash, let modelHash) = error else { return false }
            return storeHash == Self.model.versionHash && modelHash == other.versionHash
        }
    }

    @Test func everyAttributeTypeRoundTripsExactly() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (coordinator, _) = try Self.coordinator(configuration)
        let context = ManagedObjectContext(coordinator: coordinator)
        let values = ManagedObject(entity: Self.model.entity(named: "PGValues")!, insertInto: context)
        let decimal = Decimal(string: "-12345678901234567890.123456789012345678")!
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
        let uuid = UUID()
        let photo = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let expected: [String: any Sendable] = [
            "i16": Int16.min, "i32": Int32.max, "i64": Int64.min, "decimal": decimal, "double": Double.pi,
            "float": Float(1.1), "string": "Émigré \u{1F600} 'quoted' \"double\"", "flag": true, "date": date,
            "bytes": Data([0, 1, 2, 255]), "photo": photo, "uuid": uuid,
            "uri": URL(string: "https://example.com/a%20b?x=1#frag")!,
            "address": PGPostalAddress(street: "Rue de l'Église", zip: 75_001),
        ]
        for (key, value) in expected { try values.setValue(value, forKey: key) }
        try context.save()

        // Another coordinator, another connection: every value comes back from the database.
        let (reader, readerStore) = try Self.coordinator(configuration)
        let fresh = ManagedObjectContext(coordinator: reader)
        let loaded = try fresh.existingObject(with: values.objectID)
        #expect(try loaded.value(forKey: "i16") as? Int16 == Int16.min)
        #expect(try loaded.value(forKey: "i32") as? Int32 == Int32.max)
        #expect(try loaded.value(forKey: "i64") as? Int64 == Int64.min)
        #expect(try loaded.value(forKey: "decimal") as? Decimal == decimal)
        #expect(try loaded.value(forKey: "double") as? Double == Double.pi)
        #expect(try loaded.value(forKey: "float") as? Float == Float(1.1))
        #expect(try loaded.value(forKey: "string") as? String == expected["string"] as? String)
        #expect(try loaded.value(forKey: "flag") as? Bool == true)
        #expect(try loaded.value(forKey: "date") as? Date == date)
        #expect(try loaded.value(forKey: "bytes") as? Data == Data([0, 1, 2, 255]))
        #expect(try loaded.value(forKey: "photo") as? Data == photo)
        #expect(try loaded.value(forKey: "uuid") as? UUID == uuid)
        #expect(try loaded.value(forKey: "uri") as? URL == expected["uri"] as? URL)
        #expect(
            try loaded.value(forKey: "address") as? PGPostalAddress
                == PGPostalAddress(street: "Rue de l'Église", zip: 75_001))
        // The external value is kept outside the row: the row only refers to it.
        let row = try #require(try readerStore.row(values.objectID.rowID!, of: loaded.entity))
        let photoIndex = loaded.entity.attributesByName["photo"]!.storageIndex!
        #expect(row.values[photoIndex] == nil && row.externalReferences[photoIndex] != nil)

        // A value PostgreSQL cannot hold is refused with a typed error, and nothing is written.
        try values.setValue("nul\u{0}inside", forKey: "string")
        #expect {
            try context.save()
        } throws: { error in
            guard case PostgresStoreError.unsupportedValue(_, let attribute, _) = error else { return false }
            return attribute == "string"
        }
        try fresh.refresh(loaded, mergeChanges: false)
        #expect(try loaded.value(forKey: "string") as? String == expected["string"] as? String)
    }

    @Test func relationshipsRoundTripInOrderAndDeletesTakeTheirLinks() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (coordinator, _) = try Self.coordinator(configuration)
        let context = ManagedObjectContext(coordinator: coordinator)
        let team = ManagedObject(entity: Self.model.entity(named: "PGTeam")!, insertInto: context)
        try team.setValue("Core", forKey: "name")
        let clubs = try (0..<3).map { index in
            let club = ManagedObject(entity: Self.model.entity(named: "PGClub")!, insertInto: context)
            try club.setValue("club \(index)", forKey: "name")
            return club
        }
        let ada = ManagedObject(entity: Self.model.entity(named: "PGEmployee")!, insertInto: context)
        try ada.setValue("Ada", forKey: "name")
        try ada.setValue(team, forKey: "team")
        let membership = try ada.mutableOrderedSetValue(forKey: "clubs")
        for club in [clubs[2], clubs[0], clubs[1]] { try membership.insert(club, at: membership.count) }
        try context.save()

        let (reader, _) = try Self.coordinator(configuration)
        let fresh = ManagedObjectContext(coordinator: reader)
        let loaded = try fresh.existingObject(with: ada.objectID)
        #expect(loaded.entity.name == "PGEmployee")
        #expect((try loaded.value(forKey: "team") as? ManagedObject)?.objectID == team.objectID)
        let order = try loaded.mutableOrderedSetValue(forKey: "clubs").objects.map(\.objectID)
        #expect(order == [clubs[2].objectID, clubs[0].objectID, clubs[1].objectID])
        let members = try fresh.existingObject(with: team.objectID).mutableSetValue(forKey: "members").objects
        #expect(members.map(\.objectID) == [ada.objectID])

        context.delete(clubs[0])
        try context.save()
        let after = ManagedObjectContext(coordinator: reader)
        let remaining = try after.existingObject(with: ada.objectID).mutableOrderedSetValue(forKey: "clubs").objects
            .map(\.objectID)
        #expect(remaining == [clubs[2].objectID, clubs[1].objectID])
    }

    @Test func optimisticLockingCatchesAConflictBetweenTwoConnectionsAndMergePoliciesResolveIt() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (first, _) = try Self.coordinator(configuration)
        let (second, _) = try Self.coordinator(configuration)
        let writer = ManagedObjectContext(coordinator: first)
        let person = ManagedObject(entity: Self.model.entity(named: "PGPerson")!, insertInto: writer)
        try person.setValue("Grace", forKey: "name")
        try writer.save()

        let other = ManagedObjectContext(coordinator: second)
        let same = try other.existingObject(with: person.objectID)
        #expect(try same.value(forKey: "name") as? String == "Grace")
        try person.setValue(40, forKey: "age")
        try writer.save()

        try same.setValue("Grace Hopper", forKey: "name")
        #expect {
            try other.save()
        } throws: { error in
            guard case ObjectGraphError.mergeConflicts(let conflicts) = error else { return false }
            return conflicts.map(\.objectID) == [person.objectID]
        }
        other.mergePolicy = .mergeByPropertyObjectTrump
        try other.save()
        // Read back through a third coordinator (the first one's cache learns of the save asynchronously).
        let (third, _) = try Self.coordinator(configuration)
        let merged = try ManagedObjectContext(coordinator: third).existingObject(with: person.objectID)
        #expect(try merged.value(forKey: "name") as? String == "Grace Hopper")
        #expect(try merged.value(forKey: "age") as? Int16 == 40)
    }

    @Test func aSaveThroughOneStoreIsHeardByAnotherThroughNotify() throws {
        let configuration = try postgresConfiguration(history: true)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (first, _) = try Self.coordinator(configuration)
        let (second, listening) = try Self.coordinator(configuration)
        let heard = Lock<[PersistentStoreRemoteChange]>([])
        listening.addRemoteChangeObserver { change in heard.withLock { $0.append(change) } }

        let writer = ManagedObjectContext(coordinator: first)
        let team = ManagedObject(entity: Self.model.entity(named: "PGTeam")!, insertInto: writer)
        try team.setValue("before", forKey: "name")
        try writer.save()
        let viewer = ManagedObjectContext(coordinator: second)
        let seen = try viewer.existingObject(with: team.objectID)
        #expect(try seen.value(forKey: "name") as? String == "before")
        try Self.waitUntil { heard.withLock { !$0.isEmpty } }
        let token = try #require(heard.withLock { $0.last?.historyToken })

        try team.setValue("after", forKey: "name")
        try writer.save()
        try Self.waitUntil { heard.withLock { $0.last?.historyToken.map { $0 > token } == true } }
        // The row cache forgot the row: a new context reads what the other store wrote.
        let third = ManagedObjectContext(coordinator: second)
        #expect(try third.existingObject(with: team.objectID).value(forKey: "name") as? String == "after")
        // Merged through history, as a Core Data app does.
        let transactions = try viewer.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
            .transactions
        #expect(transactions.count == 1)
        for transaction in transactions {
            try ManagedObjectContext.mergeChanges(
                fromRemoteContextSave: transaction.objectIDNotification(), into: [viewer])
        }
        #expect(try seen.value(forKey: "name") as? String == "after")
    }

    @Test func predicatesWithAnSQLFormAreFilteredByTheDatabase() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (coordinator, store) = try Self.coordinator(configuration)
        let context = ManagedObjectContext(coordinator: coordinator)
        let teams = try ["red", "blue"].map { name in
            let team = ManagedObject(entity: Self.model.entity(named: "PGTeam")!, insertInto: context)
            try team.setValue(name, forKey: "name")
            return team
        }
        var people: [ManagedObject] = []
        for index in 0..<50 {
            let person = ManagedObject(entity: Self.model.entity(named: "PGEmployee")!, insertInto: context)
            try person.setValue("person \(index)", forKey: "name")
            try person.setValue(Int64(index * 10), forKey: "salary")
            if index % 10 == 0 { try person.setValue(teams[index % 20 == 0 ? 0 : 1], forKey: "team") }
            people.append(person)
        }
        try context.save()
        let entity = Self.model.entity(named: "PGEmployee")!

        var request = StoreFetchRequest(entity: entity)
        request.predicate = try ObjectPredicate(format: "salary >= 450 AND name BEGINSWITH 'person'")
        let before = store.rowReads
        let result = try store.fetch(request)
        #expect(result.count == 5)
        #expect(store.rowReads - before == 5)  // only the matching rows left the database

        // Key paths through a to-one, and object IDs, are SQL too.
        request.predicate = try ObjectPredicate(
            format: "team.name == 'red' OR SELF IN %@",
            arguments: [.array([.identity(ObjectIdentity(people[1].objectID))])])
        let throughTeam = store.rowReads
        #expect(try store.fetch(request).count == 4)  // persons 0, 20, 40 (red), and person 1
        #expect(store.rowReads - throughTeam == 4)
        request.predicate = try ObjectPredicate(
            format: "team == %@ AND salary > 100", arguments: [.identity(ObjectIdentity(teams[1].objectID))])
        let salary = entity.attributesByName["salary"]!.storageIndex!
        #expect(try store.fetch(request).rows.map { $0.values[salary] } == [.integer(300)])

        // A count with an exact translation is the database's count.
        request.resultKind = .count
        request.predicate = try ObjectPredicate(format: "salary < 100 OR salary > 480")
        let counted = store.rowReads
        #expect(try store.fetch(request).count == 11)
        #expect(store.rowReads == counted)

        // A predicate without an SQL form is evaluated in memory, with the same answer.
        request.resultKind = .rows
        request.predicate = try ObjectPredicate(format: "name MATCHES 'person [0-4]' AND salary > 10")
        #expect(try store.fetch(request).rows.count == 3)  // persons 2, 3 and 4
        request.sortKeys = [SortKey("salary", ascending: false)]
        request.predicate = try ObjectPredicate(format: "NOT (salary < 250)")
        request.fetchLimit = 3
        request.fetchOffset = 1
        request.resultKind = .values([QueryKeyPath("salary")])
        #expect(try store.fetch(request).values == [[.int(480)], [.int(470)], [.int(460)]])
    }

    @Test func aRowWrittenByAnotherConnectionThatBreaksUniquenessFailsTheWholeSave() throws {
        let configuration = try postgresConfiguration()
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let (_, store) = try Self.coordinator(configuration)
        let person = Self.model.entity(named: "PGPerson")!
        func insert(_ email: String) -> StoreChanges.Insert {
            var values = [AttributeValue?](repeating: nil, count: person.persistentAttributes.count)
            values[person.attributesByName["email"]!.storageIndex!] = .string(email)
            values[person.attributesByName["age"]!.storageIndex!] = .integer(0)
            return StoreChanges.Insert(entity: person, values: values, rowID: nil)
        }
        var changes = StoreChanges()
        changes.inserts = [insert("a@example.com")]
        _ = try store.save(changes)
        // What a context's constraint check would find first; written here as a racing process would.
        changes.inserts = [insert("b@example.com"), insert("a@example.com")]
        #expect {
            _ = try store.save(changes)
        } throws: { error in
            guard case PostgresStoreError.uniquenessViolation = error else { return false }
            return true
        }
        #expect(try store.rows(of: person, includesSubentities: true).count == 1)
        #expect(
            try store.rows(matching: person.uniquenessConstraints[0], values: [.string("a@example.com")]).count == 1)
    }

    /// Polls `condition` for up to `seconds`.
    static func waitUntil(
        seconds: Double = 10, _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        try #require(condition(), "not within \(seconds) s", sourceLocation: sourceLocation)
    }
}

#endif
