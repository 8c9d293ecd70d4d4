import Foundation
import Testing

@testable import Strata

/// Derived attributes (Core Data's `NSDerivedAttributeDescription`): computed by each save, on both stores.
@Suite struct DerivedAttributeTests {
    static let model = try! ManagedObjectModel {
        Entity("DerivedDepartment") {
            Attribute("name", .string)
            Attribute("headcount", .integer16).derived("staff.@count")
            Attribute("payroll", .integer64).derived("staff.salary.@sum")
            Attribute("topSalary", .integer64).derived("staff.salary.@max")
            Attribute("lowestSalary", .integer64).derived("staff.salary.@min")
            Attribute("averageSalary", .double).derived("staff.salary.@avg")
            Attribute("touched", .date).derived("now()")
            Relationship.toMany("staff", "DerivedEmployee", inverse: "department")
        }
        Entity("DerivedEmployee") {
            Attribute("name", .string)
            Attribute("salary", .integer64)
            Attribute("departmentName", .string).derived("department.name")
            Relationship.toOne("department", "DerivedDepartment", inverse: "staff")
        }
    }

    private func value(_ object: ManagedObject, _ key: String) throws -> AttributeValue? {
        try object.attributeValue(forKey: key)
    }

    private func insert(
        _ entity: String, _ context: ManagedObjectContext, _ values: [String: Any]
    ) throws
        -> ManagedObject
    {
        let object = ManagedObject(entity: Self.model.entity(named: entity)!, insertInto: context)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    @Test(arguments: StoreKind.allCases)
    func aggregatesKeyPathsAndNowAreComputedAtSave(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: Self.model)
        let context = stack.context()
        let research = try insert("DerivedDepartment", context, ["name": "Research"])
        let ada = try insert("DerivedEmployee", context, ["name": "Ada", "salary": Int64(120), "department": research])
        _ = try insert("DerivedEmployee", context, ["name": "Bob", "salary": Int64(80), "department": research])
        #expect(try value(research, "headcount") == nil)  // nothing is computed before the save
        let before = Date()
        try context.save()
        #expect(try value(research, "headcount") == .integer(2))
        #expect(try value(research, "payroll") == .integer(200))
        #expect(try value(research, "topSalary") == .integer(120))
        #expect(try value(research, "lowestSalary") == .integer(80))
        #expect(try value(research, "averageSalary") == .double(100))
        guard case .date(let touched) = try value(research, "touched") else {
            Issue.record("now() gave no date")
            return
        }
        #expect(touched >= before && touched <= Date())
        #expect(try value(ada, "departmentName") == .string("Research"))

        // A member's change alone recomputes its owner's aggregates, and the store keeps them.
        try ada.setValue(Int64(200), forKey: "salary")
        try context.save()
        let fresh = stack.context()
        let stored = try fresh.existingObject(with: research.objectID)
        #expect(try value(stored, "payroll") == .integer(280))
        #expect(try value(stored, "topSalary") == .integer(200))

        // Deleting a member and emptying the relationship.
        context.delete(ada)
        try context.save()
        #expect(try value(research, "headcount") == .integer(1))
        #expect(try value(research, "payroll") == .integer(80))
        for member in try research.value(forKey: "staff") as! Set<ManagedObject> { context.delete(member) }
        try context.save()
        #expect(try value(research, "headcount") == .integer(0))
        #expect(try value(research, "payroll") == .integer(0))
        #expect(try value(research, "topSalary") == nil)
        #expect(try value(research, "averageSalary") == nil)
    }

    /// Batch requests keep derived values as a save does (Core Data's store does it with triggers): an updated or
    /// deleted member recomputes its owner's aggregates, an owner's change recomputes its members' key paths, and an
    /// inserted row gets its own values; an owner whose values did not change is not written.
    @Test(arguments: StoreKind.allCases)
    func batchRequestsKeepDerivedValues(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: Self.model)
        let context = stack.context()
        let research = try insert("DerivedDepartment", context, ["name": "Research"])
        let sales = try insert("DerivedDepartment", context, ["name": "Sales"])
        let ada = try insert("DerivedEmployee", context, ["name": "Ada", "salary": Int64(120), "department": research])
        let bob = try insert("DerivedEmployee", context, ["name": "Bob", "salary": Int64(80), "department": research])
        _ = try insert("DerivedEmployee", context, ["name": "Cy", "salary": Int64(50), "department": sales])
        try context.save()
        func stored(_ object: ManagedObject, _ key: String) throws -> AttributeValue? {
            try value(try stack.context().existingObject(with: object.objectID), key)
        }
        func version(_ object: ManagedObject) throws -> UInt64 {
            let rowID = try #require(object.objectID.rowID)
            return try #require(try stack.coordinator.persistentStores[0].row(rowID, of: object.entity)).version
        }
        let salesVersion = try version(sales)

        // A member's attribute: its owner's aggregates follow; another department is not written.
        let raise = BatchUpdateRequest(
            entityName: "DerivedEmployee", predicate: try ObjectPredicate(format: "name == 'Bob'"),
            propertiesToUpdate: ["salary": Int64(300)])
        #expect(try context.execute(raise).count == 1)
        #expect(try stored(research, "payroll") == .integer(420))
        #expect(try stored(research, "topSalary") == .integer(300))
        #expect(try stored(research, "lowestSalary") == .integer(120))
        #expect(try stored(research, "averageSalary") == .double(210))
        #expect(try stored(research, "headcount") == .integer(2))
        #expect(try version(sales) == salesVersion)

