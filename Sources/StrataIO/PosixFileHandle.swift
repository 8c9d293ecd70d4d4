import CSystemCalls
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open regular file of a ``PosixFileSystem``: a file descriptor used only with positional I/O.
///
/// Reads and writes go through `pread` and `pwrite` at explicit offsets, looping over partial
/// transfers, so the descriptor's own file offset is never used and several threads can read and
/// write through one handle at once.
///
/// It is `Sendable` without `@unchecked`: every stored property is immutable (`let`) and
/// `Sendable`, including the descriptor number, and the only mutable state, whether the handle was
/// closed, is an `Atomic`. The kernel serializes concurrent calls on one descriptor; the order
/// of overlapping writes from different threads is the callers' business, as with `pwrite`.
///
/// Closing a handle while another thread still uses it is a programmer error, as it is in C: the
/// descriptor number can be reused by the next `open` in the process. A handle that is never
/// closed closes its descriptor when it is deinitialized.
///
/// ## Topics
///
/// ### Reading and writing
/// - ``read(into:at:)``
/// - ``write(_:at:)``
/// - ``size()``
/// - ``truncate(to:)``
///
/// ### Durability and lifetime
/// - ``sync()``
/// - ``close()``
public final class PosixFileHandle: FileHandle {
    /// The path this handle was opened with.
    public let path: String

    /// The open descriptor; never changes, so reading it needs no synchronization.
    private let descriptor: FileDescriptor

    /// Whether ``close()`` ran; guards against using a descriptor number that may have been reused.
    private let isClosed = Atomic<Bool>(false)

    /// Whether the descriptor was opened `O_RDONLY` (``PosixFileSystem/openFileForReading(at:)``): writing,
    /// truncating or syncing through it is a programmer error, caught here rather than as `EBADF`.
    private let readOnly: Bool

    /// Wraps an open descriptor, which the handle then owns.
    init(descriptor: FileDescriptor, path: String, readOnly: Bool = false) {
        self.descriptor = descriptor
        self.path = path
        self.readOnly = readOnly
    }

    deinit {
        if !isClosed.load(ordering: .acquiring) {
            // Nobody can observe a failure here; the descriptor is released either way.
            try? descriptor.close()
        }
    }

    /// The file's identity (device and inode) and current size.
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.ioFailure`.
    ///
    /// The corresponding C function is `statx` (`fstat` where there is none), asking for no timestamp
    /// (`csystemcalls.h` says why).
    public func identity() throws(IOError) -> FileIdentity {
        preconditionOpen()
        var status = csystemcalls_file_status()
        guard csystemcalls_file_status_descriptor(descriptor.rawValue, &status) == 0 else {
            throw IOError(errno: Errno(rawValue: errno), operation: "fstat", path: path)
        }
        return FileIdentity(device: status.device, inode: status.inode, size: status.size)
    }

    /// Starts writing `count` bytes from `offset` to the disk without waiting (``FileHandle/startWriteback(at:count:)``).
    public func startWriteback(at offset: UInt64, count: Int) {
        preconditionOpen()
        csystemcalls_start_writeback(descriptor.rawValue, offset, UInt64(count))
    }

    /// The file's current size in bytes.
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.ioFailure`.
    ///
    /// The corresponding C function is `statx` (`fstat` where there is none), asking for no timestamp: a store
    /// reads its files' sizes before every write transaction (`csystemcalls.h` says why that matters).
    public func size() throws(IOError) -> UInt64 {
        try identity().size
    }

