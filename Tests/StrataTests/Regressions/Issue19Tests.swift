import Foundation
import Strata
import Testing

#if Postgres
import StrataPostgres
#endif

/// Issue 19: Core Data parity items that ported Core Data code hit. Each test fails without its change, on both
/// stores.
@Suite struct Issue19Tests {
    // MARK: - 3. Undo is off by default

    @Test(arguments: StoreKind.allCases)
    func aNewContextHasNoUndoManagerSoSavedObjectsAreNotKeptAlive(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        #expect(context.undoManager == nil)
        weak var weakEmployee: ManagedObject?
        try {
            let employee = try context.existingObject(with: ids[0])
            try employee.setValue("Ada", forKey: "name")
            weakEmployee = employee
        }()
        try context.save()
        // Nothing names the saved object any more: no undo action keeps it alive.
        #expect(weakEmployee == nil)
        #expect(context.registeredObject(for: ids[0]) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func undoIsOneLineAway(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        context.undoManager = ContextUndoManager()
        let employee = try context.existingObject(with: ids[0])
        try employee.setValue("Ada", forKey: "name")
        try context.processPendingChanges()
        context.undoManager?.undo()
        #expect(try employee.value(forKey: "name") as? String == "E0")
        #expect(!context.hasChanges)
    }
}

// MARK: - 6. changedValues of inserted objects, committedValues of relationships

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func changedValuesOfAnInsertedObjectIncludeTheDefaultsAppliedAtInsert(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let employee = try context.make("RelEmployee", ["name": "Ada"])
        let changes = employee.changedValues()
        #expect(changes["name"] as? String == "Ada")
        #expect(changes["salary"] as? Int64 == 0)  // the default, never set
        #expect(changes.keys.contains("salary"))
        try context.save()
        #expect(employee.changedValues().isEmpty)
        try employee.setValue(Int64(5), forKey: "salary")
        #expect(Set(employee.changedValues().keys) == ["salary"])
    }

    @Test(arguments: StoreKind.allCases)
    func committedValuesIncludeRelationshipsAsLastSaved(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 2)
        let context = stack.context()
        let employee = try context.existingObject(with: ids[0])
        let department = try context.existingObject(with: departmentID)  // not a fault: committedValues never fires one
        let other = try context.make("RelDepartment", ["name": "Sales"])
        try employee.setValue(other, forKey: "department")

        let committed = employee.committedValues(forKeys: ["department", "name"])
        #expect((committed["department"] as? ManagedObject)?.objectID == departmentID)
        #expect(committed["name"] as? String == "E0")
        #expect(try employee.value(forKey: "department") as? ManagedObject === other)

        // The department lost a member in memory; its committed to-many still has both.
        let members = try #require(
            department.committedValues(forKeys: ["employees"])["employees"] as? Set<ManagedObject>)
        #expect(Set(members.map(\.objectID)) == Set(ids))
        #expect((try department.value(forKey: "employees") as? Set<ManagedObject>)?.count == 1)
        // All keys: attributes and every relationship.
        #expect(
            Set(employee.committedValues(forKeys: nil).keys)
                == ["name", "salary", "department", "manager", "reports", "badge"])
        try context.save()
        #expect((employee.committedValues(forKeys: ["department"])["department"] as? ManagedObject) === other)
    }
}

