import Foundation
import Strata
import StrataLock
import Testing

/// Contexts: inserting, fetching with pending changes, counting, and entity inheritance
/// (COREDATA.md §1.1 inheritance, §1.3, §1.4, §5 #3).
@Suite struct ContextTests {
    @Test(arguments: StoreKind.allCases)
    func insertRegistersTheObjectAndSaveWritesIt(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        #expect(!context.hasChanges)
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        grace.lastName = "Hopper"
        #expect(grace.managedObjectContext === context)
        #expect(context.hasChanges)
        #expect(context.insertedObjects == [grace])
        #expect(context.registeredObjects == [grace])
        try context.save()
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty)
        #expect(try stack.storedValues("GraphEmployee", "lastName") == [.string("Hopper")])
        #expect(try stack.storedRows("GraphEmployee").map { $0.entity.name } == ["GraphEmployee"])
    }

    @Test(arguments: StoreKind.allCases)
    func newObjectsStartWithTheModelsDefaults(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let grace = GraphEmployee(context: context)
        #expect(grace.salary == 0)
        #expect(grace.lastName == "")
        #expect(grace.photo == nil)
        #expect(grace.fullName == nil)
        #expect(!grace.isFault)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchIncludesUnsavedInsertsAndExcludesUnsavedDeletes(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedEmployees(stack, [("A", "X", 1), ("B", "Y", 2)])
        let context = stack.context()
        let inserted = GraphEmployee(context: context)
        inserted.firstName = "C"
        context.delete(context.object(with: ids[0]))

        let all = try fetchEmployees(context)
        #expect(all.map(\.firstName) == ["B", "C"])
        #expect(all.last === inserted)
        #expect(try context.count(for: FetchRequest<GraphEmployee>(entityName: "GraphEmployee")) == 2)

        let storeOnly = FetchRequest<GraphEmployee>(entityName: "GraphEmployee")
        storeOnly.includesPendingChanges = false
        let fromStore = try context.fetch(storeOnly)
        #expect(Set(fromStore.map(\.objectID)) == Set(ids))
        #expect(try context.count(for: storeOnly) == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchLimitAndOffsetWindowTheResults(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        _ = try seedEmployees(stack, (1...5).map { ("E\($0)", "", Int64($0)) })
        let context = stack.context()
        let request = FetchRequest<GraphEmployee>(entityName: "GraphEmployee")
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(try context.fetch(request).map(\.firstName) == ["E2", "E3"])
        #expect(try context.count(for: request) == 2)
        request.fetchOffset = 4
        #expect(try context.fetch(request).map(\.firstName) == ["E5"])
        #expect(try context.count(for: request) == 1)
        request.fetchOffset = 10
        #expect(try context.fetch(request).isEmpty)
        #expect(try context.count(for: request) == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchOfAnUnknownEntityThrowsUnknownEntity(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let context = stack.context()
        let error = objectGraphError { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Nope")) }
        guard case .unknownEntity("Nope") = error else {
            Issue.record("expected unknownEntity, got \(String(describing: error))")
            return
        }
    }

    @Test func insertWithoutAStoreFailsAtSave() throws {
        let coordinator = PersistentStoreCoordinator(model: TestModel.model)
        let context = ManagedObjectContext(coordinator: coordinator)
        let grace = GraphEmployee(context: context)
        grace.firstName = "Grace"
        let error = objectGraphError { try context.save() }
        guard case .noStore(let entity) = error else {
            Issue.record("expected noStore, got \(String(describing: error))")
            return
        }
        #expect(entity == "GraphEmployee")
        #expect(grace.isInserted)
    }

    // MARK: - Inheritance

    @inline(never)
    private func seedPeople(_ stack: TestStack) throws -> (person: ManagedObjectID, manager: ManagedObjectID) {
        let context = stack.context()
        let person = GraphPerson(context: context)
        person.name = "Pat"
        let manager = GraphManager(context: context)
        manager.name = "Max"
        manager.level = 3
        try context.save()
        return (person.objectID, manager.objectID)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchingTheParentEntityReturnsSubentityObjectsAsTheirSubclass(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedPeople(stack)
        let context = stack.context()
        let request = FetchRequest<GraphPerson>(entityName: "GraphPerson")
        request.returnsObjectsAsFaults = false
        let people = try context.fetch(request)
        #expect(people.count == 2)
        let manager = try #require(people.first { $0.objectID == ids.manager } as? GraphManager)
        #expect(manager.entity.name == "GraphManager")
        #expect(manager.level == 3 && manager.name == "Max")
        let person = try #require(people.first { $0.objectID == ids.person })
        #expect(type(of: person) == GraphPerson.self)
        #expect(person.entity.name == "GraphPerson")
        #expect(try context.count(for: request) == 2)
        // Faults of subentity rows are of the subclass too.
        let fault = stack.context().object(with: ids.manager)
        #expect(fault is GraphManager)
        #expect(fault.isFault)
    }

    @Test(arguments: StoreKind.allCases)
    func includesSubentitiesFalseExcludesSubentityObjects(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedPeople(stack)
        let context = stack.context()
        let request = FetchRequest<GraphPerson>(entityName: "GraphPerson")
        request.includesSubentities = false
        let people = try context.fetch(request)
        #expect(people.map(\.objectID) == [ids.person])
        #expect(try context.count(for: request) == 1)
        // Pending inserts follow the same rule.
        let newManager = GraphManager(context: context)
        newManager.name = "New"
        #expect(try context.fetch(request).count == 1)
        #expect(try context.count(for: request) == 1)
        request.includesSubentities = true
        #expect(try context.fetch(request).count == 3)
        #expect(try context.count(for: request) == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func fetchingTheSubentityReturnsOnlyItsObjects(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedPeople(stack)
        let context = stack.context()
        let managers = try context.fetch(FetchRequest<GraphManager>(entityName: "GraphManager"))
        #expect(managers.map(\.objectID) == [ids.manager])
        #expect(managers.first?.level == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func subentityObjectsShareTheParentsRowIDSpace(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedPeople(stack)
        #expect(ids.person.rowID != ids.manager.rowID)
        #expect(ids.person.storeIdentifier == ids.manager.storeIdentifier)
        let rows = try stack.store.rows(of: stack.entity("GraphPerson"), includesSubentities: true)
        #expect(Set(rows.map { $0.row.entity.name }) == ["GraphPerson", "GraphManager"])
    }

    @Test(arguments: StoreKind.allCases)
    func updatesAndDeletesOfSubentityObjectsReachTheStore(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let ids = try seedPeople(stack)
        let context = stack.context()
        let manager = try #require(try context.existingObject(with: ids.manager) as? GraphManager)
        manager.level = 9
        try context.save()
        let level = try #require(try stack.context().existingObject(with: ids.manager) as? GraphManager).level
        #expect(level == 9)
        context.delete(manager)
        try context.save()
        #expect(
            try stack.context().fetch(FetchRequest<GraphPerson>(entityName: "GraphPerson")).map(\.objectID) == [
                ids.person
            ])
    }
}

