#if Postgres
import Foundation
import Strata
import StrataLock
import StrataPostgres
import StrataQuery
import Testing

/// What SQL decides: predicates over to-manys (through the inverse foreign key and through a join table), `[c]`
/// and `[d]`, sort keys and windows. Each query's answer is compared with the in-memory evaluation of the same
/// objects unsaved, and the rows the database sent (``PostgresStore/rowsReceived``) show whether SQL decided
/// (only the result's rows) or narrowed (more).
@Suite(.serialized) struct PostgresTranslationTests {
    static let model = PostgresStoreTests.model

    static let names = [
        "ada", "Ada", "ADA", "Straße", "STRASSE", "\u{212A}elvin", "kelvin", "éclair", "e\u{301}clair", "Éclair",
        "bob", "Bob", "zoë", "Zoe", "Ωmega", "ωmega", "ﬁle", "file", "a🇫🇷b", "a*b", "İstanbul", "istanbul", "Øre",
        "ore", "Zed", "émile", "Émile", "b", "B", "_x",
    ]

    /// Inserts the data set into `context` (not saved) and returns every object by a key (`p<i>`, `t:<name>`,
    /// `c:<name>`).
    @discardableResult
    static func insert(into context: ManagedObjectContext) throws -> [ManagedObject] {
        var objects: [ManagedObject] = []
        let teams = try ["red", "blue", "green", "empty"].map { name in
            let team = ManagedObject(entity: model.entity(named: "PGTeam")!, insertInto: context)
            try team.setValue(name, forKey: "name")
            return team
        }
        let clubs = try ["chess", "go", "bridge", "none"].map { name in
            let club = ManagedObject(entity: model.entity(named: "PGClub")!, insertInto: context)
            try club.setValue(name, forKey: "name")
            return club
        }
        objects += teams + clubs
        for (index, name) in names.enumerated() {
            let entity = model.entity(named: index % 3 == 0 ? "PGEmployee" : "PGPerson")!
            let person = ManagedObject(entity: entity, insertInto: context)
            try person.setValue(index % 7 == 6 ? nil : name, forKey: "name")
            try person.setValue("p\(index)@example.com", forKey: "email")
            try person.setValue(Int16((index * 17) % 60 + 5), forKey: "age")
            if index % 3 == 0 { try person.setValue(Int64(index * 1_000), forKey: "salary") }
            if index % 5 != 4 { try person.setValue(teams[index % 3], forKey: "team") }
            let memberships = try person.mutableOrderedSetValue(forKey: "clubs")
            for (number, club) in clubs.enumerated() where (index + number) % 4 < 2 && number < 3 {
                try memberships.insert(club, at: memberships.count)
            }
            objects.append(person)
        }
        return objects
    }

    static func key(_ object: ManagedObject) throws -> String {
        if object.entity.name == "PGTeam" { return "t:" + ((try object.value(forKey: "name") as? String) ?? "-") }
        if object.entity.name == "PGClub" { return "c:" + ((try object.value(forKey: "name") as? String) ?? "-") }
        return try object.value(forKey: "email") as? String ?? "?"
    }

