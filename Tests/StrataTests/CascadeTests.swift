import Foundation
import Strata
import Testing

/// A cascade through a to-many whose members' inverse to-one nullifies (RelDepartment.projects): the members are
/// deleted as faults, the owner's to-many is emptied in one change, and what a user observes is what each member's
/// own nullify rule would have left: the deleted objects, the notifications, undo, merges into other contexts
/// and the store's history.
@Suite struct CascadeTests {
    /// A saved department with `count` projects; returns the department's ID and the projects' IDs.
    static func savedDepartment(
        _ stack: TestStack, projects count: Int
    ) throws -> (department: ManagedObjectID, projects: [ManagedObjectID]) {
        let context = stack.context()
        let department = try context.make("RelDepartment", ["name": "D"])
        let projects = try (0..<count).map { try context.make("RelProject", ["title": "P\($0)"]) }
        for project in projects { try project.setValue(department, forKey: "department") }
        try context.save()
        return (department.objectID, projects.map(\.objectID))
    }

    @Test(arguments: StoreKind.allCases)
    func aCascadeOfMembersNeverFetchedDeletesEachAndEmptiesTheOwnerOnce(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 5)

        let context = stack.context()
        let department = context.object(with: departmentID)
        var projectChanges = 0
        let observation = try department.observe("projects") { _ in projectChanges += 1 }
        var notified: [ContextNotification] = []
        let listener = context.addObserver { notified.append($0) }
        context.delete(department)
        try context.processPendingChanges()

        #expect(Set(context.deletedObjects.map(\.objectID)) == Set(projectIDs + [departmentID]))
        #expect(try department.value(forKey: "projects") as? Set<ManagedObject> == [])
        #expect(projectChanges == 1)
        for id in projectIDs {
            let member = try #require(context.registeredObject(for: id))
            #expect(member.isDeleted)
            #expect(member.isFault)
            #expect(try member.value(forKey: "department") as? ManagedObject === department)
        }
        let changed = notified.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        #expect(changed.count == 1)
        #expect(changed.first?.deleted == Set(projectIDs + [departmentID]))