// MARK: - 10. Numbers cast as Core Data users cast them

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func keyValueCodingAndCommittedValuesGiveNumbersThatCastToEveryFittingType(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let entity = stack.entity("GraphAllTypes")
        let object = ManagedObject(entity: entity, insertInto: context)
        try object.setValue(Int16(7), forKey: "i16")
        try object.setValue(Int64(100_000), forKey: "i64")
        try object.setValue(2.5, forKey: "double")
        try object.setValue(Float(1.5), forKey: "float")
        try object.setValue(true, forKey: "bool")
        try context.save()

        let reader = stack.context()
        let saved = try reader.existingObject(with: object.objectID)
        let i16 = try saved.value(forKey: "i16")
        #expect(i16 as? Int == 7)
        #expect(i16 as? Int16 == 7)
        #expect(i16 as? Int64 == 7)
        #expect(i16 as? Double == 7)
        let i64 = try saved.value(forKey: "i64")
        #expect(i64 as? Int == 100_000)
        #expect(i64 as? Int32 == 100_000)
        #expect(i64 as? Int16 == nil)  // does not fit, as NSNumber's bridging refuses it
        #expect(try saved.value(forKey: "double") as? Double == 2.5)
        #expect(try saved.value(forKey: "double") as? Float == 2.5)
        #expect(try saved.value(forKey: "double") as? Int == nil)
        #expect(try saved.value(forKey: "float") as? Double == 1.5)
        #expect(try saved.value(forKey: "bool") as? Bool == true)
        #expect(try saved.primitiveValue(forKey: "i16") as? Int == 7)

        let committed = saved.committedValues(forKeys: nil)
        #expect(committed["i64"] as? Int == 100_000)
        #expect(committed["double"] as? Double == 2.5)
        try saved.setValue(Int64(3), forKey: "i64")
        #expect(saved.changedValues()["i64"] as? Int == 3)
        #expect(saved.changedValues()["i64"] as? Int16 == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func keyPathOperatorsAndDictionaryFetchesGiveNumbersThatCastToEveryFittingType(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, _) = try seedDepartment(stack, employees: 3)  // salaries 0, 10, 20
        let context = stack.context()
        let department = try context.existingObject(with: departmentID)
        #expect(try department.value(forKeyPath: "employees.@count") as? Int64 == 3)
        #expect(try department.value(forKeyPath: "employees.@count") as? Int == 3)
        #expect(try department.value(forKeyPath: "employees.@sum.salary") as? Int == 30)
        #expect(try department.value(forKeyPath: "employees.@sum.salary") as? Double == 30)
        #expect(try department.value(forKeyPath: "employees.@max.salary") as? Int16 == 20)
        #expect(try department.value(forKeyPath: "employees.@avg.salary") as? Double == 10)

        let request = FetchRequest<[String: Any]>(entityName: "RelEmployee")
        #expect(request.resultType == .dictionary)
        request.propertiesToFetch = [
            "name", "salary", "department",
            .expression(ExpressionDescription(name: "total", .sum("salary"))),
        ]
        request.propertiesToGroupBy = ["name", "salary", "department"]
        request.sortKeys = [SortKey("salary")]
        let rows = try context.fetch(request)
        #expect(rows.count == 3)
        #expect(rows.map { $0["salary"] as? Int } == [0, 10, 20])
        #expect(rows.map { $0["salary"] as? Int16 } == [0, 10, 20])
        #expect(rows.map { $0["total"] as? Double } == [0, 10, 20])
        #expect(rows[1]["name"] as? String == "E1")
        #expect(rows[1]["department"] as? ManagedObjectID == departmentID)
    }
}

// MARK: - 12. Errors name objects usefully

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func validationErrorsCarryObjectIDsUsableWithExistingObjectAndTheEntityAndKey(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let adaID = try seedAda(stack)
        let context = stack.context()
        let ada = try employee(adaID, in: context)
        ada.salary = -5
        let nameless = GraphEmployee(context: context)  // firstName is mandatory
        let thrown = #expect(throws: ValidationError.self) { try context.save() }
        let failures = try #require(thrown).errors
        #expect(failures.count == 2)
        let missing = try #require(failures.first { $0.key == "firstName" })
        #expect(missing.objectID == nameless.objectID)
        #expect(missing.objectID?.isTemporaryID == true)
        #expect(missing.entityName == "GraphEmployee")
        #expect(try context.existingObject(with: #require(missing.objectID)) === nameless)
        let negative = try #require(failures.first { $0.key == "salary" })
        #expect(negative.objectID == adaID)
        #expect(try context.existingObject(with: #require(negative.objectID)) === ada)
        // The enum cases name the object the same way; an error made from the ID's URI compares equal.
        guard case .valueTooSmall(let object, "salary", _, _) = negative else {
            Issue.record("expected valueTooSmall, got \(negative)")
            return
        }
        #expect(object.objectID == adaID && object.entityName == "GraphEmployee")
        #expect(object == ValidatedObject(description: adaID.description))
    }

    @Test(arguments: StoreKind.allCases)
    func constraintAndMergeConflictsCarryObjectIDsUsableWithExistingObject(_ kind: StoreKind) throws {
        let stack = try UniquenessConstraintTests.stack(kind)
        let context = stack.context()
        let first = try UniquenessConstraintTests.insert("UniqPerson", ["email": "a@x"], into: context)
        let second = try UniquenessConstraintTests.insert("UniqPerson", ["email": "a@x"], into: context)
        let conflicts = try #require(UniquenessConstraintTests.constraintConflicts { try context.save() })
        let conflict = try #require(conflicts.first)
        #expect(conflict.constraint.entity.name == "UniqPerson" && conflict.constraint.attributeNames == ["email"])
        #expect(try conflict.objectIDs.map { try context.existingObject(with: $0) } == [first, second])

        try second.setValue("b@x", forKey: "email")
        try context.save()
        let other = stack.context()
        try other.existingObject(with: first.objectID).setValue("c@x", forKey: "email")
        try other.save()
        try first.setValue("d@x", forKey: "name")
        let merge = try #require(MergePolicyTests.mergeConflicts { try context.save() }?.first)
        #expect(try context.existingObject(with: merge.objectID) === first)
        #expect(merge.objectID.entity.name == "UniqPerson" && merge.changedKeys == ["name"])
    }
}