    /// Runs `request` on unsaved objects and on the saved store; expects the same keys, and returns the rows the
    /// database sent for it and the number of results.
    static func compare(
        _ entity: String, _ format: String, sortKeys: [SortKey] = [], offset: Int = 0, limit: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (received: Int, results: Int) {
        let shared = try Shared.instance()
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try ObjectPredicate(format: format)
        request.sortKeys = sortKeys
        request.fetchOffset = offset
        request.fetchLimit = limit
        let pending = try shared.pendingContext.fetch(request).map(key)
        let context = shared.coordinatorContext()
        let before = shared.store.rowsReceived
        let saved = try context.fetch(request).map(key)
        let received = shared.store.rowsReceived - before
        #expect(saved == pending, "\(entity) \(format) \(sortKeys)", sourceLocation: sourceLocation)
        return (received, saved.count)
    }

    /// One saved data set for the whole suite (read only), and the same objects unsaved in a context of an
    /// in-memory store.
    final class Shared: @unchecked Sendable {
        let configuration: PostgresStoreConfiguration
        let coordinator: PersistentStoreCoordinator
        let store: PostgresStore
        let pendingContext: ManagedObjectContext
        /// The same objects saved in an in-memory store (dictionary requests read stores only).
        let savedMemory: PersistentStoreCoordinator

        init() throws {
            configuration = try postgresConfiguration()
            coordinator = PersistentStoreCoordinator(model: PostgresTranslationTests.model)
            store = try coordinator.addPersistentStore(.postgres(configuration))
            let saving = ManagedObjectContext(coordinator: coordinator)
            try PostgresTranslationTests.insert(into: saving)
            try saving.save()
            let memory = PersistentStoreCoordinator(model: PostgresTranslationTests.model)
            _ = try memory.addPersistentStore(.inMemory)
            pendingContext = ManagedObjectContext(coordinator: memory)
            try PostgresTranslationTests.insert(into: pendingContext)
            savedMemory = PersistentStoreCoordinator(model: PostgresTranslationTests.model)
            _ = try savedMemory.addPersistentStore(.inMemory)
            let memorySaving = ManagedObjectContext(coordinator: savedMemory)
            try PostgresTranslationTests.insert(into: memorySaving)
            try memorySaving.save()
        }

        func coordinatorContext() -> ManagedObjectContext { ManagedObjectContext(coordinator: coordinator) }

        private static let made = Lock<Shared?>(nil)

        /// The suite's data set, saved on first use.
        static func instance() throws -> Shared {
            try made.withLock { shared in
                if let shared { return shared }
                let new = try Shared()
                shared = new
                return new
            }
        }
    }

    @Test(arguments: [
        // Through the inverse foreign key (team → members).
        ("PGTeam", "ANY members.age > 50"), ("PGTeam", "ALL members.age > 10"), ("PGTeam", "NONE members.age == 22"),
        ("PGTeam", "members.@count >= 8"), ("PGTeam", "members.@count == 0"), ("PGTeam", "members.@max.age > 60"),
        ("PGTeam", "members.@min.name == 'ADA'"), ("PGTeam", "members.@sum.age > 200"),
        ("PGTeam", "members.@avg.age < 36"), ("PGTeam", "members.@max.name >= 'z'"),
        ("PGTeam", "SUBQUERY(members, $m, $m.age > 20 AND ANY $m.clubs.name == 'chess').@count > 2"),
        ("PGTeam", "ANY members.clubs.name == 'go'"),
        // Through the join table (club ↔ people, ordered on the person's side).
        ("PGClub", "ANY people.team.name == 'red'"), ("PGClub", "people.@count == 0"),
        ("PGClub", "ALL people.age > 8"), ("PGClub", "people.@max.age BETWEEN {50, 64}"),
        ("PGPerson", "ANY clubs.name == 'chess'"), ("PGPerson", "clubs.@count > 1"),
        ("PGPerson", "NONE clubs.name IN {'go', 'bridge'}"), ("PGPerson", "team.members.@count > 5"),
        ("PGPerson", "ALL team.members.age >= 10"), ("PGPerson", "ANY team.members.clubs.name == 'bridge'"),
        ("PGPerson", "SUBQUERY(clubs, $c, $c.people.@count > 12).@count >= 1"),
    ])
    func toManyPredicatesAreDecidedInSQL(_ entity: String, _ format: String) throws {
        let (received, results) = try Self.compare(entity, format)
        #expect(received == results, "\(entity) \(format): SQL sent \(received) rows for \(results) results")
    }

    @Test func caseAndDiacriticFoldingIsDecidedInSQLForASCIIValuesOnly() throws {
        let nonASCII = Self.names.enumerated().filter { index, name in
            index % 7 != 6 && !name.utf8.allSatisfy { $0 < 0x80 }
        }.count
        for format in [
            "name ==[c] 'ada'", "name ==[c] 'strasse'", "name ==[c] 'kelvin'", "name ==[cd] 'eclair'",
            "name BEGINSWITH[c] 'A'", "name <[c] 'b'", "name ==[d] 'ore'", "name IN[c] {'BOB', 'zoe'}",
            "name LIKE[cd] 'e*'",
        ] {
            let (received, results) = try Self.compare("PGPerson", format)
            // Every ASCII row SQL sends matches; the others are all sent, for memory to decide.
            #expect(received <= results + nonASCII, "\(format)")
            #expect(received < Self.names.count, "\(format)")
        }
        // MATCHES has no SQL form: every row is sent.
        let (received, _) = try Self.compare("PGPerson", "name MATCHES[c] 'a.*'")
        #expect(received == Self.names.count)
    }

    @Test func sortedWindowsComeFromTheDatabaseInSwiftsOrder() throws {
        // By name (mixed case, precomposed and decomposed, beyond Latin; nil first ascending, last descending).
        for ascending in [true, false] {
            let keys = [SortKey("name", ascending: ascending)]
            let (received, results) = try Self.compare("PGPerson", "TRUEPREDICATE", sortKeys: keys, offset: 3, limit: 9)
            #expect(results == 9 && received == 9)
            let (filtered, count) = try Self.compare("PGPerson", "age > 20", sortKeys: keys, limit: 6)
            #expect(count == 6 && filtered == 6)
        }
        // Through a to-one, then several keys.
        var (received, results) = try Self.compare(
            "PGPerson", "age >= 10", sortKeys: [SortKey("team.name"), SortKey("name", ascending: false)], limit: 11)
        #expect(results == 11 && received == 11)
        (received, results) = try Self.compare(
            "PGPerson", "TRUEPREDICATE", sortKeys: [SortKey("age", ascending: false), SortKey("email")], offset: 25)
        #expect(received == results)
        // A folded order has no SQL form: every matching row is sent and sorted here, with the same answer.
        (received, results) = try Self.compare(
            "PGPerson", "TRUEPREDICATE", sortKeys: [SortKey("name", comparison: .caseInsensitive)], limit: 5)
        #expect(results == 5 && received == Self.names.count)
        // A predicate evaluated in memory keeps the sort and window here too.
        (received, results) = try Self.compare(
            "PGPerson", "name ==[c] 'ada' OR age > 40", sortKeys: [SortKey("name")], offset: 1, limit: 4)
        #expect(results == 4 && received > 4)
    }

    @Test func theDatabaseOrderIsCodePointOrderNotTheDatabaseCollation() throws {
        let shared = try Shared.instance()
        let request = StoreFetchRequest(entity: Self.model.entity(named: "PGPerson")!)
        var sorted = request
        sorted.sortKeys = [SortKey("name")]
        sorted.resultKind = .values([QueryKeyPath("name")])
        let before = shared.store.rowsReceived
        let names = try shared.store.fetch(sorted).values.map { $0[0] }
        #expect(shared.store.rowsReceived - before == Self.names.count)
        // nil first, then Swift's own order of the strings (canonical equivalents together, "B" before "a").
        let expected =
            Array(repeating: QueryValue.null, count: names.filter { $0 == .null }.count)
            + Self.names.enumerated().filter { index, _ in index % 7 != 6 }.map(\.element).sorted().map {
                QueryValue.string($0)
            }
        #expect(names.count == expected.count)
        for (found, wanted) in zip(names, expected) {
            guard case .string(let a) = found, case .string(let b) = wanted else {
                #expect(found == wanted)
                continue
            }
            #expect(a == b)  // canonical equivalence: "é" precomposed equals "e" + combining acute
        }
    }

    @Test func groupedDictionariesAreComputedByTheServerWhenExact() throws {
        let shared = try Shared.instance()
        func request(
            _ properties: [FetchProperty], groupBy: [QueryKeyPath], predicate: String? = nil
        ) throws -> FetchRequest<[String: QueryValue]> {
            let request = FetchRequest<[String: QueryValue]>(entityName: "PGPerson")
            request.propertiesToFetch = properties
            request.propertiesToGroupBy = groupBy
            if let predicate { request.predicate = try ObjectPredicate(format: predicate) }
            return request
        }
        func describe(_ results: [[String: QueryValue]]) -> [String] {
            results.map { dictionary in
                dictionary.keys.sorted().map { key -> String in
                    if case .identity(let identity) = dictionary[key]!, let id = identity.base as? ManagedObjectID {
                        return "\(key)=\(id.entity.name)"
                    }
                    return "\(key)=\(dictionary[key]!)"
                }.joined(separator: ",")
            }
        }
        let count = FetchProperty.expression(ExpressionDescription(name: "n", .count(nil)))
        let average = FetchProperty.expression(
            ExpressionDescription(name: "avg", .average("age"), resultType: .double))
        let sum = FetchProperty.expression(ExpressionDescription(name: "sum", .sum("age")))
        let least = FetchProperty.expression(ExpressionDescription(name: "min", .min("age")))
        let most = FetchProperty.expression(ExpressionDescription(name: "max", .max("age")))
        let named = FetchProperty.expression(ExpressionDescription(name: "named", .count("name")))
        let cases: [(FetchRequest<[String: QueryValue]>, inServer: Bool)] = [
            (try request(["team", count, average, sum, least, most, named], groupBy: ["team"]), true),
            (try request(["age", count], groupBy: ["age"], predicate: "age > 20"), true),
            (try request([count, average, sum], groupBy: [], predicate: "ANY clubs.name == 'go'"), true),
            (try request([count, sum], groupBy: [], predicate: "age > 1000"), true),
            (try request(["team", "age", count], groupBy: ["team", "age"]), true),
            // Left to the context: a predicate kept for memory, the minimum of strings.
            (try request(["team", count], groupBy: ["team"], predicate: "name ==[c] 'ada'"), false),
            (
                try request(
                    ["team", .expression(ExpressionDescription(name: "first", .min("name")))], groupBy: ["team"]),
                false
            ),
        ]
        for (fetch, inServer) in cases {
            let expected = try ManagedObjectContext(coordinator: shared.savedMemory).fetch(fetch)
            let before = shared.store.rowsReceived
            let found = try shared.coordinatorContext().fetch(fetch)
            // Groups of a to-one have no order (identities do not order): compared as sets.
            #expect(
                describe(found).sorted() == describe(expected).sorted(),
                "\(String(describing: fetch.propertiesToFetch))")
            #expect((shared.store.rowsReceived == before) == inServer)
        }
    }
}
#endif
