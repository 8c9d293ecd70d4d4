import Foundation
import Strata
import Testing

/// Uniquing (one object per ID per context) and the memory model of COREDATA.md §1.3 and §5 #4, #19:
/// registered objects are held weakly, changed objects strongly until save, rollback or reset. The undo stack
/// holds the objects it names strongly too (UndoTests), so these tests use contexts without an undo manager
/// to see the context's own references.
@Suite struct UniquingAndMemoryTests {
    // MARK: - Helpers that create objects in a scope of their own (so that the caller holds nothing)

    @inline(never)
    private func insertAndDrop(_ context: ManagedObjectContext, first: String = "Grace") -> ManagedObjectID {
        let employee = GraphEmployee(context: context)
        employee.firstName = first
        return employee.objectID
    }

    @inline(never)
    private func insertSaveAndDrop(_ stack: TestStack, _ context: ManagedObjectContext) throws -> ManagedObjectID {
        let employee = GraphEmployee(context: context)
        employee.firstName = "Grace"
        try context.save()
        #expect(context.registeredObjects.count == 1)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        return employee.objectID
    }

    @inline(never)
    private func fetchAndDrop(_ context: ManagedObjectContext) throws -> Int {
        try fetchEmployees(context).count
    }

    @inline(never)
    private func updateAndDrop(_ id: ManagedObjectID, in context: ManagedObjectContext, salary: Int64) throws {
        try employee(id, in: context).salary = salary
    }

    @inline(never)
    private func deleteAndDrop(_ id: ManagedObjectID, in context: ManagedObjectContext) throws {
        context.delete(try employee(id, in: context))
    }

    @inline(never)
    private func faultAndDrop(_ id: ManagedObjectID, in context: ManagedObjectContext) {
        #expect(context.object(with: id).isFault)
    }

    // MARK: - Weak registration

    @Test(arguments: StoreKind.allCases)
    func savedObjectNobodyHoldsLeavesTheContextAndReleasesItsRowCacheEntry(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.contextWithoutUndo()
        let id = try insertSaveAndDrop(stack, context)
        #expect(context.registeredObjects.isEmpty)
        #expect(context.registeredObject(for: id) == nil)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == 0)
        #expect(!context.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchedObjectsNobodyHoldsLeaveTheContextAndTheRowCache(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2), ("C", "Z", 3)])
        let context = stack.contextWithoutUndo()
        #expect(try fetchAndDrop(context) == 3)
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func faultFromObjectWithNobodyHoldsLeavesTheContext(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        faultAndDrop(id, in: context)
        #expect(context.registeredObject(for: id) == nil)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func aFaultHoldsARowCacheEntryOnlyOnceItReadItsRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        let ada = try #require(context.object(with: id) as? GraphEmployee)
        #expect(ada.isFault)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(ada.firstName == "Ada")
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        // Turning it into a fault and firing it again neither drops nor doubles its hold.
        try context.refresh(ada, mergeChanges: false)
        #expect(ada.firstName == "Ada")
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        context.reset()
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        withExtendedLifetime(ada) {}
    }

    @Test(arguments: StoreKind.allCases)
    func twoContextsHoldingOneRowKeepItCachedUntilBothLetGo(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let first = stack.contextWithoutUndo()
        let second = stack.contextWithoutUndo()
        var one: GraphEmployee? = try #require(try first.existingObject(with: id) as? GraphEmployee)
        let two = try #require(try second.existingObject(with: id) as? GraphEmployee)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        one = nil
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == 1)
        #expect(first.registeredObjects.isEmpty)
        second.reset()
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        withExtendedLifetime((one, two)) {}
    }

    @Test(arguments: StoreKind.allCases)
    func heldObjectStaysRegisteredAndKeepsItsRowCacheEntry(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        let ada = try employee(id, in: context)
        #expect(context.registeredObject(for: id) === ada)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == 1)
        withExtendedLifetime(ada) {}
    }

    // MARK: - Strong references to changed objects

