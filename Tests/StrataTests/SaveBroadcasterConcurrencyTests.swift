import Dispatch
import Foundation
import Strata
import StrataLock
import Testing

/// The coordinator's `SaveBroadcaster` under load: contexts that merge automatically register, unregister
/// and go away on many threads while others save, so broadcasts, registrations and merges on the
/// listeners' queues all overlap. Run under ThreadSanitizer by `Scripts/tsan`.
@Suite struct SaveBroadcasterConcurrencyTests {
    /// Four writers save on their own queues; a follower merges every save; meanwhile four threads keep
    /// making merging contexts (private-queue ones, and thread-confined ones the broadcasts must leave
    /// alone), turning merging off or dropping them. The follower ends up with every writer's last save.
    @Test(arguments: StoreKind.allCases)
    func contextsComingAndGoingWhileOthersSaveLeaveTheFollowerWithEverySave(_ kind: StoreKind) throws {
        let stack = try TestStack.relationships(kind)
        let (_, employees) = try seedDepartment(stack, employees: 8)
        let coordinator = stack.coordinator
        let follower = PrivateQueueContext(coordinator: coordinator, name: "follower")
        let held = follower.performAndWait { context in
            context.automaticallyMergesChangesFromParent = true
            return employees.map { try? context.existingObject(with: $0) }
        }
        #expect(held.allSatisfy { $0 != nil })
        let (writers, saves) = (4, 25)
        let failures = Lock<[String]>([])
        let writing = DispatchGroup()
        let churning = DispatchGroup()
        for writer in 0..<writers {
            DispatchQueue.global().async(group: writing) {
                let context = PrivateQueueContext(coordinator: coordinator, name: "writer\(writer)")
                for save in 1...saves {
                    do {
                        try context.performAndWait { context in
                            for id in employees[(2 * writer)..<(2 * writer + 2)] {
                                try context.existingObject(with: id).setValue(Int64(save), forKey: "salary")
                            }
                            try context.save()
                        }
                    } catch {
                        failures.withLock { $0.append("writer \(writer), save \(save): \(error)") }
                    }
                }
            }
        }
        for thread in 0..<4 {
            DispatchQueue.global().async(group: churning) {
                var round = 0
                while round < 10 || writing.wait(timeout: .now()) == .timedOut {
                    round += 1
                    let listener = PrivateQueueContext(coordinator: coordinator, name: "listener\(thread)")
                    listener.performAndWait { context in
                        context.automaticallyMergesChangesFromParent = true
                        _ = try? context.existingObject(with: employees[round % employees.count])
                    }
                    if round % 2 == 0 {
                        listener.performAndWait { $0.automaticallyMergesChangesFromParent = false }
                    }
                    // A context confined to this thread: registered, skipped by the other threads' saves.
                    let confined = ManagedObjectContext(coordinator: coordinator)
                    confined.automaticallyMergesChangesFromParent = true
                    _ = try? confined.existingObject(with: employees[(round + 1) % employees.count])
                    // `listener` and `confined` go away here, unregistering on this thread (or `listener` on its
                    // queue, if a merge block still holds it).
                }
            }
        }
        writing.wait()
        churning.wait()
        #expect(failures.withLock { $0 } == [])
        // The merges were queued on the follower's queue by the saves, before this block.
        let salaries = follower.performAndWait { _ in held.map { (try? $0?.value(forKey: "salary")) as? Int64 } }
        #expect(salaries == Array(repeating: Int64(saves), count: employees.count))
    }
}
