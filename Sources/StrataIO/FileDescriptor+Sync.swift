import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// swift-system 1.8.1 has no wrapper for `fsync` or `fdatasync`; these follow its own style.
// They are internal: only StrataIO makes system calls.

extension FileDescriptor {
    /// Flushes the file's data and all of its metadata to the storage device.
    ///
    /// When the descriptor refers to a directory (opened with ``FileDescriptor/OpenOptions/directory``),
    /// this makes the directory's entries durable: the creation, renaming and removal of the files
    /// in it survive power loss only after this returns.
    ///
    /// If this fails, assume that data written since the last successful sync is lost: on Linux the
    /// kernel may drop the dirty pages and report the error only once, so a second call can succeed
    /// without anything having reached the device.
    ///
    /// - Parameters:
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: The system's `Errno`, e.g. ``Errno/ioError`` or ``Errno/noSpace``.
    ///
    /// The corresponding C function is `fsync`.
    func sync(retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) {
            #if canImport(Darwin)
            // Darwin's fsync stops at the drive's volatile cache; F_FULLFSYNC asks the drive to
            // flush it, which is what durability means here.
            fcntl(self.rawValue, F_FULLFSYNC)
            #else
            fsync(self.rawValue)
            #endif
        }
    }

    /// Flushes the file's data, and the metadata needed to read it back (its size), to the
    /// storage device.
    ///
    /// Unlike ``sync(retryOnInterrupt:)``, this may skip metadata that reading does not need,
    /// such as the modification time, which often saves a second device write.
    /// The same caveat applies: after a failure, data written since the last successful sync may
    /// be gone even if a retry succeeds.
    ///
    /// - Parameters:
    ///   - retryOnInterrupt: Whether to retry the operation
    ///     if it throws ``Errno/interrupted``.
    ///     The default is `true`.
    ///     Pass `false` to try only once and throw an error upon interruption.
    /// - Throws: The system's `Errno`, e.g. ``Errno/ioError`` or ``Errno/noSpace``.
    ///
    /// The corresponding C function is `fdatasync`.
    func syncData(retryOnInterrupt: Bool = true) throws(Errno) {
        _ = try Errno.result(retryOnInterrupt: retryOnInterrupt) {
            #if canImport(Darwin)
            // Darwin has no documented fdatasync; F_FULLFSYNC is the durable flush there.
            fcntl(self.rawValue, F_FULLFSYNC)
            #else
            fdatasync(self.rawValue)
            #endif
        }
    }
}
