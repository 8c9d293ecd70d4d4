import Foundation
import Testing

@testable import Strata

/// The members of a to-many in memory: an array for order, a position map for membership.
@Suite struct RelatedObjectsTests {
    static func objects(_ count: Int) -> [ManagedObject] {
        let entity = TestModel.model.entity(named: "GraphThing")!
        return (0..<count).map { _ in ManagedObject(entity: entity, insertInto: nil) }
    }

    @Test func membersAreKeptOnceInTheirFirstOrder() {
        let objects = Self.objects(5)
        // As a store or a parent context lists them, with a member listed twice.
        var related = RelatedObjects([objects[3], objects[0], objects[3], objects[1]])
        #expect(related.objects.map(ObjectIdentifier.init) == [3, 0, 1].map { ObjectIdentifier(objects[$0]) })
        #expect(related.position(of: objects[3]) == 0)
        #expect(related.position(of: objects[1]) == 2)
        #expect(!related.contains(objects[2]))
        // Appending a member changes nothing; a new one goes last.
        let again = related.append(objects[0])
        #expect(!again && related.position(of: objects[0]) == 1)
        let added = related.append(objects[2])
        #expect(added && related.count == 4 && related.position(of: objects[2]) == 3)
        // An unordered removal moves the last member into the hole, and keeps every position right.
        let removed = related.remove(objects[3], keepingOrder: false)
        #expect(removed)
        #expect(related.objects.enumerated().allSatisfy { related.position(of: $1) == $0 })
        #expect(!related.contains(objects[3]) && related.count == 3)
    }
}
