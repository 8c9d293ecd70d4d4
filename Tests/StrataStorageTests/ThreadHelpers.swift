import Foundation

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
