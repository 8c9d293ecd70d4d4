import StrataLock

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file system in memory, with POSIX durability semantics, for tests that simulate power
/// loss.
///
/// Every file has two contents: what reads see now, and what would survive power loss, which a
/// handle's ``FileHandle/sync()`` updates. Every directory has two namespaces: the names visible
/// now, and the names that would survive, which ``syncDirectory(at:)`` updates. Creating, renaming
/// and removing a file change only the visible names until the directory (both directories, for a
/// move between them) is synced. ``crashImage(policy:)`` returns a new file system holding what
/// would survive if the power went now.
///
/// For example:
///
///     let fileSystem = InMemoryFileSystem()
///     try fileSystem.createDirectory(at: "/db")
///     try fileSystem.syncDirectory(at: "/")
///     let file = try fileSystem.openFile(at: "/db/wal", mode: .createNew)
///     try file.write([1, 2, 3], at: 0)
///     try file.sync()
///     try file.write([4], at: 3)                      // never synced
///
///     let before = fileSystem.crashImage()
///     before.exists(at: "/db/wal")                  // false: "/db" was not synced
///
///     try fileSystem.syncDirectory(at: "/db")
///     let after = fileSystem.crashImage()
///     after.contents(of: "/db/wal")                 // [1, 2, 3]
///
/// Beyond durability it behaves like ``PosixFileSystem`` on Linux: the same ``IOError`` codes for
/// missing files, existing files, missing parents and directories in the wrong place; reads past
/// the end return fewer bytes; writes past the end zero-fill the gap; handles keep referring to
/// their file after it is renamed or removed; locks conflict until unlocked. Absolute and relative
/// paths name the same entries (there is no working directory), `.` is ignored and `..` is applied
/// to the text of the path. Only files can be renamed, not directories.
///
/// It is `Sendable` without `@unchecked`: all its state is in one `Lock`, so every operation is
/// atomic with respect to the others. A fault-injecting wrapper needs nothing from it beyond the
/// ``FileSystem`` protocol (and ``crashImage(policy:)`` to take the picture at the chosen moment).
///
/// ## Topics
///
/// ### Creating a file system
/// - ``init(recordsEvents:)``
///
/// ### Simulating power loss
/// - ``crashImage(policy:)``
/// - ``CrashPolicy``
///
/// ### Inspecting and editing files in tests
/// - ``contents(of:)``
/// - ``durableContents(of:)``
/// - ``fileSize(of:)``
/// - ``setContents(_:of:)``
///
/// ### Observing operations
/// - ``operationCount``
/// - ``events``
/// - ``Event``
///
/// ### File system operations
/// - ``openFile(at:mode:)``
/// - ``exists(at:)``
/// - ``createDirectory(at:)``
/// - ``contentsOfDirectory(at:)``
/// - ``removeFile(at:)``
/// - ``rename(from:to:)``
/// - ``syncDirectory(at:)``
/// - ``lockFile(at:)``
/// - ``InMemoryFileHandle``
/// - ``InMemoryFileLock``
public final class InMemoryFileSystem: FileSystem {
    /// Everything: files, directories, open counts, locks and the event log.
    let state: Lock<State>

    /// Creates an empty file system: a root directory and nothing else.
    ///
    /// - Parameter recordsEvents: Whether to keep every operation in ``events``, for tests that
    ///   want to see what a workload did. ``operationCount`` is kept either way.
    public init(recordsEvents: Bool = false) {
        state = Lock(State(recordsEvents: recordsEvents))
    }

    /// A file system holding `state`.
    private init(state: consuming sending State) {
        self.state = Lock(state)
    }

    // MARK: - FileSystem

