import Foundation
import Strata
import Testing

/// `perform`, `performAndWait` and async `perform` on contexts of every concurrency type (Core Data's queue
/// rules), on both stores.
@Suite struct ContextPerformTests {
    @Test(arguments: StoreKind.allCases)
    func aConfinementContextPerformsAtOnceAndEndsTheEvent(kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let context = stack.context()
        #expect(context.concurrencyType == .confinement)
        let department = try context.make("RelDepartment", ["name": "Research"])
        let employee = try context.make("RelEmployee", ["name": "Ada"])
        try employee.setValue(department, forKey: "department")
        try context.save()
        var ran = false
        context.perform {
            context.delete(department)
            ran = true
        }
        // The block ran on this thread, and its event ended: the nullify rule has run.
        #expect(ran)
        #expect(try employee.value(forKey: "department") == nil)
        let names = context.performAndWait { (try? employee.value(forKey: "name")) as? String }
        #expect(names == "Ada")
    }

    @Test(arguments: StoreKind.allCases)
    func aPrivateQueueContextRunsItsWorkOnItsQueueInOrder(kind: StoreKind) async throws {
        let stack = try TestStack.relationships(kind)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.coordinator)
        #expect(context.concurrencyType == .privateQueue)
        for index in 0..<5 {
            schedule(on: context) { _ = try? context.make("RelEmployee", ["name": "E\(index)"]) }
        }
        // The queue is serial: this runs after the five blocks above.
        let (count, onMain) = try context.performAndWait {
            try context.save()
            return (try context.count(for: FetchRequest<ManagedObject>(entityName: "RelEmployee")), Thread.isMainThread)
        }
        #expect(count == 5)
        #expect(!onMain)
        let fetched = try await context.perform {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "RelEmployee")).count
        }
        #expect(fetched == 5)
    }

    @Test func performAndWaitIsReentrantOnItsQueue() throws {
        let stack = try TestStack.relationships(.inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.coordinator)
        let depth = context.performAndWait {
            context.performAndWait {
                context.performAndWait { 3 }
            }
        }
        #expect(depth == 3)
    }

    @Test func asyncPerformReturnsWhatTheBlockThrows() async throws {
        struct Refused: Error {}
        let stack = try TestStack.relationships(.inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.coordinator)
        await #expect(throws: Refused.self) {
            try await context.perform { () throws(Refused) -> Int in throw Refused() }
        }
        #expect(throws: Refused.self) {
            try context.performAndWait { () throws(Refused) -> Int in throw Refused() }
        }
    }

    @Test func enqueuedWorkRunsAfterWorkAlreadyScheduled() async throws {
        let stack = try TestStack.relationships(.inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.coordinator)
        schedule(on: context) { context.userInfo["order"] = ["first"] }
        let order = await context.perform(schedule: .enqueued) { () -> [String] in
            let order = (context.userInfo["order"] as? [String] ?? []) + ["second"]
            context.userInfo["order"] = order
            return order
        }
        #expect(order == ["first", "second"])
    }

    @Test func asyncPerformEndsTheEventWithTheDeleteRules() async throws {
        let stack = try TestStack.relationships(.strata)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.coordinator)
        let employeeID = try await context.perform { () throws -> ManagedObjectID in
            let department = try context.make("RelDepartment", ["name": "Research"])
            let employee = try context.make("RelEmployee", ["name": "Ada"])
            try employee.setValue(department, forKey: "department")
            try context.save()
            return employee.objectID
        }
        try await context.perform {
            let employee = context.object(with: employeeID)
            context.delete(try #require(employee.value(forKey: "department") as? ManagedObject))
        }
        let department = try await context.perform {
            try context.object(with: employeeID).value(forKey: "department") == nil
        }
        #expect(department)
    }

    @Test func aChildContextOfAPrivateQueueTypeHasItsOwnQueue() async throws {
        let stack = try TestStack.relationships(.inMemory)
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.coordinator)
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try await child.perform {
            _ = try child.make("RelDepartment", ["name": "Research"])
            try child.save()
        }
        let count = try await parent.perform {
            try parent.save()
            return try parent.count(for: FetchRequest<ManagedObject>(entityName: "RelDepartment"))
        }
        #expect(count == 1)
    }

    @MainActor
    @Test func aMainQueueContextPerformsOnTheMainQueue() async throws {
        let stack = try TestStack.relationships(.inMemory)
        let context = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: stack.coordinator)
        #expect(context.concurrencyType == .mainQueue)
        schedule(on: context) { _ = try? context.make("RelDepartment", ["name": "Queued"]) }
        // Immediate on the main actor: it runs now, before the queued block.
        let before = context.performAndWait { context.insertedObjects.count }
        #expect(before == 0)
        let after = await context.perform(schedule: .enqueued) { context.insertedObjects.count }
        #expect(after == 1)
    }
}

/// Core Data's fire-and-forget `perform(_:)`: in an async function the async `perform` is chosen, as in Core
/// Data, so the tests call it from a synchronous one.
func schedule(on context: ManagedObjectContext, _ block: @escaping () -> Void) {
    context.perform(block)
}
