import Foundation
import Strata
import StrataStorage
import Testing

/// Uniqueness constraints: the model DSL, and the checks at save (within one save and against the store) with
/// each merge policy, on both store kinds.
@Suite struct UniquenessConstraintTests {
    static func entities(personConstraints: [[String]] = [["email"]]) -> [Entity] {
        [
            Entity("UniqPerson", uniquenessConstraints: personConstraints) {
                Attribute("email", .string)
                Attribute("name", .string)
                Attribute("nickname", .string)
                Attribute("scratch", .string).transient()
                Relationship.toOne("team", "UniqTeam", inverse: "members")
            },
            Entity("UniqStudent", parent: "UniqPerson", uniquenessConstraints: [["school", "number"]]) {
                Attribute("school", .string)
                Attribute("number", .integer64)
            },
            Entity("UniqTeam") {
                Attribute("name", .string)
                Relationship.toMany("members", "UniqPerson", inverse: "team")
            },
        ]
    }

    static let model = try! ManagedObjectModel(entities: entities())

    static func stack(_ kind: StoreKind) throws -> TestStack { try TestStack(kind, model: model) }

    /// Inserts an object with attribute values.
    @discardableResult
    static func insert(
        _ entity: String, _ values: [String: Any?], into context: ManagedObjectContext
    ) throws
        -> ManagedObject
    {
        let object = ManagedObject(entity: context.coordinator.model.entity(named: entity)!, insertInto: context)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// The conflicts of a failed save (nil when it did not fail with constraintConflicts).
    static func constraintConflicts(_ body: () throws -> Void) -> [ConstraintConflict]? {
        if case .constraintConflicts(let conflicts)? = objectGraphError(body) { return conflicts }
        return nil
    }

    /// Every stored person's value of `key`, in row order.
    static func stored(_ stack: TestStack, _ key: String) throws -> [String?] {
        try stack.storedValues("UniqPerson", key).map { value in
            if case .string(let string)? = value { return string }
            return nil
        }
    }

    // MARK: - Model

    @Test func constraintsAreBuiltAndInheritedBySubentities() throws {
        let person = try #require(Self.model.entity(named: "UniqPerson"))
        let student = try #require(Self.model.entity(named: "UniqStudent"))
        #expect(person.uniquenessConstraints.map(\.attributeNames) == [["email"]])
        #expect(student.uniquenessConstraints.map(\.attributeNames) == [["email"], ["school", "number"]])
        #expect(student.uniquenessConstraints[0].entity === person)
        #expect(student.uniquenessConstraints[0] == person.uniquenessConstraints[0])
        #expect("\(student.uniquenessConstraints[1])" == "UniqStudent[school, number]")
        #expect(Entity("X", uniquenessConstraints: [["a"]]).uniquenessConstraints == [["a"]])
    }

    @Test func invalidConstraintsAreModelErrors() {
        for (constraint, reason) in [
            (["missing"], "not an attribute"), (["scratch"], "transient"), ([], "names no attribute"),
            (["email", "email"], "twice"), (["team"], "not an attribute"),
        ] {
            #expect {
                try ManagedObjectModel(entities: Self.entities(personConstraints: [constraint]))
            } throws: { error in
                guard case .invalidUniquenessConstraint(let entity, let attributes, _) = error as? ModelError else {
                    return false
                }
                return entity == "UniqPerson" && attributes == constraint && "\(error)".contains(reason)
            }
        }
    }

    @Test func constraintsArePartOfTheVersionHashOfTheirEntityOnly() throws {
        let without = try ManagedObjectModel(entities: Self.entities(personConstraints: []))
        #expect(without.versionHash != Self.model.versionHash)
        #expect(without.entityVersionHashesByName["UniqPerson"] != Self.model.entityVersionHashesByName["UniqPerson"])
        #expect(without.entityVersionHashesByName["UniqTeam"] == Self.model.entityVersionHashesByName["UniqTeam"])
    }

