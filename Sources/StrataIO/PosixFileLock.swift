import Synchronization
import SystemPackage

/// An exclusive `flock` lock held through a file descriptor that the lock owns.
///
/// `flock` locks belong to the open file description, so two ``PosixFileSystem/lockFile(at:)``
/// calls on the same path conflict even within one process: the second fails with `.wouldBlock`.
/// That is how Strata stops a store from being opened twice, by two processes or by one.
///
/// ``unlock()`` closes the descriptor, which releases the lock (the descriptor is opened with
/// `O_CLOEXEC` and never duplicated, so no other descriptor shares it, except in a child forked
/// without `exec`, which then holds the lock too). A lock that is never unlocked is released when it
/// is deinitialized, or by the kernel when the process ends.
///
/// It is `Sendable` without `@unchecked`: the descriptor and path are immutable, and whether the
/// lock was released is an `Atomic`, so concurrent ``unlock()`` calls close the descriptor once.
public final class PosixFileLock: FileLock {
    /// The path of the lock file.
    public let path: String

    /// The descriptor whose open file description holds the lock.
    private let descriptor: FileDescriptor

    /// Whether ``unlock()`` ran.
    private let isReleased = Atomic<Bool>(false)

    /// Takes ownership of a descriptor that already holds the lock.
    init(descriptor: FileDescriptor, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        unlock()
    }

    /// Releases the lock, then closes its descriptor. Safe to call more than once.
    ///
    /// Closing alone is not enough: a child process forked (or spawned) while the lock was held has a copy of
    /// the descriptor until it calls `exec`, and a `flock` lock lasts as long as any copy of its open file
    /// description; `LOCK_UN` releases it for every copy at once, so a store closed here can be opened again
    /// at once even while another thread starts a subprocess.
    ///
    /// The corresponding C functions are `flock(LOCK_UN)` and `close`.
    public func unlock() {
        guard !isReleased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Neither can fail in a way worth reporting: close releases the lock even if LOCK_UN did not, and
        // a lock file carries no data that an error could have lost.
        try? descriptor.unlock()
        try? descriptor.close()
    }
}
