import Foundation
import Strata
import Testing

/// Context notifications and merging another context's saves.
@Suite struct NotificationAndMergeTests {
    @Test(arguments: StoreKind.allCases)
    func objectsDidChangeWillSaveAndDidSaveNameTheObjects(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 2)
        let context = stack.context()
        var received: [ContextNotification] = []
        let token = context.addObserver { received.append($0) }

        let changed = try context.existingObject(with: ids[0])
        try changed.setValue("Changed", forKey: "name")
        let removed = try context.existingObject(with: ids[1])
        context.delete(removed)  // runs the rules, which post
        let added = try context.make("RelEmployee", ["name": "New"])
        try context.processPendingChanges()
        let changes = received.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        let all = changes.reduce(into: ObjectChanges()) {
            $0.inserted.formUnion($1.inserted)
            $0.updated.formUnion($1.updated)
            $0.deleted.formUnion($1.deleted)
        }
        #expect(all.inserted == [added.objectID])
        #expect(all.deleted == [ids[1]])
        #expect(all.updated == [ids[0], departmentID])  // nullify took the deleted employee from the department

        received = []
        try context.save()
        #expect(received.count == 2)
        guard case .willSave = received.first, case .didSave(let save) = received.last else {
            Issue.record("expected will-save then did-save, got \(received)")
            return
        }
        #expect(save.inserted == [added.objectID])
        #expect(!added.objectID.isTemporaryID)
        #expect(save.deleted == [ids[1]])
        #expect(save.updated == [ids[0], departmentID])
        context.removeObserver(token)
        try changed.setValue("Again", forKey: "name")
        try context.save()
        #expect(received.count == 2)
    }

    /// Updated objects are hashed into the notification's set only when someone listens: who listens by the time
    /// the event ends hears of each once, however many writes; what nobody heard is not named again.
    @Test(arguments: StoreKind.allCases)
    func updatesAreNamedOnceToWhoListensWhenTheEventEnds(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, ids) = try seedDepartment(stack, employees: 3)
        let context = stack.context()
        let first = try context.existingObject(with: ids[0])
        let second = try context.existingObject(with: ids[1])
        try first.setValue("Unheard", forKey: "name")
        try context.processPendingChanges()

        try first.setValue("A", forKey: "name")
        try second.setValue("B", forKey: "name")
        try first.setValue("C", forKey: "name")
        try first.setValue("D", forKey: "name")
        var received: [ContextNotification] = []
        let token = context.addObserver { received.append($0) }
        try context.processPendingChanges()
        let changes = received.compactMap { if case .objectsDidChange(let changes) = $0 { changes } else { nil } }
        #expect(changes.map(\.updated) == [[ids[0], ids[1]]])

        received = []
        try context.save()
        let saves = received.compactMap { if case .didSave(let save) = $0 { save } else { nil } }
        #expect(saves.map(\.updated) == [[ids[0], ids[1]]])
        context.removeObserver(token)
    }

    @Test func notificationsArriveAsAnAsyncSequence() async throws {
        let stack = try TestStack.relationships(.inMemory)
        let context = stack.context()
        let stream = context.notifications()
        let tag = try context.make("RelTag", ["name": "t"])
        try context.save()
        var saves: [ContextSave] = []
        for await notification in stream {
            if case .didSave(let save) = notification {
                saves.append(save)
                break
            }
        }
        #expect(saves.first?.inserted == [tag.objectID])
    }

    /// The seed's two-context example through merging: context 1 saves firstName "Fiona", context 2 has
    /// changed lastName to "Jones"; merging keeps Jones and takes Fiona.
    @Test(arguments: StoreKind.allCases)
    func mergingASaveKeepsLocalChangesAndTakesTheRest(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let id = try seedEmployees(stack, [("Anna", "Smith", 10)])[0]
        let first = stack.context()
        let second = stack.context()
        let mine = try #require(try second.existingObject(with: id) as? GraphEmployee)
        mine.lastName = "Jones"

        var saved: ContextSave?
        first.addObserver { if case .didSave(let save) = $0 { saved = save } }
        let theirs = try #require(try first.existingObject(with: id) as? GraphEmployee)
        theirs.firstName = "Fiona"
        try first.save()

        try second.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(mine.firstName == "Fiona")
        #expect(mine.lastName == "Jones")
        #expect(mine.hasChanges)
        try second.save()
        let reader = stack.context()
        let stored = try #require(try reader.existingObject(with: id) as? GraphEmployee)
        #expect(stored.firstName == "Fiona" && stored.lastName == "Jones")
    }

    @Test(arguments: StoreKind.allCases)
    func mergingDeletionsAndInsertionsUpdatesRegisteredObjectsAndTheirRelationships(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 3)
        let watcher = stack.context()
        let department = watcher.object(with: departmentID)
        #expect(try department.value(forKeyPath: "employees.@count") as? Int == 3)
        let doomed = try watcher.existingObject(with: ids[0])

        let writer = stack.context()
        var saved: ContextSave?
        writer.addObserver { if case .didSave(let save) = $0 { saved = save } }
        writer.delete(try writer.existingObject(with: ids[0]))
        let newcomer = try writer.make("RelEmployee", ["name": "New"])
        try newcomer.setValue(writer.object(with: departmentID), forKey: "department")
        try writer.save()

        try watcher.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(watcher.registeredObject(for: ids[0]) == nil)
        #expect(doomed.managedObjectContext == nil)
        let members = try #require(try department.value(forKey: "employees") as? Set<ManagedObject>)
        #expect(Set(members.map(\.objectID)) == [ids[1], ids[2], newcomer.objectID])
    }

    @Test func remoteSavesKnownByIDDropCachedRows() throws {
        let stack = try TestStack(.inMemory)
        let id = try seedEmployees(stack, [("Anna", "Smith", 10)])[0]
        // A second coordinator on the same store: it has a row cache of its own.
        let other = try TestStack(sharing: stack)
        let watcher = other.context()
        let employee = try #require(try watcher.existingObject(with: id) as? GraphEmployee)
        #expect(employee.firstName == "Anna")

        let writer = stack.context()
        let theirs = try #require(try writer.existingObject(with: id) as? GraphEmployee)
        theirs.firstName = "Fiona"
        try writer.save()

        try ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextSave(updated: [id]), into: [watcher])
        #expect(employee.firstName == "Fiona")
    }
}
