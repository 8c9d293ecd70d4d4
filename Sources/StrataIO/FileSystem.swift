/// The file-system seam: every byte Strata reads or writes goes through a `FileSystem`.
///
/// The engine never calls the operating system for file I/O itself. Production code uses
/// ``PosixFileSystem``; tests use ``InMemoryFileSystem``, which can simulate power loss by
/// dropping whatever was not covered by a completed sync, and ``FaultInjectingFileSystem``, which
/// wraps either and fails chosen operations with chosen errors.
///
/// Paths are plain strings joined with `/`. Durability follows POSIX: data written to a file
/// survives power loss only after ``FileHandle/sync()`` returns, and a file's directory entry
/// (its creation, rename or removal) only after ``syncDirectory(at:)`` on its parent.
public protocol FileSystem: Sendable {
    /// Opens (and, per `mode`, creates) a regular file for reading and writing.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` (a missing file with `.existing`, or a missing parent
    ///   directory), `.fileExists` (`.createNew` on an existing file), `.isADirectory`, or the system's reason.
    func openFile(at path: String, mode: FileOpenMode) throws(IOError) -> any FileHandle

    /// Opens an existing regular file for reading only: writing through the handle is a programmer error.
    ///
    /// What inspects a store without changing it (`ReadOnlyStore`, `strata fsck`, `info`, `dump`) opens every
    /// file this way, so a store on a read-only mount, with mode 444 or owned by another user can be read.
    /// The default implementation opens the file with ``openFile(at:mode:)`` and `.existing`.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.isADirectory`, `.permissionDenied`, or the system's reason.
    func openFileForReading(at path: String) throws(IOError) -> any FileHandle

    /// Whether a file or directory exists at `path`.
    func exists(at path: String) -> Bool

    /// Creates a directory (and missing parents); succeeds if it already exists.
    ///
    /// - Throws: ``IOError`` with `.fileExists` when the path names a file, `.notADirectory` when a
    ///   component of the path is a file, or the system's reason.
    func createDirectory(at path: String) throws(IOError)

    /// The names (not paths) of the entries of a directory, sorted.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.notADirectory`, or the system's reason.
    func contentsOfDirectory(at path: String) throws(IOError) -> [String]

    /// Removes a file. Not durable until the parent directory is synced.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.isADirectory`, or the system's reason.
    func removeFile(at path: String) throws(IOError)

    /// Removes an empty directory. Not durable until its parent directory is synced.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.notADirectory`, or the system's reason (a directory that is not
    ///   empty).
    ///
    /// The corresponding C function is `rmdir`.
    func removeDirectory(at path: String) throws(IOError)

    /// Atomically renames a file, replacing any file at `destination`, or a directory to a name that does not
    /// exist. Not durable until the parent directory is synced.
    ///
    /// - Throws: ``IOError`` (its path is `source`) with `.noSuchFile`, `.isADirectory`, or the system's reason.
    func rename(from source: String, to destination: String) throws(IOError)

    /// Makes the directory's entries (creations, renames, removals) durable.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.notADirectory`, or the system's reason (`.ioFailure`).
    ///
    /// The corresponding C function is `fsync` on the directory.
    func syncDirectory(at path: String) throws(IOError)

    /// Takes an advisory lock on the file at `path` (created if missing).
    ///
    /// Locks belong to the open file (as `flock` locks do), not to the process: two locks taken through two
    /// calls conflict even within one process. Every lock dies with its holder's process.
    ///
    /// - Parameters:
    ///   - mode: shared (any number of holders at once) or exclusive (one holder, no shared holders).
    ///   - waiting: whether to wait for a conflicting lock to go; without it the call fails at once.
    /// - Throws: ``IOError`` with code `.wouldBlock` when not `waiting` and another holder has a conflicting
    ///   lock (another process, or another open of the same store in this process).
    func lockFile(at path: String, mode: FileLockMode, waiting: Bool) throws(IOError) -> any FileLock

    /// Which file is at `path` now, and its size: two identities name the same file exactly when
    /// ``FileIdentity/isSameFile(as:)``, so a reader sees that a file was replaced by a rename (another process's
    /// new log).
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, or the system's reason.
    ///
    /// The corresponding C function is `stat`.
    func identity(ofFileAt path: String) throws(IOError) -> FileIdentity

    /// The IDs of the processes holding a lock on the file at `path`, where the system says (Linux's
    /// `/proc/locks`); nil when it cannot tell. The default implementation returns nil.
    func lockHolders(ofFileAt path: String) -> [Int32]?