// MARK: - 4. Inaccessible faults

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func firingAFaultWhoseRowIsGoneMarksItDeletedWithNilAndZeroValuesByDefault(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 1)
        let context = stack.context()
        #expect(context.shouldDeleteInaccessibleFaults)
        let fault = context.object(with: ids[0])
        let other = stack.context()
        other.delete(try other.existingObject(with: ids[0]))
        try other.save()

        #expect(try fault.value(forKey: "name") == nil)
        #expect(try fault.value(forKey: "salary") as? Int64 == 0)
        #expect(try fault.value(forKey: "department") == nil)
        #expect((try fault.value(forKey: "reports") as? Set<ManagedObject>)?.isEmpty == true)
        #expect(fault.isDeleted && !fault.isFault)
        #expect(!context.deletedObjects.contains(fault))  // no row left to delete
        // A typed property reads the zero value too.
        let typed = try #require(context.object(with: departmentID) as? RelDepartment)
        other.delete(try other.existingObject(with: departmentID))
        try other.save()
        #expect(typed.name == nil && typed.employees.isEmpty)
        // existingObject(with:) still refuses a missing row, and deleting the object again is harmless.
        #expect(objectGraphError { _ = try context.existingObject(with: ids[0]) }?.isObjectInaccessible == true)
        context.delete(fault)
        #expect(!context.hasChanges)
        try context.save()
    }

    @Test(arguments: StoreKind.allCases)
    func withoutDeletingInaccessibleFaultsFiringOneThrowsAndAContextlessFaultSaysSo(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, ids) = try seedDepartment(stack, employees: 2)
        let context = stack.context()
        context.shouldDeleteInaccessibleFaults = false
        let fault = context.object(with: ids[0])
        let other = stack.context()
        other.delete(try other.existingObject(with: ids[0]))
        try other.save()
        let error = objectGraphError { _ = try fault.value(forKey: "name") }
        #expect(error?.isObjectInaccessible == true && error?.objectIDs == [ids[0]])
        #expect(fault.isFault && !fault.isDeleted)

        // A fault whose context is gone: its row exists, and the error says what is wrong.
        var transient: ManagedObjectContext? = stack.context()
        let orphan = try #require(transient?.object(with: ids[1]))
        transient = nil
        let orphaned = objectGraphError { _ = try orphan.value(forKey: "name") }
        guard case .noContext(let id)? = orphaned else {
            Issue.record("expected noContext, got \(String(describing: orphaned))")
            return
        }
        #expect(id == ids[1])
        #expect("\(orphaned!)".contains("in no context"))
    }
}

