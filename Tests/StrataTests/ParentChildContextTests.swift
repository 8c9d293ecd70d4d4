import Foundation
import Strata
import Testing

/// Parent and child contexts: a child reads through its parent (unsaved changes included) and its save
/// pushes into the parent without touching the store.
@Suite struct ParentChildContextTests {
    @Test(arguments: StoreKind.allCases)
    func aChildSeesItsParentsUnsavedChangesInFaultsRelationshipsAndFetches(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 3)
        let parent = stack.context()
        try parent.existingObject(with: ids[0]).setValue(Int64(999), forKey: "salary")
        parent.delete(try parent.existingObject(with: ids[1]))
        let newcomer = try parent.make("RelEmployee", ["name": "New", "salary": Int64(1_000)])
        try newcomer.setValue(parent.object(with: departmentID), forKey: "department")
        try parent.processPendingChanges()  // the end of the event: the deleted employee leaves its department

        let child = ManagedObjectContext(parent: parent)
        #expect(child.parent === parent)
        let changed = try child.existingObject(with: ids[0])
        #expect(try changed.value(forKey: "salary") as? Int64 == 999)
        let members = try #require(
            try child.object(with: departmentID).value(forKey: "employees") as? Set<ManagedObject>)
        #expect(Set(members.map(\.objectID)) == [ids[0], ids[2], newcomer.objectID])
        #expect(members.allSatisfy { $0.managedObjectContext === child })

        let request = FetchRequest<ManagedObject>(entityName: "RelEmployee")
        request.predicate = try ObjectPredicate(format: "salary >= %d", 999)
        let found = try child.fetch(request)
        #expect(Set(found.map(\.objectID)) == [ids[0], newcomer.objectID])
        #expect(try child.count(for: FetchRequest<ManagedObject>(entityName: "RelEmployee")) == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func aChildSavePushesIntoTheParentAndOnlyTheParentsSaveWritesTheStore(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 2)
        let parent = stack.context()
        let child = ManagedObjectContext(parent: parent)
        try child.existingObject(with: ids[0]).setValue("Renamed", forKey: "name")
        child.delete(try child.existingObject(with: ids[1]))
        let hired = try child.make("RelEmployee", ["name": "Hired"])
        try hired.setValue(child.object(with: departmentID), forKey: "department")
        try child.save()

        #expect(!child.hasChanges)
        #expect(!hired.objectID.isTemporaryID)  // permanent before the push: both contexts name it alike
        #expect(parent.hasChanges)
        #expect(parent.insertedObjects.map(\.objectID) == [hired.objectID])
        #expect(try parent.existingObject(with: ids[0]).value(forKey: "name") as? String == "Renamed")
        #expect(parent.deletedObjects.map(\.objectID) == [ids[1]])
        let parentDepartment = parent.object(with: departmentID)
        #expect(
            Set((try parentDepartment.value(forKey: "employees") as? Set<ManagedObject> ?? []).map(\.objectID))
                == [ids[0], hired.objectID])
        // Nothing reached the store yet.
        #expect(try stack.storedValues("RelEmployee", "name") == [.string("E0"), .string("E1")])

        try parent.save()
        let reader = stack.context()
        #expect(try reader.existingObject(with: ids[0]).value(forKey: "name") as? String == "Renamed")
        #expect(throws: ObjectGraphError.self) { try reader.existingObject(with: ids[1]) }
        #expect(
            try reader.existingObject(with: hired.objectID).value(forKeyPath: "department.name") as? String
                == "Research")
        #expect(
            Set(
                (try reader.object(with: departmentID).value(forKey: "employees") as? Set<ManagedObject> ?? []).map(
                    \.objectID))
                == [ids[0], hired.objectID])
    }

    @Test func siblingsThatMergeAutomaticallySeeAChildsPushAndTheParentsSave() throws {
        let stack = try TestStack.relationships(.inMemory)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let parent = stack.context()
        let writer = ManagedObjectContext(parent: parent)
        let follower = ManagedObjectContext(parent: parent)
        follower.automaticallyMergesChangesFromParent = true
        let bystander = ManagedObjectContext(parent: parent)
        let followed = try follower.existingObject(with: ids[0])
        let ignored = try bystander.existingObject(with: ids[0])

        try writer.existingObject(with: ids[0]).setValue(Int64(42), forKey: "salary")
        try writer.save()
        #expect(try followed.value(forKey: "salary") as? Int64 == 42)
        #expect(try ignored.value(forKey: "salary") as? Int64 == 0)

        try parent.existingObject(with: ids[0]).setValue(Int64(43), forKey: "salary")
        try parent.save()
        #expect(try followed.value(forKey: "salary") as? Int64 == 43)
    }
}

