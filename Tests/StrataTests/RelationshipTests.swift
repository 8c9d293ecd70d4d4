import Foundation
import Strata
import StrataTestSupport
import Testing

/// Relationships: inverse maintenance, relationship faults, key paths, persistence and reopen, on both
/// store kinds (COREDATA.md §2 and §5).
@Suite struct RelationshipTests {
    // MARK: - The seeds' department transfer

    @Test(arguments: StoreKind.allCases)
    func settingOneSideOfADepartmentTransferMaintainsBothSidesAcrossSaveAndReopen(_ kind: StoreKind) throws {
        var stack = try TestStack.relationships(kind)
        var context = stack.context()
        let research = try #require(try context.make("RelDepartment", ["name": "Research"]) as? RelDepartment)
        let sales = try #require(try context.make("RelDepartment", ["name": "Sales"]) as? RelDepartment)
        let ada = try #require(try context.make("RelEmployee", ["name": "Ada"]) as? RelEmployee)
        ada.department = research
        #expect(research.employees == [ada])
        ada.department = sales
        #expect(research.employees.isEmpty)
        #expect(sales.employees == [ada])
        try context.save()
        #expect(ada.department === sales)
        let (adaID, researchID, salesID) = (ada.objectID, research.objectID, sales.objectID)

        // A second context of the same coordinator sees the saved graph.
        let other = stack.context()
        let otherAda = try #require(try other.existingObject(with: adaID) as? RelEmployee)
        #expect(otherAda.department?.objectID == salesID)
        #expect((other.object(with: researchID) as? RelDepartment)?.employees.isEmpty == true)

        // Transfer back through the to-many side, save, and reopen.
        let moved = try #require(other.object(with: researchID) as? RelDepartment)
        try moved.mutableSetValue(forKey: "employees").insert(otherAda)
        #expect(otherAda.department === moved)
        #expect((other.object(with: salesID) as? RelDepartment)?.employees.isEmpty == true)
        try other.save()

        stack = try stack.reopened()
        context = stack.context()
        let reopenedAda = try #require(try context.existingObject(with: adaID) as? RelEmployee)
        #expect(reopenedAda.department?.name == "Research")
        #expect((context.object(with: researchID) as? RelDepartment)?.employees.map(\.objectID) == [adaID])
        #expect((context.object(with: salesID) as? RelDepartment)?.employees.isEmpty == true)
    }

