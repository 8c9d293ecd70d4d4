import StrataLock

/// Wraps any ``FileSystem`` and makes chosen operations fail, for tests of what the engine does when
/// the disk fills up, a device reports an I/O error, a write lands short or the power goes.
///
/// Every operation that reaches the file system gets an index (0, 1, 2, ...) in the order it starts.
/// A ``Fault`` says which operations fail and how; ``onOperation`` lets a test look at the file
/// system after each operation (for example to take an ``InMemoryFileSystem/crashImage(policy:)``
/// there: a crash point).
///
/// For example, to make the 10th write fail with a full disk, once:
///
///     let faulty = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
///     faulty.inject(Fault(on: [.write], after: 9, code: .noSpace))
///
/// ## Topics
/// - ``Fault``
/// - ``Operation``
/// - ``inject(_:)``
/// - ``clearFaults()``
/// - ``powerLoss(afterOperations:)``
public final class FaultInjectingFileSystem: FileSystem {
    /// The kinds of operation a fault can target.
    public enum Operation: String, Sendable, CaseIterable {
        /// File-handle operations: `open` is ``FileSystem/openFile(at:mode:)``, the others are the
        /// ``FileHandle`` calls of the same names (`size` is ``FileHandle/size()``).
        case open, read, write, truncate, sync, close, size
        /// File-system operations, named after the ``FileSystem`` calls (`lock` is ``FileSystem/lockFile(at:)``, and
        /// also ``FileHandle/lock(_:waiting:)``).
        /// `exists` is counted but never fails: ``FileSystem/exists(at:)`` cannot throw. `removeFile` also counts
        /// ``FileSystem/removeDirectory(at:)``.
        case exists, createDirectory, contentsOfDirectory, removeFile, rename, syncDirectory, lock
    }

    /// One injected failure.
    public struct Fault: Sendable, Equatable {
        /// The operations the fault counts and fails.
        public var operations: Set<Operation>
        /// How many matching operations succeed before the first failure.
        public var skip: Int
        /// The error the failing operations report.
        public var code: IOError.Code
        /// Fail every matching operation from then on (a dead device), or only one (a transient error).
        public var persistent: Bool
        /// Only operations on paths containing this text count (nil: every path).
        public var pathContaining: String?
        /// For a failing write: write this fraction of the bytes first (a short write), then fail.
        public var shortWriteFraction: Double?

        /// Creates a fault.
        ///
        /// - Parameters:
        ///   - operations: the operations the fault counts and fails.
        ///   - skip: how many matching operations succeed before the first failure (0: the first one fails).
        ///   - code: the error the failing operations report; `.ioFailure` by default.
        ///   - persistent: `true` to fail every matching operation after the skipped ones, `false` to fail one.
        ///   - pathContaining: when not nil, only operations on paths containing this text count.
        ///   - shortWriteFraction: for a failing write, the fraction (0...1) of its bytes written before it fails.
        public init(
            on operations: Set<Operation>, after skip: Int = 0, code: IOError.Code = .ioFailure,
            persistent: Bool = false,
            pathContaining: String? = nil, shortWriteFraction: Double? = nil
        ) {
            self.operations = operations
            self.skip = skip
            self.code = code
            self.persistent = persistent
            self.pathContaining = pathContaining
            self.shortWriteFraction = shortWriteFraction
        }
    }

    private struct State {
        var faults: [(fault: Fault, seen: Int, fired: Bool)] = []
        var operationCount = 0
        var failuresInjected = 0
        var powerLossAfter: Int?
    }

    /// The file system every operation is forwarded to when no fault fires.
    public let base: any FileSystem
    private let state = Lock(State())
    /// Called after every operation that reached the wrapped file system (failed or not), with its index.
    /// Runs on the thread that made the operation, with no lock of this class held.
    public let onOperation: (@Sendable (Int, Operation) -> Void)?

    /// Wraps a file system, with no fault injected yet.
    ///
    /// - Parameters:
    ///   - base: the file system to forward operations to.
    ///   - onOperation: called after every operation with its index and kind (see ``onOperation``).
    public init(wrapping base: any FileSystem, onOperation: (@Sendable (Int, Operation) -> Void)? = nil) {
        self.base = base
        self.onOperation = onOperation
    }