    /// Maps the file's first `length` bytes read-only and shared (see ``FileMapping`` for what may be read).
    ///
    /// - Throws: ``IOError`` with the system's reason.
    ///
    /// The corresponding C function is `mmap` with `PROT_READ` and `MAP_SHARED`.
    public func mapReadOnly(length: Int) throws(IOError) -> FileMapping? {
        preconditionOpen()
        precondition(length > 0)
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor.rawValue, 0),
            address != MAP_FAILED
        else {
            throw IOError(errno: Errno(rawValue: errno), operation: "mmap", path: path)
        }
        return FileMapping(address: address, count: length)
    }

    /// The end of the file's data: the end of its last extent that is not a hole, found with `lseek`'s
    /// `SEEK_DATA` and `SEEK_HOLE` (one pair of calls per hole); ``size()`` when the file system does not
    /// support them.
    ///
    /// - Throws: ``IOError`` with the system's reason.
    ///
    /// The corresponding C function is `lseek` with `SEEK_DATA` and `SEEK_HOLE`.
    public func dataEnd() throws(IOError) -> UInt64 {
        let size = try self.size()
        #if os(Linux)
        // swift-system names SEEK_DATA and SEEK_HOLE only on Darwin and FreeBSD; Linux's values are 3 and 4.
        let nextData = FileDescriptor.SeekOrigin(rawValue: 3)
        let nextHole = FileDescriptor.SeekOrigin(rawValue: 4)
        var end: UInt64 = 0
        var position: Int64 = 0
        // Each round moves past one hole, so the loop ends within the file's extent count (and at `size`).
        while UInt64(position) < size {
            let data: Int64
            do { data = try descriptor.seek(offset: position, from: nextData) } catch let error as Errno {
                // ENXIO: no data at or after `position`. EINVAL: the file system has no hole support.
                if error == .noSuchAddressOrDevice { return end }
                if error == .invalidArgument { return size }
                throw IOError(errno: error, operation: "lseek", path: path)
            } catch {
                preconditionFailure("lseek \(path): swift-system threw a non-Errno error \(error)")
            }
            let hole: Int64
            do { hole = try descriptor.seek(offset: data, from: nextHole) } catch let error as Errno {
                if error == .invalidArgument { return size }
                throw IOError(errno: error, operation: "lseek", path: path)
            } catch {
                preconditionFailure("lseek \(path): swift-system threw a non-Errno error \(error)")
            }
            guard hole > position else { return size }  // no progress: do not trust the answers
            end = min(UInt64(hole), size)
            position = hole
        }
        return end
        #else
        return size
        #endif
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at end of file.
    ///
    /// - Parameters:
    ///   - buffer: Where to put the bytes; its count is how many to read.
    ///   - offset: The file offset of the first byte to read.
    /// - Returns: The number of bytes read: less than `buffer.count` only at end of file.
    /// - Throws: ``IOError`` with the system's reason, e.g. `.ioFailure`.
    ///
    /// The corresponding C function is `pread`, called until the buffer is full or it returns 0.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(IOError) -> Int {
        preconditionOpen()
        var done = 0
        while done < buffer.count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            let position = Self.position(offset, advancedBy: done)
            let count = try IOError.catching("pread", path: path) {
                try descriptor.read(fromAbsoluteOffset: position, into: rest)
            }
            if count == 0 { break }  // End of file.
            done += count
        }
        return done
    }

    /// Writes all of `bytes` at `offset`, extending the file (with zeros before `offset` if it
    /// lies past the end) if needed.
    ///
    /// - Parameters:
    ///   - bytes: The bytes to write.
    ///   - offset: The file offset of the first byte to write.
    /// - Throws: ``IOError`` with the system's reason, e.g. `.noSpace`. A prefix of `bytes`
    ///   may have been written.
    ///
    /// The corresponding C function is `pwrite`, called until every byte is written.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(IOError) {
        preconditionOpen()
        precondition(!readOnly, "PosixFileHandle for \(path) is read-only")
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            let position = Self.position(offset, advancedBy: done)
            let count = try IOError.catching("pwrite", path: path) {
                try descriptor.write(toAbsoluteOffset: position, rest)
            }
            // pwrite on a regular file reports a failure rather than 0; a 0 would loop forever.
            if count == 0 { throw IOError(.ioFailure, operation: "pwrite", path: path) }
            done += count
        }
    }

    /// Sets the file's size, dropping bytes past `size` or extending with zeros.
    ///
    /// - Parameter size: The new size in bytes.
    /// - Throws: ``IOError`` with the system's reason, e.g. `.noSpace`.
    ///
    /// The corresponding C function is `ftruncate`.
    public func truncate(to size: UInt64) throws(IOError) {
        preconditionOpen()
        precondition(!readOnly, "PosixFileHandle for \(path) is read-only")
        let length = Self.position(size, advancedBy: 0)
        try IOError.catching("ftruncate", path: path) { try descriptor.resize(to: length) }
    }

    /// Makes the file's data and size durable.
    ///
    /// After a failure, treat everything written since the last successful sync as lost: the
    /// kernel may have dropped those pages, and a second sync may then succeed without them.
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.ioFailure` or `.noSpace`.
    ///
    /// The corresponding C function is `fdatasync`.
    public func sync() throws(IOError) {
        preconditionOpen()
        do {
            try descriptor.syncData()
        } catch {
            throw IOError(errno: error, operation: "fdatasync", path: path)
        }
    }

    /// Takes an advisory lock on the file through this handle's open file description, or converts the one it holds.
    ///
    /// - Parameters:
    ///   - mode: Shared (`LOCK_SH`) or exclusive (`LOCK_EX`).
    ///   - waiting: Whether to wait for a conflicting lock (else `LOCK_NB`).
    /// - Throws: ``IOError`` with `.wouldBlock` when not waiting and a conflicting lock is held elsewhere.
    ///
    /// The corresponding C function is `flock`.
    public func lock(_ mode: FileLockMode, waiting: Bool) throws(IOError) {
        preconditionOpen()
        do {
            try descriptor.lock(mode == .shared ? .shared : .exclusive, nonBlocking: !waiting)
        } catch {
            throw IOError(errno: error, operation: "flock", path: path)
        }
    }

    /// Releases the lock this handle holds, for every copy of its descriptor (a child forked without `exec`
    /// included); nothing when it holds none.
    ///
    /// The corresponding C function is `flock` with `LOCK_UN`.
    public func unlock() {
        preconditionOpen()
        // LOCK_UN on an open descriptor fails only for EINTR (retried) or a programmer error (EBADF, caught above).
        try? descriptor.unlock()
    }

    /// Closes the handle. Using it afterwards, including closing it again, is a programmer error.
    ///
    /// The descriptor is released even when this throws.
    ///
    /// - Throws: ``IOError`` with the system's reason (`.ioFailure` on some network file systems,
    ///   which report delayed write errors here).
    ///
    /// The corresponding C function is `close`.
    public func close() throws(IOError) {
        let wasClosed = isClosed.exchange(true, ordering: .acquiringAndReleasing)
        precondition(!wasClosed, "PosixFileHandle for \(path) closed twice")
        try IOError.catching("close", path: path) { try descriptor.close() }
    }

    /// Traps if the handle was closed: its descriptor number may now name another file.
    @inline(__always)
    private func preconditionOpen() {
        precondition(!isClosed.load(ordering: .acquiring), "PosixFileHandle for \(path) used after close()")
    }

    /// `offset + delta` as the `off_t` that `pread`/`pwrite`/`ftruncate` take.
    @inline(__always)
    private static func position(_ offset: UInt64, advancedBy delta: Int) -> Int64 {
        // `delta` is a count of bytes already transferred from a buffer, so 0 <= delta <= Int.max.
        let (sum, overflow) = offset.addingReportingOverflow(UInt64(delta))
        precondition(!overflow && sum <= UInt64(Int64.max), "file offset \(offset) + \(delta) exceeds Int64.max")
        return Int64(sum)
    }
}