    @Test(arguments: StoreKind.allCases)
    func objectsSavedTogetherNamingTheSameDepartmentsEachKeepTheirOwnToOne(_ kind: StoreKind) throws {
        // A save shares equal to-one arrays between its objects (and makes room in the row cache for its rows
        // first): each object's committed to-one, and the row cached for it, must still be its own.
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let departments = try (0..<3).map {
            try #require(try context.make("RelDepartment", ["name": "D\($0)"]) as? RelDepartment)
        }
        let people = try (0..<300).map { index in
            let person = try #require(try context.make("RelEmployee", ["name": "E\(index)"]) as? RelEmployee)
            person.department = departments[index % 3]
            return person
        }
        try context.save()
        #expect(stack.coordinator.rowCacheStatistics.entries == 303)
        for (index, person) in people.enumerated() {
            #expect(
                person.committedValues(forKeys: ["department"])["department"] as? RelDepartment
                    === departments[index % 3])
        }
        // Moving one leaves the others that named the same department as they were.
        people[0].department = departments[1]
        try context.save()
        #expect(people[3].committedValues(forKeys: ["department"])["department"] as? RelDepartment === departments[0])
        #expect(people[0].committedValues(forKeys: ["department"])["department"] as? RelDepartment === departments[1])
        // Another context fills its faults from the cached rows.
        let other = stack.context()
        for (index, person) in people.enumerated() {
            let read = try #require(try other.existingObject(with: person.objectID) as? RelEmployee)
            #expect(read.department?.name == (index == 0 ? "D1" : "D\(index % 3)"))
        }
        #expect(departments.map(\.employees.count) == [99, 101, 100])
    }

    @Test(arguments: StoreKind.allCases)
    func updatedObjectsNamingTheSameDepartmentsKeepTheirOwnToOneAfterTheSave(_ kind: StoreKind) throws {
        // A save resolves each distinct array of to-ones once (updates' too, whose equal arrays it shares, and a new
        // department's row ID is known only after the write): each object must still commit and cache its own.
        let stack = try TestStack.relationships(kind)
        let setup = stack.context()
        let departments = try (0..<3).map {
            try #require(try setup.make("RelDepartment", ["name": "D\($0)"]) as? RelDepartment)
        }
        for index in 0..<300 {
            let person = try #require(try setup.make("RelEmployee", ["name": "E\(index)"]) as? RelEmployee)
            person.department = departments[index % 3]
        }
        try setup.save()
        let ids = try setup.fetch(FetchRequest<RelEmployee>(entityName: "RelEmployee")).sorted {
            $0.name! < $1.name!
        }.map(\.objectID)

        // Another context changes only names (the to-ones stay faults), and moves every tenth employee to a
        // department inserted in the same save.
        let context = stack.context()
        let added = try #require(try context.make("RelDepartment", ["name": "New"]) as? RelDepartment)
        var expected: [ManagedObjectID: String] = [:]
        var people: [RelEmployee] = []
        for id in ids {
            let person = try #require(try context.existingObject(with: id) as? RelEmployee)
            people.append(person)
            let index = Int(person.name!.dropFirst())!
            person.name = "F\(index)"
            if index % 10 == 0 {
                person.department = added
                expected[id] = "New"
            } else {
                expected[id] = "D\(index % 3)"
            }
        }
        try context.save()
        for person in people {
            let committed = person.committedValues(forKeys: ["department"])["department"] as? RelDepartment
            #expect(committed?.name == expected[person.objectID])
            #expect(!person.hasChanges)
        }
        // A third context reads them from the cached rows and the store.
        let other = stack.context()
        for id in ids {
            let read = try #require(try other.existingObject(with: id) as? RelEmployee)
            #expect(read.department?.name == expected[id])
            #expect(read.name?.first == "F")
        }
        #expect(added.employees.count == 30)
    }

    @Test(arguments: StoreKind.allCases)
    func replacingAWholeToManyThroughSetValueUpdatesEveryInverse(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let research = try context.make("RelDepartment", ["name": "Research"])
        let sales = try context.make("RelDepartment", ["name": "Sales"])
        let people = try (0..<4).map { try context.make("RelEmployee", ["name": "E\($0)"]) }
        try research.setValue(Set(people[0..<3]), forKey: "employees")
        try sales.setValue([people[3]], forKey: "employees")
        for person in people[0..<3] { #expect(try person.value(forKey: "department") as? ManagedObject === research) }
        // Giving Sales two of Research's people takes them from Research.
        try sales.setValue(Set([people[0], people[1]]), forKey: "employees")
        #expect(try people[3].value(forKey: "department") == nil)
        #expect(try people[0].value(forKey: "department") as? ManagedObject === sales)
        #expect(try research.value(forKey: "employees") as? Set<ManagedObject> == [people[2]])
        try context.save()
        let check = stack.context()
        let reloaded = try check.existingObject(with: sales.objectID)
        #expect(
            Set((try reloaded.value(forKey: "employees") as? Set<ManagedObject> ?? []).map(\.objectID))
                == Set([people[0].objectID, people[1].objectID]))
        #expect(try check.existingObject(with: people[3].objectID).value(forKey: "department") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func oneToOneTakesTheTargetFromItsPreviousPartner(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let badge = try context.make("RelBadge", ["code": "B1"])
        let first = try context.make("RelEmployee", ["name": "First"])
        let second = try context.make("RelEmployee", ["name": "Second"])
        try badge.setValue(first, forKey: "holder")
        #expect(try first.value(forKey: "badge") as? ManagedObject === badge)
        try second.setValue(badge, forKey: "badge")
        #expect(try first.value(forKey: "badge") == nil)
        #expect(try badge.value(forKey: "holder") as? ManagedObject === second)
        try context.save()
        let reopened = try stack.reopened()
        let check = reopened.context()
        #expect(
            try check.existingObject(with: badge.objectID).value(forKey: "holder").map {
                ($0 as! ManagedObject).objectID
            } == second.objectID)
        #expect(try check.existingObject(with: first.objectID).value(forKey: "badge") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func reflexiveFamilyTreeNavigatesBothWaysAfterReopen(_ kind: StoreKind) throws {
        var stack = try TestStack.relationships(kind)
        let context = stack.context()
        let root = try context.make("RelPerson", ["name": "Grandma"])
        var names: [ManagedObjectID: String] = [:]
        for parentIndex in 0..<3 {
            let parent = try context.make("RelPerson", ["name": "P\(parentIndex)"])
            try parent.setValue(root, forKey: "parent")
            for childIndex in 0..<2 {
                let child = try context.make("RelPerson", ["name": "C\(parentIndex)\(childIndex)"])
                try parent.mutableSetValue(forKey: "children").insert(child)
            }
        }
        try context.save()
        for object in context.registeredObjects { names[object.objectID] = try object.value(forKey: "name") as? String }
        stack = try stack.reopened()
        let check = stack.context()
        let grandma = try check.existingObject(with: root.objectID)
        let parents = try #require(try grandma.value(forKey: "children") as? Set<ManagedObject>)
        #expect(Set(try parents.map { try $0.value(forKey: "name") as? String }) == ["P0", "P1", "P2"])
        #expect(try grandma.value(forKeyPath: "children.@count") as? Int == 3)
        for parent in parents {
            #expect(try parent.value(forKey: "parent") as? ManagedObject === grandma)
            for child in try #require(try parent.value(forKey: "children") as? Set<ManagedObject>) {
                #expect(try child.value(forKeyPath: "parent.parent.name") as? String == "Grandma")
                #expect(names[child.objectID] == (try child.value(forKey: "name") as? String))
            }
        }
    }

    // MARK: - Relationship faults

    @Test(arguments: StoreKind.allCases)
    func relationshipFaultsDoNotReadRelatedRowsAndUniquingHolds(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 5)
        let seed = stack.context()
        let seededDepartment = seed.object(with: departmentID)

        let context = ManagedObjectContext(coordinator: stack.coordinator)
        let first = try #require(try context.existingObject(with: ids[0]) as? RelEmployee)
        let second = try #require(try context.existingObject(with: ids[1]) as? RelEmployee)
        let reads = stack.store.rowReads
        // A to-one gives a fault, from the ID in the row: no read.
        let viaFirst = try #require(first.department)
        #expect(viaFirst.isFault)
        #expect(viaFirst.objectID == departmentID)
        #expect(second.department === viaFirst)
        #expect(stack.store.rowReads == reads)
        // A to-many fires its owner (as in Core Data) and gives faults: the store lists the members' IDs
        // without reading their rows.
        let members = viaFirst.employees
        #expect(!viaFirst.isFault)
        #expect(stack.store.rowReads == reads + 1)
        #expect(members.count == 5)
        #expect(members.contains(first) && members.contains(second))
        let others = members.filter { $0 !== first && $0 !== second }
        #expect(others.count == 3 && others.allSatisfy { $0.isFault })
        #expect(stack.store.rowReads == reads + 1)
        // Touching one member's attribute fires that member only, but reads the rows of the members that have
        // none yet (this one and the two untouched: first and second hold theirs) in one batch, into the row
        // cache (the Strata store in one walk of its tree): the untouched members stay faults, and fire from the
        // cache without another read (FaultBatch, "Relationship faults" in CoreDataDifferences.md).
        let third = try #require(members.first { $0.objectID == ids[2] })
        #expect(third.name == "E2")
        #expect(!third.isFault)
        let untouched = members.filter { $0 !== first && $0 !== second && $0 !== third }
        #expect(untouched.count == 2 && untouched.allSatisfy { $0.isFault })
        #expect(stack.store.rowReads == reads + 1 + 3)
        for member in untouched { #expect(member.name?.hasPrefix("E") == true) }
        #expect(untouched.allSatisfy { !$0.isFault })
        #expect(stack.store.rowReads == reads + 1 + 3)
        // Two contexts hold distinct objects for the same department.
        #expect(seed.registeredObject(for: departmentID) === seededDepartment)
        #expect(seededDepartment !== viaFirst)
    }

    /// CoreDataDifferences.md, "Relationship faults": the members of a to-many are batched by 100 in row-ID order;
    /// firing one reads its batch's rows in one store read into the row cache, and the others stay faults until
    /// touched, then fire from the cache.
    @Test(arguments: StoreKind.allCases)
    func firingOneMemberReadsItsBatchOfRowsOnceAndTheOthersFireFromTheCache(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 250)
        let context = stack.context()
        let department = try #require(try context.existingObject(with: departmentID) as? RelDepartment)
        let reads = stack.store.rowReads
        let members = department.employeesInRowOrder
        #expect(members.map(\.objectID) == ids)
        #expect(stack.store.rowReads == reads)
        // The 150th member is in the second batch (members 100 ..< 200): its 100 rows, one read of the store.
        #expect(members[150].salary == 1_500)
        #expect(stack.store.rowReads == reads + 100)
        #expect(members.filter { !$0.isFault }.map(\.objectID) == [ids[150]])
        for member in members[100..<200] { #expect(member.name == "E\(ids.firstIndex(of: member.objectID)!)") }
        #expect(stack.store.rowReads == reads + 100)
        // Every member read: the other two batches once each (100 and 50 rows), nothing read twice.
        #expect(members.reduce(Int64(0)) { $0 + $1.salary } == (0..<250).reduce(Int64(0)) { $0 + Int64($1 * 10) })
        #expect(stack.store.rowReads == reads + 250)
    }

    /// A member's batched row is the row cache's: a save through another context after the batch was read is what
    /// the member fills with, and a context whose stalenessInterval is 0 reads every member from the store itself.
    @Test(arguments: StoreKind.allCases)
    func batchedMemberRowsFollowTheRowCacheAfterAnotherContextSaves(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 5)
        let context = stack.context()
        let department = try #require(try context.existingObject(with: departmentID) as? RelDepartment)
        let members = department.employeesInRowOrder
        #expect(members[0].name == "E0")
        #expect(members[1].isFault)
        // Another context changes member 1 after its row was read into the cache with its batch.
        let writer = stack.context()
        try #require(try writer.existingObject(with: ids[1]) as? RelEmployee).name = "Changed"
        try writer.save()
        #expect(members[1].name == "Changed")

        let strict = stack.context()
        strict.stalenessInterval = 0
        let strictDepartment = try #require(try strict.existingObject(with: departmentID) as? RelDepartment)
        let strictMembers = strictDepartment.employeesInRowOrder
        let reads = stack.store.rowReads
        #expect(strictMembers[2].name == "E2")
        #expect(stack.store.rowReads == reads + 1)
        #expect(strictMembers[3].name == "E3")
        #expect(stack.store.rowReads == reads + 2)
    }

    /// Members fired in any order (a set is walked in hash order) each load their own row, read with their batch:
    /// every row read once.
    @Test(arguments: StoreKind.allCases)
    func batchedMembersFiredInAnyOrderEachLoadTheirOwnRow(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 250)
        let context = stack.context()
        let department = try #require(try context.existingObject(with: departmentID) as? RelDepartment)
        let reads = stack.store.rowReads
        var random = RepeatableRandomNumberGenerator(seed: 18)
        let members = department.employeesInRowOrder.shuffled(using: &random)
        for member in members.reversed() {
            let index = try #require(ids.firstIndex(of: member.objectID))
            #expect(member.name == "E\(index)")
            #expect(member.salary == Int64(index * 10))
        }
        #expect(stack.store.rowReads == reads + 250)
    }

    /// A batch's rows older than the context's staleness interval are not loaded: the member reads its row again,
    /// as a lookup of a row that old in the row cache does.
    @Test(arguments: StoreKind.allCases)
    func batchedMemberRowsOlderThanTheStalenessIntervalAreReadAgain(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, _) = try seedDepartment(stack, employees: 5)
        let context = stack.context()
        let department = try #require(try context.existingObject(with: departmentID) as? RelDepartment)
        let members = department.employeesInRowOrder
        let reads = stack.store.rowReads
        #expect(members[0].name == "E0")
        #expect(stack.store.rowReads == reads + 5)
        #expect(members[1].name == "E1")
        #expect(stack.store.rowReads == reads + 5)
        context.stalenessInterval = 0.000_001
        Thread.sleep(forTimeInterval: 0.002)
        #expect(members[2].name == "E2")
        #expect(stack.store.rowReads == reads + 6)
    }

    /// Another context saves rows of a batch's members after the batch read them: the members that fire then fill
    /// with the saved rows (the row cache's), not with the rows their batch kept, and the others with their own.
    @Test(arguments: StoreKind.allCases)
    func batchedMembersFillFromTheRowCacheOnceAnyRowChanged(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (departmentID, ids) = try seedDepartment(stack, employees: 5)
        let context = stack.context()
        let department = try #require(try context.existingObject(with: departmentID) as? RelDepartment)
        let members = department.employeesInRowOrder
        #expect(members[0].name == "E0")
        let writer = stack.context()
        try #require(try writer.existingObject(with: ids[3]) as? RelEmployee).salary = 7
        try #require(try writer.existingObject(with: ids[4]) as? RelEmployee).name = "Renamed"
        try writer.save()
        #expect(members[2].name == "E2")
        #expect(members[3].salary == 7 && members[3].name == "E3")
        #expect(members[4].name == "Renamed" && members[4].salary == 40)
    }

    @Test(arguments: StoreKind.allCases)
    func bothSidesInMemoryFormACycleThatRefreshWithoutMergeBreaks(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let seed = stack.context()
        let department = try seed.make("RelDepartment", ["name": "Research"])
        let person = try seed.make("RelEmployee", ["name": "Ada"])
        try person.setValue(department, forKey: "department")
        try seed.save()
        let (personID, departmentID) = (person.objectID, department.objectID)

        let context = stack.context()
        weak var weakPerson: ManagedObject?
        weak var weakDepartment: ManagedObject?
        try {
            let person = try context.existingObject(with: personID)
            let department = try #require(try person.value(forKey: "department") as? ManagedObject)
            #expect((try department.value(forKey: "employees") as? Set<ManagedObject>)?.first === person)
            weakPerson = person
            weakDepartment = department
        }()
        // Each holds the other: the cycle keeps both alive though nothing else does.
        #expect(weakPerson != nil && weakDepartment != nil)
        // Turning one of them into a fault breaks the cycle: both go.
        try context.refresh(try #require(weakPerson), mergeChanges: false)
        #expect(weakPerson == nil)
        #expect(weakDepartment == nil)
        #expect(context.registeredObject(for: personID) == nil)
        #expect(context.registeredObject(for: departmentID) == nil)
    }

    // MARK: - Key paths

    @Test(arguments: StoreKind.allCases)
    func keyPathsThroughToOnesAndCollectionOperators(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let department = try context.make("RelDepartment", ["name": "Research"])
        let salaries: [Int64] = [100, 250, 250, 400]
        let people = try salaries.enumerated().map { index, salary in
            try context.make("RelEmployee", ["name": index < 2 ? "Ada" : "Grace\(index)", "salary": salary])
        }
        for person in people { try person.setValue(department, forKey: "department") }
        try context.save()

        let check = stack.context()
        let person = try check.existingObject(with: people[0].objectID)
        #expect(try person.value(forKeyPath: "department.name") as? String == "Research")
        #expect(try person.value(forKeyPath: "manager.name") == nil)
        let reloaded = check.object(with: department.objectID)
        #expect(try reloaded.value(forKeyPath: "employees.@count") as? Int == 4)
        #expect(try reloaded.value(forKeyPath: "employees.@sum.salary") as? Int64 == 1000)
        #expect(try reloaded.value(forKeyPath: "employees.@avg.salary") as? Double == 250)
        #expect(try reloaded.value(forKeyPath: "employees.@min.salary") as? Int64 == 100)
        #expect(try reloaded.value(forKeyPath: "employees.@max.salary") as? Int64 == 400)
        let distinct = try #require(
            try reloaded.value(forKeyPath: "employees.@distinctUnionOfObjects.salary") as? [Any])
        #expect(Set(distinct.compactMap { $0 as? Int64 }) == [100, 250, 400])
        #expect(distinct.count == 3)
        #expect(try person.value(forKeyPath: "department.employees.@count") as? Int == 4)
        #expect(
            Set(try #require(try reloaded.value(forKeyPath: "employees.name") as? Set<AnyHashable>))
                == Set(["Ada", "Grace2", "Grace3"]))
        #expect(throws: ObjectGraphError.self) { try person.value(forKeyPath: "department.nothing") }
        #expect(throws: ObjectGraphError.self) { try reloaded.value(forKeyPath: "employees.@median.salary") }
        #expect(throws: ObjectGraphError.self) { try person.value(forKeyPath: "name.@count") }
        #expect(throws: ObjectGraphError.self) { try person.value(forKeyPath: "name.length") }
    }

    // MARK: - Many-to-many

    @Test(arguments: StoreKind.allCases)
    func manyToManyWithAThousandMembersOnEachSide(_ kind: StoreKind) throws {
        var stack = try TestStack.relationships(kind)
        let context = stack.context()
        let hub = try context.make("RelPost", ["title": "hub"])
        let tags = try (0..<1000).map { try context.make("RelTag", ["name": "t\($0)"]) }
        let posts = try (0..<999).map { try context.make("RelPost", ["title": "p\($0)"]) }
        let popular = tags[0]
        for tag in tags { try hub.mutableSetValue(forKey: "tags").insert(tag) }
        for post in posts { try popular.mutableSetValue(forKey: "posts").insert(post) }
        #expect(try hub.mutableSetValue(forKey: "tags").count == 1000)
        #expect(try popular.mutableSetValue(forKey: "posts").count == 1000)  // 999 posts and the hub
        #expect(try posts[5].mutableSetValue(forKey: "tags").objects == [popular])
        try context.save()

        stack = try stack.reopened()
        let check = stack.context()
        let reloadedHub = try check.existingObject(with: hub.objectID)
        let reloadedPopular = check.object(with: popular.objectID)
        #expect(try reloadedHub.value(forKeyPath: "tags.@count") as? Int == 1000)
        #expect(try reloadedPopular.value(forKeyPath: "posts.@count") as? Int == 1000)
        #expect(
            Set((try reloadedHub.value(forKey: "tags") as? Set<ManagedObject> ?? []).map(\.objectID))
                == Set(tags.map(\.objectID)))
        // Removing from one side removes from the other, durably.
        let removed = check.object(with: posts[7].objectID)
        try reloadedPopular.mutableSetValue(forKey: "posts").remove(removed)
        #expect(try removed.mutableSetValue(forKey: "tags").count == 0)
        try check.save()
        let again = stack.context()
        #expect(try again.object(with: popular.objectID).value(forKeyPath: "posts.@count") as? Int == 999)
        #expect(try again.object(with: posts[7].objectID).value(forKeyPath: "tags.@count") as? Int == 0)
        #expect(try again.object(with: posts[8].objectID).value(forKeyPath: "tags.@count") as? Int == 1)
    }

    // MARK: - Subentities, unidirectional relationships, rollback

    @Test(arguments: StoreKind.allCases)
    func toOneIntoAHierarchyComesBackAsTheConcreteSubentity(_ kind: StoreKind) throws {
        var stack = try TestStack.relationships(kind)
        let context = stack.context()
        let garage = try context.make("RelGarage", ["name": "G"])
        let car = try context.make("RelCar", ["plate": "CAR-1", "seats": 5])
        let van = try context.make("RelVehicle", ["plate": "VAN-1"])
        let driver = try context.make("RelDriver", ["name": "D"])
        try driver.setValue(car, forKey: "vehicle")
        try garage.setValue(Set([car, van]), forKey: "vehicles")
        try context.save()
        stack = try stack.reopened()
        let check = stack.context()
        let reloadedDriver = try check.existingObject(with: driver.objectID)
        let vehicle = try #require(try reloadedDriver.value(forKey: "vehicle") as? ManagedObject)
        #expect(vehicle.isFault)
        #expect(vehicle.entity.name == "RelCar")
        #expect(try vehicle.value(forKey: "seats") as? Int64 == 5)
        let vehicles = try #require(
            try check.object(with: garage.objectID).value(forKey: "vehicles") as? Set<ManagedObject>)
        #expect(Set(vehicles.map(\.entity.name)) == ["RelCar", "RelVehicle"])
    }

    @Test(arguments: StoreKind.allCases)
    func unidirectionalRelationshipsWorkAndTheModelWarns(_ kind: StoreKind) throws {
        #expect(
            RelationshipModel.model.warnings.contains(.missingInverse(entity: "RelDriver", relationship: "vehicle")))
        #expect(
            RelationshipModel.model.warnings.contains(.missingInverse(entity: "RelCar", relationship: "passengers")))
        #expect(!RelationshipModel.model.warnings.contains { "\($0)".contains("RelEmployee") })
        var stack = try TestStack.relationships(kind)
        let context = stack.context()
        let car = try context.make("RelCar", ["plate": "C"])
        let riders = try (0..<3).map { try context.make("RelPerson", ["name": "R\($0)"]) }
        try car.setValue(riders, forKey: "passengers")
        try context.save()
        stack = try stack.reopened()
        let check = stack.context()
        #expect(try check.object(with: car.objectID).value(forKeyPath: "passengers.@count") as? Int == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackAndRefreshWithMergeRestoreOrKeepRelationshipChanges(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let research = try context.make("RelDepartment", ["name": "Research"])
        let sales = try context.make("RelDepartment", ["name": "Sales"])
        let ada = try context.make("RelEmployee", ["name": "Ada"])
        try ada.setValue(research, forKey: "department")
        try context.save()

        try ada.setValue(sales, forKey: "department")
        #expect(ada.hasChanges && sales.hasChanges && research.hasChanges)
        #expect(ada.changedValues()["department"].flatMap { $0 as? ManagedObject } === sales)
        context.rollback()
        #expect(try ada.value(forKey: "department") as? ManagedObject === research)
        #expect(try research.value(forKey: "employees") as? Set<ManagedObject> == [ada])
        #expect(try sales.value(forKey: "employees") as? Set<ManagedObject> == [])
        #expect(!context.hasChanges)

        try ada.setValue(sales, forKey: "department")
        try ada.setValue("Ada L.", forKey: "name")
        try context.refresh(ada, mergeChanges: true)
        #expect(try ada.value(forKey: "department") as? ManagedObject === sales)
        #expect(try ada.value(forKey: "name") as? String == "Ada L.")
        try context.save()
        let check = stack.context()
        #expect(try check.existingObject(with: ada.objectID).value(forKeyPath: "department.name") as? String == "Sales")
    }

    // MARK: - Errors

    @Test func relationshipsAcrossStoresAreRejected() throws {
        RelationshipModel.registerClasses()
        let coordinator = PersistentStoreCoordinator(model: RelationshipModel.model)
        let first = try coordinator.addPersistentStore(.inMemory)
        let second = try coordinator.addPersistentStore(.inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let department = try context.make("RelDepartment", ["name": "D"])
        let person = try context.make("RelEmployee", ["name": "E"])
        context.assign(department, to: first)
        context.assign(person, to: second)
        try person.setValue(department, forKey: "department")
        #expect {
            try context.save()
        } throws: { error in
            guard case ObjectGraphError.crossStoreRelationship = error else { return false }
            return true
        }
        // Saved separately, relating them fails at once.
        try person.setValue(nil, forKey: "department")
        try context.save()
        #expect(department.objectID.storeIdentifier != person.objectID.storeIdentifier)
        #expect {
            try person.setValue(department, forKey: "department")
        } throws: { error in
            guard case ObjectGraphError.crossStoreRelationship = error else { return false }
            return true
        }
    }

    @Test func objectsInsertedIntoTwoStoresEachNameTheirOwnStoresInserts() throws {
        // A save names an inserted object by its position among its own store's inserts: interleaved inserts into
        // two stores must each find theirs, and a to-one saved in one store may name an object saved before there.
        RelationshipModel.registerClasses()
        let coordinator = PersistentStoreCoordinator(model: RelationshipModel.model)
        let stores = [try coordinator.addPersistentStore(.inMemory), try coordinator.addPersistentStore(.inMemory)]
        let context = ManagedObjectContext(coordinator: coordinator)
        var departments: [ManagedObject] = []
        var people: [ManagedObject] = []
        for index in 0..<20 {
            let department = try context.make("RelDepartment", ["name": "D\(index)"])
            let person = try context.make("RelEmployee", ["name": "E\(index)"])
            context.assign(department, to: stores[index % 2])
            context.assign(person, to: stores[index % 2])
            try person.setValue(department, forKey: "department")
            departments.append(department)
            people.append(person)
        }
        try context.save()
        let late = try context.make("RelEmployee", ["name": "Late"])
        context.assign(late, to: stores[1])
        try late.setValue(departments[1], forKey: "department")
        try context.save()
        let check = ManagedObjectContext(coordinator: coordinator)
        for (index, person) in people.enumerated() {
            #expect(person.objectID.storeIdentifier == stores[index % 2].identifier)
            let read = check.object(with: person.objectID)
            #expect(try read.value(forKeyPath: "department.name") as? String == "D\(index)")
        }
        #expect(try check.object(with: late.objectID).value(forKeyPath: "department.name") as? String == "D1")
    }

    @Test func wrongValuesForRelationshipsAreTypedErrors() throws {
        let stack = try TestStack.relationships(.inMemory)
        let context = stack.context()
        let department = try context.make("RelDepartment")
        let person = try context.make("RelEmployee")
        let tag = try context.make("RelTag")
        #expect(throws: ObjectGraphError.self) { try person.setValue(tag, forKey: "department") }
        #expect(throws: ObjectGraphError.self) { try person.setValue("Research", forKey: "department") }
        #expect(throws: ObjectGraphError.self) { try department.setValue([tag], forKey: "employees") }
        #expect(throws: ObjectGraphError.self) { try person.mutableSetValue(forKey: "department") }
        #expect(throws: ObjectGraphError.self) { try department.mutableOrderedSetValue(forKey: "employees") }
        #expect(throws: ObjectGraphError.self) { try department.mutableSetValue(forKey: "nothing") }
        let reader1 = stack.context()
        let elsewhere = try reader1.make("RelDepartment")
        #expect(throws: ObjectGraphError.self) { try person.setValue(elsewhere, forKey: "department") }
    }

    @Test func modelErrorsForRelationships() throws {
        func build(_ entities: [Entity]) -> ModelError? {
            do {
                _ = try ManagedObjectModel(entities: entities)
                return nil
            } catch { return error }
        }
        #expect(
            build([Entity("A") { Relationship.toOne("b", "B") }])
                == .unknownDestination(entity: "A", relationship: "b", destination: "B"))
        #expect(
            build([Entity("A") { Relationship.toOne("b", "B", inverse: "a") }, Entity("B")])
                == .unknownInverse(entity: "A", relationship: "b", inverse: "a"))
        #expect(
            build([
                Entity("A") { Relationship.toOne("b", "B", inverse: "x") },
                Entity("B") {
                    Relationship.toOne("x", "C")
                    Relationship.toOne("a", "A", inverse: "b")
                },
                Entity("C"),
            ]).map { if case .inverseMismatch = $0 { true } else { false } } == true)
        #expect(
            build([Entity("A") { Relationship.toMany("b", "A", minCount: 3, maxCount: 2) }])
                == .invalidCount(entity: "A", relationship: "b"))
        #expect(
            build([
                Entity("A") {
                    Attribute("b", .string)
                    Relationship.toOne("b", "A")
                }
            ]) == .duplicateAttribute(entity: "A", attribute: "b"))
        // Relationships are part of the version hash.
        let plain = try ManagedObjectModel(entities: [Entity("A"), Entity("B")])
        let related = try ManagedObjectModel(entities: [Entity("A") { Relationship.toOne("b", "B") }, Entity("B")])
        #expect(plain.versionHash != related.versionHash)
        let description = try #require(related.entity(named: "A")?.relationshipsByName["b"])
        #expect(!description.isToMany && description.inverseRelationship == nil)
        #expect(description.destinationEntity === related.entity(named: "B"))
    }
}

