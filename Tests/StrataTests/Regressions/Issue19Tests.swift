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

