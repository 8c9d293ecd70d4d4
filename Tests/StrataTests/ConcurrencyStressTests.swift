import Foundation
import Strata
import StrataLock
import StrataStorage
import Synchronization
import Testing

/// Many private-queue contexts on many threads, fetching and saving at once: nothing is corrupted and every
/// acknowledged save is in the store afterwards (issue 8, concurrency).
@Suite struct ConcurrencyStressTests {
    /// What one worker knows it saved: the last acknowledged salary of each of its employees (nil: deleted).
    final class Ledger: Sendable {
        let salaries = Lock<[ManagedObjectID: Int64?]>([:])
        let saves = Atomic<Int>(0)
        let conflicts = Atomic<Int>(0)
        let fetches = Atomic<Int>(0)
    }

    @Test func eightThreadsFetchingAndSavingLeaveAStoreThatVerifiesWithEveryAcknowledgedSave() async throws {
        let directory = temporaryStoreDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        RelationshipModel.registerClasses()
        let model = RelationshipModel.model
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(
            .strata(directory: directory, configuration: testStoreConfiguration()))
        // Shared departments every worker links to and reads.
        let setup = PrivateQueueContext(coordinator: coordinator, name: "setup")
        let departments: [ManagedObjectID] = try await setup.perform { context in
            let made = try (0..<4).map { try context.make("RelDepartment", ["name": "D\($0)"]) }
            try context.save()
            return made.map(\.objectID)
        }
        let ledger = Ledger()
        let deadline = Date().addingTimeInterval(3)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let context = PrivateQueueContext(coordinator: coordinator, name: "worker\(worker)")
                    var generator = SplitMixGenerator(seed: UInt64(worker) + 1)
                    var mine: [ManagedObjectID] = []
                    // At least 25 steps each, however busy the machine, then until the deadline.
                    var steps = 0
                    while steps < 25 || Date() < deadline {
                        steps += 1
                        let step = generator.next() % 10
                        let pick = Int(generator.next() % 1000)
                        let salary = Int64(generator.next() % 100_000)
                        mine = try await context.perform { [mine] context in
                            try Self.step(
                                step, pick: pick, salary: salary, mine: mine, departments: departments,
                                context: context,
                                ledger: ledger)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(ledger.saves.load(ordering: .relaxed) > 8)
        #expect(ledger.fetches.load(ordering: .relaxed) > 8)

        // Every acknowledged save is there, in this coordinator and after a reopen; the store verifies clean.
        try coordinator.removePersistentStore(store)
        let reopened = PersistentStoreCoordinator(model: model)
        let again = try reopened.addPersistentStore(
            .strata(directory: directory, configuration: testStoreConfiguration()))
        let report = try #require(again as? StrataStore).engine.verify()
        #expect(report.isClean)
        let check = ManagedObjectContext(coordinator: reopened)
        let expected = ledger.salaries.withLock { $0 }
        for (id, salary) in expected {
            let reopenedID = try reopened.managedObjectID(forURIRepresentation: id.uriRepresentation())
            if let salary {
                let employee = try check.existingObject(with: reopenedID)
                #expect(try employee.value(forKey: "salary") as? Int64 == salary)
                #expect(try employee.value(forKey: "department") != nil)
            } else {
                #expect(throws: ObjectGraphError.self) { try check.existingObject(with: reopenedID) }
            }
        }
        let living = expected.values.filter { $0 != nil }.count
        #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "RelEmployee")) == living)
    }

    /// One random step of a worker, on its context's queue; returns the worker's employees afterwards.
    private static func step(
        _ step: UInt64, pick: Int, salary: Int64, mine: [ManagedObjectID], departments: [ManagedObjectID],
        context: ManagedObjectContext, ledger: Ledger
    ) throws -> [ManagedObjectID] {
        var mine = mine
        switch step {
        case 0..<4:  // insert one employee into a shared department, save
            let employee = try context.make("RelEmployee", ["name": "E", "salary": salary])
            try employee.setValue(context.object(with: departments[pick % departments.count]), forKey: "department")
            try save(context, ledger) {
                ledger.salaries.withLock { $0[employee.objectID] = salary }
                mine.append(employee.objectID)
            }
        case 4..<6 where !mine.isEmpty:  // update one of mine, save
            let id = mine[pick % mine.count]
            try context.existingObject(with: id).setValue(salary, forKey: "salary")
            try save(context, ledger) { ledger.salaries.withLock { $0[id] = salary } }
        case 6 where !mine.isEmpty:  // delete one of mine, save
            let id = mine[pick % mine.count]
            context.delete(try context.existingObject(with: id))
            try save(context, ledger) {
                ledger.salaries.withLock { $0[id] = .some(nil) }
                mine.removeAll { $0 == id }
            }
        default:  // read: everyone's employees of a department, and a predicate fetch
            let department = context.object(with: departments[pick % departments.count])
            context.refreshAllObjectsIgnoringErrors()
            _ = try department.value(forKeyPath: "employees.@count")
            let request = FetchRequest<ManagedObject>(entityName: "RelEmployee")
            request.predicate = try ObjectPredicate(format: "salary > %d", Int(salary))
            _ = try context.fetch(request).count
            ledger.fetches.add(1, ordering: .relaxed)
        }
        return mine
    }

    /// Saves; an optimistic-locking conflict (another worker changed a shared department) rolls back instead.
    private static func save(_ context: ManagedObjectContext, _ ledger: Ledger, acknowledged: () -> Void) throws {
        do {
            try context.save()
            ledger.saves.add(1, ordering: .relaxed)
            acknowledged()
        } catch ObjectGraphError.mergeConflicts {
            ledger.conflicts.add(1, ordering: .relaxed)
            context.rollback()
        }
    }
}

extension ManagedObjectContext {
    /// Faults every unchanged object so that the next reads see other workers' saves.
    func refreshAllObjectsIgnoringErrors() { try? refreshAllObjects() }
}

/// A small deterministic generator for the workers.
struct SplitMixGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