    @Test(arguments: StoreKind.allCases)
    func insertedObjectNobodyHoldsStaysRegisteredUntilSave(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.contextWithoutUndo()
        let temporaryID = insertAndDrop(context)
        #expect(context.registeredObjects.count == 1)
        #expect(context.insertedObjects.count == 1)
        #expect(context.registeredObject(for: temporaryID) != nil)
        try context.save()
        #expect(context.registeredObjects.isEmpty)
        #expect(try stack.storedValues("GraphEmployee", "firstName") == [.string("Grace")])
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func updatedObjectNobodyHoldsStaysRegisteredUntilSave(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        try updateAndDrop(id, in: context, salary: 250)
        #expect(context.registeredObjects.count == 1)
        #expect(context.updatedObjects.count == 1)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        try context.save()
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(250)])
    }

    @Test(arguments: StoreKind.allCases)
    func deletedObjectNobodyHoldsStaysRegisteredUntilSave(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        try deleteAndDrop(id, in: context)
        #expect(context.registeredObjects.count == 1)
        #expect(context.deletedObjects.count == 1)
        try context.save()
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackReleasesChangedObjectsNobodyHolds(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2)])
        let context = stack.contextWithoutUndo()
        _ = insertAndDrop(context)
        try updateAndDrop(ids[0], in: context, salary: 10)
        try deleteAndDrop(ids[1], in: context)
        #expect(context.registeredObjects.count == 3)
        context.rollback()
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(!context.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func resetReleasesEverythingEvenObjectsStillHeldElsewhere(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        let ada = try employee(id, in: context)
        ada.salary = 1
        _ = insertAndDrop(context)
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(!context.hasChanges)
        #expect(ada.managedObjectContext == nil)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func droppedContextReleasesItsRowCacheEntries(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        var context: ManagedObjectContext? = stack.contextWithoutUndo()
        let ada = try employee(id, in: context!)
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
        context = nil
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        #expect(ada.managedObjectContext == nil)
    }

    // MARK: - retainsRegisteredObjects

    @Test(arguments: StoreKind.allCases)
    func retainsRegisteredObjectsKeepsUnchangedObjectsRegistered(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2), ("C", "Z", 3)])
        let context = stack.contextWithoutUndo()
        context.retainsRegisteredObjects = true
        #expect(try fetchAndDrop(context) == 3)
        #expect(context.registeredObjects.count == 3)
        #expect(context.registeredObject(for: ids[0]) != nil)
        #expect(stack.coordinator.rowCacheStatistics.entries == 3)
        // Saved objects stay too.
        _ = try insertSaveAndDropKeepingOthers(context)
        #expect(context.registeredObjects.count == 4)
        context.retainsRegisteredObjects = false
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func retainsRegisteredObjectsSetAfterFetchingHoldsTheObjectsAlreadyRegistered(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2)])
        let context = stack.contextWithoutUndo()
        var held: [GraphEmployee]? = try fetchEmployees(context)
        context.retainsRegisteredObjects = true
        held = nil
        #expect(held == nil)
        #expect(context.registeredObjects.count == 2)
        #expect(context.registeredObject(for: ids[1]) != nil)
    }

    @inline(never)
    private func insertSaveAndDropKeepingOthers(_ context: ManagedObjectContext) throws -> ManagedObjectID {
        let employee = GraphEmployee(context: context)
        employee.firstName = "New"
        try context.save()
        return employee.objectID
    }

    // MARK: - Uniquing

    @Test(arguments: StoreKind.allCases)
    func fetchingTwiceReturnsTheIdenticalInstances(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2)])
        let context = stack.contextWithoutUndo()
        let first = try context.fetch(FetchRequest<GraphEmployee>(entityName: "GraphEmployee"))
        let second = try fetchEmployees(context)
        #expect(first.count == 2 && second.count == 2)
        for (a, b) in zip(first, second) { #expect(a === b) }
        #expect(context.registeredObjects.count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func objectWithIDReturnsTheRegisteredInstance(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.contextWithoutUndo()
        let fetched = try fetchEmployees(context)[0]
        #expect(context.object(with: id) === fetched)
        #expect(try context.existingObject(with: id) === fetched)
        #expect(context.registeredObject(for: id) === fetched)
        // An inserted object is found by its temporary ID.
        let grace = GraphEmployee(context: context)
        #expect(context.object(with: grace.objectID) === grace)
        #expect(try context.existingObject(with: grace.objectID) === grace)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchNeverOverwritesInMemoryState(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("Dirty", "X", 100), ("Clean", "Y", 100)])
        let context = stack.contextWithoutUndo()
        let dirty = try employee(ids[0], in: context)
        let clean = try employee(ids[1], in: context)
        dirty.salary = 200

        let other = stack.contextWithoutUndo()
        try employee(ids[0], in: other).salary = 300
        try employee(ids[1], in: other).salary = 300
        try other.save()

        let refetched = try fetchEmployees(context)
        #expect(refetched[0] === dirty && refetched[1] === clean)
        #expect(dirty.salary == 200)
        #expect(dirty.isUpdated)
        // Uniquing: an unchanged object keeps its in-memory state too (no shouldRefreshRefetchedObjects).
        #expect(clean.salary == 100)
        #expect(!clean.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func twoContextsHoldTwoDistinctObjectsForTheSameRow(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let first = stack.contextWithoutUndo()
        let second = stack.contextWithoutUndo()
        let a = try employee(id, in: first)
        let b = try employee(id, in: second)
        #expect(a !== b)
        #expect(a.objectID == b.objectID)
        #expect(a.managedObjectContext === first && b.managedObjectContext === second)
        a.salary = 999
        #expect(b.salary == 100)
        #expect(!b.hasChanges)
        #expect(!second.hasChanges)
        // The row cache has one entry for the row, held by both contexts.
        #expect(stack.coordinator.rowCacheStatistics.entries == 1)
    }
}