/// Saves a department with employees E0, E1, … (salaries 0, 10, …) through a context that is gone
/// afterwards, so the row cache holds nothing for them.
@inline(never)
func seedDepartment(_ stack: TestStack, employees: Int) throws -> (ManagedObjectID, [ManagedObjectID]) {
    let seed = stack.context()
    let department = try seed.make("RelDepartment", ["name": "Research"])
    let people = try (0..<employees).map { try seed.make("RelEmployee", ["name": "E\($0)", "salary": Int64($0 * 10)]) }
    for person in people { try person.setValue(department, forKey: "department") }
    try seed.save()
    return (department.objectID, people.map(\.objectID))
}

/// Saved objects that hold each other leave the context once refreshAllObjects() breaks their cycles.
@Suite struct RelationshipMemoryTests {
    @Test(arguments: StoreKind.allCases)
    func refreshAllObjectsBreaksCyclesOfSavedObjects(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.contextWithoutUndo()
        try {
            let department = try context.make("RelDepartment", ["name": "D"])
            for index in 0..<3 {
                try context.make("RelEmployee", ["name": "E\(index)"]).setValue(department, forKey: "department")
            }
            try context.save()
        }()
        #expect(context.registeredObjects.count == 4)
        try context.refreshAllObjects()
        #expect(context.registeredObjects.isEmpty)
    }
}
