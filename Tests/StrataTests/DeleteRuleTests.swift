import Foundation
import Strata
import Testing

/// Delete rules (nullify, cascade, deny, no action) and to-many count validation, on both store kinds.
@Suite struct DeleteRuleTests {
    @Test(arguments: StoreKind.allCases)
    func nullifyClearsTheInverseOfEveryRelatedObject(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let department = try context.make("RelDepartment", ["name": "D"])
        let people = try (0..<3).map { try context.make("RelEmployee", ["name": "E\($0)"]) }
        for person in people { try person.setValue(department, forKey: "department") }
        try context.save()

        let check = stack.context()
        let reloaded = try check.existingObject(with: department.objectID)
        check.delete(reloaded)
        try check.processPendingChanges()  // the end of the event: the delete rules run
        for person in people { #expect(try check.object(with: person.objectID).value(forKey: "department") == nil) }
        try check.save()
        let reopened = try stack.reopened()
        let after = reopened.context()
        for person in people {
            #expect(try after.existingObject(with: person.objectID).value(forKey: "department") == nil)
        }
        #expect(throws: ObjectGraphError.self) { try after.existingObject(with: department.objectID) }
    }

    @Test(arguments: StoreKind.allCases)
    func cascadeDeletesRecursivelyAndStopsOnCycles(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let department = try context.make("RelDepartment", ["name": "D"])
        let projects = try (0..<2).map { try context.make("RelProject", ["title": "P\($0)"]) }
        var tasks: [ManagedObject] = []
        for project in projects {
            try project.setValue(department, forKey: "department")
            for index in 0..<3 {
                let task = try context.make("RelTask", ["title": "T\(index)"])
                try task.setValue(project, forKey: "project")
                tasks.append(task)
            }
        }
        let keeper = try context.make("RelEmployee", ["name": "stays"])
        try keeper.setValue(department, forKey: "department")
        // A reflexive cycle under cascade: two people each the other's parent.
        let first = try context.make("RelPerson", ["name": "first"])
        let second = try context.make("RelPerson", ["name": "second"])
        try first.setValue(second, forKey: "parent")
        try second.setValue(first, forKey: "parent")
        try context.save()

        let check = stack.context()
        check.delete(check.object(with: department.objectID))
        check.delete(check.object(with: first.objectID))
        try check.processPendingChanges()
        #expect(check.deletedObjects.count == 1 + 2 + 6 + 2)
        try check.save()
        let after = stack.context()
        for object in projects + tasks + [first, second] {
            #expect(throws: ObjectGraphError.self) { try after.existingObject(with: object.objectID) }
        }
        // Nullify on the employees side of the department.
        #expect(try after.existingObject(with: keeper.objectID).value(forKey: "department") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func cascadeDeletesSavedMembersWithoutFiringThemAndUndoBringsThemBack(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let department = try context.make("RelDepartment", ["name": "D"])
        let projects = try (0..<3).map { try context.make("RelProject", ["title": "P\($0)"]) }
        for project in projects { try project.setValue(department, forKey: "department") }
        try context.save()

        let check = stack.contextWithUndo()
        let reloaded = check.object(with: department.objectID)
        check.delete(reloaded)
        try check.processPendingChanges()
        #expect(check.deletedObjects.count == 1 + projects.count)
        #expect(try reloaded.value(forKey: "projects") as? Set<ManagedObject> == [])
        for project in projects {
            let member = try #require(check.registeredObject(for: project.objectID))
            #expect(member.isDeleted)
            // Its nullify rule took its department from the department's to-many: its row was not read.
            #expect(member.isFault)
            #expect(try member.value(forKey: "department") as? ManagedObject === reloaded)
            #expect(try member.value(forKey: "title") as? String == project.value(forKey: "title") as? String)
        }
        check.undoManager?.undo()
        #expect(check.deletedObjects.isEmpty)
        #expect(try (reloaded.value(forKey: "projects") as? Set<ManagedObject>)?.count == projects.count)

        check.undoManager?.redo()
        try check.save()
        let after = stack.context()
        for project in projects {
            #expect(throws: ObjectGraphError.self) { try after.existingObject(with: project.objectID) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func denyRefusesTheSaveUntilTheRelationshipIsEmpty(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let owner = try context.make("RelOwner", ["name": "O"])
        let pet = try context.make("RelPet", ["name": "Rex"])
        try pet.setValue(owner, forKey: "owner")
        try context.save()

        context.delete(owner)
        #expect {
            try context.save()
        } throws: { error in
            (error as? ValidationError) == .deleteDenied(object: ValidatedObject(owner.objectID), key: "pets", count: 1)
        }
        #expect(owner.isDeleted)
        // Still in the store: nothing was written.
        let reader1 = stack.context()
        #expect(try reader1.existingObject(with: owner.objectID).value(forKey: "name") as? String == "O")
        try pet.setValue(nil, forKey: "owner")
        try context.save()
        let reader2 = stack.context()
        #expect(throws: ObjectGraphError.self) { try reader2.existingObject(with: owner.objectID) }
        let reader3 = stack.context()
        #expect(try reader3.existingObject(with: pet.objectID).value(forKey: "owner") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func noActionLeavesTheInverseDangling(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let library = try context.make("RelLibrary", ["name": "L"])
        let book = try context.make("RelBook", ["title": "B"])
        try book.setValue(library, forKey: "library")
        try context.save()
        context.delete(library)
        #expect(try book.value(forKey: "library") as? ManagedObject === library)
        try context.save()

        let check = stack.context()
        let reloaded = try check.existingObject(with: book.objectID)
        let dangling = try #require(try reloaded.value(forKey: "library") as? ManagedObject)
        #expect(dangling.objectID == library.objectID)
        // Firing it marks it deleted (shouldDeleteInaccessibleFaults), or throws when that is off.
        #expect(try dangling.value(forKey: "name") == nil)
        #expect(dangling.isDeleted)
        let strict = stack.context()
        strict.shouldDeleteInaccessibleFaults = false
        let strictDangling = try #require(
            try strict.existingObject(with: book.objectID).value(forKey: "library") as? ManagedObject)
        #expect(throws: ObjectGraphError.self) { try strictDangling.value(forKey: "name") }
    }