    /// Takes an exclusive advisory lock on an existing file at `path` without waiting, opening it read-only
    /// and never creating it, so that a reader of a store on a read-only mount can still exclude writers.
    /// The default implementation checks ``exists(at:)`` and calls ``lockFile(at:)``.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` when there is no such file, `.wouldBlock` when another holder
    ///   has the lock, or the system's reason.
    func lockExistingFile(at path: String) throws(IOError) -> any FileLock
}

extension FileSystem {
    /// Opens an existing file with ``openFile(at:mode:)`` and `.existing`: for file systems whose handles
    /// have no read-only mode (the in-memory one), where nothing but the caller's discipline keeps it read.
    ///
    /// - Throws: what ``openFile(at:mode:)`` throws.
    public func openFileForReading(at path: String) throws(IOError) -> any FileHandle {
        try openFile(at: path, mode: .existing)
    }

    /// Takes an exclusive advisory lock on the file at `path` (created if missing) without waiting.
    ///
    /// - Throws: ``IOError`` with code `.wouldBlock` when another holder has any lock on it (another process,
    ///   or another open of the same store in this process).
    public func lockFile(at path: String) throws(IOError) -> any FileLock {
        try lockFile(at: path, mode: .exclusive, waiting: false)
    }

    /// Nothing known: the default for file systems that cannot list a lock's holders.
    public func lockHolders(ofFileAt path: String) -> [Int32]? { nil }

    /// Checks ``exists(at:)``, then takes the lock with ``lockFile(at:)``.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` when there is no such file, or what ``lockFile(at:)`` throws.
    public func lockExistingFile(at path: String) throws(IOError) -> any FileLock {
        guard exists(at: path) else { throw IOError(.noSuchFile, operation: "open", path: path) }
        return try lockFile(at: path)
    }
}

/// How ``FileSystem/openFile(at:mode:)`` treats a missing or existing file.
public enum FileOpenMode: Sendable, Equatable {
    /// The file must exist.
    case existing
    /// Create the file if it is missing, else open it as it is.
    case createIfMissing
    /// Create the file; fail with `.fileExists` if it exists.
    case createNew
    /// Create the file, or truncate it to zero bytes if it exists.
    case truncate
}

/// An open regular file. Safe to use from several threads at once: reads and writes are positional.
public protocol FileHandle: AnyObject, Sendable {
    /// The path this handle was opened with.
    var path: String { get }

    /// The file's current size in bytes.
    ///
    /// - Throws: ``IOError`` with the system's reason.
    func size() throws(IOError) -> UInt64

    /// Which file this handle has open (it may no longer have a name, or another file may have taken its name) and
    /// its current size: compare with ``FileSystem/identity(ofFileAt:)`` to see whether a path still names it.
    ///
    /// - Throws: ``IOError`` with the system's reason.
    ///
    /// The corresponding C function is `fstat`.
    func identity() throws(IOError) -> FileIdentity

    /// The end of the file's data: the offset after its last byte that is not in a hole, so that a reader
    /// looking for the last written bytes of a sparse file need not read gigabytes of zeros. Never more than
    /// ``size()``; ``size()`` itself when the file system does not report holes (the default implementation).
    ///
    /// - Throws: ``IOError`` with the system's reason.
    func dataEnd() throws(IOError) -> UInt64

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at end of file.
    /// - Returns: the number of bytes read (less than `buffer.count` only at end of file).
    /// - Throws: ``IOError`` with the system's reason, e.g. `.ioFailure`.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(IOError) -> Int

    /// Writes all of `bytes` at `offset`, extending the file if needed.
    /// A failure may leave a prefix written (a short write).
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.noSpace` or `.ioFailure`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(IOError)

    /// Sets the file's size, dropping bytes past `size` or extending with zeros.
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.noSpace`.
    func truncate(to size: UInt64) throws(IOError)

