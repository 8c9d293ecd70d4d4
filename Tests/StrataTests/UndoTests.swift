import Foundation
import Strata
import Testing

/// The context's undo manager: attribute, relationship, insert and delete changes, grouping, levels,
/// and the references the undo stack holds (COREDATA.md §5).
@Suite struct UndoTests {
    @Test(arguments: StoreKind.allCases)
    func undoingAnAttributeChangeMakesTheObjectUnchangedAgainAndRedoReappliesIt(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let context = stack.contextWithUndo()
        let undo = try #require(context.undoManager)
        weak var weakEmployee: ManagedObject?
        try {
            let employee = try context.existingObject(with: ids[0])
            try employee.setValue("Ada", forKey: "name")
            try employee.setValue(Int64(500), forKey: "salary")
            weakEmployee = employee
        }()
        try context.processPendingChanges()
        #expect(context.updatedObjects.count == 1)
        #expect(undo.canUndo)

        undo.undo()
        let employee = try #require(weakEmployee)
        #expect(try employee.value(forKey: "name") as? String == "E0")
        #expect(try employee.value(forKey: "salary") as? Int64 == 0)
        #expect(!employee.hasChanges)
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        #expect(undo.canRedo)

        undo.redo()
        #expect(try employee.value(forKey: "name") as? String == "Ada")
        #expect(try employee.value(forKey: "salary") as? Int64 == 500)
        #expect(context.updatedObjects == [employee])
        try context.save()
        let reader = stack.context()
        #expect(try reader.existingObject(with: ids[0]).value(forKey: "name") as? String == "Ada")
    }