/// Contexts on the coordinator that merge the other contexts' saves automatically.
@Suite struct AutomaticMergeTests {
    @Test func aPrivateQueueContextMergesAnotherContextsSaveOnItsQueue() async throws {
        let stack = try TestStack.relationships(.strata)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let id = ids[0]
        let follower = PrivateQueueContext(coordinator: stack.coordinator, name: "follower")
        let before = try await follower.perform { context in
            context.automaticallyMergesChangesFromParent = true
            return try context.existingObject(with: id).value(forKey: "salary") as? Int64
        }
        #expect(before == 0)
        // Keep the object registered in the follower, so the merge has something to refresh.
        let holder = try follower.performAndWait { context in try context.existingObject(with: id) }
        let writer = PrivateQueueContext(coordinator: stack.coordinator, name: "writer")
        try await writer.perform { context in
            try context.existingObject(with: id).setValue(Int64(77), forKey: "salary")
            try context.save()
        }
        // The merge was queued on the follower's queue by the save: it runs before this block.
        let after = follower.performAndWait { _ in (try? holder.value(forKey: "salary")) as? Int64 }
        #expect(after == 77)
    }

    @Test func aContextOnTheSameThreadMergesAtTheSaveAndStopsWhenTurnedOff() throws {
        let stack = try TestStack.relationships(.inMemory)
        let (_, ids) = try seedDepartment(stack, employees: 1)
        let viewer = stack.context()
        viewer.automaticallyMergesChangesFromParent = true
        let shown = try viewer.existingObject(with: ids[0])
        let writer = stack.context()
        try writer.existingObject(with: ids[0]).setValue("Renamed", forKey: "name")
        try writer.save()
        #expect(try shown.value(forKey: "name") as? String == "Renamed")

        viewer.automaticallyMergesChangesFromParent = false
        try writer.existingObject(with: ids[0]).setValue("Again", forKey: "name")
        try writer.save()
        #expect(try shown.value(forKey: "name") as? String == "Renamed")
    }
}

/// A context for the main actor, fed by a private-queue context that saves in the background.
@Suite struct MainQueueContextTests {
    @MainActor
    @Test func aMainQueueContextWorksOnTheMainActorAndMergesBackgroundSaves() async throws {
        let stack = try TestStack.relationships(.strata)
        let main = ManagedObjectContext.mainQueue(coordinator: stack.coordinator)
        main.automaticallyMergesChangesFromParent = true
        let department = try main.make("RelDepartment", ["name": "Research"])
        try main.save()
        let departmentID = department.objectID

        let background = PrivateQueueContext(coordinator: stack.coordinator, name: "import")
        try await background.perform { context in
            let research = context.object(with: departmentID)
            for index in 0..<3 {
                try context.make("RelEmployee", ["name": "E\(index)"]).setValue(research, forKey: "department")
            }
            try context.save()
        }
        // The merge was scheduled on the main queue by the background save; let it run.
        await Task.yield()
        for _ in 0..<100 where (try department.value(forKeyPath: "employees.@count") as? Int) != 3 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try department.value(forKeyPath: "employees.@count") as? Int == 3)
        let request = FetchRequest<ManagedObject>(entityName: "RelEmployee")
        #expect(try main.fetch(request).count == 3)
    }
}
