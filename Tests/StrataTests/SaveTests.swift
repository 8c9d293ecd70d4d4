import Foundation
import Strata
import Testing

/// Saving, change tracking, rollback and reset: COREDATA.md §1.2 (state, change sets), §1.3 (mutations)
/// and §5 #7, #8, #12, #13.
@Suite struct SaveTests {
    // MARK: - IDs

    @Test(arguments: StoreKind.allCases)
    func saveTurnsTemporaryIDsIntoPermanentOnes(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        let temporary = grace.objectID
        #expect(temporary.isTemporaryID)
        #expect(temporary.storeIdentifier == nil && temporary.rowID == nil)
        try context.save()
        let permanent = grace.objectID
        #expect(!permanent.isTemporaryID)
        #expect(permanent != temporary)
        #expect(permanent.storeIdentifier == stack.store.identifier)
        #expect(permanent.rowID != nil)
        #expect(context.registeredObject(for: permanent) === grace)
        #expect(context.registeredObject(for: temporary) == nil)
        #expect(!grace.isInserted && !grace.hasChanges)
        // Another context finds the row by the permanent ID.
        #expect(try employee(permanent, in: stack.context()).firstName == "Grace")
    }

    @Test(arguments: StoreKind.allCases)
    func obtainPermanentIDsKeepsTheObjectInsertedAndTheIDSurvivesTheSave(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        try context.obtainPermanentIDs(for: [grace])
        let id = grace.objectID
        #expect(!id.isTemporaryID)
        #expect(id.storeIdentifier == stack.store.identifier)
        #expect(grace.isInserted)
        #expect(context.insertedObjects.contains(grace))
        #expect(context.hasChanges)
        #expect(context.registeredObject(for: id) === grace)
        // Nothing is written yet.
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
        // Obtaining again changes nothing.
        try context.obtainPermanentIDs(for: [grace])
        #expect(grace.objectID == id)

        try context.save()
        #expect(grace.objectID == id)
        #expect(!grace.isInserted)
        let rows = try stack.store.rows(of: stack.entity("GraphEmployee"), includesSubentities: false)
        #expect(rows.map(\.rowID) == [id.rowID!])
        #expect(try employee(id, in: stack.context()).firstName == "Grace")
    }

    @Test(arguments: StoreKind.allCases)
    func rowIDObtainedEarlyIsNotGivenToAnotherContextsInsert(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let early = GraphEmployee(context: context)
        early.firstName = "Early"
        try context.obtainPermanentIDs(for: [early])

        let other = stack.context()
        let late = GraphEmployee(context: other)
        late.firstName = "Late"
        try other.save()
        #expect(late.objectID != early.objectID)

        try context.save()
        #expect(Set(try stack.storedValues("GraphEmployee", "firstName")) == [.string("Early"), .string("Late")])
        #expect(try employee(early.objectID, in: stack.context()).firstName == "Early")
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackAfterObtainPermanentIDsUnregistersTheInsert(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        try context.obtainPermanentIDs(for: [grace])
        context.rollback()
        #expect(context.registeredObject(for: grace.objectID) == nil)
        #expect(context.registeredObjects.isEmpty)
        #expect(!grace.isInserted)
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
    }

    // MARK: - Validation

    @Test(arguments: StoreKind.allCases)
    func validationFailureNamesTheObjectAndKeyKeepsTheChangesAndSucceedsAfterTheFix(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let nameless = GraphEmployee(context: context)
        nameless.salary = 10
        let description = ValidatedObject(nameless.objectID)
        #expect(throws: ValidationError.missingMandatoryValue(object: description, key: "firstName")) {
            try context.save()
        }
        #expect(nameless.isInserted)
        #expect(nameless.objectID.isTemporaryID)
        #expect(context.insertedObjects == [nameless])
        #expect(nameless.salary == 10)
        #expect(try stack.storedRows("GraphEmployee").isEmpty)

        nameless.firstName = "Fixed"
        try context.save()
        #expect(!nameless.isInserted)
        #expect(try stack.storedValues("GraphEmployee", "firstName") == [.string("Fixed")])
    }

