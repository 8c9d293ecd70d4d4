import Foundation
import Testing

@testable import Strata

/// Fetched properties (Core Data's `NSFetchedPropertyDescription`): a predicate over another entity's objects
/// with `$FETCH_SOURCE` bound to the object read.
@Suite struct FetchedPropertyTests {
    static let model = try! ManagedObjectModel {
        Entity("FetchedTeam") {
            Attribute("name", .string)
            Attribute("minimum", .integer64)
            FetchedProperty(
                "strongPlayers", "FetchedPlayer", predicate: "team == $FETCH_SOURCE AND score >= $FETCH_SOURCE.minimum")
            FetchedProperty("everyone", "FetchedPlayer")
            Relationship.toMany("players", "FetchedPlayer", inverse: "team")
        }
        Entity("FetchedPlayer") {
            Attribute("score", .integer64)
            Relationship.toOne("team", "FetchedTeam", inverse: "players")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFetchedPropertyFindsMatchingObjectsSavedOrNot(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: Self.model)
        let context = stack.context()
        func insert(_ entity: String, _ values: [String: Any]) throws -> ManagedObject {
            let object = ManagedObject(entity: Self.model.entity(named: entity)!, insertInto: context)
            for (key, value) in values { try object.setValue(value, forKey: key) }
            return object
        }
        let reds = try insert("FetchedTeam", ["name": "Reds", "minimum": Int64(10)])
        let blues = try insert("FetchedTeam", ["name": "Blues", "minimum": Int64(0)])
        let strong = try insert("FetchedPlayer", ["score": Int64(12), "team": reds])
        _ = try insert("FetchedPlayer", ["score": Int64(3), "team": reds])
        let blue = try insert("FetchedPlayer", ["score": Int64(1), "team": blues])
        try context.save()
        #expect(try reds.fetchedValues(forKey: "strongPlayers") == [strong])
        #expect(try blues.fetchedValues(forKey: "strongPlayers") == [blue])
        #expect(try reds.fetchedValues(forKey: "everyone").count == 3)
        let late = try insert("FetchedPlayer", ["score": Int64(50), "team": reds])  // pending, not saved
        #expect(Set(try reds.fetchedValues(forKey: "strongPlayers")) == [strong, late])
        do {
            _ = try reds.fetchedValues(forKey: "players2")
            Issue.record("an unknown fetched property was read")
        } catch ObjectGraphError.unknownKey(let entity, let key) {
            #expect(entity == "FetchedTeam" && key == "players2")
        }
    }

    @Test func fetchedPropertiesAreCheckedWhenTheModelIsBuilt() {
        #expect(throws: ModelError.self) {
            try ManagedObjectModel { Entity("A") { FetchedProperty("x", "Nowhere") } }
        }
        #expect(throws: ModelError.self) {
            try ManagedObjectModel { Entity("A") { FetchedProperty("x", "A", predicate: "name ==") } }
        }
        #expect(throws: ModelError.duplicateAttribute(entity: "A", attribute: "x")) {
            try ManagedObjectModel {
                Entity("A") {
                    Attribute("x", .string)
                    FetchedProperty("x", "A")
                }
            }
        }
    }
}
