import Foundation
import Strata
import Testing

/// Life-cycle hooks: COREDATA.md §1.2 and §5 #18 (awakeFromFetch runs with change processing off).
@Suite struct LifecycleTests {
    @Test(arguments: StoreKind.allCases)
    func awakeFromInsertRunsOnceWhenTheObjectIsInserted(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        #expect(grace.events == ["awakeFromInsert"])
        context.insert(grace)  // already inserted: no second call
        #expect(grace.events == ["awakeFromInsert"])

        let detached = GraphEmployee(entity: stack.entity("GraphEmployee"), insertInto: nil)
        #expect(detached.events.isEmpty)
        #expect(detached.managedObjectContext == nil)
        context.insert(detached)
        #expect(detached.events == ["awakeFromInsert"])
        #expect(detached.isInserted && detached.managedObjectContext === context)
    }

    @Test(arguments: StoreKind.allCases)
    func awakeFromFetchRunsWhenTheFaultFiresNotWhenItIsMade(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try #require(context.object(with: id) as? GraphEmployee)
        #expect(ada.events.isEmpty)
        _ = ada.salary
        #expect(ada.events == ["awakeFromFetch"])
        _ = ada.firstName
        #expect(ada.events == ["awakeFromFetch"])
        // A filled fetch runs it as the object is filled.
        let other = try fetchEmployees(stack.context())
        #expect(other[0].events == ["awakeFromFetch"])
    }

    @Test(arguments: StoreKind.allCases)
    func valuesSetInAwakeFromFetchDoNotDirtyTheObject(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try #require(context.object(with: id) as? GraphEmployee)
        ada.salaryWrittenInAwakeFromFetch = 12_345
        _ = ada.firstName
        // awakeFromFetch set the transient and a persistent value, with change processing off.
        #expect(ada.fullName == "Ada Lovelace")
        #expect(ada.salary == 12_345)
        #expect(!ada.hasChanges)
        #expect(!ada.isUpdated)
        #expect(ada.changedValues().isEmpty)
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        // Change processing is back on afterwards.
        ada.lastName = "King"
        #expect(ada.isUpdated && context.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func willSaveAndDidSaveRunForInsertedUpdatedAndDeletedObjectsOnly(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("Up", "D", 1), ("Del", "E", 2), ("Still", "F", 3)])
        let context = stack.context()
        let updated = try employee(ids[0], in: context)
        let deleted = try employee(ids[1], in: context)
        let untouched = try employee(ids[2], in: context)
        let inserted = GraphEmployee(context: context)
        inserted.firstName = "New"
        updated.salary = 10
        context.delete(deleted)
        for object in [updated, deleted, untouched, inserted] { object.events = [] }

        try context.save()
        #expect(inserted.events == ["willSave", "didSave"])
        #expect(updated.events == ["willSave", "didSave"])
        #expect(deleted.events == ["willSave", "didSave"])
        #expect(untouched.events.isEmpty)

        // A save with nothing to do calls nothing.
        try context.save()
        #expect(inserted.events == ["willSave", "didSave"])
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveAfterAFailedOneCallsWillSaveAgainOnEveryChangedObject(_ kind: StoreKind) throws {
        // Each call of a save is marked in its object: a mark left by a save that failed must not stand for the next.
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        grace.salary = -50  // invalid: validation fails after willSave
        let ada = GraphEmployee(context: context)
        ada.firstName = "Ada"
        for object in [grace, ada] { object.events = [] }
        #expect(throws: (any Error).self) { try context.save() }
        #expect(grace.events == ["willSave"] && ada.events == ["willSave"])

        grace.salary = 10
        try context.save()
        #expect(grace.events == ["willSave", "willSave", "didSave"])
        // Unchanged since the failed save's call, and called again all the same.
        #expect(ada.events == ["willSave", "willSave", "didSave"])
        #expect(try stack.storedValues("GraphEmployee", "salary").count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func valueChangedInWillSaveIsValidatedAndSaved(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        grace.salary = -50  // invalid, but willSave clamps it before validation
        grace.clampsSalaryInWillSave = true
        try context.save()
        #expect(grace.salary == 0)
        #expect(!grace.hasChanges)
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(0)])
    }

    @Test(arguments: StoreKind.allCases)
    func prepareForDeletionRunsWhenDeletedBeforeTheSave(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.events = []
        context.delete(ada)
        #expect(ada.events == ["prepareForDeletion"])
        context.delete(ada)  // already deleted
        #expect(ada.events.filter { $0 == "prepareForDeletion" }.count == 1)
        try context.save()
        #expect(ada.events == ["prepareForDeletion", "willSave", "didSave"])
    }

    @Test(arguments: StoreKind.allCases)
    func faultHooksRunAroundTurningIntoAFault(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.events = []
        try context.refresh(ada, mergeChanges: false)
        #expect(ada.events == ["willTurnIntoFault(isFault: false)", "didTurnIntoFault(isFault: true)"])
        // A fault does not turn into a fault again.
        try context.refresh(ada, mergeChanges: false)
        #expect(ada.events.count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func refreshWithMergeRunsTheCoreDataSequence(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.salary = 7
        ada.events = []
        try context.refresh(ada, mergeChanges: true)
        #expect(
            ada.events == ["willTurnIntoFault(isFault: false)", "didTurnIntoFault(isFault: true)", "awakeFromFetch"])
    }

    @Test(arguments: StoreKind.allCases)
    func hooksOfAnInsertThatIsSavedThenFetchedElsewhere(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        try context.save()
        #expect(grace.events == ["awakeFromInsert", "willSave", "didSave"])
        let elsewhere = try employee(grace.objectID, in: stack.context())
        #expect(elsewhere.events == ["awakeFromFetch"])
    }
}
