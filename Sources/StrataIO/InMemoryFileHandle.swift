import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file of an ``InMemoryFileSystem``.
///
/// The handle refers to the file itself, not to its name, as a POSIX descriptor does: it keeps
/// working after the file is renamed or removed, and ``sync()`` makes the file's contents durable
/// whatever its name now is.
///
/// It is `Sendable` without `@unchecked`: its properties are immutable, the file's bytes live in the
/// file system's `Lock`, and whether it was closed is an `Atomic`.
public final class InMemoryFileHandle: FileHandle {
    /// The path this handle was opened with.
    public let path: String

    /// The file system that owns the file.
    private let fileSystem: InMemoryFileSystem

    /// The file, independent of its name.
    private let node: InMemoryFileSystem.NodeID

    /// Whether ``close()`` ran.
    private let isClosed = Atomic<Bool>(false)

    /// A handle on `node`, which the caller has already counted as open.
    init(fileSystem: InMemoryFileSystem, node: InMemoryFileSystem.NodeID, path: String) {
        self.fileSystem = fileSystem
        self.node = node
        self.path = path
    }

    deinit {
        if !isClosed.load(ordering: .acquiring) {
            let handle = ObjectIdentifier(self)
            let node = node
            fileSystem.state.withLock { state in
                _ = state.unlock(node, handle: handle)
                state.release(node)
            }
        }
    }

    /// The file's identity (device and inode 0 and its node number) and current size.
    ///
    /// - Throws: never; using a closed handle is a precondition failure.
    public func identity() throws(IOError) -> FileIdentity {
        preconditionOpen()
        return fileSystem.state.withLock {
            FileIdentity(device: 0, inode: UInt64(node), size: UInt64($0.files[node]!.contents.count))
        }
    }

    /// The file's current size in bytes.
    ///
    /// - Throws: never; using a closed handle is a precondition failure.
    public func size() throws(IOError) -> UInt64 {
        preconditionOpen()
        return fileSystem.state.withLock { UInt64($0.files[node]!.contents.count) }
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at end of file.
    ///
    /// - Returns: The number of bytes read: less than `buffer.count` only at end of file, and 0 at
    ///   or past it.
    /// - Throws: never; using a closed handle, or an `offset` plus count beyond `Int.max`, is a
    ///   precondition failure.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(IOError) -> Int {
        preconditionOpen()
        _ = InMemoryFileSystem.State.end(of: offset, count: buffer.count)
        return fileSystem.state.withLock { state in
            state.files[node]!.contents.withUnsafeBytes { contents in
                guard offset < UInt64(contents.count) else { return 0 }
                let start = Int(offset)
                let count = min(buffer.count, contents.count - start)
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: contents[start..<(start + count)]))
                return count
            }
        }
    }

    /// Writes all of `bytes` at `offset`, zero-filling any gap between the end of the file and
    /// `offset`. Not durable until ``sync()``.
    ///
    /// - Throws: never (memory does not fill up); using a closed handle, or an end beyond `Int.max`, is a
    ///   precondition failure. Wrap the file system in ``FaultInjectingFileSystem`` to simulate failures.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(IOError) {
        preconditionOpen()
        let start = InMemoryFileSystem.State.end(of: offset, count: 0)
        _ = InMemoryFileSystem.State.end(of: offset, count: bytes.count)
        fileSystem.state.withLock { state in
            state.files[node]!.write(bytes, at: start)
            state.record(.write(path: path, offset: offset, count: bytes.count))
        }
    }

    /// Sets the file's size, dropping bytes past `size` or extending with zeros.
    /// Not durable until ``sync()``.
    ///
    /// - Throws: never; using a closed handle is a precondition failure.
    public func truncate(to size: UInt64) throws(IOError) {
        preconditionOpen()
        let length = InMemoryFileSystem.State.end(of: size, count: 0)
        fileSystem.state.withLock { state in
            state.files[node]!.truncate(to: length)
            state.record(.truncate(path: path, size: size))
        }
    }

    /// Makes the file's current contents and size durable: they survive
    /// ``InMemoryFileSystem/crashImage(policy:)``.
    ///
    /// The file's name is durable only once its directory is synced.
    ///
    /// - Throws: never; using a closed handle is a precondition failure.
    public func sync() throws(IOError) {
        preconditionOpen()
        fileSystem.state.withLock { state in
            state.files[node]!.sync()
            state.record(.sync(path: path))
        }
    }

    /// Takes a lock on the file through this handle, shared or exclusive, as `flock` would on a descriptor (a waiting
    /// call polls until the conflicting locks are gone), or converts the one it holds. It conflicts with the locks of
    /// other handles and of ``InMemoryFileSystem/lockFile(at:mode:waiting:)``.
    ///
    /// - Throws: ``IOError`` with `.wouldBlock` when not `waiting` while a conflicting lock on the file is held.
    public func lock(_ mode: FileLockMode, waiting: Bool) throws(IOError) {
        preconditionOpen()
        let handle = ObjectIdentifier(self)
        while true {
            do {
                try fileSystem.state.withLock { state throws(IOError) in
                    try state.lock(node, handle: handle, mode: mode, path: path)
                    state.record(.lock(path: path))
                }
                return
            } catch  where waiting && error.code == .wouldBlock {
                usleep(100)
            }
        }
    }

    /// Releases the lock this handle holds; nothing when it holds none.
    public func unlock() {
        preconditionOpen()
        let handle = ObjectIdentifier(self)
        fileSystem.state.withLock { state in
            if state.unlock(node, handle: handle) { state.record(.unlock(path: path)) }
        }
    }

    /// Closes the handle, releasing the lock it holds. Using it afterwards, including closing it again, is a
    /// programmer error.
    ///
    /// - Throws: never.
    public func close() throws(IOError) {
        let wasClosed = isClosed.exchange(true, ordering: .acquiringAndReleasing)
        precondition(!wasClosed, "InMemoryFileHandle for \(path) closed twice")
        let handle = ObjectIdentifier(self)
        fileSystem.state.withLock { state in
            _ = state.unlock(node, handle: handle)
            state.release(node)
        }
    }

    /// Traps if the handle was closed, as ``PosixFileHandle`` does.
    @inline(__always)
    private func preconditionOpen() {
        precondition(!isClosed.load(ordering: .acquiring), "InMemoryFileHandle for \(path) used after close()")
    }
}