    /// Opens (and, per `mode`, creates) a regular file for reading and writing.
    ///
    /// A created file exists for ``crashImage(policy:)`` only once its directory is synced.
    ///
    /// - Returns: An ``InMemoryFileHandle``.
    /// - Throws: ``IOError`` with `.noSuchFile` (missing file with `.existing`, or missing parent
    ///   directory), `.fileExists` (`.createNew` on an existing file), `.isADirectory`,
    ///   `.notADirectory` (a file where a directory is expected on the path).
    public func openFile(at path: String, mode: FileOpenMode) throws(IOError) -> any FileHandle {
        let node = try state.withLock { state throws(IOError) in
            let node = try state.openFile(at: path, mode: mode)
            state.record(.open(path: path, mode: mode))
            return node
        }
        return InMemoryFileHandle(fileSystem: self, node: node, path: path)
    }

    /// Whether a file or directory is visible at `path` now.
    public func exists(at path: String) -> Bool {
        state.withLock { state in (try? state.node(at: path, operation: "stat")) != nil }
    }

    /// Creates a directory (and missing parents); succeeds if it already exists.
    /// Each new directory is durable only once its parent is synced.
    ///
    /// - Throws: ``IOError`` with `.fileExists` when the path names a file, `.notADirectory` when a
    ///   directory on the way is a file.
    public func createDirectory(at path: String) throws(IOError) {
        try state.withLock { state throws(IOError) in
            try state.createDirectory(at: path)
            state.record(.createDirectory(path: path))
        }
    }

    /// The names (not paths) of the entries visible in a directory now, sorted.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` or `.notADirectory`.
    public func contentsOfDirectory(at path: String) throws(IOError) -> [String] {
        try state.withLock { state throws(IOError) in
            let directory = try state.directory(at: path, operation: "readdir")
            return state.directories[directory]!.entries.keys.sorted()
        }
    }

    /// Removes a file's name. Not durable until the parent directory is synced; open handles keep
    /// working.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` or `.isADirectory`.
    public func removeFile(at path: String) throws(IOError) {
        try state.withLock { state throws(IOError) in
            try state.removeFile(at: path)
            state.record(.removeFile(path: path))
        }
    }

    /// Removes an empty directory's name. Not durable until the parent directory is synced.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile`, `.notADirectory`, or `.fileExists` for a directory that is not
    ///   empty.
    public func removeDirectory(at path: String) throws(IOError) {
        try state.withLock { state throws(IOError) in
            try state.removeDirectory(at: path)
            state.record(.removeFile(path: path))
        }
    }

    /// Atomically renames a file, replacing any file at `destination`, or a directory to a name that does not
    /// exist (not into itself). Not durable until the parent directories of both names are synced.
    ///
    /// - Throws: ``IOError`` (its path is `source`) with `.noSuchFile` (missing source or
    ///   destination directory), `.isADirectory` (a file renamed over a directory), `.fileExists` (a directory
    ///   renamed over an existing name), `.other(EINVAL)` (a directory moved into itself), `.notADirectory`.
    public func rename(from source: String, to destination: String) throws(IOError) {
        try state.withLock { state throws(IOError) in
            try state.rename(from: source, to: destination)
            state.record(.rename(from: source, to: destination))
        }
    }

    /// Makes the directory's entries (creations, renames, removals) durable.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` or `.notADirectory`.
    public func syncDirectory(at path: String) throws(IOError) {
        try state.withLock { state throws(IOError) in
            try state.syncDirectory(at: path)
            state.record(.syncDirectory(path: path))
        }
    }

    /// Takes a lock on the file at `path` (created if missing), shared or exclusive, as `flock` would: a waiting
    /// call polls until the conflicting locks are gone.
    ///
    /// - Returns: An ``InMemoryFileLock``.
    /// - Throws: ``IOError`` with `.wouldBlock` when not `waiting` while a conflicting lock on the same file is
    ///   held; `.noSuchFile` when the parent directory is missing; `.isADirectory`.
    public func lockFile(at path: String, mode: FileLockMode, waiting: Bool) throws(IOError) -> any FileLock {
        while true {
            do {
                let node = try state.withLock { state throws(IOError) in
                    let node = try state.lockFile(at: path, mode: mode)
                    state.record(.lock(path: path))
                    return node
                }
                return InMemoryFileLock(fileSystem: self, node: node, path: path)
            } catch  where waiting && error.code == .wouldBlock {
                usleep(100)
            }
        }
    }