    @Test func strataStoreCreatesOneIndexPerConstraint() throws {
        let stack = try Self.stack(.strata)
        let snapshot = try #require(stack.store as? StrataStore).engine.snapshot()
        #expect(snapshot.index(named: "unique.UniqPerson.email") != nil)
        #expect(snapshot.index(named: "unique.UniqStudent.school+number") != nil)
    }

    // MARK: - Error policy

    @Test(arguments: StoreKind.allCases)
    func duplicatesWithinOneSaveFail(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let context = stack.context()
        let first = try Self.insert("UniqPerson", ["email": "ada@example.com"], into: context)
        let second = try Self.insert("UniqPerson", ["email": "ada@example.com"], into: context)
        try Self.insert("UniqPerson", ["email": "grace@example.com"], into: context)
        let conflicts = try #require(Self.constraintConflicts { try context.save() })
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.constraint.attributeNames == ["email"])
        #expect(conflict.values == ["email": .string("ada@example.com")])
        #expect(conflict.objectIDs == [first.objectID, second.objectID])
        #expect(conflict.databaseObjectID == nil && conflict.databaseSnapshot == nil)
        #expect(context.registeredObject(for: conflict.objectIDs[1]) === second)
        #expect("\(ObjectGraphError.constraintConflicts(conflicts))".contains("ada@example.com"))
        #expect(try stack.storedRows("UniqPerson").isEmpty)
        #expect(context.insertedObjects.count == 3)

