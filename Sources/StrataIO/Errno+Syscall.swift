import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Errno {
    /// The calling thread's current `errno`.
    ///
    /// Read it immediately after the failing call: any other call may overwrite it.
    static var current: Errno { Errno(rawValue: errno) }

    /// Calls a system function until it does not fail with ``Errno/interrupted`` (when asked to),
    /// turning its `-1` failure result into the thread's `errno`.
    ///
    /// This is swift-system's internal `valueOrErrno(retryOnInterrupt:_:)`, which its package does
    /// not export, with typed throws so callers need no `catch`.
    ///
    /// - Parameters:
    ///   - retryOnInterrupt: Whether to call `body` again when it fails with `EINTR`.
    ///   - body: The system call; it returns `-1` and sets `errno` on failure.
    /// - Returns: `body`'s result when it is not `-1`.
    /// - Throws: The `Errno` that `body` set.
    @inline(__always)
    static func result<I: FixedWidthInteger>(
        retryOnInterrupt: Bool,
        _ body: () -> I
    ) throws(Errno) -> I {
        while true {
            let value = body()
            if value != -1 { return value }
            let error = Errno.current
            if retryOnInterrupt && error == .interrupted { continue }
            throw error
        }
    }
}