// MARK: - 5. Delete propagation at the end of the event

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func movingAnObjectOutRightAfterDeletingItsOwnerSavesItFromTheCascade(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let parent = try context.make("RelPerson", ["name": "Parent"])
        let adopter = try context.make("RelPerson", ["name": "Adopter"])
        let moved = try context.make("RelPerson", ["name": "Moved"])
        let stays = try context.make("RelPerson", ["name": "Stays"])
        for child in [moved, stays] { try child.setValue(parent, forKey: "parent") }
        try context.save()

        context.delete(parent)  // children cascade, at the end of the event
        #expect(!moved.isDeleted && !stays.isDeleted)
        #expect((try parent.value(forKey: "children") as? Set<ManagedObject>) == [moved, stays])
        try moved.setValue(adopter, forKey: "parent")
        try context.processPendingChanges()
        #expect(!moved.isDeleted)
        #expect(stays.isDeleted)
        try context.save()

        let reader = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "RelPerson")
        let names = try reader.fetch(request).compactMap { try $0.value(forKey: "name") as? String }
        #expect(Set(names) == ["Adopter", "Moved"])
    }

    @Test(arguments: StoreKind.allCases)
    func withoutPropagationAtTheEndOfTheEventOnlySaveRunsTheDeleteRules(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 2)
        let context = stack.context()
        context.propagatesDeletesAtEndOfEvent = false
        let department = try context.existingObject(with: departmentID)
        let employee = try context.existingObject(with: ids[0])
        context.delete(department)
        try context.processPendingChanges()
        #expect(try employee.value(forKey: "department") as? ManagedObject === department)  // not nullified yet
        try context.save()
        #expect(try employee.value(forKey: "department") == nil)
        let reader = stack.context()
        #expect(try reader.existingObject(with: ids[0]).value(forKey: "department") == nil)
    }
}

// MARK: - 1. willSave until nothing changes

/// A folder that keeps its item count and the length of its items' name summary in `willSave()`.
final class I19Folder: ManagedObject {
    @Managed("count") var count: Int64
    @Managed("itemNames") var itemNames: String?
    @Managed("summaryLength") var summaryLength: Int64
    @ManagedRelationship("items") var items: Set<I19Item>

    override func willSave() {
        super.willSave()
        guard !isDeleted else { return }
        let live = Int64(items.filter { !$0.isDeleted }.count)
        if count != live { count = live }
        let length = Int64(itemNames?.count ?? 0)
        if summaryLength != length { summaryLength = length }
    }
}

/// An item that keeps its normalised name, and its folder's summary of names, in `willSave()`.
final class I19Item: ManagedObject {
    @Managed("name") var name: String?
    @Managed("normalizedName") var normalizedName: String?
    @ManagedRelationship("folder") var folder: I19Folder?
    /// How many times willSave ran.
    var willSaveCalls = 0
    /// When set, willSave writes a value without comparing it first (a cycle).
    var touchesWithoutComparing = false

    override func willSave() {
        super.willSave()
        willSaveCalls += 1
        if !isDeleted {
            let lowered = name?.lowercased()
            if normalizedName != lowered { normalizedName = lowered }
            if touchesWithoutComparing { normalizedName = lowered }
        }
        // The folder it is in, and the one it was saved in (moved or deleted since): committedValues.
        let previous = committedValues(forKeys: ["folder"])["folder"] as? I19Folder
        for folder in [folder, previous].compactMap({ $0 }) where !folder.isDeleted {
            let names = folder.items.filter { !$0.isDeleted }.compactMap(\.name).sorted().joined(separator: ",")
            if folder.itemNames != names { folder.itemNames = names }
        }
    }
}

enum I19Model {
    static let model: ManagedObjectModel = {
        I19Folder.register(forEntityName: "I19Folder")
        I19Item.register(forEntityName: "I19Item")
        return try! ManagedObjectModel(entities: [
            Entity("I19Folder", className: "I19Folder") {
                Attribute("count", .integer64, default: .integer(0))
                Attribute("itemNames", .string)
                Attribute("summaryLength", .integer64, default: .integer(0))
                Relationship.toMany("items", "I19Item", inverse: "folder")
            },
            Entity("I19Item", className: "I19Item") {
                Attribute("name", .string)
                Attribute("normalizedName", .string)
                Relationship.toOne("folder", "I19Folder", inverse: "items")
            },
        ])
    }()

    static func stack(_ kind: StoreKind) throws -> TestStack { try TestStack(kind, model: model) }
}

extension Issue19Tests {
    /// The stored values of every folder, by name summary, read by a fresh context.
    private func storedFolders(_ stack: TestStack) throws -> [String: (count: Int64, length: Int64)] {
        let reader = stack.context()
        var result: [String: (count: Int64, length: Int64)] = [:]
        for folder in try reader.fetch(FetchRequest<I19Folder>(entityName: "I19Folder")) {
            result[folder.itemNames ?? ""] = (folder.count, folder.summaryLength)
        }
        return result
    }

