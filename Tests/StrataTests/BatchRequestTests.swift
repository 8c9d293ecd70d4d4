import Foundation
import Strata
import Testing

@Suite struct BatchRequestTests {
    @Test(arguments: StoreKind.allCases)
    func batchInsertWritesRowsWithoutObjects(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: FetchTestModel.model)
        let context = stack.context()
        let insert = BatchInsertRequest(
            entityName: "FetchEmployee",
            objects: [
                ["serial": 1, "name": "Ada", "salary": 120], ["serial": 2, "name": "Bob"],
                ["serial": 3, "rating": 2.5],
            ])
        insert.resultType = .objectIDs
        let result = try context.execute(insert)
        #expect(result.count == 3 && result.objectIDs.count == 3)
        #expect(context.registeredObjects.isEmpty)
        let first = try #require(try context.existingObject(with: result.objectIDs[0]) as? FetchEmployee)
        #expect(first.name == "Ada" && first.salary == 120 && first.active)  // defaults for the rest
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try request.setPredicate(format: "rating == 2.5")
        #expect(try context.fetch(request).map(\.serial) == [3])

        let counted = try context.execute(BatchInsertRequest(entityName: "FetchEmployee", objects: [["serial": 4]]))
        #expect(counted.count == 1 && counted.objectIDs.isEmpty)
        #expect(throws: FetchRequestError.self) {
            try context.execute(BatchInsertRequest(entityName: "FetchEmployee", objects: [["serial": 5], ["nope": 1]]))
        }
        #expect(throws: FetchRequestError.self) {
            try context.execute(BatchInsertRequest(entityName: "FetchEmployee", objects: [["salary": "lots"]]))
        }
        #expect(try context.count(for: FetchRequest<FetchEmployee>(entityName: "FetchEmployee")) == 4)
    }

    @Test(arguments: StoreKind.allCases)
    func batchUpdateSetsValuesWhereThePredicateHolds(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let reader = stack.context()
        let all = try reader.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))
        let held = try #require(all.first { $0.salary > 200 })
        let update = BatchUpdateRequest(
            entityName: "FetchEmployee", predicate: try ObjectPredicate(format: "salary > 200"),
            propertiesToUpdate: ["active": false, "rating": nil])
        update.resultType = .objectIDs
        let writer = stack.context()
        let result = try writer.execute(update)
        let expected = all.filter { $0.salary > 200 }.map(\.objectID)
        #expect(result.count == expected.count && Set(result.objectIDs) == Set(expected))
        #expect(writer.registeredObjects.isEmpty)

        let fresh = stack.context()
        let check = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try check.setPredicate(format: "active == NO AND rating == nil")
        #expect(Set(try fresh.fetch(check).map(\.objectID)).isSuperset(of: expected))
        // The relationships and the other values are kept.
        let updated = try #require(try fresh.existingObject(with: held.objectID) as? FetchEmployee)
        #expect(updated.department?.objectID == held.department?.objectID && updated.salary == held.salary)
        // The rows have new versions: the stale object conflicts when its context saves it.
        held.name = "Stale"
        #expect(throws: ObjectGraphError.self) { try reader.save() }
        #expect(throws: FetchRequestError.self) {
            try writer.execute(BatchUpdateRequest(entityName: "FetchEmployee", propertiesToUpdate: ["salary": "x"]))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchDeleteRemovesRowsWhereThePredicateHolds(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let before = try context.count(for: FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))
        let delete = BatchDeleteRequest(
            entityName: "FetchEmployee", predicate: try ObjectPredicate(format: "department.name == 'Sales'"))
        delete.resultType = .objectIDs
        let result = try context.execute(delete)
        #expect(result.count > 0 && result.objectIDs.count == result.count)
        #expect(context.registeredObjects.isEmpty)
        let fresh = stack.context()
        #expect(try fresh.count(for: FetchRequest<FetchEmployee>(entityName: "FetchEmployee")) == before - result.count)
        let sales = FetchRequest<FetchDepartment>(entityName: "FetchDepartment")
        try sales.setPredicate(format: "name == 'Sales'")
        #expect(try fresh.fetch(sales).first?.employees.isEmpty == true)
        #expect(throws: ObjectGraphError.self) { try fresh.existingObject(with: result.objectIDs[0]) }

        let contractors = try fresh.fetch(FetchRequest<ManagedObjectID>(entityName: "FetchContractor"))
        let byIDs = try context.execute(BatchDeleteRequest(objectIDs: contractors))
        #expect(byIDs.count == contractors.count && byIDs.count > 0)
        #expect(try fresh.count(for: FetchRequest<FetchContractor>(entityName: "FetchContractor")) == 0)
    }
}

