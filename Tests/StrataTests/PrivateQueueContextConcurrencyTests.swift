import Dispatch
import Foundation
import Strata
import StrataLock
import Testing

/// ``PrivateQueueContext`` handed work from many threads and tasks at once. Its context is a
/// `nonisolated(unsafe) let`, on the promise that it is made on the queue and used only by closures that run
/// there: every way in (``PrivateQueueContext/perform(_:)``, ``PrivateQueueContext/schedule(_:)``,
/// ``PrivateQueueContext/performAndWait(_:)``, nested calls from the queue itself) races here for the same
/// context, and contexts are made and dropped on other threads. Run under ThreadSanitizer by `Scripts/tsan`.
@Suite struct PrivateQueueContextConcurrencyTests {
    /// Eight threads and eight tasks insert into one private-queue context through every entry point at
    /// once; the context sees every insert exactly once, and one save stores them all.
    @Test(arguments: StoreKind.allCases)
    func workFromManyThreadsAndTasksRunsOneAtATimeOnTheContextsQueue(_ kind: StoreKind) async throws {
        let stack = try TestStack.relationships(kind)
        let background = PrivateQueueContext(coordinator: stack.coordinator, name: "shared")
        let (threads, perThread) = (8, 20)
        let scheduled = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                let name = "t\(thread).\(index)"
                switch index % 3 {
                case 0:
                    scheduled.enter()
                    background.schedule { context in
                        _ = try? context.make("RelEmployee", ["name": name])
                        scheduled.leave()
                    }
                case 1:
                    try? background.performAndWait { context in _ = try context.make("RelEmployee", ["name": name]) }
                default:
                    // From the queue itself, performAndWait runs at once instead of deadlocking.
                    try? background.performAndWait { outer in
                        try background.performAndWait { inner in
                            precondition(inner === outer)
                            _ = try inner.make("RelEmployee", ["name": name])
                        }
                    }
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<threads {
                group.addTask {
                    for index in 0..<perThread {
                        try await background.perform { context in
                            _ = try context.make("RelEmployee", ["name": "a\(task).\(index)"])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        scheduled.wait()
        let (inserted, saved) = try await background.perform { context in
            let names = Set(context.insertedObjects.compactMap { try? $0.value(forKey: "name") as? String })
            try context.save()
            return (names.count, try context.count(for: FetchRequest<ManagedObject>(entityName: "RelEmployee")))
        }
        #expect(inserted == 2 * threads * perThread)
        #expect(saved == 2 * threads * perThread)
    }

    /// Private-queue contexts made on many threads at once, each used from other threads and dropped on
    /// whichever thread lets go of it last (its context is then released off its queue).
    @Test func contextsMadeUsedAndDroppedOnManyThreadsSaveWhatTheyWereGiven() async throws {
        let stack = try TestStack.relationships(.strata)
        let coordinator = stack.coordinator
        let saved = Lock<[String]>([])
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { thread in
            let context = PrivateQueueContext(coordinator: coordinator, name: "c\(thread)")
            let done = DispatchSemaphore(value: 0)
            // The work goes in from another thread than the one that made the context.
            DispatchQueue.global().async {
                context.schedule { context in
                    do {
                        _ = try context.make("RelEmployee", ["name": "c\(thread)"])
                        try context.save()
                        saved.withLock { $0.append("c\(thread)") }
                    } catch {
                        failures.withLock { $0.append("context \(thread): \(error)") }
                    }
                    done.signal()
                }
            }
            done.wait()
        }
        let reader = stack.context()
        let names = try reader.fetch(FetchRequest<ManagedObject>(entityName: "RelEmployee")).compactMap {
            try $0.value(forKey: "name") as? String
        }
        #expect(failures.withLock { $0 } == [])
        #expect(Set(names) == Set(saved.withLock { $0 }))
        #expect(names.count == 16)
    }
}