    @Test(arguments: StoreKind.allCases)
    func willSaveRunsAgainOnObjectsThatAnotherWillSaveDirtied(_ kind: StoreKind) throws {
        let stack = try I19Model.stack(kind)
        let context = stack.context()
        let folder = I19Folder(context: context)
        let items = ["B", "a"].map { name in
            let item = I19Item(context: context)
            item.name = name
            item.folder = folder
            return item
        }
        try context.save()
        #expect(folder.count == 2 && folder.itemNames == "B,a" && folder.summaryLength == 3)
        #expect(items[0].normalizedName == "b")
        #expect(items.allSatisfy { $0.willSaveCalls == 2 })  // each changed itself once: one more call

        // Only an item is dirty: its willSave changes the folder, whose own willSave must then run.
        items[1].name = "Alpha"
        try context.save()
        #expect(folder.itemNames == "Alpha,B" && folder.summaryLength == 7)
        let stored = try storedFolders(stack)
        #expect(stored["Alpha,B"]?.count == 2 && stored["Alpha,B"]?.length == 7)
    }

    @Test(arguments: StoreKind.allCases)
    func denormalisedCountsFollowInsertsMovesAndDeletes(_ kind: StoreKind) throws {
        let stack = try I19Model.stack(kind)
        let context = stack.context()
        let first = I19Folder(context: context)
        let second = I19Folder(context: context)
        let items = ["a", "b", "c"].map { name in
            let item = I19Item(context: context)
            item.name = name
            item.folder = first
            return item
        }
        try context.save()
        #expect(first.count == 3 && second.count == 0)

        items[0].folder = second  // moved
        context.delete(items[1])  // deleted
        let added = I19Item(context: context)
        added.name = "d"
        added.folder = second  // inserted
        try context.save()
        #expect(first.count == 1 && first.itemNames == "c" && first.summaryLength == 1)
        #expect(second.count == 2 && second.itemNames == "a,d" && second.summaryLength == 3)
        let stored = try storedFolders(stack)
        #expect(stored["c"]?.count == 1 && stored["a,d"]?.count == 2 && stored["a,d"]?.length == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func aWillSaveThatNeverSettlesFailsTheSaveWithAClearError(_ kind: StoreKind) throws {
        let stack = try I19Model.stack(kind)
        let context = stack.context()
        let item = I19Item(context: context)
        item.name = "loop"
        item.touchesWithoutComparing = true
        let error = objectGraphError { try context.save() }
        guard case .willSaveDidNotSettle(let ids, let passes)? = error else {
            Issue.record("expected willSaveDidNotSettle, got \(String(describing: error))")
            return
        }
        #expect(ids == [item.objectID])
        #expect(passes == 100 && item.willSaveCalls == 100)
        #expect(context.insertedObjects == [item])  // nothing written, the change is still there
        #expect(try stack.context().count(for: FetchRequest<I19Item>(entityName: "I19Item")) == 0)
        item.touchesWithoutComparing = false
        try context.save()
    }
}

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func mergePolicyResolutionCallsWillSaveAgainOnTheObjectsItChanged(_ kind: StoreKind) throws {
        let stack = try I19Model.stack(kind)
        let seed = stack.context()
        let seeded = I19Item(context: seed)
        seeded.name = "Ann"
        try seed.save()

        let context = stack.context()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let item = try #require(try context.existingObject(with: seeded.objectID) as? I19Item)
        let other = stack.context()
        let theirs = try #require(try other.existingObject(with: seeded.objectID) as? I19Item)
        theirs.name = "Zed"
        try other.save()

        item.name = "Bob"
        try context.save()
        // Two passes before the conflict (the second settles), then one more after the merge changed the object.
        #expect(item.willSaveCalls == 3)
        #expect(item.name == "Bob" && item.normalizedName == "bob")
    }
}

// MARK: - 2. Custom merge policies

/// Keeps the higher salary of the object and the store, then lets object trumps merge the rest.
final class HighestSalaryWins: MergePolicy, @unchecked Sendable {
    override func resolve(
        optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext
    )
        throws
    {
        for conflict in conflicts {
            guard let employee = context.registeredObject(for: conflict.objectID) as? GraphEmployee,
                case .integer(let theirs)? = conflict.persistedSnapshot?["salary"]
            else { continue }
            if theirs > employee.salary { employee.salary = theirs }
        }
        try super.resolve(optimisticLockingConflicts: conflicts, in: context)
    }
}