@Suite struct FetchIndexTests {
    @Test func indexedAttributesGetEngineIndexesAtOpen() throws {
        let stack = try FetchTestModel.savedStack(.strata)
        let store = try #require(stack.store as? StrataStore)
        let names = store.engine.snapshot().indexNames
        for name in [
            "attr.FetchEmployee.salary", "attr.FetchContractor.salary", "attr.FetchEmployee.serial",
            "attr.FetchEmployee.hired", "attr.FetchDepartment.name",
        ] { #expect(names.contains(name), "\(name)") }
        #expect(!names.contains("attr.FetchEmployee.name"))
    }

    /// Examined rows show which queries an index narrows: only candidates are read.
    @Test func comparisonsOnIndexedAttributesReadOnlyTheirRange() throws {
        let stack = try FetchTestModel.savedStack(.strata)
        let store = try #require(stack.store as? StrataStore)
        let context = stack.context()
        func examined(_ format: String, _ arguments: any QueryValueConvertible...) throws -> (rows: Int, results: Int) {
            let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
            request.predicate = try ObjectPredicate(format: format, arguments: arguments.map(\.queryValue))
            let before = store.rowsExamined
            let count = try context.fetch(request).count
            return (store.rowsExamined - before, count)
        }
        let all = FetchTestModel.employeeNames.count
        let equal = try examined("salary == 124")
        #expect(equal.rows == equal.results && equal.results > 0)
        let range = try examined("salary BETWEEN {100, 150} AND active == YES")
        #expect(range.rows < all && range.rows >= range.results)
        let prefix = try examined("serial IN {1, 2, 3, 99}")
        #expect(prefix.rows == 3 && prefix.results == 3)
        let related = try examined("department.name == 'Sales'")
        #expect(related.rows == related.results + 1 && related.results > 0)  // and the one department
        let scan = try examined("name BEGINSWITH 'A'")
        #expect(scan.rows == all)
        let mixed = try examined("salary > 100.5")  // a double against an integer attribute: filtered, not ranged
        #expect(mixed.rows == all)
        let identities = try examined(
            "SELF IN %@", try context.fetch(FetchRequest<ManagedObjectID>(entityName: "FetchContractor")))
        #expect(identities.rows == 4 && identities.results == 4)
    }

    @Test func indexesAreCreatedForAStoreThatHadNone() throws {
        let directory = temporaryStoreDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plain = try ManagedObjectModel(entities: [
            Entity("FetchPlain") { Attribute("value", .integer64) }
        ])
        do {
            let stack = try TestStack(.strata, model: plain, directory: directory)
            let context = stack.context()
            for value in 0..<50 { try context.insertObject("FetchPlain").setValue(value, forKey: "value") }
            try context.save()
            try stack.close()
        }
        let indexed = try ManagedObjectModel(entities: [
            Entity("FetchPlain") { Attribute("value", .integer64).indexed() }
        ])
        // Indexing is not part of the version hash: the same store opens and gets the index, built from its rows.
        let stack = try TestStack(.strata, model: indexed, directory: directory)
        let store = try #require(stack.store as? StrataStore)
        #expect(store.engine.snapshot().indexNames.contains("attr.FetchPlain.value"))
        let request = FetchRequest<ManagedObject>(entityName: "FetchPlain")
        try request.setPredicate(format: "value >= %d", 45)
        let before = store.rowsExamined
        #expect(try stack.context().fetch(request).count == 5)
        #expect(store.rowsExamined - before == 5)
    }
}

extension ManagedObjectContext {
    fileprivate func insertObject(_ entityName: String) -> ManagedObject {
        ManagedObject(entity: coordinator.model.entity(named: entityName)!, insertInto: self)
    }
}
