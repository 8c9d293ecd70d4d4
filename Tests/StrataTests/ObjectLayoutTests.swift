import Foundation
import Testing

@testable import Strata

/// Layout facts the object graph's memory per object rests on (Benchmarks' M1.graph measures the whole): a
/// change that makes one of these larger multiplies by every value, row and object in memory.
@Suite struct ObjectLayoutTests {
    @Test func anAttributeValueIsThreeWords() {
        // Without `indirect` on `.object`, the existential payload makes it six.
        #expect(MemoryLayout<AttributeValue?>.stride <= 24)
    }

    @Test func aStoredRowIsThreeWords() {
        // Its entity, its version, and one reference to its values or to its record's bytes: a row cache entry holds
        // one per cached row.
        #expect(MemoryLayout<StoredRow>.size == 24)
    }

    @Test func aManagedPropertyWrapperIsFourBytes() {
        #expect(MemoryLayout<ManagedAttribute<String>>.size == 4)
        #expect(MemoryLayout<ManagedRelationship<ManagedObject?>>.size == 4)
    }

    @Test func anObjectOfNoSubclassIsOneAllocationOfSixtyFourBytes() {
        // Its ID, context, state and batch, and one byte of flags: 49 bytes asked for, a 64-byte heap chunk.
        let objects = (0..<64).map { _ in
            ManagedObject(entity: TestModel.model.entity(named: "GraphThing")!, insertInto: nil)
        }
        #expect(smallestChunk(objects) <= 56)
        #expect(objects[0].entity === objects[0].objectID.entity)
    }

    @Test func anObjectIDIsOneAllocationOfFortyEightBytes() {
        // Its entity, its store's interned identity and its number: 40 bytes asked for, a 48-byte heap chunk.
        let entity = TestModel.model.entity(named: "GraphThing")!
        let store = UUID()
        let id = ManagedObjectID(entity: entity, storeIdentifier: store, rowID: 7)
        #expect(
            smallestChunk((0..<64).map { ManagedObjectID(entity: entity, storeIdentifier: store, rowID: $0) }) <= 40)
        #expect(id.storeIdentifier == store && id.rowID == 7 && !id.isTemporaryID)
        #expect(id == ManagedObjectID(entity: entity, storeIdentifier: store, rowID: 7))
        #expect(id != ManagedObjectID(entity: entity, storeIdentifier: UUID(), rowID: 7))
        // A temporary ID names no store, even next to a store whose UUID is all zeros.
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let temporary = ManagedObjectID(temporaryFor: entity)
        #expect(temporary.isTemporaryID && temporary.storeIdentifier == nil)
        #expect(!ManagedObjectID(entity: entity, storeIdentifier: zero, rowID: 1).isTemporaryID)
    }

    @Test func aPropertyKeyNamesTheSameDeclarationEveryTime() {
        let first = PropertyKey.named("salary")
        #expect(PropertyKey.named("salary") == first)
        #expect(PropertyKey.named("name") != first)
        #expect(PropertyKeyTable.shared.name(of: first) == "salary")
    }

    @Test func aTransformableValueStillRoundTripsThroughItsIndirectCase() {
        let value = AttributeValue.object(AnyHashableSendable(["a": 1]))
        guard case .object(let boxed) = value else {
            Issue.record("not an object value")
            return
        }
        #expect(boxed == AnyHashableSendable(["a": 1]))
    }
}

/// glibc's `malloc_usable_size` (malloc.h, which no module Swift imports declares): the bytes of the heap chunk
/// an object lives in.
@_silgen_name("malloc_usable_size")
private func usableSize(of pointer: UnsafeMutableRawPointer) -> Int

/// The usable bytes of the smallest heap chunk among `objects`, all of one class: malloc may hand out a chunk 16
/// bytes larger than asked when it splits a free one (the rest would be too small to keep), so one object
/// alone can look larger than its class; the smallest of many is the size asked for, rounded to a chunk.
private func smallestChunk(_ objects: [AnyObject]) -> Int {
    objects.map { usableSize(of: Unmanaged.passUnretained($0).toOpaque()) }.min() ?? 0
}
