import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// swift-system 1.8.1 has no wrapper for `flock`; this follows its own style.
// It is internal: only StrataIO makes system calls.

extension FileDescriptor {
    /// The kind of advisory lock that ``FileDescriptor/lock(_:nonBlocking:retryOnInterrupt:)`` takes.
    enum AdvisoryLockKind: Sendable {
        /// Any number of holders at once; excludes ``exclusive``. `LOCK_SH` in C.
        case shared
        /// One holder at a time; excludes every other lock. `LOCK_EX` in C.
        case exclusive
    }

    /// Takes an advisory lock on the open file, or converts the lock this descriptor holds.
    ///
    /// `flock` locks belong to the open file description, not to the process: two separate
    /// `open` calls on the same file, even in one process, get locks that conflict with each
    /// other. A lock is released by ``unlock(retryOnInterrupt:)`` or when the last descriptor
    /// sharing the open file description is closed.
    ///
    /// For example:
    ///
    ///     let fd = try FileDescriptor.open("LOCK", .readOnly, options: [.create, .closeOnExec],
    ///                                      permissions: [.ownerReadWrite])
    ///     try fd.lock(.exclusive, nonBlocking: true)  // throws Errno.wouldBlock if held elsewhere
    ///
    /// - Parameters:
    ///   - kind: Whether the lock is shared or exclusive.
    ///   - nonBlocking: Whether to fail with ``Errno/wouldBlock`` instead of waiting
    ///     when a conflicting lock is held. `LOCK_NB` in C.
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted`` (a blocking wait interrupted by a signal).
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: ``Errno/wouldBlock`` when `nonBlocking` is set and a conflicting lock is held.
    ///
    /// The corresponding C function is `flock`.
    func lock(
        _ kind: AdvisoryLockKind,
        nonBlocking: Bool = false,
        retryOnInterrupt: Bool = true
    ) throws(Errno) {
        var operation: CInt =
            switch kind {
            case .shared: LOCK_SH
            case .exclusive: LOCK_EX
            }
        if nonBlocking { operation |= LOCK_NB }
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) { flock(self.rawValue, operation) }
    }

    /// Releases the advisory lock this descriptor's open file description holds.
    ///
    /// - Parameters:
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    ///
    /// The corresponding C function is `flock`.
    func unlock(retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) { flock(self.rawValue, LOCK_UN) }
    }
}
