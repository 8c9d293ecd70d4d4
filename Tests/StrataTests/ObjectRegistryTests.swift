import Foundation
import Testing

@testable import Strata

/// A context's registry of objects: every sequence of registrations and removals finds what a dictionary would.
@Suite struct ObjectRegistryTests {
    static let entity = TestModel.model.entity(named: "GraphThing")!

    @Test func randomRegistrationsAndRemovalsMatchADictionary() {
        let registry = ObjectRegistry()
        var model: [ManagedObjectID: ManagedObject] = [:]
        // Objects with permanent IDs of two stores, and temporary ones, so that equal numbers meet.
        let stores = [UUID(), UUID()]
        var objects: [ManagedObject] = []
        for number in UInt64(1)...600 {
            let object = ManagedObject(entity: Self.entity, insertInto: nil)
            if number % 3 != 0 {
                object.objectID = ManagedObjectID(
                    entity: Self.entity, storeIdentifier: stores[Int(number % 2)], rowID: number / 2)
            }
            objects.append(object)
        }
        var state: UInt64 = 42
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let object = objects[Int((state >> 33) % UInt64(objects.count))]
            if model[object.objectID] == nil {
                registry.insert(object)
                model[object.objectID] = object
            } else if state & 1 == 0 {
                #expect(registry.remove(object.objectID) === object)
                model[object.objectID] = nil
            } else {
                #expect(registry.remove(ifRegistered: object))
                model[object.objectID] = nil
            }
        }
        #expect(registry.count == model.count)
        for object in objects { #expect(registry[object.objectID] === model[object.objectID]) }
        #expect(Set(registry.objects.map(ObjectIdentifier.init)) == Set(model.values.map(ObjectIdentifier.init)))
        registry.removeAll()
        #expect(registry.count == 0 && registry[objects[0].objectID] == nil)
    }

    @Test func anObjectThatIsNotTheRegisteredOneIsNotRemovedForIt() {
        let registry = ObjectRegistry()
        let id = ManagedObjectID(entity: Self.entity, storeIdentifier: UUID(), rowID: 9)
        let (registered, other) = (
            ManagedObject(entity: Self.entity, insertInto: nil), ManagedObject(entity: Self.entity, insertInto: nil)
        )
        registered.objectID = id
        other.objectID = id
        registry.insert(registered)
        #expect(!registry.remove(ifRegistered: other))
        #expect(registry[id] === registered)
    }
}