    /// Adds a fault.
    public func inject(_ fault: Fault) {
        state.withLock { $0.faults.append((fault, 0, false)) }
    }

    /// Removes every fault: the disk is healthy again.
    public func clearFaults() {
        state.withLock {
            $0.faults.removeAll()
            $0.powerLossAfter = nil
        }
    }

    /// From operation index `count` on, every operation fails with `.ioFailure` as if the machine had lost
    /// power: nothing more reaches the disk. (Take the crash image of the wrapped file system to continue.)
    public func powerLoss(afterOperations count: Int) {
        state.withLock { $0.powerLossAfter = count }
    }

    /// Operations started so far.
    public var operationCount: Int { state.withLock { $0.operationCount } }

    /// Failures injected so far.
    public var failuresInjected: Int { state.withLock { $0.failuresInjected } }

    /// Decides the fate of one operation: nil to let it run, or the error (and, for writes, how much to write first).
    private func admit(_ operation: Operation, path: String) -> (index: Int, failure: (IOError.Code, Double?)?) {
        state.withLock { state in
            let index = state.operationCount
            state.operationCount += 1
            if let limit = state.powerLossAfter, index >= limit {
                state.failuresInjected += 1
                return (index, (.ioFailure, nil))
            }
            for position in state.faults.indices {
                let fault = state.faults[position].fault
                guard fault.operations.contains(operation) else { continue }
                if let text = fault.pathContaining, !path.contains(text) { continue }
                let seen = state.faults[position].seen
                state.faults[position].seen += 1
                let fires = seen == fault.skip || (fault.persistent && seen > fault.skip)
                if fires {
                    state.faults[position].fired = true
                    state.failuresInjected += 1
                    return (index, (fault.code, fault.shortWriteFraction))
                }
            }
            return (index, nil)
        }
    }

    func perform<R>(_ operation: Operation, _ path: String, _ body: () throws(IOError) -> R) throws(IOError) -> R {
        let (index, failure) = admit(operation, path: path)
        defer { onOperation?(index, operation) }
        if let (code, _) = failure { throw IOError(code, operation: operation.rawValue + " (injected)", path: path) }
        return try body()
    }

    func performWrite(
        _ path: String, _ bytes: UnsafeRawBufferPointer, _ write: (UnsafeRawBufferPointer) throws(IOError) -> Void
    ) throws(IOError) {
        let (index, failure) = admit(.write, path: path)
        defer { onOperation?(index, .write) }
        if let (code, fraction) = failure {
            if let fraction {
                let count = min(bytes.count, max(0, Int(Double(bytes.count) * fraction)))
                if count > 0 { try write(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) }
            }
            throw IOError(code, operation: "write (injected)", path: path)
        }
        try write(bytes)
    }

    // MARK: - FileSystem

    /// Opens a file through the wrapped file system and wraps its handle, so that reads, writes,
    /// syncs and the rest go through this file system's faults too.
    ///
    /// - Throws: the injected ``IOError`` (operation `"open (injected)"`) when a fault fires, otherwise
    ///   what the wrapped file system throws.
    public func openFile(at path: String, mode: FileOpenMode) throws(IOError) -> any FileHandle {
        let handle = try perform(.open, path) { () throws(IOError) in try base.openFile(at: path, mode: mode) }
        return FaultInjectingFileHandle(wrapping: handle, fileSystem: self)
    }