    @Test(arguments: StoreKind.allCases)
    func validationFailureOfAnUpdateLeavesTheStoreAndTheChangeUntilFixed(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.salary = -5
        #expect(
            throws: ValidationError.valueTooSmall(
                object: ValidatedObject(id), key: "salary", value: .integer(-5), limit: .integer(0))
        ) { try context.save() }
        #expect(ada.isUpdated)
        #expect(context.updatedObjects == [ada])
        #expect(ada.salary == -5)
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(100)])
        ada.salary = 5
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(5)])
        #expect(!ada.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func severalValidationFailuresComeBackTogether(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let bad = GraphEmployee(context: context)
        bad.salary = -1
        let thrown = #expect(throws: ValidationError.self) { try context.save() }
        let failures = thrown?.errors ?? []
        #expect(failures.count == 2)
        #expect(failures.contains(.missingMandatoryValue(object: ValidatedObject(bad.objectID), key: "firstName")))
        let salaryFailures = failures.filter {
            if case .valueTooSmall(_, "salary", _, _) = $0 { return true }
            return false
        }
        #expect(salaryFailures.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func storedValuesThatBreakTheModelFailAnUpdateOfAnotherAttribute(_ kind: StoreKind) throws {
        // A batch update writes without validation: a mandatory value cleared, a rule broken. An update of another
        // attribute then fails for both stored values as it would for values set on the object (the values it
        // validates without decoding are only those that cannot fail), and for none of the values that are fine.
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        _ = try stack.context().execute(
            BatchUpdateRequest(entityName: "GraphEmployee", propertiesToUpdate: ["firstName": nil, "salary": -1]))
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.lastName = "Byron"
        let object = ValidatedObject(id)
        #expect(
            throws: ValidationError.multiple([
                .missingMandatoryValue(object: object, key: "firstName"),
                .valueTooSmall(object: object, key: "salary", value: .integer(-1), limit: .integer(0)),
            ])
        ) { try context.save() }
        #expect(ada.isUpdated)
        #expect(try stack.storedValues("GraphEmployee", "lastName") == [.string("Lovelace")])
        ada.firstName = "Ada"
        ada.salary = 1
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "lastName") == [.string("Byron")])

        // An unchanged mandatory value that is there passes, as a changed one does.
        let another = stack.context()
        let other = try employee(id, in: another)
        other.salary = 2
        try another.save()
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(2)])
    }

    @Test(arguments: StoreKind.allCases)
    func deletedObjectsAreNotValidated(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.salary = -1
        context.delete(ada)
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
    }

    // MARK: - Failed saves and optimistic locking

    @Test(arguments: StoreKind.allCases)
    func optimisticLockingConflictBetweenTwoContextsThrows(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let first = stack.context()
        let second = stack.context()
        let mine = try employee(id, in: first)
        let theirs = try employee(id, in: second)
        theirs.salary = 300
        try second.save()

        mine.salary = 200
        let error = objectGraphError { try first.save() }
        #expect(error?.isOptimisticLockingConflict == true)
        #expect(error?.objectIDs == [id])
        #expect(mine.isUpdated && mine.salary == 200)
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(300)])

        // Resolve by merging the store's state, then save.
        try first.refresh(mine, mergeChanges: true)
        #expect(mine.salary == 200)
        try first.save()
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(200)])
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAnObjectChangedElsewhereSinceItWasReadConflicts(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let first = stack.context()
        let mine = try employee(id, in: first)
        let second = stack.context()
        try employee(id, in: second).salary = 300
        try second.save()

        first.delete(mine)
        let error = objectGraphError { try first.save() }
        #expect(error?.isOptimisticLockingConflict == true)
        #expect(mine.isDeleted)
        #expect(try stack.storedRows("GraphEmployee").count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func updatingARowAnotherContextDeletedConflicts(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let first = stack.context()
        let mine = try employee(id, in: first)
        let second = stack.context()
        second.delete(try second.existingObject(with: id))
        try second.save()
        mine.salary = 1
        let error = objectGraphError { try first.save() }
        #expect(error?.isOptimisticLockingConflict == true)
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func failedSaveLeavesTheStoreUntouched(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("Ada", "Lovelace", 100), ("Bob", "Byron", 100)])
        let first = stack.context()
        let conflicting = try employee(ids[0], in: first)
        let alsoChanged = try employee(ids[1], in: first)
        let second = stack.context()
        try employee(ids[0], in: second).salary = 300
        try second.save()
        let before = try stack.storedRows("GraphEmployee")

        // One save: an insert, a clean update, a delete and a conflicting update.
        let newcomer = GraphEmployee(context: first)
        newcomer.firstName = "Newcomer"
        alsoChanged.salary = 42
        conflicting.salary = 200
        let error = objectGraphError { try first.save() }
        #expect(error?.isOptimisticLockingConflict == true)

        #expect(try stack.storedRows("GraphEmployee") == before)
        // Checked through a fresh coordinator's view for the Strata store: close and reopen.
        if kind == .strata {
            try stack.close()
            let reopened = try TestStack(.strata, directory: stack.directory)
            #expect(try reopened.storedRows("GraphEmployee").map(\.values) == before.map(\.values))
            try reopened.close()
            return
        }
        // The context kept every change.
        #expect(newcomer.isInserted && newcomer.objectID.isTemporaryID)
        #expect(alsoChanged.isUpdated && conflicting.isUpdated)
        #expect(first.insertedObjects.count == 1 && first.updatedObjects.count == 2)
    }

    /// GraphPerson keeps no value outside its rows, so the Strata store checks each updated row's version where
    /// the update's one descent finds the row: the conflicts found after rows were rewritten still name every
    /// conflicting object (changed or deleted elsewhere), and the save writes nothing.
    @Test(arguments: StoreKind.allCases)
    func everyUpdateConflictIsNamedAndNoRowIsWritten(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let seed = stack.context()
        let people = (0..<5).map { index in
            let person = index == 2 ? GraphManager(context: seed) : GraphPerson(context: seed)
            person.name = "p\(index)"
            return person
        }
        try seed.save()
        let ids = people.map(\.objectID)
        let first = stack.context()
        let mine = try ids.map { try #require(try first.existingObject(with: $0) as? GraphPerson) }
        let second = stack.context()
        for index in [1, 2] {
            try #require(try second.existingObject(with: ids[index]) as? GraphPerson).name = "theirs \(index)"
        }
        second.delete(try second.existingObject(with: ids[4]))
        try second.save()
        let before = try stack.storedRows("GraphPerson")

        let newcomer = GraphPerson(context: first)
        newcomer.name = "newcomer"
        for (index, person) in mine.enumerated() { person.name = "mine \(index)" }
        let error = objectGraphError { try first.save() }
        #expect(error?.isOptimisticLockingConflict == true)
        #expect(Set(error?.objectIDs ?? []) == [ids[1], ids[2], ids[4]])
        #expect(try stack.storedRows("GraphPerson") == before)

        // The objects nobody else changed save, one version up; the others keep the other context's values.
        let third = stack.context()
        for index in [0, 3] {
            try #require(try third.existingObject(with: ids[index]) as? GraphPerson).name = "third \(index)"
        }
        try third.save()
        let after = try stack.storedRows("GraphPerson")
        #expect(after.map(\.version) == [2, 2, 2, 2])
        #expect(
            Set(try stack.storedValues("GraphPerson", "name"))
                == [.string("third 0"), .string("theirs 1"), .string("theirs 2"), .string("third 3")])

        // A save's only update, its row changed or deleted elsewhere: found where the update finds the row, or not.
        for deletes in [false, true] {
            let mine = stack.context()
            let person = try #require(try mine.existingObject(with: ids[0]) as? GraphPerson)
            let other = stack.context()
            let theirs = try other.existingObject(with: ids[0])
            if deletes { other.delete(theirs) } else { try #require(theirs as? GraphPerson).name = "other" }
            try other.save()
            person.name = "mine"
            let error = objectGraphError { try mine.save() }
            #expect(error?.isOptimisticLockingConflict == true)
            #expect(error?.objectIDs == [ids[0]])
        }
    }

    /// A save that spans two stores must be all or nothing: Strata saves store by store, so when the
    /// second store's transaction fails the first store's has already committed and the context has
    /// already settled its objects. The order of the stores varies, so the scenario repeats.
    @Test func failedSaveAcrossTwoStoresWritesNeitherStore() throws {
        for _ in 0..<12 {
            let coordinator = PersistentStoreCoordinator(model: TestModel.model)
            let first = try coordinator.addPersistentStore(.inMemory)
            let second = try coordinator.addPersistentStore(.inMemory)
            let setup = ManagedObjectContext(coordinator: coordinator)
            let inFirst = GraphEmployee(context: setup)
            inFirst.firstName = "First"
            let inSecond = GraphEmployee(context: setup)
            inSecond.firstName = "Second"
            setup.assign(inSecond, to: second)
            try setup.save()

            let context = ManagedObjectContext(coordinator: coordinator)
            let a = try employee(inFirst.objectID, in: context)
            let b = try employee(inSecond.objectID, in: context)
            // Another context changes the row in the second store.
            let other = ManagedObjectContext(coordinator: coordinator)
            try employee(inSecond.objectID, in: other).salary = 9
            try other.save()

            a.salary = 1  // fine in the first store
            b.salary = 2  // conflicts in the second
            let error = objectGraphError { try context.save() }
            #expect(error?.isOptimisticLockingConflict == true)
            let salaries = try first.rows(
                of: TestModel.model.entity(named: "GraphEmployee")!, includesSubentities: true
            )
            .map {
                $0.row.values[TestModel.model.entity(named: "GraphEmployee")!.attributesByName["salary"]!.storageIndex!]
            }
            #expect(salaries == [.integer(0)], "the first store was written by a save that failed")
            #expect(a.isUpdated, "an object of a failed save lost its unsaved change")
            if salaries != [.integer(0)] || !a.isUpdated { break }
        }
    }

    // MARK: - Rollback, reset, deleting inserts

    @Test(arguments: StoreKind.allCases)
    func rollbackDiscardsInsertsRestoresUpdatesAndUndeletes(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("Ada", "Lovelace", 100), ("Bob", "Byron", 50)])
        let context = stack.context()
        let ada = try employee(ids[0], in: context)
        let bob = try employee(ids[1], in: context)
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        ada.salary = 999
        ada.lastName = "King"
        context.delete(bob)

        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)
        #expect(!grace.isInserted)
        #expect(grace.managedObjectContext == nil)
        #expect(context.registeredObject(for: grace.objectID) == nil)
        #expect(ada.salary == 100 && ada.lastName == "Lovelace")
        #expect(!ada.hasChanges && !ada.isUpdated)
        #expect(!bob.isDeleted && bob.salary == 50)
        #expect(try fetchEmployees(context).count == 2)
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(100), .integer(50)])
    }

    @Test(arguments: StoreKind.allCases)
    func resetEmptiesTheContext(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.salary = 1
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty)
        #expect(context.registeredObject(for: id) == nil)
        #expect(ada.managedObjectContext == nil && grace.managedObjectContext == nil)
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(100)])
        // The context works as new.
        let again = try employee(id, in: context)
        #expect(again !== ada)
        #expect(again.salary == 100)
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAnUnsavedInsertJustRemovesIt(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        context.delete(grace)
        try context.processPendingChanges()  // the end of the event: the deleted insert leaves the context
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty)
        #expect(!context.deletedObjects.contains(grace))
        #expect(!grace.isInserted)
        #expect(grace.managedObjectContext == nil)
        #expect(context.registeredObjects.isEmpty)
        #expect(try context.fetch(FetchRequest<GraphEmployee>(entityName: "GraphEmployee")).isEmpty)
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func deleteIsWrittenAtSaveAndUnregistersTheObject(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        context.delete(ada)
        #expect(ada.isDeleted && ada.hasChanges)
        #expect(context.deletedObjects == [ada])
        #expect(try stack.storedRows("GraphEmployee").count == 1)
        #expect(try context.fetch(FetchRequest<GraphEmployee>(entityName: "GraphEmployee")).isEmpty)
        #expect(try context.count(for: FetchRequest<GraphEmployee>(entityName: "GraphEmployee")) == 0)
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").isEmpty)
        #expect(context.registeredObject(for: id) == nil)
        #expect(!context.hasChanges)
    }

    // MARK: - Object state and change sets

    @Test(arguments: StoreKind.allCases)
    func stateFlagsFollowInsertUpdateAndDelete(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        #expect(grace.isInserted && !grace.isUpdated && !grace.isDeleted)
        #expect(grace.hasChanges && grace.hasPersistentChangedValues)

        let ada = try employee(id, in: context)
        #expect(!ada.isInserted && !ada.isUpdated && !ada.isDeleted)
        #expect(!ada.hasChanges && !ada.hasPersistentChangedValues)
        ada.salary = 101
        #expect(ada.isUpdated && ada.hasChanges && ada.hasPersistentChangedValues)
        #expect(context.updatedObjects == [ada])
        ada.salary = 100  // back to the saved value: still dirty, no persistent change
        #expect(ada.isUpdated && ada.hasChanges)
        #expect(!ada.hasPersistentChangedValues)

        context.delete(ada)
        #expect(ada.isDeleted && !ada.isUpdated && ada.hasChanges)
        #expect(context.updatedObjects.isEmpty && context.deletedObjects == [ada])
    }

    @Test(arguments: StoreKind.allCases)
    func sameValueWriteDirtiesHasChangesButNotHasPersistentChangedValues(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.firstName = "Ada"
        #expect(ada.hasChanges)
        #expect(ada.isUpdated)
        #expect(context.hasChanges)
        #expect(!ada.hasPersistentChangedValues)
        #expect(ada.changedValues().keys.sorted() == ["firstName"])
    }

    @Test(arguments: StoreKind.allCases)
    func transientChangeDirtiesTheObjectButNotItsPersistentValues(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        ada.fullName = "Countess"
        #expect(ada.hasChanges && ada.isUpdated)
        #expect(!ada.hasPersistentChangedValues)
        #expect(ada.changedValues()["fullName"] as? String == "Countess")
        #expect(ada.committedValues(forKeys: nil)["fullName"] == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func changedValuesAndCommittedValuesTrackTheLastSave(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        grace.salary = 10
        #expect(grace.committedValues(forKeys: nil).isEmpty)
        // lastName's default ("") counts too: an inserted object's defaults are changes, as in Core Data.
        #expect(Set(grace.changedValues().keys) == ["firstName", "lastName", "salary"])
        try context.save()
        #expect(grace.changedValues().isEmpty)
        let committed = grace.committedValues(forKeys: nil)
        #expect(Set(committed.keys).isSuperset(of: ["firstName", "lastName", "salary"]))
        #expect(!committed.keys.contains("fullName"))
        #expect(committed["firstName"] as? String == "Grace")
        #expect(committed["salary"] as? Int64 == 10)

        grace.salary = 20
        grace.lastName = "Hopper"
        let changed = grace.changedValues()
        #expect(Set(changed.keys) == ["salary", "lastName"])
        #expect(changed["salary"] as? Int64 == 20)
        #expect(changed["lastName"] as? String == "Hopper")
        let some = grace.committedValues(forKeys: ["salary", "lastName"])
        #expect(Set(some.keys) == ["salary", "lastName"])
        #expect(some["salary"] as? Int64 == 10)
        #expect(some["lastName"] as? String == "")
        try context.save()
        #expect(grace.committedValues(forKeys: ["salary"])["salary"] as? Int64 == 20)
    }

    /// `changedValues()` and `committedValues(forKeys:)` return `[String: Any?]`: a property whose value is
    /// nil must be there with a nil value (Core Data gives NSNull), not missing. Assigning an optional-chained
    /// `Any?` into a `[String: Any?]` subscript removes the key instead.
    @Test(arguments: StoreKind.allCases)
    func changeSetsIncludePropertiesWhoseValueIsNil(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        grace.photo = Data([1])
        try context.save()
        // The photo was set: changing it to nil is a change.
        grace.photo = nil
        #expect(grace.hasPersistentChangedValues)
        #expect(
            grace.changedValues().keys.contains("photo"), "a property changed to nil is missing from changedValues()")
        try context.save()
        // Its committed value is now nil: it is still one of the committed values.
        #expect(grace.committedValues(forKeys: ["photo"]).keys.contains("photo"), "a nil committed value is missing")
        #expect(grace.committedValues(forKeys: nil).count == 4)  // firstName, lastName, salary, photo
    }

    @Test(arguments: StoreKind.allCases)
    func savingWithNoChangesWritesNothing(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(id, in: context)
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").map(\.version) == [1])
        ada.salary = 101
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").map(\.version) == [2])
        try context.save()
        #expect(try stack.storedRows("GraphEmployee").map(\.version) == [2])
    }
}
