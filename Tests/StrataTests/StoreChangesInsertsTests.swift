import Strata
import Testing

/// A save's inserts as a store reads them (`StoreChanges.Inserts`): a context's made from its objects as the store
/// writes them, changes built by hand kept as entries; the row IDs come back as `InsertedRowIDs`. On every store.
@Suite struct StoreChangesInsertsTests {
    @Test(arguments: StoreKind.allCases)
    func interleavedInsertsNamingLaterOnesGetTheirOwnRowsAndReferences(_ kind: StoreKind) throws {
        // Employees and departments made in turn (no run of either table is longer than one), each employee naming
        // the department made after it and the employee made after it as its manager; one employee in the middle
        // has a permanent ID obtained before the save.
        var stack = try TestStack.relationships(kind)
        let context = stack.context()
        var employees: [RelEmployee] = []
        var departments: [RelDepartment] = []
        for index in 0..<40 {
            employees.append(try #require(try context.make("RelEmployee", ["name": "E\(index)"]) as? RelEmployee))
            departments.append(
                try #require(try context.make("RelDepartment", ["name": "D\(index)"]) as? RelDepartment))
        }
        for index in 0..<40 {
            employees[index].department = departments[(index + 1) % 40]
            employees[index].manager = employees[(index + 1) % 40]
        }
        try context.obtainPermanentIDs(for: [employees[20]])
        let obtained = employees[20].objectID
        try context.save()
        #expect(employees[20].objectID == obtained)
        let ids = employees.map(\.objectID) + departments.map(\.objectID)
        #expect(ids.allSatisfy { !$0.isTemporaryID })
        #expect(Set(ids).count == 80)
        // Each saved object settled with its references, and each row says the same.
        for index in 0..<40 {
            #expect(
                employees[index].committedValues(forKeys: ["department"])["department"] as? RelDepartment
                    === departments[(index + 1) % 40])
        }
        let names = employees.map(\.objectID)
        stack = try stack.reopened()
        let other = stack.context()
        for (index, id) in names.enumerated() {
            let read = try #require(try other.existingObject(with: id) as? RelEmployee)
            #expect(read.name == "E\(index)")
            #expect(read.department?.name == "D\((index + 1) % 40)")
            #expect(read.manager?.name == "E\((index + 1) % 40)")
        }
        #expect(try stack.storedRows("RelEmployee").count == 40)
        #expect(try stack.storedRows("RelDepartment").count == 40)
    }

    @Test(arguments: StoreKind.allCases)
    func changesBuiltByHandAreSavedWithTheRowIDsTheResultNames(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let employee = stack.entity("RelEmployee")
        let department = stack.entity("RelDepartment")
        let name = employee.attributesByName["name"]!.storageIndex!
        let reserved = try stack.store.allocateRowIDs(for: employee, count: 1)[0]
        func values(_ text: String, of entity: EntityDescription) -> [AttributeValue?] {
            var values = entity.persistentAttributes.map(\.defaultValue)
            values[entity.attributesByName["name"]!.storageIndex!] = .string(text)
            return values
        }
        var changes = StoreChanges()
        // The employee names the department inserted after it.
        var references = [ObjectReference?](repeating: nil, count: employee.toOneRelationships.count)
        references[employee.relationshipsByName["department"]!.toOneIndex!] = .inserted(1)
        changes.inserts = [
            StoreChanges.Insert(entity: employee, values: values("Ada", of: employee), rowID: nil)
        ]
        changes.inserts.append(
            StoreChanges.Insert(entity: department, values: values("R&D", of: department), rowID: nil))
        changes.inserts.append(
            StoreChanges.Insert(entity: employee, values: values("Grace", of: employee), rowID: reserved))
        // Changed in place after it was appended.
        changes.inserts[0].references = references
        #expect(changes.inserts.count == 3)
        let result = try stack.store.save(changes)
        #expect(result.insertedRowIDs.count == 3)
        #expect(result.insertedRowIDs[2] == reserved)
        #expect(result.insertedRowIDs[0] != reserved)
        let ada = try #require(try stack.store.row(result.insertedRowIDs[0], of: employee))
        #expect(ada.values[name] == .string("Ada"))
        #expect(ada.version == 1)
        #expect(
            ada.references[employee.relationshipsByName["department"]!.toOneIndex!]
                == StoredReference(entity: department, rowID: result.insertedRowIDs[1]))
        let departmentName = department.attributesByName["name"]!.storageIndex!
        #expect(
            try stack.store.row(result.insertedRowIDs[1], of: department)?.values[departmentName] == .string("R&D"))
        #expect(try stack.store.row(reserved, of: employee)?.values[name] == .string("Grace"))
    }
}