    /// Maps the file's first `length` bytes read-only and shared, so that reads need no system call; nil when
    /// this handle reads only through ``read(into:at:)`` (the in-memory and fault-injecting file systems, whose
    /// reads tests must see). The length may pass the file's end; see ``FileMapping`` for what may be read.
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.outOfMemory` for address space.
    ///
    /// The corresponding C function is `mmap`.
    func mapReadOnly(length: Int) throws(IOError) -> FileMapping?

    /// Makes the file's data and size durable.
    ///
    /// - Throws: ``IOError`` with the system's reason, e.g. `.ioFailure`. After a failure, treat everything
    ///   written since the last successful sync as lost.
    ///
    /// The corresponding C function is `fdatasync`.
    func sync() throws(IOError)

    /// Asks for `count` bytes written at `offset` to start going to the disk now, without waiting: a hint that makes
    /// nothing durable (only ``sync()`` does), so that a sync after many writes finds them on their way. Errors are
    /// left to the sync to report.
    ///
    /// The corresponding C function is `sync_file_range` with `SYNC_FILE_RANGE_WRITE`.
    func startWriteback(at offset: UInt64, count: Int)

    /// Takes an advisory lock on the open file through this handle, as `flock` does on a descriptor: the lock
    /// belongs to this handle (not to its process, nor to other handles on the same file, which conflict with it as
    /// locks taken with ``FileSystem/lockFile(at:mode:waiting:)`` do), and lasts until ``unlock()``, until the handle
    /// is closed, or until the process ends. Locking a handle that holds a lock converts it to `mode`.
    ///
    /// A handle kept open for the file's data can be locked and unlocked again and again without opening the file
    /// each time: Strata's writer lock is taken so, once per write transaction, on the handle of the commit notice.
    ///
    /// - Parameters:
    ///   - mode: shared (any number of holders at once) or exclusive (one holder, no shared holders).
    ///   - waiting: whether to wait for a conflicting lock to go; without it the call fails at once.
    /// - Throws: ``IOError`` with code `.wouldBlock` when not `waiting` and another holder has a conflicting lock,
    ///   or the system's reason.
    ///
    /// The corresponding C function is `flock`.
    func lock(_ mode: FileLockMode, waiting: Bool) throws(IOError)

    /// Releases the lock this handle holds (``lock(_:waiting:)``); nothing when it holds none.
    ///
    /// The corresponding C function is `flock` with `LOCK_UN`.
    func unlock()

    /// Closes the handle. Using it afterwards is a programmer error.
    ///
    /// - Throws: ``IOError`` with the system's reason; the handle is released even then.
    func close() throws(IOError)
}

/// How ``FileSystem/lockFile(at:mode:waiting:)`` locks a file.
public enum FileLockMode: Sendable, Equatable {
    /// Any number of holders at once; excludes an exclusive lock. `LOCK_SH` in C.
    case shared
    /// One holder, and no shared holders. `LOCK_EX` in C.
    case exclusive
}

/// Which file a path names now, and how long it is (``FileSystem/identity(ofFileAt:)``).
public struct FileIdentity: Sendable, Equatable {
    /// With ``inode``, equal for two paths (or two moments) exactly when they name the same file.
    public var device: UInt64
    /// The file's number on its device.
    public var inode: UInt64
    /// The file's size in bytes.
    public var size: UInt64

    /// Creates an identity.
    public init(device: UInt64, inode: UInt64, size: UInt64) {
        self.device = device
        self.inode = inode
        self.size = size
    }

    /// Whether both name the same file (whatever their sizes).
    public func isSameFile(as other: FileIdentity) -> Bool { device == other.device && inode == other.inode }
}

/// An advisory lock held until ``unlock()`` or until the holder's process ends.
public protocol FileLock: AnyObject, Sendable {
    /// Releases the lock. Safe to call more than once.
    func unlock()
}

extension FileHandle {
    /// Nothing: a file system that keeps its files in memory, or wraps another for tests, has no disk to start on.
    public func startWriteback(at offset: UInt64, count: Int) {}

    /// No mapping: reads go through ``read(into:at:)``.
    public func mapReadOnly(length: Int) throws(IOError) -> FileMapping? { nil }

    /// The file's size: a file system that does not report holes has its data up to the end.
    ///
    /// - Throws: what ``size()`` throws.
    public func dataEnd() throws(IOError) -> UInt64 { try size() }

    /// Reads exactly `count` bytes at `offset`, or fewer at end of file.
    ///
    /// - Parameters:
    ///   - count: how many bytes to read; negative is a precondition failure.
    ///   - offset: the file offset of the first byte.
    /// - Returns: the bytes read: `count` of them, or fewer when the file ends first.
    /// - Throws: what ``read(into:at:)`` throws.
    public func read(count: Int, at offset: UInt64) throws(IOError) -> [UInt8] {
        precondition(count >= 0)
        if count == 0 { return [] }
        var result = [UInt8](repeating: 0, count: count)
        // withUnsafeMutableBytes rethrows untyped errors; a typed Result carries IOError through it.
        let got = try result.withUnsafeMutableBytes { buffer in
            Result { () throws(IOError) -> Int in try read(into: buffer, at: offset) }
        }.get()
        if got < count { result.removeSubrange(got...) }
        return result
    }

    /// Writes all of `bytes` at `offset`.
    ///
    /// - Throws: what ``write(_:at:)-(UnsafeRawBufferPointer,_)`` throws; a prefix may have been written.
    public func write(_ bytes: [UInt8], at offset: UInt64) throws(IOError) {
        // withUnsafeBytes rethrows untyped errors; a typed Result carries IOError through it.
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(IOError) in try write(buffer, at: offset) }
        }.get()
    }
}
