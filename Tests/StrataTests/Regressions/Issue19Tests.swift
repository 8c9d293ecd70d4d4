import Foundation
import Strata
import Testing

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