/// One coordinator serves contexts on several threads (each context stays on its thread).
@Suite struct ContextThreadingTests {
    @Test(arguments: StoreKind.allCases)
    func contextsOnSeveralThreadsShareOneCoordinator(_ kind: StoreKind) throws {
        let stack = try TestStack(kind)
        let seeded = try seedEmployees(stack, (0..<20).map { ("S\($0)", "", Int64($0)) })
        let coordinator = stack.coordinator
        let failures = Lock<[String]>([])
        let threads = 4
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            do {
                let context = ManagedObjectContext(coordinator: coordinator)
                // Everyone faults the shared rows in (through the shared row cache).
                for id in seeded {
                    let object = try context.existingObject(with: id)
                    guard try object.value(forKey: "firstName") as? String != nil else {
                        throw ObjectGraphError.objectInaccessible(id)
                    }
                }
                // Each thread inserts its own rows, in several saves.
                for batch in 0..<5 {
                    for index in 0..<5 {
                        let employee = ManagedObject(
                            entity: coordinator.model.entity(named: "GraphEmployee")!, insertInto: context)
                        try employee.setValue("T\(thread)-\(batch)-\(index)", forKey: "firstName")
                    }
                    try context.save()
                }
            } catch {
                failures.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let context = stack.context()
        let all = try fetchEmployees(context)
        #expect(all.count == 20 + threads * 25)
        #expect(Set(all.map(\.objectID)).count == all.count)
    }
}
