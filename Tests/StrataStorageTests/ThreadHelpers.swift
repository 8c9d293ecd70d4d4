import Foundation
import StrataLock
import Synchronization

/// Runs `body(index)` on `count` dedicated threads at once and returns when all have finished.
///
/// `DispatchQueue.concurrentPerform` would run no more iterations at a time than there are cores, which
/// on a small machine hides the contention a test is after (group commit needs committers waiting).
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

/// Runs `write` on one thread and `read` over and over on `readers` other threads until `write` has returned
/// (each reader at least `minimumReads` times, so a fast writer still meets readers), and returns what they
/// threw, as text (the first 20), and how many reads ran.
///
/// `read` gets the reader's number (0 ..< readers). Nothing is recorded through `#expect` on these threads:
/// the caller checks the failures.
func runReaders(
    _ readers: Int, minimumReads: Int = 3, whileWriting write: @escaping @Sendable () throws -> Void,
    read: @escaping @Sendable (Int) throws -> Void
) -> (failures: [String], reads: Int) {
    let failures = Lock<[String]>([])
    let writing = Atomic<Bool>(true)
    let reads = Atomic<Int>(0)
    runOnThreads(readers + 1) { thread in
        if thread == readers {
            do { try write() } catch { failures.withLock { if $0.count < 20 { $0.append("writer: \(error)") } } }
            writing.store(false, ordering: .releasing)
            return
        }
        var count = 0
        while count < minimumReads || writing.load(ordering: .acquiring) {
            do { try read(thread) } catch {
                failures.withLock { if $0.count < 20 { $0.append("reader \(thread): \(error)") } }
            }
            count += 1
        }
        reads.add(count, ordering: .relaxed)
    }
    return (failures.withLock { $0 }, reads.load(ordering: .relaxed))
}

/// What a check on a reader or writer thread throws, for ``runReaders(_:minimumReads:whileWriting:read:)`` to
/// report.
struct ConcurrencyCheckFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