    @Test func theUndoStackHoldsObjectsUntilItsActionsAreRemoved() throws {
        let stack = try TestStack.relationships(.inMemory)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let context = stack.contextWithUndo()
        weak var weakEmployee: ManagedObject?
        try {
            let employee = try context.existingObject(with: ids[0])
            try employee.setValue("Ada", forKey: "name")
            weakEmployee = employee
        }()
        try context.processPendingChanges()
        context.undoManager?.undo()
        // Unchanged again: the context holds it weakly, but the redo action still names it.
        #expect(!context.hasChanges)
        #expect(weakEmployee != nil)
        context.undoManager?.removeAllActions()
        #expect(weakEmployee == nil)
        #expect(context.registeredObject(for: ids[0]) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func undoAndRedoARelationshipChangeFixTheInversesUp(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.contextWithUndo()
        let research = try context.make("RelDepartment", ["name": "Research"])
        let sales = try context.make("RelDepartment", ["name": "Sales"])
        let ada = try context.make("RelEmployee", ["name": "Ada"])
        try ada.setValue(research, forKey: "department")
        try context.save()
        let undo = try #require(context.undoManager)

        try ada.setValue(sales, forKey: "department")
        try context.processPendingChanges()
        undo.undo()
        #expect(try ada.value(forKey: "department") as? ManagedObject === research)
        #expect(try research.value(forKey: "employees") as? Set<ManagedObject> == [ada])
        #expect(try sales.value(forKey: "employees") as? Set<ManagedObject> == [])
        #expect(!context.hasChanges)

        undo.redo()
        #expect(try ada.value(forKey: "department") as? ManagedObject === sales)
        #expect(try research.value(forKey: "employees") as? Set<ManagedObject> == [])
        #expect(try sales.value(forKey: "employees") as? Set<ManagedObject> == [ada])
        try context.save()
        let reader = stack.context()
        #expect(
            try reader.existingObject(with: ada.objectID).value(forKeyPath: "department.name") as? String == "Sales")
    }

    @Test(arguments: StoreKind.allCases)
    func undoingAnInsertRemovesTheObjectAndRedoBringsItBack(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.contextWithUndo()
        let department = try context.make("RelDepartment", ["name": "D"])
        try context.save()
        let ada = try context.make("RelEmployee", ["name": "Ada"])
        try ada.setValue(department, forKey: "department")
        try context.processPendingChanges()
        let undo = try #require(context.undoManager)

        undo.undo()
        #expect(!context.insertedObjects.contains(ada))
        #expect(ada.managedObjectContext == nil)
        #expect(try department.value(forKey: "employees") as? Set<ManagedObject> == [])
        #expect(!context.hasChanges)

        undo.redo()
        #expect(context.insertedObjects == [ada])
        #expect(try department.value(forKey: "employees") as? Set<ManagedObject> == [ada])
        try context.save()
        let reader = stack.context()
        #expect(try reader.existingObject(with: department.objectID).value(forKeyPath: "employees.@count") as? Int == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func undoingACascadingDeleteRestoresEveryObjectAndLink(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.contextWithUndo()
        let department = try context.make("RelDepartment", ["name": "D"])
        let project = try context.make("RelProject", ["title": "P"])
        let task = try context.make("RelTask", ["title": "T"])
        let person = try context.make("RelEmployee", ["name": "E"])
        try project.setValue(department, forKey: "department")
        try task.setValue(project, forKey: "project")
        try person.setValue(department, forKey: "department")
        try context.save()
        let undo = try #require(context.undoManager)

        context.delete(department)
        try context.processPendingChanges()
        #expect(context.deletedObjects == [department, project, task])
        #expect(try person.value(forKey: "department") == nil)

        undo.undo()
        #expect(context.deletedObjects.isEmpty)
        #expect(!department.isDeleted && !project.isDeleted && !task.isDeleted)
        #expect(try person.value(forKey: "department") as? ManagedObject === department)
        #expect(try department.value(forKey: "employees") as? Set<ManagedObject> == [person])
        #expect(try project.value(forKey: "tasks") as? Set<ManagedObject> == [task])
        #expect(!context.hasChanges)

        undo.redo()
        #expect(context.deletedObjects == [department, project, task])
        #expect(try person.value(forKey: "department") == nil)
        try context.save()
        let reader = stack.context()
        #expect(throws: ObjectGraphError.self) { try reader.existingObject(with: task.objectID) }
        #expect(try reader.existingObject(with: person.objectID).value(forKey: "department") == nil)
    }

    @Test func groupingLevelsAndTurningUndoOff() throws {
        let stack = try TestStack.relationships(.inMemory)
        let context = stack.contextWithUndo()
        let undo = try #require(context.undoManager)
        let thing = try context.make("RelTag", ["name": "a"])
        try context.processPendingChanges()

        // Explicit groups, nested: one undo takes back both names.
        undo.beginUndoGrouping()
        try thing.setValue("b", forKey: "name")
        undo.beginUndoGrouping()
        try thing.setValue("c", forKey: "name")
        undo.endUndoGrouping()
        undo.endUndoGrouping()
        undo.undo()
        #expect(try thing.value(forKey: "name") as? String == "a")

        // Two levels: the oldest of three groups is dropped.
        undo.levelsOfUndo = 2
        for name in ["x", "y", "z"] {
            try thing.setValue(name, forKey: "name")
            try context.processPendingChanges()
        }
        undo.undo()
        undo.undo()
        #expect(try thing.value(forKey: "name") as? String == "x")
        #expect(!undo.canUndo)

        // Without an undo manager nothing is recorded.
        context.undoManager = nil
        try thing.setValue("w", forKey: "name")
        try context.processPendingChanges()
        #expect(try thing.value(forKey: "name") as? String == "w")
        #expect(!undo.canUndo)
    }
}

extension UndoTests {
    @Test(arguments: StoreKind.allCases)
    func undoingTheDeleteOfAMemberPutsItBackIntoItsToMany(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 2)
        let context = stack.contextWithUndo()
        let member = try context.existingObject(with: ids[0])
        context.delete(member)
        try context.processPendingChanges()
        let department = context.object(with: departmentID)
        #expect(
            Set((try department.value(forKey: "employees") as? Set<ManagedObject> ?? []).map(\.objectID)) == [ids[1]])
        context.undoManager?.undo()
        #expect(
            Set((try department.value(forKey: "employees") as? Set<ManagedObject> ?? []).map(\.objectID)) == Set(ids))
        #expect(!context.hasChanges)
    }
}
