import Foundation
import Strata
import Testing

/// Merge policies on real conflicts between two contexts: both read Ada Lovelace (salary 100), the other
/// context saves first, then this one saves.
@Suite struct MergePolicyTests {
    /// Two contexts on Ada's row: `mine` read it, then `theirs` saved lastName "Byron" and salary 300.
    struct Scenario {
        let stack: TestStack
        let id: ManagedObjectID
        let context: ManagedObjectContext
        let mine: GraphEmployee

        init(
            _ kind: StoreKind, policy: MergePolicy,
            theirChanges: (GraphEmployee) -> Void = {
                $0.lastName = "Byron"
                $0.salary = 300
            }
        ) throws {
            stack = try TestStack(kind)
            id = try seedAda(stack)
            context = stack.context()
            context.mergePolicy = policy
            mine = try employee(id, in: context)
            let other = stack.context()
            theirChanges(try employee(id, in: other))
            try other.save()
        }

        func stored(_ key: String) throws -> AttributeValue? {
            try #require(try stack.storedValues("GraphEmployee", key).first)
        }

        var storedVersion: UInt64? { (try? stack.storedRows("GraphEmployee"))?.first?.version }
    }

    /// The conflicts of a failed save (nil when it did not fail with mergeConflicts).
    static func mergeConflicts(_ body: () throws -> Void) -> [MergeConflict]? {
        if case .mergeConflicts(let conflicts)? = objectGraphError(body) { return conflicts }
        return nil
    }

    // MARK: - Error policy

    @Test(arguments: StoreKind.allCases)
    func errorPolicyReportsTheObjectItsCachedAndPersistedSnapshots(_ kind: StoreKind) throws {
        let scenario = try Scenario(kind, policy: .error)
        #expect(scenario.context.mergePolicy == .error)
        scenario.mine.salary = 200
        scenario.mine.firstName = "Augusta"
        let conflicts = try #require(Self.mergeConflicts { try scenario.context.save() })
        let conflict = try #require(conflicts.first)
        #expect(conflicts.count == 1)
        #expect(conflict.objectID == scenario.id)
        #expect(scenario.context.registeredObject(for: conflict.objectID) === scenario.mine)
        #expect(!conflict.isDeletion)
        #expect(conflict.changedKeys == ["salary", "firstName"])
        #expect(conflict.cachedSnapshot.version == 1)
        #expect(
            conflict.cachedSnapshot.values == [
                "firstName": .string("Ada"), "lastName": .string("Lovelace"), "salary": .integer(100),
            ])
        let persisted = try #require(conflict.persistedSnapshot)
        #expect(persisted.version == 2)
        #expect(persisted["lastName"] == .string("Byron"))
        #expect(persisted["salary"] == .integer(300))
        #expect(persisted["photo"] == nil)
        #expect(conflict.objectSnapshot?["salary"] == .integer(200))
        #expect(conflict.objectSnapshot?["firstName"] == .string("Augusta"))
        #expect("\(ObjectGraphError.mergeConflicts(conflicts))".contains("salary"))

