import CSystemCalls
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating system's file system, through POSIX calls.
///
/// Every call is a thin wrapper over one system call (or a short loop of them): files are opened
/// with `O_CLOEXEC`, read and written with `pread`/`pwrite`, synced with `fdatasync`; directories
/// are synced by opening them and calling `fsync`; locks are `flock`. Errors
/// carry the operation, the path and a portable ``IOError/Code``.
///
/// For example:
///
///     let fileSystem = PosixFileSystem()
///     try fileSystem.createDirectory(at: "/var/db/store")
///     let file = try fileSystem.openFile(at: "/var/db/store/wal", mode: .createNew)
///     try file.write([1, 2, 3], at: 0)
///     try file.sync()
///     try fileSystem.syncDirectory(at: "/var/db/store")  // the new name is now durable too
///     try file.close()
///
/// Created files get permissions `rw-r--r--` and directories `rwxr-xr-x`, before the umask.
///
/// ## Topics
///
/// ### Files
/// - ``openFile(at:mode:)``
/// - ``exists(at:)``
/// - ``removeFile(at:)``
/// - ``rename(from:to:)``
/// - ``PosixFileHandle``
///
/// ### Directories
/// - ``createDirectory(at:)``
/// - ``contentsOfDirectory(at:)``
/// - ``syncDirectory(at:)``
///
/// ### Locking
/// - ``lockFile(at:mode:waiting:)``
/// - ``lockHolders(ofFileAt:)``
/// - ``PosixFileLock``
public struct PosixFileSystem: FileSystem {
    /// Permissions of created files: `rw-r--r--`.
    private static let filePermissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]

    /// Permissions of created directories: `rwxr-xr-x`.
    private static let directoryPermissions: FilePermissions = [
        .ownerReadWriteExecute, .groupReadExecute, .otherReadExecute,
    ]

    /// Creates a handle on the operating system's file system.
    public init() {}

    /// Opens (and, per `mode`, creates) a regular file for reading and writing.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - mode: Whether the file must exist, may be created, must be created, or is truncated.
    /// - Returns: A ``PosixFileHandle``.
    /// - Throws: ``IOError`` with `.noSuchFile` (missing file with `.existing`, or missing parent
    ///   directory), `.fileExists` (`.createNew` on an existing file), `.isADirectory`,
    ///   `.permissionDenied`, `.tooManyOpenFiles`, …
    ///
    /// The corresponding C function is `open` with `O_RDWR | O_CLOEXEC` and, per mode,
    /// `O_CREAT`, `O_EXCL` or `O_TRUNC`.
    public func openFile(at path: String, mode: FileOpenMode) throws(IOError) -> any FileHandle {
        var options: FileDescriptor.OpenOptions = [.closeOnExec]
        switch mode {
        case .existing: break
        case .createIfMissing: options.insert(.create)
        case .createNew: options.formUnion([.create, .exclusiveCreate])
        case .truncate: options.formUnion([.create, .truncate])
        }
        let permissions = options.contains(.create) ? Self.filePermissions : nil
        let descriptor = try IOError.catching("open", path: path) {
            try FileDescriptor.open(FilePath(path), .readWrite, options: options, permissions: permissions)
        }
        return PosixFileHandle(descriptor: descriptor, path: path)
    }

    /// Opens an existing regular file for reading only.
    ///
    /// - Parameter path: The file's path.
    /// - Returns: A ``PosixFileHandle`` that must not be written, truncated or synced through.
    /// - Throws: ``IOError`` with `.noSuchFile`, `.isADirectory`, `.permissionDenied`, …
    ///
    /// The corresponding C function is `open` with `O_RDONLY | O_CLOEXEC`.
    public func openFileForReading(at path: String) throws(IOError) -> any FileHandle {
        let descriptor = try IOError.catching("open", path: path) {
            try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        }
        return PosixFileHandle(descriptor: descriptor, path: path, readOnly: true)
    }

    /// Whether a file or directory exists at `path` (following symbolic links).
    ///
    /// An entry that cannot be examined (for example for lack of permission) counts as missing.
    ///
    /// The corresponding C function is `stat`.
    public func exists(at path: String) -> Bool {
        (try? FilePath(path).stat()) != nil
    }

    /// Creates a directory and any missing parents; succeeds if it already exists.
    ///
    /// The new directories are durable only after their parents are synced.
    ///
    /// - Parameter path: The directory's path.
    /// - Throws: ``IOError`` with `.fileExists` when the path names a file, `.notADirectory` when a
    ///   directory on the way is a file; `.permissionDenied`, `.noSpace`, …
    ///
    /// The corresponding C function is `mkdir`, for each missing directory from the top down.
    public func createDirectory(at path: String) throws(IOError) {
        try Self.makeDirectories(FilePath(path))
    }

    /// Creates `directory` after its missing parents: `mkdir -p`.
    private static func makeDirectories(_ directory: FilePath) throws(IOError) {
        do {
            try directory.makeDirectory(permissions: directoryPermissions)
            return
        } catch {
            switch error {
            case .fileExists:
                if isDirectory(directory) { return }
                throw IOError(errno: error, operation: "mkdir", path: directory.string)
            case .noSuchFileOrDirectory:
                let parent = directory.removingLastComponent()
                guard !parent.isEmpty, parent != directory else {
                    throw IOError(errno: error, operation: "mkdir", path: directory.string)
                }
                try makeDirectories(parent)
            default:
                throw IOError(errno: error, operation: "mkdir", path: directory.string)
            }
        }
        // The parent exists now; another thread or process may have created `directory` meanwhile.
        do {
            try directory.makeDirectory(permissions: directoryPermissions)
        } catch {
            if error == .fileExists && isDirectory(directory) { return }
            throw IOError(errno: error, operation: "mkdir", path: directory.string)
        }
    }

    /// Whether `path` names a directory (following symbolic links).
    private static func isDirectory(_ path: FilePath) -> Bool {
        (try? path.stat())?.type == .directory
    }

    /// The names (not paths) of the entries of a directory, sorted, without `.` and `..`.
    ///
    /// - Parameter path: The directory's path.
    /// - Returns: The entry names in ascending order.
    /// - Throws: ``IOError`` with `.noSuchFile`, `.notADirectory`, `.permissionDenied`, …
    ///
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    public func contentsOfDirectory(at path: String) throws(IOError) -> [String] {
        do {
            return try FilePath(path).directoryEntryNames().sorted()
        } catch {
            throw IOError(errno: error, operation: "readdir", path: path)
        }
    }

    /// Removes a file. Not durable until the parent directory is synced.
    ///
    /// Open handles on the file stay usable; its storage is freed when the last one is closed.
    ///
    /// - Parameter path: The file's path.
    /// - Throws: ``IOError`` with `.noSuchFile`, `.isADirectory`, `.permissionDenied`, …
    ///
    /// The corresponding C function is `unlink`.
    public func removeFile(at path: String) throws(IOError) {
        do {
            try FilePath(path).unlink()
        } catch {
            throw IOError(errno: error, operation: "unlink", path: path)
        }
    }

    /// Removes an empty directory. Not durable until its parent directory is synced.
    ///
    /// - Throws: ``IOError`` with the system's reason.
    public func removeDirectory(at path: String) throws(IOError) {
        do {
            try FilePath(path).removeDirectory()
        } catch {
            throw IOError(errno: error, operation: "rmdir", path: path)
        }
    }

    /// Atomically renames a file, replacing any file at `destination`.
    /// Not durable until the parent directories of both names are synced.
    ///
    /// Open handles on the file stay valid and keep referring to it under its new name.
    ///
    /// - Parameters:
    ///   - source: The file's current path.
    ///   - destination: Its new path.
    /// - Throws: ``IOError`` (its path is `source`) with `.noSuchFile`, `.isADirectory`, …
    ///
    /// The corresponding C function is `rename`.
    public func rename(from source: String, to destination: String) throws(IOError) {
        do {
            try FilePath(source).rename(to: FilePath(destination))
        } catch {
            throw IOError(errno: error, operation: "rename", path: source)
        }
    }

    /// Makes the directory's entries (creations, renames, removals) durable.
    ///
    /// - Parameter path: The directory's path.
    /// - Throws: ``IOError`` with `.noSuchFile`, `.notADirectory`, `.ioFailure`, …
    ///
    /// The corresponding C function is `fsync` on the directory, opened with
    /// `O_RDONLY | O_DIRECTORY | O_CLOEXEC`.
    public func syncDirectory(at path: String) throws(IOError) {
        let directory = try IOError.catching("open", path: path) {
            try FileDescriptor.open(FilePath(path), .readOnly, options: [.directory, .closeOnExec])
        }
        // A read-only directory descriptor has no data that closing could fail to write.
        defer { try? directory.close() }
        do {
            try directory.sync()
        } catch {
            throw IOError(errno: error, operation: "fsync", path: path)
        }
    }

    /// Takes an advisory lock on the file at `path` (created if missing), shared or exclusive, waiting for a
    /// conflicting one to go or not.
    ///
    /// The lock conflicts as `flock` locks do, including with a lock taken by an earlier call in this process
    /// that is still held (each call opens the file anew).
    ///
    /// For example:
    ///
    ///     let lock = try fileSystem.lockFile(at: "/var/db/store/LOCK", mode: .shared, waiting: false)
    ///     defer { lock.unlock() }
    ///
    /// - Parameters:
    ///   - path: The lock file's path.
    ///   - mode: Shared (`LOCK_SH`) or exclusive (`LOCK_EX`).
    ///   - waiting: Whether to wait for a conflicting lock (else `LOCK_NB`).
    /// - Returns: A ``PosixFileLock`` that holds the lock until ``FileLock/unlock()``.
    /// - Throws: ``IOError`` with `.wouldBlock` when not waiting and a conflicting lock is held elsewhere;
    ///   `.noSuchFile` when the parent directory is missing; `.permissionDenied`, …
    ///
    /// The corresponding C functions are `open` and `flock`.
    public func lockFile(at path: String, mode: FileLockMode, waiting: Bool) throws(IOError) -> any FileLock {
        let descriptor = try IOError.catching("open", path: path) {
            try FileDescriptor.open(
                FilePath(path),
                .readOnly,
                options: [.create, .closeOnExec],
                permissions: Self.filePermissions
            )
        }
        do {
            try descriptor.lock(mode == .shared ? .shared : .exclusive, nonBlocking: !waiting)
        } catch {
            // Nothing was locked; the descriptor is ours to release and carries no data.
            try? descriptor.close()
            throw IOError(errno: error, operation: "flock", path: path)
        }
        return PosixFileLock(descriptor: descriptor, path: path)
    }

    /// The device, inode and size of the file at `path` (following symbolic links).
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.permissionDenied`, …
    ///
    /// The corresponding C function is `stat`.
    public func identity(ofFileAt path: String) throws(IOError) -> FileIdentity {
        // On the C string itself: a store looks at its log's identity before every write transaction, and
        // `FilePath(path)` would parse and normalise the path each time (a quarter of a small commit's catch-up).
        // `statx` without timestamps, not `stat`: reading the log's timestamps before each commit made its sync a
        // third slower (`csystemcalls.h`).
        var status = csystemcalls_file_status()
        guard path.withCString({ csystemcalls_file_status_path($0, &status) }) == 0 else {
            throw IOError(errno: Errno(rawValue: errno), operation: "stat", path: path)
        }
        return FileIdentity(device: status.device, inode: status.inode, size: status.size)
    }

    /// The processes holding a `flock` or POSIX lock on the file at `path`, from Linux's `/proc/locks` (each line
    /// names the holder's process ID and the locked file's `major:minor:inode`); nil where there is no such file
    /// or the lock file cannot be examined.
    public func lockHolders(ofFileAt path: String) -> [Int32]? {
        guard let status = try? FilePath(path).stat(),
            let table = try? PosixFileSystem().openFileForReading(at: "/proc/locks")
        else { return nil }
        defer { try? table.close() }
        // /proc files report a size of 0: read until a read comes back empty.
        var bytes: [UInt8] = []
        while let chunk = try? table.read(count: 1 << 16, at: UInt64(bytes.count)), !chunk.isEmpty {
            bytes += chunk
        }
        return LockTable(bytes).holders(
            device: UInt64(status.deviceID.rawValue), inode: UInt64(status.inode.rawValue))
    }

    /// Takes an exclusive advisory lock on the existing file at `path` without waiting; the file is opened
    /// read-only and never created, so this works on a read-only mount.
    ///
    /// - Parameter path: The lock file's path.
    /// - Returns: A ``PosixFileLock`` that holds the lock until ``FileLock/unlock()``.
    /// - Throws: ``IOError`` with `.noSuchFile` when there is no such file, `.wouldBlock` when the lock is
    ///   held elsewhere; `.permissionDenied`, …
    ///
    /// The corresponding C functions are `open` (`O_RDONLY`, without `O_CREAT`) and `flock(LOCK_EX | LOCK_NB)`.
    public func lockExistingFile(at path: String) throws(IOError) -> any FileLock {
        let descriptor = try IOError.catching("open", path: path) {
            try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        }
        do {
            try descriptor.lock(.exclusive, nonBlocking: true)
        } catch {
            // Nothing was locked; the descriptor is ours to release and carries no data.
            try? descriptor.close()
            throw IOError(errno: error, operation: "flock", path: path)
        }
        return PosixFileLock(descriptor: descriptor, path: path)
    }
}
