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

    @Test func aRelationshipValueIsThreeWords() {
        // A to-many's members and their position table, and the case: every object's state holds one a relationship.
        #expect(MemoryLayout<RelationshipValue?>.stride <= 24)
    }

    @Test func aStoredRowIsThreeWords() {
        // Its entity, its version, and one reference to its values or to its record's bytes: a row cache entry holds
        // one per cached row.
        #expect(MemoryLayout<StoredRow>.size == 24)
    }

    @Test func aStateHoldsItsRecordAtTheSameAddressAsTheRow() throws {
        // `ObjectState.value(at:)` reads a state's record where it lies, as a row: the committed state's record case
        // must be the row's own bytes (its tag in the row's spare bits, zero for that case), with no room of its own.
        #expect(MemoryLayout<CommittedState>.size == MemoryLayout<StoredRow>.size)
        #expect(MemoryLayout<CommittedState>.alignment == MemoryLayout<StoredRow>.alignment)
        let model = try RecordRowTests.model()
        let entity = try #require(model.entity(named: "Kept"))
        let owner = try #require(model.entity(named: "SpecialOwner"))
        let bytes = try RecordRowTests.record(of: entity, owner: owner)
        for referencesBlobs in [false, true] {
            var row = StoredRow(entity: entity, version: 4, checkedRecord: bytes, referencesBlobs: referencesBlobs)
            var state = CommittedState.record(row)
            let rowBytes = withUnsafeBytes(of: &row) { Array($0) }
            let stateBytes = withUnsafeBytes(of: &state) { Array($0) }
            #expect(rowBytes == stateBytes)
        }
    }

    @Test func aRowCacheEntryIsFourWords() {
        // Its row, and its read time (a 32-bit tick) beside its 32-bit reference count: one per cached row.
        #expect(RowCache.entryStride == 32)
    }

    @Test func aManagedPropertyWrapperIsFourBytes() {
        #expect(MemoryLayout<ManagedAttribute<String>>.size == 4)
        #expect(MemoryLayout<ManagedRelationship<ManagedObject?>>.size == 4)
    }

    @Test func anObjectOfNoSubclassIsOneAllocationOfEightyBytes() {
        // Its ID (three words, inline), context, state and batch, and one byte of flags: 65 bytes asked for, an
        // 80-byte heap chunk, and no other allocation (the ID was a 48-byte one of its own).
        let objects = (0..<64).map { _ in
            ManagedObject(entity: TestModel.model.entity(named: "GraphThing")!, insertInto: nil)
        }
        #expect(smallestChunk(objects) <= 72)
        #expect(objects[0].entity === objects[0].objectID.entity)
    }

    @Test func anObjectIDIsThreeWordsWithNoAllocation() {
        // Its entity, its store's interned identity and its number, held inline by its object, its registry slot
        // or its set; an optional ID takes no more room (the entity reference's spare bits mark nil).
        #expect(MemoryLayout<ManagedObjectID>.size == 24)
        #expect(MemoryLayout<ManagedObjectID?>.size == 24)
        let entity = TestModel.model.entity(named: "GraphThing")!
        let store = UUID()
        let id = ManagedObjectID(entity: entity, storeIdentifier: store, rowID: 7)
        #expect(id.storeIdentifier == store && id.rowID == 7 && !id.isTemporaryID)
        #expect(id == ManagedObjectID(entity: entity, storeIdentifier: store, rowID: 7))
        #expect(id != ManagedObjectID(entity: entity, storeIdentifier: UUID(), rowID: 7))
        // A temporary ID names no store, even next to a store whose UUID is all zeros.
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let temporary = ManagedObjectID(temporaryFor: entity)
        #expect(temporary.isTemporaryID && temporary.storeIdentifier == nil)
        #expect(!ManagedObjectID(entity: entity, storeIdentifier: zero, rowID: 1).isTemporaryID)
    }

    @Test func anObjectStateIsOneAllocationOfOneHundredFourBytesAndSixteenARelationship() {
        // Every inserted object and fired fault has one: the tables few objects use are in its extras, made on
        // first need, and so are its index sets' indexes of 64 or more. Its fields are 88 bytes (each index set is
        // one word, the change count and the willSave mark share one, the coordinator is in the extras, the record
        // and the committed arrays share three words), and each relationship's value (16 bytes) lies after them in
        // the same allocation: 104 bytes asked for without a relationship (a 112-byte chunk), 120 with one
        // (W1.graph's employee: a 128-byte chunk, and no array).
        #expect(MemoryLayout<ObjectStateFields>.size <= 88)
        #expect(MemoryLayout<RelationshipValue?>.stride <= 16)
        let entity = TestModel.model.entity(named: "GraphThing")!
        #expect(entity.relationships.isEmpty)
        let states = (0..<64).map { _ in ObjectState.make(newObjectOf: entity) }
        #expect(smallestChunk(states) <= 104)
        // Empty tables make no extras; a table given something reads it back, and emptying it reads empty.
        let state = states[0]
        state.externalReferences = [:]
        state.relationshipBaselines = [:]
        #expect(state.externalReferences.isEmpty && state.attributeBaselines.isEmpty && state.observers.isEmpty)
        #expect(state.coordinator == nil)
        state.externalReferences[2] = 9
        state.committedExternalReferences = [0: 4]
        #expect(state.externalReferences == [2: 9] && state.committedExternalReferences == [0: 4])
        state.externalReferences = [:]
        #expect(state.externalReferences.isEmpty && state.committedExternalReferences == [0: 4])
        // Each entity's state asks for 104 bytes and 16 a relationship, however many it has.
        for name in ["RelBadge", "RelDepartment", "RelEmployee"] {
            let entity = RelationshipModel.model.entity(named: name)!
            let count = entity.relationships.count
            #expect(count > 0)
            for made in [ObjectState.make(newObjectOf: entity), ObjectState.make(faultOf: entity)] {
                #expect(made.capacity >= count)
            }
            let states = (0..<64).map { _ in ObjectState.make(faultOf: entity) }
            #expect(smallestChunk(states) <= 104 + 16 * count, "\(name)")
        }
        let badge = RelationshipModel.model.entity(named: "RelBadge")!
        #expect(badge.relationships.count == 1)
        #expect(smallestChunk((0..<64).map { _ in ObjectState.make(newObjectOf: badge) }) <= 120)
    }

    @Test func anObjectStatesRelationshipSlotsHoldWhatTheyAreGiven() throws {
        // An entity of 100 relationships: a slot each, no limit; a new object's hold empty values, a fault's none.
        let entities = [
            Entity("SlotsTarget") { Attribute("name", .string) },
            Entity("SlotsMany") {
                Attribute("name", .string)
                for index in 0..<100 {
                    if index.isMultiple(of: 2) {
                        Relationship.toOne("one\(index)", "SlotsTarget")
                    } else {
                        Relationship.toMany("many\(index)", "SlotsTarget")
                    }
                }
            },
        ]
        let model = try ManagedObjectModel(entities: entities)
        let entity = try #require(model.entity(named: "SlotsMany"))
        #expect(entity.relationships.count == 100)
        let fault = ObjectState.make(faultOf: entity)
        let new = ObjectState.make(newObjectOf: entity)
        #expect(smallestChunk([fault]) >= 104 + 16 * 100)
        for index in 0..<100 {
            #expect(fault.relationshipValue(at: index) == nil)
            switch new.relationshipValue(at: index) {
            case .toOne(let target): #expect(target == nil && index.isMultiple(of: 2))
            case .toMany(let members): #expect(members.count == 0 && !index.isMultiple(of: 2))
            case nil: Issue.record("a new object's relationship \(index) is unread")
            }
        }
        // Written, taken (the slot left unread) and put back; the values are the state's, held strongly.
        let target = ManagedObject(entity: model.entity(named: "SlotsTarget")!, insertInto: nil)
        weak var released: ManagedObject?
        do {
            let other = ManagedObject(entity: model.entity(named: "SlotsTarget")!, insertInto: nil)
            released = other
            new.setRelationshipValue(.toOne(other), at: 98)
        }
        #expect(released != nil)
        new.setRelationshipValue(.toOne(target), at: 98)
        #expect(released == nil)
        guard case .toOne(let read) = new.relationshipValue(at: 98) else {
            Issue.record("not a to-one")
            return
        }
        #expect(read === target)
        guard case .toMany(var members) = new.takeRelationshipValue(at: 99) else {
            Issue.record("not a to-many")
            return
        }
        #expect(new.relationshipValue(at: 99) == nil)
        members.append(target)
        new.setRelationshipValue(.toMany(members), at: 99)
        guard case .toMany(let put) = new.relationshipValue(at: 99) else {
            Issue.record("not a to-many")
            return
        }
        #expect(put.objects.count == 1 && put.contains(target))
        // Forgotten: every slot unread, the objects let go.
        weak var held: ManagedObject?
        do {
            let member = ManagedObject(entity: model.entity(named: "SlotsTarget")!, insertInto: nil)
            held = member
            new.setRelationshipValue(.toMany(RelatedObjects([member])), at: 1)
        }
        #expect(held != nil)
        new.forgetRelationshipValues(count: entity.relationships.count)
        #expect(held == nil)
        #expect((0..<100).allSatisfy { new.relationshipValue(at: $0) == nil })
        new.setRelationshipValues(entity.emptyRelationshipValues)
        #expect((0..<100).allSatisfy { new.relationshipValue(at: $0) != nil })
    }

    @Test func aStateFreesWhatItsSlotsHold() {
        let entity = RelationshipModel.model.entity(named: "RelEmployee")!
        weak var held: ManagedObject?
        do {
            let state = ObjectState.make(faultOf: entity)
            let target = ManagedObject(entity: RelationshipModel.model.entity(named: "RelBadge")!, insertInto: nil)
            held = target
            state.setRelationshipValue(.toOne(target), at: entity.relationshipsByName["badge"]!.index)
            #expect(held != nil)
        }
        #expect(held == nil)
    }

    @Test func anObjectStatesIndexSetsKeepIndexesOfSixtyFourAndMore() {
        // The word holds the first 64 indexes; the rest go to the extras, and read back with them.
        let entity = TestModel.model.entity(named: "GraphThing")!
        let state = ObjectState.make(newObjectOf: entity)
        #expect(!state.hasChangedProperties && state.changedIndexes.isEmpty && state.changedRelationships.isEmpty)
        state.noteChange(ofAttribute: 3)
        state.noteChange(ofAttribute: 70)
        state.noteChange(ofRelationship: 65)
        #expect(Array(state.changedIndexes) == [3, 70] && Array(state.changedRelationships) == [65])
        #expect(state.changeCount == 3 && state.hasChangedProperties)
        state.changedIndexes.remove(3)
        #expect(Array(state.changedIndexes) == [70] && state.hasChangedProperties)
        state.changedRelationships = []
        state.changedIndexes.remove(70)
        #expect(!state.hasChangedProperties && state.changedIndexes.isEmpty)
        state.undecoded = [1, 64, 90]
        #expect(state.isUndecoded(1) && state.isUndecoded(64) && state.isUndecoded(90) && !state.isUndecoded(2))
        #expect(Array(state.undecoded) == [1, 64, 90])
        state.undecoded = []
        #expect(state.undecoded.isEmpty && !state.isUndecoded(64))
        state.changedRelationships = [0, 100]
        state.settle(values: [], references: [], version: 2)
        #expect(!state.hasChangedProperties && state.changedRelationships.isEmpty && state.version == 2)
    }

    @Test func equalArraysShareOneBuffer() {
        let entity = TestModel.model.entity(named: "GraphThing")!
        let department = StoredReference(entity: entity, rowID: 7)
        var shared = SharedArrays<StoredReference?>(expected: 1_000)
        let first = shared.shared([department, nil])
        let second = shared.shared(Array([department, nil]))
        #expect(second == [department, nil])
        #expect(address(of: first) == address(of: second))
        #expect(
            shared.shared([StoredReference(entity: entity, rowID: 8)]) == [StoredReference(entity: entity, rowID: 8)])
        #expect(shared.shared([]).isEmpty)
        // A write to one copy leaves the other as it was.
        var changed = second
        changed[1] = department
        #expect(first == [department, nil] && changed == [department, department])
        // Arrays that take the same slot in turn are not shared, and are still what they were.
        var single = SharedArrays<ObjectReference?>(expected: 1)
        let inserted = single.shared([.inserted(3)])
        #expect(single.shared([.stored(department)]) == [.stored(department)])
        let again = Array([ObjectReference.inserted(3)] as [ObjectReference?])
        #expect(single.shared(again) == [.inserted(3)])
        #expect(address(of: single.shared(again)) == address(of: again))
        #expect(address(of: inserted) != address(of: again))
    }

    @Test func aSharedArrayIsResolvedOncePerBuffer() {
        var results = ArrayResults<Int, [Int]>()
        var made = 0
        func doubled(_ array: [Int]) -> [Int] {
            results.result(for: array) {
                made += 1
                return $0.map { 2 * $0 }
            }
        }
        let first = [1, 2]
        #expect(doubled(first) == [2, 4] && made == 1)
        // The same buffer again: what it gave before.
        let copy = first
        #expect(doubled(copy) == [2, 4] && made == 1)
        // An equal array in another buffer, and another array: made, and right.
        #expect(doubled(Array([1, 2])) == [2, 4] && made == 2)
        #expect(doubled([3]) == [6] && made == 3)
        // Empty arrays are made each time (they all share one buffer).
        #expect(doubled([]).isEmpty && made == 4)
        #expect(doubled([]).isEmpty && made == 5)
        // Many arrays held at once, some taking another's slot: each still gets its own result.
        let arrays = (0..<1_000).map { [$0, $0 + 1] }
        for array in arrays { #expect(doubled(array) == array.map { 2 * $0 }) }
        for array in arrays { #expect(doubled(array) == array.map { 2 * $0 }) }
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

/// Where an array's elements are: equal for arrays that share a buffer.
private func address<Element>(of array: [Element]) -> UnsafeRawPointer? {
    array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
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
