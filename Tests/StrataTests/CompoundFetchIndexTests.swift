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
