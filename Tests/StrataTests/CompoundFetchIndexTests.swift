import Foundation
import StrataQuery
import StrataStorage
import Testing

@testable import Strata

/// Fetch indexes (Core Data's `NSFetchIndexDescription`): compound, ascending and descending, in the Swift
/// builder and in the Strata store.
@Suite struct CompoundFetchIndexTests {
    static func model(indexes: [FetchIndex]) throws(ModelError) -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("IndexedPerson", indexes: indexes) {
                Attribute("lastName", .string)
                Attribute("age", .integer16)
                Attribute("nickname", .string).transient()
                Relationship.toOne("team", "IndexedTeam", inverse: "members")
            }
            Entity("IndexedTeam") {
                Attribute("name", .string)
                Relationship.toMany("members", "IndexedPerson", inverse: "team")
            }
        }
    }

    static let byNameAndAge = FetchIndex("byNameAndAge", .ascending("lastName"), .descending("age"))

    @Test func theBuilderRecordsElementsAndTheirFields() throws {
        let model = try Self.model(indexes: [Self.byNameAndAge, FetchIndex("byTeam", .ascending("team"))])
        let person = try #require(model.entity(named: "IndexedPerson"))
        let index = try #require(person.indexes.first)
        #expect(index.description == "IndexedPerson.byNameAndAge[lastName, age desc]")
        #expect(index.elements.map(\.fieldIndex) == [0, 1])
        #expect(person.indexes[1].elements.map(\.fieldIndex) == [person.relationshipsByName["team"]!.fieldIndex!])
        // Indexes are not part of the version hash, as in Core Data.
        #expect(model.versionHash == (try Self.model(indexes: [])).versionHash)
    }

    @Test func theBuilderRefusesBadIndexes() {
        let cases: [(FetchIndex, String)] = [
            (FetchIndex("none", elements: []), "no element"),
            (FetchIndex("twice", .ascending("age"), .descending("age")), "twice"),
            (FetchIndex("missing", .ascending("shoeSize")), "shoeSize"),
            (FetchIndex("transient", .ascending("nickname")), "transient"),
            (FetchIndex("", .ascending("age")), "empty name"),
        ]
        for (index, fragment) in cases {
            do {
                _ = try Self.model(indexes: [index])
                Issue.record("\(index.name) was accepted")
            } catch {
                guard case .invalidFetchIndex(_, _, let reason) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(reason.contains(fragment), "\(reason)")
            }
        }
        do {
            _ = try ManagedObjectModel {
                Entity("A", indexes: [FetchIndex("byBs", .ascending("bs"))]) { Relationship.toMany("bs", "A") }
            }
            Issue.record("an index over a to-many was accepted")
        } catch {
            #expect("\(error)".contains("to-many relationship bs"))
        }
    }

    @Test func theStoreAnswersComparisonsOnTheFirstElementFromTheIndex() throws {
        let model = try Self.model(indexes: [Self.byNameAndAge])
        let stack = try TestStack(.strata, model: model)
        let store = try #require(stack.store as? StrataStore)
        #expect(store.engine.snapshot().indexNames.contains("index.IndexedPerson.byNameAndAge[0,1]"))
        let context = stack.context()
        let names = ["Lovelace", "Hopper", "Turing", "Lamarr", "Liskov", "Knuth", "Hamilton", "Backus"]
        for (position, name) in names.enumerated() {
            let person = ManagedObject(entity: model.entity(named: "IndexedPerson")!, insertInto: context)
            try person.setValue(name, forKey: "lastName")
            try person.setValue(Int16(30 + position), forKey: "age")
        }
        try context.save()
        func examined(_ format: String) throws -> (rows: Int, results: [String]) {
            let request = FetchRequest<ManagedObject>(entityName: "IndexedPerson")
            request.predicate = try ObjectPredicate(format: format)
            let before = store.rowsExamined
            let reader = stack.context()
            let results = try reader.fetch(request).map { try $0.value(forKey: "lastName") as! String }
            return (store.rowsExamined - before, results.sorted())
        }
        let equal = try examined("lastName == 'Turing'")
        #expect(equal.rows == 1 && equal.results == ["Turing"])
        let prefix = try examined("lastName BEGINSWITH 'L'")
        #expect(prefix.rows == 3 && prefix.results == ["Lamarr", "Liskov", "Lovelace"])
        let both = try examined("lastName == 'Hopper' AND age == 31")
        #expect(both.rows == 1 && both.results == ["Hopper"])
        // A comparison on the second element alone is not a prefix of the key: the table is scanned.
        let second = try examined("age == 33")
        #expect(second.rows == names.count && second.results == ["Lamarr"])
    }

    /// Terms that fix the leading elements and bound the next one read one range of the compound index; the rows
    /// are those the in-memory store finds.
    @Test func equalityThenARangeReadOneRangeOfTheCompoundIndex() throws {
        let model = try Self.model(indexes: [Self.byNameAndAge])
        func load(_ kind: StoreKind) throws -> TestStack {
            let stack = try TestStack(kind, model: model)
            let context = stack.context()
            for number in 0..<60 {
                let person = ManagedObject(entity: model.entity(named: "IndexedPerson")!, insertInto: context)
                try person.setValue(["Lee", "Kim", "Park"][number % 3], forKey: "lastName")
                if number % 7 != 0 { try person.setValue(Int16(20 + number), forKey: "age") }
            }
            try context.save()
            return stack
        }
        let strata = try load(.strata)
        let memory = try load(.inMemory)
        let store = try #require(strata.store as? StrataStore)
        func ages(_ stack: TestStack, _ format: String) throws -> [Int] {
            let request = FetchRequest<ManagedObject>(entityName: "IndexedPerson")
            request.predicate = try ObjectPredicate(format: format)
            let context = stack.context()
            return try context.fetch(request).map { (try $0.value(forKey: "age") as? Int) ?? -1 }.sorted()
        }
        // Lee, Kim, Park in turn for numbers 0 ..< 60; age 20 + number, nil for multiples of 7.
        for (format, examined, results) in [
            ("lastName == 'Lee' AND age > 60", 5, 5), ("age >= 50 AND lastName == 'Kim'", 9, 9),
            ("lastName == 'Park' AND age < 30", 3, 3), ("lastName == 'Lee' AND age <= 23", 1, 1),
            ("lastName == 'Kim' AND age BETWEEN {30, 40} AND age != 33", 4, 3),
            ("lastName == 'Park' AND age == 25", 1, 1),
            // nil is not an index key: the leading element alone.
            ("lastName == 'Lee' AND age == nil", 20, 3),
        ] {
            let before = store.rowsExamined
            let found = try ages(strata, format)
            #expect(store.rowsExamined - before == examined, "\(format)")
            #expect(found.count == results, "\(format)")
            #expect(found == (try ages(memory, format)), "\(format)")
        }
    }

    @Test func reopeningWithAChangedIndexReplacesTheEngineIndex() throws {
        let first = try TestStack(.strata, model: try Self.model(indexes: [Self.byNameAndAge]))
        let context = first.context()
        let person = ManagedObject(entity: first.model.entity(named: "IndexedPerson")!, insertInto: context)
        try person.setValue("Noether", forKey: "lastName")
        try person.setValue(Int16(7), forKey: "age")
        try context.save()
        try first.close()
        let changed = try Self.model(indexes: [FetchIndex("byNameAndAge", .ascending("age"))])
        let second = try TestStack(.strata, model: changed, directory: first.directory)
        let store = try #require(second.store as? StrataStore)
        let names = store.engine.snapshot().indexNames.filter { $0.hasPrefix("index.") }
        #expect(names == ["index.IndexedPerson.byNameAndAge[1]"])
        let request = FetchRequest<ManagedObject>(entityName: "IndexedPerson")
        request.predicate = try ObjectPredicate(format: "age == 7")
        let reader = second.context()
        let before = store.rowsExamined
        #expect(try reader.fetch(request).count == 1)
        #expect(store.rowsExamined - before == 1)  // the new index was filled from the table
    }
}