        try context.save()
        let saved = notified.compactMap { if case .didSave(let save) = $0 { save } else { nil } }
        #expect(saved.count == 1)
        #expect(saved.first?.deleted == Set(projectIDs + [departmentID]))
        #expect(saved.first?.updated == [])
        #expect(try stack.storedRows("RelProject").isEmpty)
        #expect(try stack.storedRows("RelDepartment").isEmpty)
        department.removeObserver(observation)
        context.removeObserver(listener)
    }

    @Test(arguments: StoreKind.allCases)
    func aCascadeOverMembersTheContextHoldsDropsTheirPendingChanges(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 4)

        let context = stack.context()
        // One member changed and unsaved, one fired, the others never fetched.
        let changed = try context.existingObject(with: projectIDs[0])
        try changed.setValue("renamed", forKey: "title")
        let fired = try context.existingObject(with: projectIDs[1])
        #expect(context.updatedObjects == [changed])
        context.delete(context.object(with: departmentID))
        try context.processPendingChanges()

        #expect(context.updatedObjects.isEmpty)
        #expect(Set(context.deletedObjects.map(\.objectID)) == Set(projectIDs + [departmentID]))
        #expect(changed.isDeleted && fired.isDeleted)
        #expect(try changed.value(forKey: "title") as? String == "renamed")
        #expect(try context.object(with: departmentID).value(forKey: "projects") as? Set<ManagedObject> == [])

        try context.save()
        #expect(try stack.storedRows("RelProject").isEmpty)
        let after = stack.context()
        for id in projectIDs + [departmentID] {
            #expect(throws: ObjectGraphError.self) { try after.existingObject(with: id) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func undoOfACascadeBringsBackEveryMemberAndTheOwnersToMany(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 4)

        let context = stack.contextWithUndo()
        let held = try context.existingObject(with: projectIDs[2])
        let department = context.object(with: departmentID)
        context.delete(department)
        try context.processPendingChanges()
        #expect(context.deletedObjects.count == 1 + projectIDs.count)

        context.undoManager?.undo()
        #expect(context.deletedObjects.isEmpty)
        #expect(!held.isDeleted)
        let members = try #require(department.value(forKey: "projects") as? Set<ManagedObject>)
        #expect(Set(members.map(\.objectID)) == Set(projectIDs))
        for member in members { #expect(try member.value(forKey: "department") as? ManagedObject === department) }

        // Redone, the cascade saves as it would have.
        context.undoManager?.redo()
        #expect(context.deletedObjects.count == 1 + projectIDs.count)
        #expect(try department.value(forKey: "projects") as? Set<ManagedObject> == [])
        try context.save()
        #expect(try stack.storedRows("RelProject").isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func aSecondContextMergesTheCascadesSave(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 3)

        // The other context holds the department with its members read, and one member fired.
        let other = stack.context()
        let otherDepartment = try other.existingObject(with: departmentID)
        #expect((try otherDepartment.value(forKey: "projects") as? Set<ManagedObject>)?.count == projectIDs.count)
        let otherMember = try other.existingObject(with: projectIDs[0])

        let context = stack.context()
        var saves: [ContextSave] = []
        let listener = context.addObserver { if case .didSave(let save) = $0 { saves.append(save) } }
        context.delete(context.object(with: departmentID))
        try context.save()
        context.removeObserver(listener)
        let save = try #require(saves.first)
        #expect(save.deleted == Set(projectIDs + [departmentID]))

        try other.mergeChanges(fromContextDidSave: save)
        // Objects of rows gone leave the other context, and the relationships that held them.
        #expect(other.registeredObject(for: otherMember.objectID) == nil)
        #expect(otherMember.managedObjectContext == nil)
        for id in projectIDs + [departmentID] {
            #expect(throws: ObjectGraphError.self) { try other.existingObject(with: id) }
        }
        #expect(!other.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func theHistoryOfACascadeListsEveryDeletedObject(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: RelationshipModel.model, recordsHistory: true)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 3)
        let context = stack.context()
        let token = try #require(
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil)).transactions.last?.token)

        context.transactionAuthor = "cascade"
        context.delete(context.object(with: departmentID))
        try context.save()

        let transactions = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
        #expect(transactions.count == 1)
        let transaction = try #require(transactions.first)
        #expect(transaction.author == "cascade")
        #expect(transaction.changes.allSatisfy { $0.changeType == .delete })
        #expect(Set(transaction.changes.map(\.changedObjectID)) == Set(projectIDs + [departmentID]))
    }

    // A cascade's deletions are hashed into the notifications' sets only when someone listens: who listens by the
    // time the event ends hears of every one, and what nobody heard is not named again.

    @Test(arguments: StoreKind.allCases)
    func anObserverAddedAfterTheDeletesHearsOfEveryDeletion(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 5)
        let context = stack.context()
        context.delete(context.object(with: departmentID))
        var notified: [ContextNotification] = []
        let listener = context.addObserver { notified.append($0) }
        try context.processPendingChanges()
        let changed = notified.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        #expect(changed.map(\.deleted) == [Set(projectIDs + [departmentID])])
        context.removeObserver(listener)
    }

    @Test(arguments: StoreKind.allCases)
    func deletionsNobodyHeardOfAreNotNamedByTheNextNotificationOrSave(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 3)
        let context = stack.context()
        context.delete(context.object(with: departmentID))
        try context.processPendingChanges()

        var notified: [ContextNotification] = []
        let listener = context.addObserver { notified.append($0) }
        let other = try context.make("RelDepartment", ["name": "E"])
        try context.processPendingChanges()
        let changed = notified.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        #expect(changed.map(\.deleted) == [[]])
        #expect(changed.map(\.inserted) == [[other.objectID]])

        // The save names every deletion it wrote, heard of or not.
        try context.save()
        let saved = notified.compactMap { if case .didSave(let save) = $0 { save } else { nil } }
        #expect(saved.map(\.deleted) == [Set(projectIDs + [departmentID])])
        #expect(saved.map(\.inserted) == [[other.objectID]])
        context.removeObserver(listener)
    }

    @Test(arguments: StoreKind.allCases)
    func aDeletionUndoneBeforeTheEventEndsIsNotNamed(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, projectIDs) = try Self.savedDepartment(stack, projects: 3)
        let context = stack.contextWithUndo()
        var notified: [ContextNotification] = []
        let listener = context.addObserver { notified.append($0) }
        context.delete(context.object(with: projectIDs[0]))
        try context.processPendingChanges()
        context.delete(context.object(with: projectIDs[1]))
        context.undoManager?.undo()
        try context.processPendingChanges()
        let changed = notified.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        #expect(changed.map(\.deleted) == [[projectIDs[0]]])
        #expect(context.deletedObjects.map(\.objectID) == [projectIDs[0]])
        context.removeObserver(listener)
    }

    @Test(arguments: StoreKind.allCases)
    func aSaveHeardByAnotherContextNamesEveryDeletion(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, projectIDs) = try Self.savedDepartment(stack, projects: 3)
        // A context that merges the coordinator's saves: the did-save's sets are made for it alone.
        let other = stack.context()
        let otherMember = try other.existingObject(with: projectIDs[0])
        other.automaticallyMergesChangesFromParent = true
        let context = stack.context()
        context.delete(context.object(with: departmentID))
        try context.save()
        #expect(otherMember.managedObjectContext == nil)
        #expect(other.registeredObject(for: projectIDs[0]) == nil)
        other.automaticallyMergesChangesFromParent = false
    }
}
