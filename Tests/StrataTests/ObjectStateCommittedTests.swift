import Foundation
import Testing

@testable import Strata

/// An object's committed state is the row it was loaded from or saved as (kept as its record), or the values and
/// to-ones that row was detached into, or that a store without records handed over: one or the other, never both
/// (``ObjectState`` keeps them in one field). Each way reads the same through the object, and a committed value
/// changed through the object changes it in place.
@Suite struct ObjectStateCommittedTests {
    @Test(arguments: StoreKind.allCases)
    func aFiredObjectHoldsItsRowOrItsCommittedArraysAndAChangeDetachesTheRowInPlace(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: try RecordRowTests.model())
        let context = stack.context()
        let owner = ManagedObject(entity: stack.entity("Owner"), insertInto: context)
        try owner.setValue("Ada", forKey: "name")
        let kept = try SavedInsertRowTests.insertKept(owner: owner, in: context, stack: stack)
        try context.save()
        let ownerReference = StoredReference(entity: owner.entity, rowID: try #require(owner.objectID.rowID))

        let reader = stack.context()
        let fetched = reader.object(with: kept.objectID)
        #expect(try SavedInsertRowTests.values(of: fetched) == RecordRowTests.values)
        let state = try #require(fetched.state)
        if let record = state.record {
            // The Strata store keeps rows as records: the row is the committed state, and there are no arrays.
            #expect(kind == .strata && record.isRecord && record.version == 1)
            #expect(state.committed == nil && state.committedReferences == nil)
        } else {
            #expect(kind != .strata)
            #expect(state.committed == RecordRowTests.values && state.committedReferences == [ownerReference])
        }
        #expect(fetched.committed == RecordRowTests.values && fetched.committedReferences == [ownerReference])
        #expect(fetched.committedReference(at: 0) == ownerReference && fetched.version == 1)

        // A committed value changed through the object (as a blob read changes one): the row, if any, detaches into
        // the arrays, the to-ones stay, and a further change writes into the same buffer.
        fetched.committed?[2] = .integer(7)
        var expected = RecordRowTests.values
        expected[2] = .integer(7)
        #expect(state.record == nil)
        #expect(state.committed == expected && state.committedReferences == [ownerReference])
        let buffer = state.committed?.withUnsafeBufferPointer { $0.baseAddress }
        fetched.committed?[6] = .string("changed in place")
        expected[6] = .string("changed in place")
        #expect(state.committed == expected && state.committed?.withUnsafeBufferPointer { $0.baseAddress } == buffer)
        // Each array is set apart from the other.
        fetched.committedReferences = nil
        #expect(state.committed == expected && state.committedReferences == nil)
        fetched.committedReferences = [ownerReference]
        fetched.committed = nil
        #expect(state.committed == nil && state.committedReferences == [ownerReference])
        #expect(fetched.version == 1)

        // The row the store and the row cache hold did not change: refreshed, the object reads it again.
        try reader.refresh(fetched, mergeChanges: false)
        #expect(try SavedInsertRowTests.values(of: fetched) == RecordRowTests.values)
        #expect(fetched.committed == RecordRowTests.values && fetched.committedReferences == [ownerReference])
        #expect((fetched.state?.record != nil) == (kind == .strata))
    }

    /// The row the Strata store wrote for a saved owner named Ada (held by its object), with the stack that keeps its
    /// model alive.
    static func savedOwnerRow() throws -> (stack: TestStack, row: StoredRow, entity: EntityDescription) {
        let stack = try TestStack(.strata, model: try RecordRowTests.model())
        let context = stack.context()
        let owner = ManagedObject(entity: stack.entity("Owner"), insertInto: context)
        try owner.setValue("Ada", forKey: "name")
        try context.save()
        return (stack, try #require(owner.state?.record), owner.entity)
    }

    @Test func aStateMovesBetweenItsRowAndItsArraysAndForgetsBoth() throws {
        let (stack, row, entity) = try Self.savedOwnerRow()
        defer { withExtendedLifetime(stack) {} }
        #expect(row.isRecord && row.version == 1 && entity.toOneRelationships.isEmpty)

        let state = ObjectState.make(newObjectOf: entity)
        #expect(state.record == nil && state.committed == nil && state.committedReferences == nil)
        state.settle(values: [.string("Grace")], references: [], version: 3)
        #expect(state.record == nil && state.committed == [.string("Grace")] && state.committedReferences == [])
        #expect(state.version == 3)
        state.settle(record: row, of: entity)
        #expect(state.record == row && state.committed == nil && state.committedReferences == nil)
        #expect(state.version == 1 && state.value(at: 0) == .string("Ada"))
        state.detachRecord()
        #expect(state.record == nil && state.committed == [.string("Ada")] && state.committedReferences == [])
        #expect(state.committedExternalReferences.isEmpty && state.version == 1 && state.value(at: 0) == .string("Ada"))
        state.forgetValues(of: entity)
        #expect(state.record == nil && state.committed == nil && state.committedReferences == nil)
    }

    @Test func aNewObjectsStateHoldsItsWrittenRowUnlessItHasCommittedValuesOrToOnes() throws {
        let (stack, row, entity) = try Self.savedOwnerRow()
        defer { withExtendedLifetime(stack) {} }

        // A new object's state (nothing committed) holds the row in place of its values, and gives it back with
        // nothing committed, its values decoded from the row.
        let new = ObjectState.make(newObjectOf: entity)
        new.setValue(.string("Ada"), at: 0)
        new.holdWritten(row, of: entity)
        #expect(new.record == row && new.undecoded == entity.persistentAttributeIndexes)
        #expect(new.committed == nil && new.committedReferences == nil)
        new.dropRecord()
        #expect(new.record == nil && new.committed == nil && new.committedReferences == nil)
        #expect(new.undecoded.isEmpty && new.values == [.string("Ada")])

        // A state with committed values, or committed to-ones, keeps them and its values: the row is not held.
        let withValues = ObjectState.make(newObjectOf: entity)
        withValues.setValue(.string("Grace"), at: 0)
        withValues.committed = [.string("Ada")]
        withValues.holdWritten(row, of: entity)
        #expect(withValues.record == nil && withValues.undecoded.isEmpty)
        #expect(withValues.committed == [.string("Ada")] && withValues.committedReferences == nil)
        #expect(withValues.value(at: 0) == .string("Grace"))
        let withToOnes = ObjectState.make(newObjectOf: entity)
        withToOnes.setValue(.string("Grace"), at: 0)
        withToOnes.committedReferences = []
        withToOnes.holdWritten(row, of: entity)
        #expect(withToOnes.record == nil && withToOnes.committed == nil && withToOnes.committedReferences == [])
        #expect(withToOnes.value(at: 0) == .string("Grace"))
    }
}
