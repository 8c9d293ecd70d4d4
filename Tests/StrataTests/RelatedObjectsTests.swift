import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// The members of a to-many in memory: an array for order, a position table for membership.
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

    /// Distinct members (a to-many read from the store) are taken in their order, each at its position.
    @Test func distinctMembersAreTakenInTheirOrder() {
        let objects = Self.objects(700)
        var related = RelatedObjects(objects)
        #expect(related.objects.map(ObjectIdentifier.init) == objects.map(ObjectIdentifier.init))
        #expect(related.objects.enumerated().allSatisfy { related.position(of: $1) == $0 })
        #expect(RelatedObjects([]).count == 0)
        // The table made at their size still grows and finds them as members come and go.
        let extra = Self.objects(300)
        let added = extra.map { related.append($0) }
        #expect(added.allSatisfy { $0 })
        let again = related.append(objects[699])
        let removed = related.remove(objects[0], keepingOrder: false)
        #expect(!again && removed)
        #expect(related.count == 999 && !related.contains(objects[0]))
        #expect(related.objects.enumerated().allSatisfy { related.position(of: $1) == $0 })
    }

    @Test func orderedInsertsAndRemovalsKeepEveryPositionRight() {
        let objects = Self.objects(6)
        var related = RelatedObjects(Array(objects[0..<4]))
        // A new member in the middle moves the later ones on; a member moved to the front moves the others back.
        related.insert(objects[4], at: 1)
        related.insert(objects[3], at: 0)
        #expect(related.objects.map(ObjectIdentifier.init) == [3, 0, 4, 1, 2].map { ObjectIdentifier(objects[$0]) })
        #expect(related.objects.enumerated().allSatisfy { related.position(of: $1) == $0 })
        let removed = related.remove(objects[0], keepingOrder: true)
        #expect(removed && !related.contains(objects[0]))
        #expect(related.objects.map(ObjectIdentifier.init) == [3, 4, 1, 2].map { ObjectIdentifier(objects[$0]) })
        #expect(related.objects.enumerated().allSatisfy { related.position(of: $1) == $0 })
        #expect(!related.remove(objects[5]) && related.position(of: objects[5]) == nil)
    }

    /// Random appends, inserts and removals of a few hundred objects (the table grows and its probe runs close up
    /// over removals), checked against a plain array after every step.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomChangesAgreeWithAnArray(seed: UInt64) {
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let objects = Self.objects(300)
        var related = RelatedObjects()
        var expected: [ManagedObject] = []
        for step in 0..<3_000 {
            let object = objects[Int.random(in: 0..<objects.count, using: &random)]
            let member = expected.contains { $0 === object }
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                #expect(related.append(object) == !member, "seed \(seed), step \(step)")
                if !member { expected.append(object) }
            case 5..<7:
                let index = Int.random(in: 0...expected.count, using: &random)
                related.insert(object, at: index)
                expected.removeAll { $0 === object }
                expected.insert(object, at: min(index, expected.count))
            case 7..<9:
                #expect(related.remove(object, keepingOrder: false) == member, "seed \(seed), step \(step)")
                if let index = expected.firstIndex(where: { $0 === object }) {
                    let last = expected.removeLast()
                    if index < expected.count { expected[index] = last }
                }
            default:
                #expect(related.remove(object, keepingOrder: true) == member, "seed \(seed), step \(step)")
                expected.removeAll { $0 === object }
            }
            #expect(related.objects.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init))
            let positionsAgree = objects.allSatisfy { object in
                related.position(of: object) == expected.firstIndex { $0 === object }
            }
            #expect(positionsAgree, "seed \(seed), step \(step)")
            if !positionsAgree { return }
        }
    }
}