        // An owner's attribute: the key paths of its members follow; its own now() is the batch's date.
        let before = Date()
        let rename = BatchUpdateRequest(
            entityName: "DerivedDepartment", predicate: try ObjectPredicate(format: "name == 'Research'"),
            propertiesToUpdate: ["name": "R&D"])
        #expect(try context.execute(rename).count == 1)
        #expect(try stored(ada, "departmentName") == .string("R&D"))
        #expect(try stored(bob, "departmentName") == .string("R&D"))
        guard case .date(let touched) = try stored(research, "touched") else {
            Issue.record("now() gave no date")
            return
        }
        #expect(touched >= before && touched <= Date())

        // A deleted member leaves its owner's aggregates.
        let fire = BatchDeleteRequest(
            entityName: "DerivedEmployee", predicate: try ObjectPredicate(format: "name == 'Ada'"))
        #expect(try context.execute(fire).count == 1)
        #expect(try stored(research, "headcount") == .integer(1))
        #expect(try stored(research, "payroll") == .integer(300))
        #expect(try stored(research, "lowestSalary") == .integer(300))
        #expect(try version(sales) == salesVersion)

        // Inserted rows: no members yet, no department to read; now() set.
        let insertion = BatchInsertRequest(
            entityName: "DerivedDepartment", objects: [["name": "Empty", "headcount": Int64(7)]])
        insertion.resultType = .objectIDs
        let empty = try stack.context().existingObject(with: try context.execute(insertion).objectIDs[0])
        #expect(try value(empty, "headcount") == .integer(0))
        #expect(try value(empty, "payroll") == .integer(0))
        #expect(try value(empty, "topSalary") == nil)
        #expect(try value(empty, "averageSalary") == nil)
        guard case .date = try value(empty, "touched") else {
            Issue.record("a batch insert gave now() no date")
            return
        }
        let loner = BatchInsertRequest(entityName: "DerivedEmployee", objects: [["name": "Dee", "salary": Int64(1)]])
        loner.resultType = .objectIDs
        let dee = try stack.context().existingObject(with: try context.execute(loner).objectIDs[0])
        #expect(try value(dee, "departmentName") == nil)
    }

    @Test func anOwnerWhoseDerivedValuesDidNotChangeIsNotWritten() throws {
        let stack = try TestStack(.inMemory, model: Self.model)
        let context = stack.context()
        let research = try insert("DerivedDepartment", context, ["name": "Research"])
        let ada = try insert("DerivedEmployee", context, ["name": "Ada", "salary": Int64(1), "department": research])
        try context.save()
        try ada.setValue("Ada L.", forKey: "name")
        // The owner is recomputed (its staff changed) but its values are the same: only Ada is saved.
        try context.processPendingChanges()
        try context.updateDerivedAttributes(now: Date())
        #expect(context.updatedObjects == [ada])
    }

    @Test func integerAggregatesThatOverflowFailTheSave() throws {
        let stack = try TestStack(.inMemory, model: Self.model)
        let context = stack.context()
        let research = try insert("DerivedDepartment", context, ["name": "Research"])
        for name in ["A", "B", "C"] {
            _ = try insert("DerivedEmployee", context, ["name": name, "salary": Int64(20000), "department": research])
        }
        // headcount is an Integer 16 and fits; the salaries' @sum fits 64 bits. Now push @sum beyond Int64.
        _ = try insert("DerivedEmployee", context, ["name": "D", "salary": Int64.max, "department": research])
        #expect(throws: ValidationError.self) { try context.save() }
    }

    @Test func theBuilderRefusesDerivationsItCannotCompute() {
        func refuses(_ attribute: Attribute, _ fragment: String) {
            do {
                _ = try ManagedObjectModel {
                    Entity("A") {
                        Attribute("name", .string)
                        attribute
                        Relationship.toMany("bs", "B", inverse: "a")
                        Relationship.toOne("parent", "A")
                    }
                    Entity("B") {
                        Attribute("size", .integer32)
                        Attribute("label", .string)
                        Relationship.toOne("a", "A", inverse: "bs")
                    }
                }
                Issue.record("\(attribute.derivationExpression ?? "") was accepted")
            } catch {
                guard case .invalidDerivation(_, _, _, let reason) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(reason.contains(fragment), "\(reason)")
            }
        }
        refuses(Attribute("x", .string).derived("bs.@count"), "aggregate gives a number")
        refuses(Attribute("x", .integer64).derived("now()"), "Date")
        refuses(Attribute("x", .string).derived("bs.label"), "not a to-one")
        refuses(Attribute("x", .integer64).derived("bs.label.@sum"), "numeric")
        refuses(Attribute("x", .integer64).derived("name.@count"), "to-many")
        refuses(Attribute("x", .string).derived("parent.missing"), "not another attribute")
        refuses(Attribute("x", .string).derived("name ++ name"), "Strata computes")
        refuses(Attribute("x", .string).derived("uppercase:(name)"), "Strata computes")
        refuses(Attribute("x", .string).derived("name").transient(), "stored")
    }
}
