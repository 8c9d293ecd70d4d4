import Synchronization

/// An exclusive lock on a file of an ``InMemoryFileSystem``.
///
/// Locks belong to the file, not its name, like `flock` locks: while one is held, another
/// ``InMemoryFileSystem/lockFile(at:)`` on the same file fails with `.wouldBlock`.
/// A lock that is never unlocked is released when it is deinitialized.
///
/// It is `Sendable` without `@unchecked`: its properties are immutable, and whether it was released
/// is an `Atomic`, so concurrent ``unlock()`` calls release it once.
public final class InMemoryFileLock: FileLock {
    /// The path of the lock file.
    public let path: String

    /// The file system that owns the lock file.
    private let fileSystem: InMemoryFileSystem

    /// The locked file.
    private let node: InMemoryFileSystem.NodeID

    /// Whether ``unlock()`` ran.
    private let isReleased = Atomic<Bool>(false)

    /// A lock on `node`, which the caller has already marked as locked.
    init(fileSystem: InMemoryFileSystem, node: InMemoryFileSystem.NodeID, path: String) {
        self.fileSystem = fileSystem
        self.node = node
        self.path = path
    }

    deinit {
        unlock()
    }

    /// Releases the lock. Safe to call more than once.
    public func unlock() {
        guard !isReleased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        fileSystem.state.withLock { state in
            state.unlock(node)
            state.record(.unlock(path: path))
        }
    }
}