    @Test(arguments: StoreKind.allCases)
    func countsAndMandatoryToOnesAreValidatedAtSave(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let coach = try context.make("RelPerson", ["name": "Coach"])
        let team = try context.make("RelTeam", ["name": "T"])
        let players = try (0..<4).map { index in
            let player = try context.make("RelPlayer", ["name": "P\(index)"])
            try player.setValue(coach, forKey: "coach")
            return player
        }
        let teamName = ValidatedObject(team.objectID)
        #expect {
            try context.save()
        } throws: { error in
            (error as? ValidationError) == .tooFewObjects(object: teamName, key: "players", count: 0, limit: 1)
        }
        try team.setValue(players, forKey: "players")
        #expect {
            try context.save()
        } throws: { error in
            (error as? ValidationError) == .tooManyObjects(object: teamName, key: "players", count: 4, limit: 3)
        }
        try team.mutableSetValue(forKey: "players").remove(players[3])
        try players[3].setValue(nil, forKey: "coach")
        #expect {
            try context.save()
        } throws: { error in
            (error as? ValidationError)
                == .missingMandatoryValue(object: ValidatedObject(players[3].objectID), key: "coach")
        }
        try players[3].setValue(coach, forKey: "coach")
        try context.save()
        let reader4 = stack.context()
        #expect(try reader4.existingObject(with: team.objectID).value(forKeyPath: "players.@count") as? Int == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAnInsertedObjectRemovesItFromItsRelationships(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let department = try context.make("RelDepartment", ["name": "D"])
        let person = try context.make("RelEmployee", ["name": "E"])
        try person.setValue(department, forKey: "department")
        context.delete(person)
        try context.processPendingChanges()
        #expect(try department.value(forKey: "employees") as? Set<ManagedObject> == [])
        #expect(person.managedObjectContext == nil)
        try context.save()
        let reader5 = stack.context()
        #expect(
            try reader5.existingObject(with: department.objectID).value(forKeyPath: "employees.@count") as? Int == 0)
    }
}