/// Records the constraint conflicts it sees and tags the duplicates, then lets object trumps upsert them.
final class TaggingUpsert: MergePolicy, @unchecked Sendable {
    var seen: [ConstraintConflict] = []

    override func resolve(constraintConflicts conflicts: [ConstraintConflict], in context: ManagedObjectContext) throws
    {
        seen += conflicts
        for conflict in conflicts {
            for id in conflict.objectIDs {
                try context.registeredObject(for: id)?.setValue("merged", forKey: "nickname")
            }
        }
        try super.resolve(constraintConflicts: conflicts, in: context)
    }
}

/// Refuses every conflict with an error of its own.
final class Refusing: MergePolicy, @unchecked Sendable {
    struct Refused: Error {}

    override func resolve(
        optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext
    )
        throws
    {
        throw Refused()
    }
}

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func aMergePolicySubclassResolvesVersionConflictsAndCallsSuperForTheRest(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedAda(stack)  // salary 100
        let context = stack.context()
        context.mergePolicy = HighestSalaryWins(merge: .mergeByPropertyObjectTrump)
        let mine = try employee(id, in: context)
        let other = stack.context()
        let theirs = try employee(id, in: other)
        theirs.salary = 300
        theirs.lastName = "King"
        try other.save()

        mine.salary = 200
        mine.firstName = "Augusta"
        try context.save()
        #expect(mine.salary == 300 && mine.firstName == "Augusta" && mine.lastName == "King")
        let reader = stack.context()
        let saved = try employee(id, in: reader)
        #expect(saved.salary == 300 && saved.firstName == "Augusta" && saved.lastName == "King")
        #expect("\(context.mergePolicy)" == "HighestSalaryWins(mergeByPropertyObjectTrump)")
        #expect(context.mergePolicy != .mergeByPropertyObjectTrump)
    }

    @Test(arguments: StoreKind.allCases)
    func aMergePolicySubclassSeesConstraintConflictsAndAnErrorItThrowsFailsTheSave(_ kind: StoreKind) throws {
        let stack = try UniquenessConstraintTests.stack(kind)
        let seed = stack.context()
        let stored = try UniquenessConstraintTests.insert("UniqPerson", ["email": "a@x", "name": "Ada"], into: seed)
        try seed.save()

        let context = stack.context()
        let policy = TaggingUpsert(merge: .mergeByPropertyObjectTrump)
        context.mergePolicy = policy
        try UniquenessConstraintTests.insert("UniqPerson", ["email": "a@x", "name": "Augusta"], into: context)
        try context.save()
        #expect(policy.seen.count == 1 && policy.seen.first?.databaseObjectID == stored.objectID)
        #expect(try UniquenessConstraintTests.stored(stack, "name") == ["Augusta"])
        #expect(try UniquenessConstraintTests.stored(stack, "nickname") == ["merged"])

        // A policy that throws: the save throws its error and writes nothing.
        let refusing = stack.context()
        refusing.mergePolicy = Refusing(merge: .overwrite)
        let person = try refusing.existingObject(with: stored.objectID)
        let other = stack.context()
        try other.existingObject(with: stored.objectID).setValue("Other", forKey: "name")
        try other.save()
        try person.setValue("Mine", forKey: "name")
        #expect(throws: Refusing.Refused.self) { try refusing.save() }
        #expect(try UniquenessConstraintTests.stored(stack, "name") == ["Other"])
    }
}

// MARK: - 7. fetchBatchSize on a plain fetch

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func firingOneFaultOfAPlainBatchedFetchFillsItsWholeBatchInOneRead(_ kind: StoreKind) throws {
        let stack = try FetchBatchingTests.stack(kind, count: 25)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.sortKeys = [SortKey("serial")]
        request.fetchBatchSize = 10
        let reads = stack.store.rowReads
        let employees = try context.fetch(request)
        #expect(employees.count == 25)
        let allFaults = employees.allSatisfy { $0.isFault }
        #expect(allFaults)
        #expect(stack.store.rowReads == reads)  // IDs only

        #expect(employees[13].serial == 14)  // fires the second batch: serials 11...20
        #expect(stack.store.rowReads == reads + 10)
        let faults = employees.map(\.isFault)
        #expect(faults[10..<20].allSatisfy { !$0 })
        #expect(faults[0..<10].allSatisfy { $0 } && faults[20...].allSatisfy { $0 })
        #expect(employees[10..<20].map(\.serial) == Array(11...20))
        #expect(stack.store.rowReads == reads + 10)  // the rest of the batch costs nothing more

        #expect(employees[24].serial == 25)  // the last, partial batch
        #expect(stack.store.rowReads == reads + 15)
        let lastBatchFaults = employees[20...].map(\.isFault)
        #expect(!lastBatchFaults.contains(true))
    }
}