        // Nothing was written and the context's changes are intact: resolve by hand and save again.
        #expect(try scenario.stored("salary") == .integer(300))
        #expect(scenario.mine.isUpdated && scenario.mine.salary == 200 && scenario.mine.firstName == "Augusta")
        try scenario.context.refresh(scenario.mine, mergeChanges: true)
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(200))
        #expect(try scenario.stored("lastName") == .string("Byron"))
        #expect(scenario.storedVersion == 3)
    }

    // MARK: - Each policy on an update conflict

    /// Mine changes salary (which they changed too) and firstName (which they did not); they changed lastName.
    @Test(arguments: StoreKind.allCases)
    func storeTrumpTakesTheStoresChangesAndKeepsMineElsewhere(_ kind: StoreKind) throws {
        let scenario = try Scenario(kind, policy: .mergeByPropertyStoreTrump)
        scenario.mine.salary = 200
        scenario.mine.firstName = "Augusta"
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(300))
        #expect(try scenario.stored("firstName") == .string("Augusta"))
        #expect(try scenario.stored("lastName") == .string("Byron"))
        #expect(scenario.storedVersion == 3)
        #expect(
            scenario.mine.salary == 300 && scenario.mine.lastName == "Byron" && scenario.mine.firstName == "Augusta")
        #expect(!scenario.context.hasChanges && !scenario.mine.hasChanges)
    }

    @Test(arguments: StoreKind.allCases)
    func objectTrumpKeepsMyChangesAndTakesTheStoresOthers(_ kind: StoreKind) throws {
        let scenario = try Scenario(kind, policy: .mergeByPropertyObjectTrump)
        scenario.mine.salary = 200
        scenario.mine.firstName = "Augusta"
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(200))
        #expect(try scenario.stored("firstName") == .string("Augusta"))
        #expect(try scenario.stored("lastName") == .string("Byron"))
        #expect(scenario.mine.lastName == "Byron")
        #expect(scenario.storedVersion == 3)
        // The saved object is in step with its row: a further change saves without conflict.
        scenario.mine.salary = 250
        scenario.context.mergePolicy = .error
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(250))
    }

    @Test(arguments: StoreKind.allCases)
    func overwriteWritesEveryValueOfMineOverTheStore(_ kind: StoreKind) throws {
        let scenario = try Scenario(kind, policy: .overwrite)
        scenario.mine.salary = 200
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(200))
        #expect(try scenario.stored("lastName") == .string("Lovelace"))
        #expect(scenario.mine.lastName == "Lovelace")
        #expect(scenario.storedVersion == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func rollbackDiscardsMyChangesForTheStoresRow(_ kind: StoreKind) throws {
        let scenario = try Scenario(kind, policy: .rollback)
        scenario.mine.salary = 200
        scenario.mine.firstName = "Augusta"
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(300))
        #expect(try scenario.stored("firstName") == .string("Ada"))
        #expect(scenario.mine.salary == 300 && scenario.mine.firstName == "Ada" && scenario.mine.lastName == "Byron")
        #expect(!scenario.mine.hasChanges && !scenario.context.hasChanges)
        #expect(scenario.storedVersion == 2)  // nothing left to write
    }

    @Test(arguments: StoreKind.allCases)
    func policiesOnlyTouchConflictingObjects(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("Ada", "Lovelace", 100), ("Grace", "Hopper", 100)])
        let context = stack.context()
        context.mergePolicy = .rollback
        let ada = try employee(ids[0], in: context)
        let grace = try employee(ids[1], in: context)
        let other = stack.context()
        try employee(ids[0], in: other).salary = 300
        try other.save()
        ada.salary = 200
        grace.salary = 200
        try context.save()
        #expect(try stack.storedValues("GraphEmployee", "salary") == [.integer(300), .integer(200)])
    }

    @Test(arguments: StoreKind.allCases)
    func binaryValuesKeptOutsideTheRowMerge(_ kind: StoreKind) throws {
        let big = Data(repeating: 7, count: 40_000)
        let scenario = try Scenario(kind, policy: .mergeByPropertyStoreTrump) { $0.photo = big }
        scenario.mine.salary = 200
        try scenario.context.save()
        #expect(try scenario.stored("salary") == .integer(200))
        #expect(scenario.mine.photo == big)
        let fresh = try employee(scenario.id, in: scenario.stack.context())
        #expect(fresh.photo == big && fresh.salary == 200)
    }

    // MARK: - Deleted rows

    /// They deleted the row; mine updated it.
    @Test(arguments: StoreKind.allCases)
    func updateOfARowDeletedInTheStore(_ kind: StoreKind) throws {
        for policy in [
            MergePolicy.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback,
        ] {
            let stack = try TestStack(kind)
            let id = try seedAda(stack)
            let context = stack.context()
            context.mergePolicy = policy
            let mine = try employee(id, in: context)
            let other = stack.context()
            other.delete(try other.existingObject(with: id))
            try other.save()
            mine.salary = 200
            switch policy.type {
            case .mergeByPropertyStoreTrump, .rollback:
                // The deletion wins: the object leaves the context.
                try context.save()
                #expect(mine.managedObjectContext == nil, "\(policy)")
                #expect(context.registeredObject(for: id) == nil)
                #expect(!context.hasChanges)
            default:
                // An object cannot be written back to a row that is gone.
                let conflicts = try #require(Self.mergeConflicts { try context.save() }, "\(policy)")
                #expect(conflicts.map(\.objectID) == [id])
                #expect(conflicts.first?.persistedSnapshot == nil)
                #expect(conflicts.first?.cachedSnapshot.version == 1)
                #expect(mine.isUpdated && mine.salary == 200)
            }
            #expect(try stack.storedRows("GraphEmployee").isEmpty)
        }
    }

    /// Mine deleted the row; they updated it.
    @Test(arguments: StoreKind.allCases)
    func deletionOfARowUpdatedInTheStore(_ kind: StoreKind) throws {
        for policy in [
            MergePolicy.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback,
        ] {
            let scenario = try Scenario(kind, policy: policy)
            scenario.context.delete(scenario.mine)
            switch policy.type {
            case .error:
                let conflicts = try #require(Self.mergeConflicts { try scenario.context.save() })
                #expect(conflicts.count == 1)
                #expect(conflicts.first?.isDeletion == true)
                #expect(conflicts.first?.changedKeys == [])
                #expect(conflicts.first?.objectSnapshot == nil)
                #expect(conflicts.first?.persistedSnapshot?["lastName"] == .string("Byron"))
                #expect(scenario.mine.isDeleted)
                #expect(try scenario.stack.storedRows("GraphEmployee").count == 1)
            case .mergeByPropertyStoreTrump, .rollback:
                // Their update wins over the deletion: the object stays, as the row now is.
                try scenario.context.save()
                #expect(!scenario.mine.isDeleted, "\(policy)")
                #expect(scenario.mine.lastName == "Byron" && scenario.mine.salary == 300)
                #expect(try scenario.stored("lastName") == .string("Byron"))
                #expect(!scenario.context.hasChanges)
            default:
                // The deletion wins.
                try scenario.context.save()
                #expect(try scenario.stack.storedRows("GraphEmployee").isEmpty, "\(policy)")
                #expect(scenario.mine.managedObjectContext == nil)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletionOfARowDeletedInTheStoreIsDone(_ kind: StoreKind) throws {
        for policy in [
            MergePolicy.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback,
        ] {
            let stack = try TestStack(kind)
            let id = try seedAda(stack)
            let context = stack.context()
            context.mergePolicy = policy
            let mine = try employee(id, in: context)
            let other = stack.context()
            other.delete(try other.existingObject(with: id))
            try other.save()
            context.delete(mine)
            if policy == .error {
                let conflicts = try #require(Self.mergeConflicts { try context.save() })
                #expect(conflicts.first?.isDeletion == true && conflicts.first?.persistedSnapshot == nil)
            } else {
                try context.save()
                #expect(!context.hasChanges && mine.managedObjectContext == nil, "\(policy)")
            }
        }
    }

    // MARK: - Relationships

    /// Ada and Grace in Research; Sales exists too.
    struct DepartmentScenario {
        let stack: TestStack
        let ids: (ada: ManagedObjectID, grace: ManagedObjectID, research: ManagedObjectID, sales: ManagedObjectID)

        init(_ kind: StoreKind) throws {
            stack = try TestStack.relationships(kind)
            let context = stack.context()
            let research = RelDepartment(context: context)
            research.name = "Research"
            let sales = RelDepartment(context: context)
            sales.name = "Sales"
            let ada = RelEmployee(context: context)
            ada.name = "Ada"
            ada.department = research
            let grace = RelEmployee(context: context)
            grace.name = "Grace"
            grace.department = research
            try context.save()
            ids = (ada.objectID, grace.objectID, research.objectID, sales.objectID)
        }

        func object<T: ManagedObject>(_ id: ManagedObjectID, in context: ManagedObjectContext) throws -> T {
            try #require(try context.existingObject(with: id) as? T)
        }
    }

    /// A to-one is part of the row: they moved Ada to Sales, mine renamed her.
    @Test(arguments: StoreKind.allCases)
    func toOneMergesLikeAnAttribute(_ kind: StoreKind) throws {
        for policy in [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback] {
            let scenario = try DepartmentScenario(kind)
            let context = scenario.stack.context()
            context.mergePolicy = policy
            let ada: RelEmployee = try scenario.object(scenario.ids.ada, in: context)
            let research: RelDepartment = try scenario.object(scenario.ids.research, in: context)
            #expect(research.employees.count == 2)
            let other = scenario.stack.context()
            let theirAda: RelEmployee = try scenario.object(scenario.ids.ada, in: other)
            theirAda.department = try scenario.object(scenario.ids.sales, in: other)
            try other.save()

            ada.name = "Augusta"
            try context.save()
            let check = scenario.stack.context()
            let saved: RelEmployee = try scenario.object(scenario.ids.ada, in: check)
            let expected = policy == .overwrite ? "Research" : "Sales"
            #expect(saved.department?.name == expected, "\(policy)")
            #expect(saved.name == (policy == .rollback ? "Ada" : "Augusta"), "\(policy)")
            #expect(ada.department?.name == expected, "\(policy)")
            // The in-memory inverse follows.
            #expect(research.employees.contains(ada) == (policy == .overwrite), "\(policy)")
        }
    }

    /// Both changed the to-one: they moved Ada to Sales, mine moved her out of any department.
    @Test(arguments: StoreKind.allCases)
    func toOneChangedOnBothSides(_ kind: StoreKind) throws {
        for policy in [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump] {
            let scenario = try DepartmentScenario(kind)
            let context = scenario.stack.context()
            context.mergePolicy = policy
            let ada: RelEmployee = try scenario.object(scenario.ids.ada, in: context)
            let other = scenario.stack.context()
            let theirAda: RelEmployee = try scenario.object(scenario.ids.ada, in: other)
            theirAda.department = try scenario.object(scenario.ids.sales, in: other)
            try other.save()

            ada.department = nil
            try context.save()
            let check = scenario.stack.context()
            let saved: RelEmployee = try scenario.object(scenario.ids.ada, in: check)
            #expect(
                saved.department?.name == (policy == .mergeByPropertyStoreTrump ? "Sales" : nil), "\(policy)")
            #expect(ada.department?.name == saved.department?.name)
        }
    }

    /// A many-to-many (join table): they tagged the post "swift" and untagged "old"; mine tagged it "linux".
    @Test(arguments: StoreKind.allCases)
    func joinTableToManyMergesMemberByMember(_ kind: StoreKind) throws {
        for policy in [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback] {
            let stack = try TestStack.relationships(kind)
            let seed = stack.context()
            let post = insertObject("RelPost", into: seed)
            var tags: [String: ManagedObject] = [:]
            for name in ["old", "swift", "linux"] {
                let tag = insertObject("RelTag", into: seed)
                try tag.setValue(name, forKey: "name")
                if name == "old" { try post.mutableSetValue(forKey: "tags").insert(tag) }
                tags[name] = tag
            }
            try post.setValue("Hello", forKey: "title")
            try seed.save()
            let tagIDs = tags.mapValues(\.objectID)
            let postID = post.objectID

            let context = stack.context()
            context.mergePolicy = policy
            let mine = try context.existingObject(with: postID)
            #expect(try mine.mutableSetValue(forKey: "tags").count == 1)
            let other = stack.context()
            let theirs = try other.existingObject(with: postID)
            try theirs.mutableSetValue(forKey: "tags").insert(other.existingObject(with: tagIDs["swift"]!))
            try theirs.mutableSetValue(forKey: "tags").remove(other.existingObject(with: tagIDs["old"]!))
            try other.save()

            try mine.mutableSetValue(forKey: "tags").insert(context.existingObject(with: tagIDs["linux"]!))
            try context.save()

            let check = stack.context()
            let saved = try check.existingObject(with: postID)
            let names = Set(
                try saved.mutableSetValue(forKey: "tags").objects.map { try $0.value(forKey: "name") as? String })
            let expected: Set<String?> =
                switch policy.type {
                case .overwrite: ["old", "linux"]
                case .rollback: ["swift"]
                default: ["swift", "linux"]
                }
            #expect(names == expected, "\(policy)")
        }
    }

    // MARK: - Retry

    /// A save that resolves conflicts runs willSave again on the merged object (as Core Data re-runs it for the
    /// objects resolution changes, issue 19), didSave once, and validates the merged values.
    @Test(arguments: StoreKind.allCases)
    func resolvedSaveRunsWillSaveAgainOnTheMergedObjectAndValidatesIt(_ kind: StoreKind) throws {
        let scenario = try Scenario(kind, policy: .mergeByPropertyObjectTrump)
        scenario.mine.events = []
        scenario.mine.firstName = "Augusta"
        try scenario.context.save()
        #expect(scenario.mine.events == ["willSave", "willSave", "didSave"])
        #expect(try scenario.stored("firstName") == .string("Augusta"))
    }
}

/// A plain managed object of an entity without a class of its own, inserted into `context`.
private func insertObject(_ entityName: String, into context: ManagedObjectContext) -> ManagedObject {
    ManagedObject(entity: context.coordinator.model.entity(named: entityName)!, insertInto: context)
}