        // Fixed, the save goes through.
        try second.setValue("augusta@example.com", forKey: "email")
        try context.save()
        #expect(try stack.storedRows("UniqPerson").count == 3)
    }

    /// A save that has both kinds of conflict reports the version conflict: a model with uniqueness constraints
    /// keeps the save's version check before the constraint check, also with one store (whose write would
    /// otherwise find the version conflict after the constraints were checked).
    @Test(arguments: StoreKind.allCases)
    func versionConflictsAreReportedBeforeConstraintConflicts(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let seed = stack.context()
        let ada = try Self.insert("UniqPerson", ["email": "ada@example.com", "name": "Ada"], into: seed)
        try Self.insert("UniqPerson", ["email": "grace@example.com"], into: seed)
        try seed.save()
        let mine = stack.context()
        let myAda = try mine.existingObject(with: ada.objectID)
        _ = try myAda.value(forKey: "name")
        let theirs = stack.context()
        try theirs.existingObject(with: ada.objectID).setValue("Augusta", forKey: "name")
        try theirs.save()

        try myAda.setValue("Ada L.", forKey: "name")
        try Self.insert("UniqPerson", ["email": "grace@example.com"], into: mine)
        let error = objectGraphError { try mine.save() }
        #expect(error?.isOptimisticLockingConflict == true)
        #expect(error?.objectIDs == [ada.objectID])
        #expect(try Self.stored(stack, "name").contains("Augusta"))
        #expect(try stack.storedRows("UniqPerson").count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func duplicateOfAStoredRowFails(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let seed = stack.context()
        let ada = try Self.insert("UniqPerson", ["email": "ada@example.com", "name": "Ada"], into: seed)
        try seed.save()

        let context = stack.context()
        let copy = try Self.insert("UniqPerson", ["email": "ada@example.com", "name": "Augusta"], into: context)
        let conflict = try #require(Self.constraintConflicts { try context.save() }?.first)
        #expect(conflict.objectIDs == [copy.objectID])
        #expect(conflict.databaseObjectID == ada.objectID)
        #expect(conflict.databaseSnapshot?["name"] == .string("Ada"))
        #expect(try Self.stored(stack, "name") == ["Ada"])
    }

    @Test(arguments: StoreKind.allCases)
    func compositeConstraintsAndSubentitiesInheritTheirParentsConstraint(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let seed = stack.context()
        try Self.insert("UniqPerson", ["email": "ada@example.com"], into: seed)
        try Self.insert("UniqStudent", ["school": "Eton", "number": 1], into: seed)
        try seed.save()

        let context = stack.context()
        // Same school, another number; another school, same number: both fine.
        try Self.insert("UniqStudent", ["school": "Eton", "number": 2], into: context)
        try Self.insert("UniqStudent", ["school": "Harrow", "number": 1], into: context)
        try context.save()

        let duplicate = try Self.insert("UniqStudent", ["school": "Eton", "number": 1], into: context)
        let conflicts = try #require(Self.constraintConflicts { try context.save() })
        #expect(conflicts.map(\.constraint.attributeNames) == [["school", "number"]])
        #expect(conflicts.first?.values == ["school": .string("Eton"), "number": .integer(1)])
        context.delete(duplicate)

        // A student shares the person constraint with persons.
        try Self.insert("UniqStudent", ["email": "ada@example.com", "school": "Eton", "number": 3], into: context)
        let inherited = try #require(Self.constraintConflicts { try context.save() })
        #expect(inherited.map(\.constraint.attributeNames) == [["email"]])
        #expect(inherited.first?.databaseObjectID?.entity.name == "UniqPerson")
    }

    @Test(arguments: StoreKind.allCases)
    func nilValuesNeverConflict(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let context = stack.context()
        try Self.insert("UniqPerson", ["name": "A"], into: context)
        try Self.insert("UniqPerson", ["name": "B"], into: context)
        try Self.insert("UniqStudent", ["school": "Eton"], into: context)
        try Self.insert("UniqStudent", ["school": "Eton"], into: context)
        try context.save()
        #expect(try stack.storedRows("UniqPerson").count == 4)
    }

    @Test(arguments: StoreKind.allCases)
    func swappedValuesAndAReplacedRowAreNotConflicts(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let seed = stack.context()
        let a = try Self.insert("UniqPerson", ["email": "a"], into: seed)
        let b = try Self.insert("UniqPerson", ["email": "b"], into: seed)
        let c = try Self.insert("UniqPerson", ["email": "c"], into: seed)
        try seed.save()

        let context = stack.context()
        try context.existingObject(with: a.objectID).setValue("b", forKey: "email")
        try context.existingObject(with: b.objectID).setValue("a", forKey: "email")
        context.delete(try context.existingObject(with: c.objectID))
        try Self.insert("UniqPerson", ["email": "c"], into: context)
        try context.save()
        #expect(Set(try Self.stored(stack, "email")) == ["a", "b", "c"])
    }

    // MARK: - Policies against a stored row

    /// Ada (nickname "Countess", no team) is stored; a new object with her email, name "Augusta", no nickname,
    /// in team Analytical, is saved.
    @Test(arguments: StoreKind.allCases)
    func eachPolicyOnADuplicateOfAStoredRow(_ kind: StoreKind) throws {
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump, .rollback] {
            let stack = try Self.stack(kind)
            let seed = stack.context()
            let ada = try Self.insert(
                "UniqPerson", ["email": "ada@example.com", "name": "Ada", "nickname": "Countess"], into: seed)
            try seed.save()

            let context = stack.context()
            context.mergePolicy = policy
            let team = try Self.insert("UniqTeam", ["name": "Analytical"], into: context)
            let copy = try Self.insert(
                "UniqPerson", ["email": "ada@example.com", "name": "Augusta", "team": team], into: context)
            try context.save()

            #expect(try stack.storedRows("UniqPerson").count == 1, "\(policy)")
            #expect(copy.managedObjectContext == nil && !context.hasChanges, "\(policy)")
            let check = stack.context()
            let saved = try check.existingObject(with: ada.objectID)
            let (name, nickname) = (try saved.value(forKey: "name"), try saved.value(forKey: "nickname"))
            let teamName = try saved.value(forKeyPath: "team.name") as? String
            switch policy.type {
            case .mergeByPropertyObjectTrump:
                #expect(name as? String == "Augusta" && nickname as? String == "Countess")
            case .overwrite:
                #expect(name as? String == "Augusta" && nickname == nil)
            default:
                #expect(name as? String == "Ada" && nickname as? String == "Countess", "\(policy)")
            }
            #expect(teamName == (policy == .rollback ? nil : "Analytical"), "\(policy)")
            // The team's members are the survivor, not the dropped copy.
            let members = try team.mutableSetValue(forKey: "members").objects
            #expect(members.map(\.objectID) == (policy == .rollback ? [] : [ada.objectID]), "\(policy)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storeTrumpKeepsTheStoredRowsToOne(_ kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let seed = stack.context()
        let babbage = try Self.insert("UniqTeam", ["name": "Babbage"], into: seed)
        let ada = try Self.insert("UniqPerson", ["email": "ada@example.com", "team": babbage], into: seed)
        try seed.save()

        let context = stack.context()
        context.mergePolicy = .mergeByPropertyStoreTrump
        let team = try Self.insert("UniqTeam", ["name": "Analytical"], into: context)
        try Self.insert("UniqPerson", ["email": "ada@example.com", "team": team], into: context)
        try context.save()
        let check = stack.context()
        #expect(try check.existingObject(with: ada.objectID).value(forKeyPath: "team.name") as? String == "Babbage")
    }

    // MARK: - Policies within one save

    @Test(arguments: StoreKind.allCases)
    func duplicatesWithinOneSaveMergeIntoTheFirstInserted(_ kind: StoreKind) throws {
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump, .rollback] {
            let stack = try Self.stack(kind)
            let context = stack.context()
            context.mergePolicy = policy
            let first = try Self.insert(
                "UniqPerson", ["email": "ada@example.com", "name": "First", "nickname": "One"], into: context)
            let second = try Self.insert("UniqPerson", ["email": "ada@example.com", "name": "Second"], into: context)
            try context.save()
            #expect(try Self.stored(stack, "email") == ["ada@example.com"], "\(policy)")
            #expect(!first.objectID.isTemporaryID && second.managedObjectContext == nil)
            let trumps = policy == .mergeByPropertyObjectTrump || policy == .overwrite
            #expect(try Self.stored(stack, "name") == [trumps ? "Second" : "First"], "\(policy)")
            #expect(try Self.stored(stack, "nickname") == [policy == .overwrite ? nil : "One"], "\(policy)")
        }
    }

    // MARK: - Updated objects

    /// Grace's email is changed to Ada's, with her name.
    @Test(arguments: StoreKind.allCases)
    func anUpdateTakingAStoredRowsValues(_ kind: StoreKind) throws {
        for policy in [
            MergePolicy.error, .mergeByPropertyObjectTrump, .overwrite, .mergeByPropertyStoreTrump, .rollback,
        ] {
            let stack = try Self.stack(kind)
            let seed = stack.context()
            let ada = try Self.insert("UniqPerson", ["email": "ada@example.com"], into: seed)
            let grace = try Self.insert("UniqPerson", ["email": "grace@example.com"], into: seed)
            try seed.save()

            let context = stack.context()
            context.mergePolicy = policy
            let mine = try context.existingObject(with: grace.objectID)
            try mine.setValue("ada@example.com", forKey: "email")
            try mine.setValue("Grace Hopper", forKey: "name")
            switch policy.type {
            case .mergeByPropertyStoreTrump, .rollback:
                // The object keeps its saved email; its other change is saved.
                try context.save()
                #expect(try mine.value(forKey: "email") as? String == "grace@example.com", "\(policy)")
                #expect(try Self.stored(stack, "email") == ["ada@example.com", "grace@example.com"])
                #expect(try Self.stored(stack, "name") == [nil, "Grace Hopper"])
            default:
                let conflict = try #require(Self.constraintConflicts { try context.save() }?.first, "\(policy)")
                #expect(conflict.objectIDs == [grace.objectID])
                #expect(conflict.databaseObjectID == ada.objectID)
                #expect(try mine.value(forKey: "email") as? String == "ada@example.com")
            }
        }
    }
}