    /// Opens a file for reading through the wrapped file system and wraps its handle, as
    /// ``openFile(at:mode:)`` does.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func openFileForReading(at path: String) throws(IOError) -> any FileHandle {
        let handle = try perform(.open, path) { () throws(IOError) in try base.openFileForReading(at: path) }
        return FaultInjectingFileHandle(wrapping: handle, fileSystem: self)
    }

    /// Whether a file or directory exists at `path` in the wrapped file system. The call is counted
    /// (it gets an index and reaches ``onOperation``) but never fails, even after a power loss.
    public func exists(at path: String) -> Bool {
        // Existence checks cannot fail in the protocol; they are counted but never fail.
        let (index, _) = state.withLock { state -> (Int, Void) in
            defer { state.operationCount += 1 }
            return (state.operationCount, ())
        }
        defer { onOperation?(index, .exists) }
        return base.exists(at: path)
    }

    /// Creates a directory through the wrapped file system.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func createDirectory(at path: String) throws(IOError) {
        try perform(.createDirectory, path) { () throws(IOError) in try base.createDirectory(at: path) }
    }

    /// Lists a directory through the wrapped file system.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func contentsOfDirectory(at path: String) throws(IOError) -> [String] {
        try perform(.contentsOfDirectory, path) { () throws(IOError) in try base.contentsOfDirectory(at: path) }
    }

    /// Removes a file through the wrapped file system.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func removeFile(at path: String) throws(IOError) {
        try perform(.removeFile, path) { () throws(IOError) in try base.removeFile(at: path) }
    }

    /// Removes a directory through the wrapped file system; counted (and failed) as a `removeFile`.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func removeDirectory(at path: String) throws(IOError) {
        try perform(.removeFile, path) { () throws(IOError) in try base.removeDirectory(at: path) }
    }

    /// Renames a file through the wrapped file system. A fault's `pathContaining` is matched against
    /// `source`.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func rename(from source: String, to destination: String) throws(IOError) {
        try perform(.rename, source) { () throws(IOError) in try base.rename(from: source, to: destination) }
    }

    /// Syncs a directory through the wrapped file system.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func syncDirectory(at path: String) throws(IOError) {
        try perform(.syncDirectory, path) { () throws(IOError) in try base.syncDirectory(at: path) }
    }

    /// Locks a file through the wrapped file system. The returned lock is the wrapped one: unlocking
    /// is not counted.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func lockFile(at path: String, mode: FileLockMode, waiting: Bool) throws(IOError) -> any FileLock {
        try perform(.lock, path) { () throws(IOError) in try base.lockFile(at: path, mode: mode, waiting: waiting) }
    }

    /// The wrapped file system's identity of the file (never failed: it changes nothing a crash could leave).
    ///
    /// - Throws: what the wrapped file system throws.
    public func identity(ofFileAt path: String) throws(IOError) -> FileIdentity {
        try base.identity(ofFileAt: path)
    }

    /// The wrapped file system's lock holders.
    public func lockHolders(ofFileAt path: String) -> [Int32]? { base.lockHolders(ofFileAt: path) }

    /// Locks an existing file through the wrapped file system, as ``lockFile(at:)`` does.
    ///
    /// - Throws: the injected ``IOError`` when a fault fires, otherwise what the wrapped file system throws.
    public func lockExistingFile(at path: String) throws(IOError) -> any FileLock {
        try perform(.lock, path) { () throws(IOError) in try base.lockExistingFile(at: path) }
    }
}

/// A handle of a ``FaultInjectingFileSystem``: every call goes through the file system's faults.
final class FaultInjectingFileHandle: FileHandle {
    let base: any FileHandle
    let fileSystem: FaultInjectingFileSystem

    init(wrapping base: any FileHandle, fileSystem: FaultInjectingFileSystem) {
        self.base = base
        self.fileSystem = fileSystem
    }

    var path: String { base.path }

    func identity() throws(IOError) -> FileIdentity { try base.identity() }

    func size() throws(IOError) -> UInt64 {
        try fileSystem.perform(.size, path) { () throws(IOError) in try base.size() }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(IOError) -> Int {
        try fileSystem.perform(.read, path) { () throws(IOError) in try base.read(into: buffer, at: offset) }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(IOError) {
        try fileSystem.performWrite(path, bytes) { (part) throws(IOError) in try base.write(part, at: offset) }
    }

    func truncate(to size: UInt64) throws(IOError) {
        try fileSystem.perform(.truncate, path) { () throws(IOError) in try base.truncate(to: size) }
    }

    func sync() throws(IOError) {
        try fileSystem.perform(.sync, path) { () throws(IOError) in try base.sync() }
    }

    func lock(_ mode: FileLockMode, waiting: Bool) throws(IOError) {
        try fileSystem.perform(.lock, path) { () throws(IOError) in try base.lock(mode, waiting: waiting) }
    }

    func unlock() { base.unlock() }

    func close() throws(IOError) {
        // Closing always releases the handle, even when the fault reports an error for it.
        do throws(IOError) {
            try fileSystem.perform(.close, path) { () throws(IOError) in }
        } catch {
            try? base.close()
            throw error
        }
        try base.close()
    }
}
