import Foundation
import Strata
import Testing

/// A context's inserted objects (``ManagedObjectContext/insertedObjects``): a list in insertion order whose
/// membership is each object's `isInserted` flag, kept in step through deletes, undo and redo, rollback, reset and
/// saves to several stores.
@Suite struct InsertedObjectsTests {
    private func inserted(_ context: ManagedObjectContext, _ names: [String]) -> [GraphEmployee] {
        names.map { name in
            let employee = GraphEmployee(context: context)
            employee.firstName = name
            return employee
        }
    }

    /// The first names of the stored employees, in row order (a save's inserts get row IDs in the order written).
    private func storedNames(_ stack: TestStack) throws -> [AttributeValue?] {
        try stack.storedValues("GraphEmployee", "firstName")
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveWritesInsertsInInsertionOrderAfterDeletesAndUndo(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.contextWithUndo()
        let undo = try #require(context.undoManager)
        // Each event (ended by processPendingChanges) is one undo group.
        let objects = inserted(context, ["A", "B", "C"])
        try context.processPendingChanges()
        let late = inserted(context, ["D"])[0]
        try context.processPendingChanges()
        context.delete(objects[1])
        try context.processPendingChanges()
        #expect(!objects[1].isInserted && context.insertedObjects == [objects[0], objects[2], late])

        // Undo the delete of B (it comes back last: inserted anew), then the insert of D, and redo D.
        undo.undo()
        #expect(objects[1].isInserted && context.insertedObjects == [objects[0], objects[2], late, objects[1]])
        undo.undo()
        #expect(!late.isInserted && late.managedObjectContext == nil)
        #expect(context.insertedObjects == [objects[0], objects[2], objects[1]])
        undo.redo()
        #expect(late.isInserted && context.insertedObjects.count == 4)

        try context.save()
        #expect(context.insertedObjects.isEmpty && !context.hasChanges)
        #expect(objects.allSatisfy { !$0.isInserted } && !late.isInserted)
        #expect(try storedNames(stack) == [.string("A"), .string("C"), .string("B"), .string("D")])
    }

    @Test(arguments: StoreKind.allCases)
    func anObjectResetOutOfOneContextCanBeInsertedIntoAnother(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let first = stack.context()
        let object = inserted(first, ["A"])[0]
        first.reset()
        #expect(first.insertedObjects.isEmpty && !first.hasChanges)
        #expect(object.managedObjectContext == nil)

        let second = stack.context()
        second.insert(object)
        #expect(second.insertedObjects == [object] && object.managedObjectContext === second)
        // Inserting it again changes nothing.
        second.insert(object)
        #expect(second.insertedObjects.count == 1)
        try second.save()
        #expect(try storedNames(stack) == [.string("A")])
        #expect(second.insertedObjects.isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackAndDeleteLetInsertedObjectsGo(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.contextWithoutUndo()
        weak var rolledBack: GraphEmployee?
        weak var deleted: GraphEmployee?
        do {
            let objects = inserted(context, ["A", "B", "C"])
            rolledBack = objects[0]
            deleted = objects[1]
            context.delete(objects[1])
            try context.processPendingChanges()
            #expect(context.insertedObjects == [objects[0], objects[2]])
        }
        #expect(deleted == nil)
        context.rollback()
        #expect(context.insertedObjects.isEmpty && !context.hasChanges)
        #expect(rolledBack == nil)
        try context.save()
        #expect(try storedNames(stack) == [])
    }

    @Test(arguments: StoreKind.allCases)
    func objectsDidChangeNamesEachInsertOnceAndForgetsOnesGoneUnnamed(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.contextWithUndo()
        var received: [ObjectChanges] = []
        let token = context.addObserver { if case .objectsDidChange(let changes) = $0 { received.append(changes) } }
        defer { withExtendedLifetime(token) {} }
        let named = inserted(context, ["A", "B"])
        try context.processPendingChanges()
        #expect(received.map(\.inserted) == [Set(named.map(\.objectID))])

        // Nothing new: no notification. Then one named insert deleted (reported deleted), one new insert deleted
        // before it was named (never reported), one new insert kept, and a named one changed (an update).
        try context.processPendingChanges()
        #expect(received.count == 1)
        let gone = inserted(context, ["C"])[0]
        let kept = inserted(context, ["D"])[0]
        context.delete(named[0])
        context.delete(gone)
        named[1].firstName = "B2"
        try context.processPendingChanges()
        #expect(received.count == 2)
        #expect(received[1].inserted == [kept.objectID])
        #expect(received[1].deleted == [named[0].objectID])
        #expect(received[1].updated == [named[1].objectID])

        // An undone insert (the whole last event is undone) comes back as a new one.
        context.undoManager!.undo()
        #expect(!kept.isInserted && !context.insertedObjects.contains(kept))
        context.undoManager!.redo()
        try context.processPendingChanges()
        #expect(received.last!.inserted.contains(kept.objectID))
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveNobodyObservesStillReachesAContextThatMergesIt(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let saver = stack.context()
        let object = inserted(saver, ["A"])[0]
        try saver.save()
        let merging = stack.context()
        merging.automaticallyMergesChangesFromParent = true
        let copy = try employee(object.objectID, in: merging)
        #expect(copy.firstName == "A")

        // The saver has no observer: the did-save is still named for the merging context.
        object.firstName = "B"
        let added = inserted(saver, ["C"])[0]
        var heard: [ContextNotification] = []
        let token = merging.addObserver { heard.append($0) }
        defer { withExtendedLifetime(token) {} }
        try saver.save()
        #expect(copy.firstName == "B")
        let merged = heard.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        #expect(merged.contains { $0.refreshed.contains(object.objectID) })
        #expect(!added.objectID.isTemporaryID)
    }

    @Test func aSaveToTwoStoresLeavesNoObjectInserted() throws {
        let stack = try TestStack(.strata)
        let secondDirectory = temporaryStoreDirectory()
        defer { try? FileManager.default.removeItem(atPath: secondDirectory) }
        let second = try stack.coordinator.addPersistentStore(
            .strata(directory: secondDirectory, configuration: testStoreConfiguration()))
        let context = stack.context()
        let objects = inserted(context, ["A", "B", "C", "D", "E"])
        for object in [objects[1], objects[3]] { context.assign(object, to: second) }
        try context.save()
        #expect(context.insertedObjects.isEmpty && !context.hasChanges)
        #expect(objects.allSatisfy { !$0.isInserted && !$0.objectID.isTemporaryID })
        #expect(try storedNames(stack) == [.string("A"), .string("C"), .string("E")])
        let firstName = stack.entity("GraphEmployee").attributesByName["firstName"]!.storageIndex!
        #expect(
            try second.rows(of: stack.entity("GraphEmployee"), includesSubentities: true).map {
                $0.row.values[firstName]
            } == [.string("B"), .string("D")])

        // The context goes on: a new insert is the only one.
        let next = inserted(context, ["F"])[0]
        #expect(context.insertedObjects == [next])
    }
}