// MARK: - 11. %K inside key paths

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func keyPathArgumentsInsideKeyPathsFetchWhatTheWrittenOutKeyPathsFetch(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        func keys<Result: ManagedObject>(
            _ entity: String, _ type: Result.Type, _ format: String, _ arguments: any QueryValueConvertible...
        ) throws -> [String] {
            let request = FetchRequest<Result>(entityName: entity)
            request.predicate = try ObjectPredicate(format: format, arguments: arguments.map(\.queryValue))
            return try context.fetch(request).map(fetchKey).sorted()
        }
        let written = try keys("FetchEmployee", FetchEmployee.self, "department.name == 'Sales'")
        #expect(!written.isEmpty)
        #expect(try keys("FetchEmployee", FetchEmployee.self, "department.%K == %@", "name", "Sales") == written)
        #expect(try keys("FetchEmployee", FetchEmployee.self, "%K.%K == %@", "department", "name", "Sales") == written)
        #expect(try keys("FetchEmployee", FetchEmployee.self, "department.%2$K == %1$@", "Sales", "name") == written)

        let anyWritten = try keys("FetchDepartment", FetchDepartment.self, "ANY employees.name BEGINSWITH 'A'")
        #expect(!anyWritten.isEmpty)
        #expect(
            try keys("FetchDepartment", FetchDepartment.self, "ANY %K.%K BEGINSWITH %@", "employees", "name", "A")
                == anyWritten)
        let counted = try keys("FetchDepartment", FetchDepartment.self, "employees.@count > 3")
        #expect(try keys("FetchDepartment", FetchDepartment.self, "%K.@count > %d", "employees", 3) == counted)
        let subquery = try keys(
            "FetchDepartment", FetchDepartment.self, "SUBQUERY(employees, $e, $e.salary > 150).@count > 0")
        #expect(
            try keys(
                "FetchDepartment", FetchDepartment.self, "SUBQUERY(%K, $e, $e.%K > %d).@count > 0", "employees",
                "salary", 150) == subquery)
    }
}