    /// The file's node number (device 0) and its size.
    ///
    /// - Throws: ``IOError`` with `.noSuchFile` or `.isADirectory`.
    public func identity(ofFileAt path: String) throws(IOError) -> FileIdentity {
        try state.withLock { state throws(IOError) in
            guard let id = try state.node(at: path, operation: "stat") else {
                throw IOError(.noSuchFile, operation: "stat", path: path)
            }
            guard let file = state.files[id] else { throw IOError(.isADirectory, operation: "stat", path: path) }
            return FileIdentity(device: 0, inode: UInt64(id), size: UInt64(file.contents.count))
        }
    }

    // MARK: - Power loss

    /// A new file system holding what would survive power loss now.
    ///
    /// The image has the durable namespace of every directory, walked from the root, and each file
    /// reachable in it with its surviving contents: under the default policy, exactly its contents at
    /// its last sync. Files whose creation was never made durable by a directory sync are absent;
    /// renames and removals that were not are undone. A file renamed between directories with only
    /// the destination synced is under both names, as one file.
    ///
    /// Open handles and held locks are not carried over: they stay attached to this file system,
    /// which goes on as if the power had not gone. Event recording is carried over, with an empty
    /// log.
    ///
    /// - Parameter policy: What happens to data written after each file's last sync.
    ///   The default, ``CrashPolicy/dropUnsynced``, drops all of it.
    /// - Returns: An independent file system.
    public func crashImage(policy: CrashPolicy = .dropUnsynced) -> InMemoryFileSystem {
        let image = state.withLock { $0.crashImage(policy: policy) }
        return InMemoryFileSystem(state: image)
    }

    // MARK: - Test helpers

    /// The current contents of the file at `path`, or `nil` if there is no file there.
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { state in state.fileIfPresent(at: path).map { state.files[$0]!.contents } }
    }

    /// The contents of the file at `path` as of its last sync, or `nil` if there is no file there
    /// now. Whether the file's name is durable is a separate question.
    public func durableContents(of path: String) -> [UInt8]? {
        state.withLock { state in state.fileIfPresent(at: path).map { state.files[$0]!.durableContents } }
    }

    /// The current size of the file at `path`, or `nil` if there is no file there.
    public func fileSize(of path: String) -> UInt64? {
        state.withLock { state in state.fileIfPresent(at: path).map { UInt64(state.files[$0]!.contents.count) } }
    }

    /// Replaces the contents of the file at `path`, creating it if missing: byte surgery for tests.
    ///
    /// The new contents count as durable, and so does the file's name, as if the file had been
    /// written, synced and its directory synced. Open handles on the file see the new contents.
    ///
    /// For example, to flip a bit of a synced log and check that recovery notices:
    ///
    ///     var bytes = fileSystem.contents(of: "/db/wal")!
    ///     bytes[40] ^= 0x01
    ///     try fileSystem.setContents(bytes, of: "/db/wal")
    ///
    /// - Parameters:
    ///   - bytes: The new contents.
    ///   - path: The file's path; its parent directory must exist.
    /// - Throws: ``IOError`` with `.noSuchFile` (missing parent), `.isADirectory`, `.notADirectory`.
    public func setContents(_ bytes: [UInt8], of path: String) throws(IOError) {
        try state.withLock { state throws(IOError) in
            try state.setContents(bytes, of: path)
            state.record(.setContents(path: path))
        }
    }

    /// How many operations have succeeded so far that could change what a crash leaves: every
    /// ``Event``, whether or not events are recorded.
    public var operationCount: Int {
        state.withLock { $0.operationCount }
    }

    /// Every operation so far, oldest first, when created with `recordsEvents: true`; else empty.
    public var events: [Event] {
        state.withLock { $0.events ?? [] }
    }
}
