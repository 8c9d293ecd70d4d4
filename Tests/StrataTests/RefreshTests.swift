import Foundation
import Strata
import Testing

/// `refresh(_:mergeChanges:)` and `refreshAllObjects()`: COREDATA.md §1.3 and §5 #11.
@Suite struct RefreshTests {
    @Test(arguments: StoreKind.allCases)
    func refreshWithoutMergeDiscardsUnsavedChangesAndTurnsTheObjectIntoAFault(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.salary = 500
        ada.fullName = "Scratch"
        try context.refresh(ada, mergeChanges: false)
        #expect(ada.isFault)
        #expect(!ada.hasChanges)
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        #expect(context.registeredObject(for: id) === ada)
        #expect(ada.salary == 100)
        // The transient was dropped with the values; awakeFromFetch computed it again.
        #expect(ada.fullName == "Ada Lovelace")
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithoutMergeTakesAnotherContextsSavedValues(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        let other = stack.context()
        try employee(id, in: other).lastName = "Byron"
        try other.save()
        #expect(ada.lastName == "Lovelace")  // uniquing: the in-memory state stays until refreshed
        try context.refresh(ada, mergeChanges: false)
        #expect(ada.lastName == "Byron")
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeTakesOtherContextsValuesForUnchangedPropertiesAndKeepsLocalChanges(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.firstName = "Augusta"

        let other = stack.context()
        let theirs = try employee(id, in: other)
        theirs.lastName = "Byron"
        theirs.salary = 300
        try other.save()

        try context.refresh(ada, mergeChanges: true)
        #expect(!ada.isFault)
        #expect(ada.firstName == "Augusta")
        #expect(ada.lastName == "Byron")
        #expect(ada.salary == 300)
        #expect(ada.isUpdated)
        #expect(context.updatedObjects == [ada])
        #expect(Set(ada.changedValues().keys) == ["firstName"])
        #expect(ada.committedValues(forKeys: ["lastName"])["lastName"] as? String == "Byron")
        // Merged against the newest version: the save does not conflict.
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "firstName") == [.string("Augusta")])
        #expect(try stack.storedValues("GraphEmployee", "lastName") == [.string("Byron")])
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(300)])
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeOfAnUnchangedObjectTakesTheSavedValues(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        let other = stack.context()
        try employee(id, in: other).salary = 42
        try other.save()
        try context.refresh(ada, mergeChanges: true)
        #expect(ada.salary == 42)
        #expect(!ada.hasChanges)
        #expect(!context.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func refreshAllObjectsMergesEveryRegisteredObjectKeepingUnsavedChanges(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("Ada", "Lovelace", 100), ("Bob", "Byron", 50)])
        let context = stack.context()
        let changed = try employee(ids[0], in: context)
        let unchanged = try employee(ids[1], in: context)
        changed.firstName = "Augusta"
        let inserted = GraphEmployee(context: context)
        inserted.firstName = "New"

        let other = stack.context()
        try employee(ids[0], in: other).salary = 101
        try employee(ids[1], in: other).salary = 51
        try other.save()

        try context.refreshAllObjects()
        #expect(changed.firstName == "Augusta" && changed.salary == 101 && changed.isUpdated)
        #expect(unchanged.salary == 51 && !unchanged.hasChanges)
        #expect(inserted.isInserted && inserted.firstName == "New")
        #expect(context.insertedObjects == [inserted])
        #expect(context.updatedObjects == [changed])
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "salary").contains(.integer(101)))
    }

    /// The seed's example (COREDATA.md §5 #11): refresh with merge copies the changed properties, faults,
    /// runs awakeFromFetch, then restores the copies, so a changed transient that awakeFromFetch
    /// recomputes keeps its old value.
    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeKeepsAChangedTransientsOldValueEvenThoughAwakeFromFetchRecomputedIt(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedEmployees(stack, [("Sarah", "Jones", 100)])[0]
        let context = stack.context()
        let sarah = try employee(id, in: context)
        #expect(sarah.fullName == "Sarah Jones")  // computed by awakeFromFetch
        // Locally, the first name changes and the cached full name with it.
        sarah.firstName = "Sally"
        sarah.fullName = "Sally Jones"

        // Elsewhere, the last name changes and is saved.
        let other = stack.context()
        let theirs = try employee(id, in: other)
        theirs.lastName = "Smith"
        try other.save()

        sarah.events = []
        try context.refresh(sarah, mergeChanges: true)
        // awakeFromFetch ran with the store's values ("Sarah Smith")...
        #expect(sarah.events.contains("awakeFromFetch"))
        // ...and then the copied changes were restored over it.
        #expect(sarah.firstName == "Sally")
        #expect(sarah.lastName == "Smith")
        #expect(sarah.fullName == "Sally Jones")
        #expect(sarah.fullName != "Sally Smith" && sarah.fullName != "Sarah Smith")
        #expect(Set(sarah.changedValues().keys) == ["firstName", "fullName"])
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeLetsAwakeFromFetchRecomputeAnUnchangedTransient(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedEmployees(stack, [("Sarah", "Jones", 100)])[0]
        let context = stack.context()
        let sarah = try employee(id, in: context)
        sarah.salary = 120  // a change, but not of the transient
        let other = stack.context()
        try employee(id, in: other).lastName = "Smith"
        try other.save()
        try context.refresh(sarah, mergeChanges: true)
        #expect(sarah.fullName == "Sarah Smith")
        #expect(sarah.salary == 120)
    }

    /// A refresh with merge that fails (the row was deleted elsewhere) must not cost the object its
    /// unsaved changes: Strata turns the object into a fault before it reads the row, so when the read
    /// fails the changes are gone while the context still lists the object as updated.
    @Test(arguments: StoreKind.allCases)
    func failedRefreshWithMergeKeepsTheUnsavedChanges(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.firstName = "Augusta"
        let other = stack.context()
        other.delete(try other.existingObject(with: id))
        try other.save()

        let error = objectGraphError { try context.refresh(ada, mergeChanges: true) }
        #expect(error?.isObjectInaccessible == true)
        #expect(ada.isUpdated, "the failed refresh dropped the unsaved change")
        #expect(context.updatedObjects.contains(ada) == ada.isUpdated, "updatedObjects lists an object with no changes")
        #expect(!ada.isFault)
        #expect(ada.changedValues()["firstName"] as? String == "Augusta")
    }

    @Test(arguments: StoreKind.allCases)
    func refreshOfAnInsertedObjectChangesNothing(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        try context.refresh(grace, mergeChanges: false)
        #expect(grace.isInserted && !grace.isFault && grace.firstName == "Grace")
        try context.refresh(grace, mergeChanges: true)
        #expect(grace.firstName == "Grace")
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeUsesTheStalenessIntervalToChooseCacheOrStore(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.firstName = "Augusta"
        var reads = stack.store.rowReads
        try context.refresh(ada, mergeChanges: true)
        #expect(stack.store.rowReads == reads)  // the cache (any age by default)

        Thread.sleep(forTimeInterval: 0.05)
        context.stalenessInterval = 0.02
        reads = stack.store.rowReads
        try context.refresh(ada, mergeChanges: true)
        #expect(stack.store.rowReads == reads + 1)
        #expect(ada.firstName == "Augusta")
    }
}