// MARK: - 8. Several coordinators on one store

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func severalCoordinatorsOnOneStoreSeeEachOthersSavesAfterMergeOrRefresh(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, ids) = try seedDepartment(stack, employees: 2)
        let second = PersistentStoreCoordinator(model: stack.model)
        switch kind {
        case .inMemory: second.addPersistentStore(stack.store)
        case .strata:
            // Opening the directory again in this process shares the open engine instead of failing on its lock.
            try second.addPersistentStore(.strata(directory: try #require(stack.directory)))
        #if Postgres
        case .postgres:
            // A store object of its own (its own connections) on the same schema.
            try second.addPersistentStore(
                .postgres(try postgresTestConfiguration(schema: try #require(stack.directory))))
        #endif
        }
        let secondStore = try #require(second.persistentStores.first)
        #expect(secondStore.identifier == stack.store.identifier)
        if let first = stack.store as? StrataStore, let other = secondStore as? StrataStore {
            #expect(first.engine === other.engine)
        }

        // The second coordinator's context reads both employees (its row cache holds them).
        let theirs = ManagedObjectContext(coordinator: second)
        let employee = try theirs.existingObject(with: ids[0])
        let colleague = try theirs.existingObject(with: ids[1])
        #expect(try employee.value(forKey: "name") as? String == "E0")

        // A save through the first coordinator: merged, then refreshed, in the second.
        let mine = stack.context()
        var saved: ContextSave?
        _ = mine.addObserver { if case .didSave(let save) = $0 { saved = save } }
        try mine.existingObject(with: ids[0]).setValue("Ada", forKey: "name")
        let myColleague = try mine.existingObject(with: ids[1])
        try myColleague.setValue(Int64(77), forKey: "salary")
        try mine.save()
        try theirs.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(try employee.value(forKey: "name") as? String == "Ada")
        try theirs.refresh(colleague, mergeChanges: false)
        #expect(try colleague.value(forKey: "salary") as? Int64 == 77)

        // And the other way round: the first coordinator's cached row gives way to the second's save.
        try colleague.setValue("Bo", forKey: "name")
        try theirs.save()
        let reader = stack.context()
        #expect(try reader.existingObject(with: ids[1]).value(forKey: "name") as? String == "Bo")

        // Optimistic locking between coordinators: a stale change conflicts.
        try myColleague.setValue("Stale", forKey: "name")  // read at the version before "Bo"
        #expect(objectGraphError { try mine.save() }?.isOptimisticLockingConflict == true)

        // Closing the second coordinator's store leaves the first one working.
        try second.removePersistentStore(secondStore)
        mine.rollback()
        try mine.existingObject(with: ids[0]).setValue("Augusta", forKey: "name")
        try mine.save()
        let last = stack.context()
        #expect(try last.existingObject(with: ids[0]).value(forKey: "name") as? String == "Augusta")
    }
}

// MARK: - 9. Property declarations as Core Data users write them

/// Properties named after their attribute or relationship, one with a key of its own.
final class I19Author: ManagedObject {
    @ManagedAttribute var name: String
    @ManagedRelationship var books: Set<I19Book>
}

final class I19Book: ManagedObject {
    @ManagedAttribute var title: String
    @Managed var pages: Int64
    @ManagedAttribute("subtitleText") var subtitle: String?
    @ManagedRelationship var author: I19Author?
}

/// Properties declared in an extension, as `@NSManaged` ones can be.
extension I19Book {
    var isbn: String? {
        get { managedValue() }
        set { setManagedValue(newValue) }
    }

    var coAuthor: I19Author? {
        get { managedRelationship() }
        set { setManagedRelationship(newValue) }
    }
}

enum I19BookModel {
    static let model: ManagedObjectModel = {
        I19Author.register(forEntityName: "I19Author")
        I19Book.register(forEntityName: "I19Book")
        return try! ManagedObjectModel(entities: [
            Entity("I19Author", className: "I19Author") {
                Attribute("name", .string, optional: false)
                Relationship.toMany("books", "I19Book", inverse: "author")
                Relationship.toMany("coAuthored", "I19Book", inverse: "coAuthor")
            },
            Entity("I19Book", className: "I19Book") {
                Attribute("title", .string, optional: false)
                Attribute("pages", .integer64, default: .integer(0))
                Attribute("subtitleText", .string)
                Attribute("isbn", .string)
                Relationship.toOne("author", "I19Author", inverse: "books")
                Relationship.toOne("coAuthor", "I19Author", inverse: "coAuthored")
            },
        ])
    }()
}

extension Issue19Tests {
    @Test(arguments: StoreKind.allCases)
    func propertiesAreKeyedByTheirNameUnlessGivenAndMayBeDeclaredInExtensions(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: I19BookModel.model)
        let context = stack.context()
        let ada = I19Author(context: context)
        ada.name = "Ada"
        let grace = I19Author(context: context)
        grace.name = "Grace"
        let book = I19Book(context: context)
        book.title = "Notes"
        book.pages = 65
        book.subtitle = "on the Engine"
        book.isbn = "0-000"
        book.author = ada
        book.coAuthor = grace
        #expect(ada.books == [book])  // the inverse follows, through the typed to-many
        #expect(try grace.value(forKey: "coAuthored") as? Set<ManagedObject> == [book])
        try context.save()

        let reader = stack.context()
        let saved = try #require(try reader.existingObject(with: book.objectID) as? I19Book)
        #expect(saved.title == "Notes" && saved.pages == 65 && saved.subtitle == "on the Engine")
        #expect(try saved.value(forKey: "subtitleText") as? String == "on the Engine")
        #expect(saved.isbn == "0-000")
        #expect(try saved.value(forKey: "isbn") as? String == "0-000")
        #expect(saved.author?.name == "Ada" && saved.coAuthor?.name == "Grace")
        saved.coAuthor = nil
        #expect(try saved.value(forKey: "coAuthor") == nil)
        #expect(saved.changedValues().keys.contains("coAuthor"))
    }
}
