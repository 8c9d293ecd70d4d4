import Foundation
import Strata
import Testing

/// Writable store metadata, fetch requests limited to some stores, and committed values of relationships
/// (issue 22's small gaps), on both stores.
@Suite struct SmallGapsTests {
    @Test(arguments: StoreKind.allCases)
    func metadataIsWritableAndKeepsTheStoresOwnKeys(kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let original = stack.coordinator.metadata(for: stack.store)
        var metadata = original
        metadata["LastImport"] = "2026-11-25"
        metadata[PersistentStoreMetadataKey.storeUUID] = "not the store's"
        metadata.removeValue(forKey: PersistentStoreMetadataKey.modelVersionHash)
        try stack.coordinator.setMetadata(metadata, for: stack.store)
        var expected = original
        expected["LastImport"] = "2026-11-25"
        #expect(stack.store.metadata == expected)
        let reopened = try stack.reopened()
        #expect(reopened.store.metadata == expected)
        try reopened.coordinator.setMetadata([:], for: reopened.store)
        #expect(reopened.store.metadata == original)
        #expect(throws: ObjectGraphError.self) {
            try reopened.coordinator.setMetadata(["Huge": String(repeating: "x", count: 70_000)], for: reopened.store)
        }
        #expect(reopened.store.metadata == original)
    }

    @Test func aFetchSearchesOnlyItsAffectedStores() throws {
        let stack = try TestStack.relationships(.strata)
        let second = try stack.coordinator.addPersistentStore(.inMemory)
        let context = stack.context()
        let first = try context.make("RelDepartment", ["name": "First"])
        let other = try context.make("RelDepartment", ["name": "Second"])
        context.assign(other, to: second)
        let request = FetchRequest<ManagedObject>(entityName: "RelDepartment")
        request.sortKeys = [SortKey("name")]
        request.affectedStores = [second]
        // Pending inserts count by the store they will be saved in.
        #expect(try context.fetch(request) == [other])
        try context.save()
        #expect(try context.fetch(request) == [other])
        #expect(try context.count(for: request) == 1)
        request.affectedStores = [stack.store]
        #expect(try context.fetch(request) == [first])
        let names = FetchRequest<[String: Any]>(entityName: "RelDepartment")
        names.affectedStores = [second]
        #expect(try context.fetch(names).map { $0["name"] as? String } == ["Second"])
        request.affectedStores = nil
        #expect(try context.fetch(request) == [first, other])
    }

    @Test(arguments: StoreKind.allCases)
    func committedValuesIncludeRelationshipsAsObjects(kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        let research = try context.make("RelDepartment", ["name": "Research"])
        let sales = try context.make("RelDepartment", ["name": "Sales"])
        let ada = try context.make("RelEmployee", ["name": "Ada"])
        try ada.setValue(research, forKey: "department")
        try context.save()
        try ada.setValue(sales, forKey: "department")
        try ada.setValue("Ada L.", forKey: "name")
        let committed = ada.committedValues(forKeys: ["name", "department"])
        #expect(committed["name"] as? String == "Ada")
        #expect((committed["department"] ?? nil) as? ManagedObject === research)
        let members = research.committedValues(forKeys: ["employees"])["employees"] ?? nil
        #expect((members as? Set<ManagedObject>) == [ada])
    }
}
