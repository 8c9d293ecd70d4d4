import StrataFormat
import StrataIO

/// A store opened for reading only: opening it changes nothing on disk, so it is what `strata fsck`,
/// `info` and `dump` look through.
///
/// Opening reads what recovery would (FORMAT.md, "Recovery"): the store header, the newest valid root
/// record, and the log, whose committed transactions after the checkpoint are replayed **in memory**
/// only. Unlike ``Store/open(at:configuration:fileSystem:)`` it never checkpoints, never cuts the log,
/// never creates a file (not even the lock file), opens every file read-only (`O_RDONLY`, so a store on a
/// read-only mount or with mode 444 can be read) and succeeds on a store whose log is damaged: the
/// damage is in ``verify(checkBlobContents:progress:)``'s report, and the state is the one the log's
/// readable prefix gives.
///
/// When the lock file exists, the lock is taken (without waiting) and held until ``close()``, so that no
/// writer starts while the store is read; if another process holds it, the store is read anyway and
/// ``lockHeldElsewhere`` says so (what a running writer appends may then look like a torn tail).
///
/// For example:
/// ```swift
/// let store = try ReadOnlyStore.open(at: "/var/lib/app/store")
/// let report = store.verify()
/// print(report.isClean ? "clean" : "\(report.problems.count) problems")
/// store.close()
/// ```
///
/// ## Topics
/// - ``open(at:fileSystem:)``
/// - ``verify(checkBlobContents:progress:)``
/// - ``snapshot()``
/// - ``isWritable``
/// - ``close()``
public final class ReadOnlyStore: Sendable {
    public let directory: String
    /// Whether another process held the store's lock when it was opened.
    public let lockHeldElsewhere: Bool
    let fileSystem: any FileSystem
    let header: StoreHeader
    let pages: PageStore
    let tree: BTree
    let blobs: BlobStore
    let lock: (any FileLock)?
    /// The page file's size in bytes when opened.
    let pageFileBytes: UInt64
    /// The newest valid root record, if any.
    let rootRecord: RootRecordLocator.Found?
    /// The state of the newest checkpoint, and that state with the log's committed transactions applied.
    let checkpointState: StoreState
    let state: StoreState
    /// What reading the log found: its summary and problems (in a report of their own).
    let logReport: VerificationReport

    /// Opens the store in `directory` for reading.
    ///
    /// - Throws: ``StorageError/storeNotFound(path:)``; ``StorageError/unsupportedFormat(path:reason:)``;
    ///   ``StorageError/corruption(file:offset:reason:)`` when the store header (page 0) is damaged, so
    ///   that nothing else can be read (`strata fsck --salvage` still can); ``StorageError/io(_:)``.
    public static func open(
        at directory: String, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> ReadOnlyStore {
        let pagePath = StoreFileNames.path(directory, StoreFileNames.pageFile)
        guard fileSystem.exists(at: directory), fileSystem.exists(at: pagePath) else {
            throw StorageError.storeNotFound(path: directory)
        }
        let lockPath = StoreFileNames.path(directory, StoreFileNames.lock)
        var lock: (any FileLock)?
        var lockHeldElsewhere = false
        if fileSystem.exists(at: lockPath) {
            // Opened read-only and never created: a store on a read-only mount or of another user is readable.
            do { lock = try fileSystem.lockExistingFile(at: lockPath) } catch {
                switch error.code {
                case .wouldBlock: lockHeldElsewhere = true
                case .noSuchFile: break  // removed since exists(at:): there is nothing to lock
                default: throw StorageError.io(error)
                }
            }
        }
        do {
            return try ReadOnlyStore(
                directory: directory, fileSystem: fileSystem, lock: lock, lockHeldElsewhere: lockHeldElsewhere)
        } catch {
            lock?.unlock()
            throw error
        }
    }

    /// Opens the store in `directory` for reading while the caller holds its lock (compaction's check).
    static func openWithoutLocking(at directory: String, fileSystem: any FileSystem) throws -> ReadOnlyStore {
        guard fileSystem.exists(at: StoreFileNames.path(directory, StoreFileNames.pageFile)) else {
            throw StorageError.storeNotFound(path: directory)
        }
        return try ReadOnlyStore(directory: directory, fileSystem: fileSystem, lock: nil, lockHeldElsewhere: false)
    }

    private init(directory: String, fileSystem: any FileSystem, lock: (any FileLock)?, lockHeldElsewhere: Bool) throws {
        let pagePath = StoreFileNames.path(directory, StoreFileNames.pageFile)
        let file: any FileHandle
        do { file = try fileSystem.openFileForReading(at: pagePath) } catch { throw StorageError.io(error) }
        let header: StoreHeader
        let fileSize: UInt64
        do {
            (header, fileSize) = try Self.readHeader(file)
        } catch {
            try? file.close()
            throw error
        }
        let pages = PageStore(
            file: file, pageSize: header.pageSize, salt: header.checksumSalt, cacheCapacity: 4096,
            durablePageCount: fileSize / UInt64(header.pageSize))
        let found = try RootRecordLocator(pages: pages).locate(pageCount: fileSize / UInt64(header.pageSize))
        pages.setPageCount(found.map { $0.lastPage + 1 } ?? 1)
        var state = StoreState()
        if let found { state.load(found.record) }
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        var replay: LogReplay? = LogReplay(
            state: state, tree: BTree(pages: pages), coveredLSN: state.lsn, file: walPath,
            headerEnd: UInt64(WALFormat.fileHeaderSize), firstTag: 1)
        var logReport = VerificationReport()
        LogVerifier(path: walPath, fileSystem: fileSystem, storeID: header.storeID, coveredLSN: state.lsn)
            .verify(into: &logReport, replay: &replay)

        self.directory = directory
        self.fileSystem = fileSystem
        self.lock = lock
        self.lockHeldElsewhere = lockHeldElsewhere
        self.header = header
        self.pages = pages
        self.tree = BTree(pages: pages)
        self.pageFileBytes = fileSize
        self.rootRecord = found
        self.checkpointState = state
        self.state = replay?.state ?? state
        self.logReport = logReport
        self.blobs = try BlobStore(
            directory: directory, fileSystem: fileSystem, storeID: header.storeID, salt: header.checksumSalt,
            segmentSizeLimit: .max)
    }

    /// Reads and decodes the store header; returns it with the page file's size.
    static func readHeader(_ file: any FileHandle) throws -> (StoreHeader, UInt64) {
        let path = file.path
        let size: UInt64
        let bytes: [UInt8]
        do {
            size = try file.size()
            bytes = try file.read(count: StoreHeader.encodedSize, at: 0)
        } catch { throw StorageError.io(error) }
        let header: StoreHeader
        do {
            header = try bytes.withUnsafeBytes { (buffer) throws(FormatError) in try StoreHeader.decode(buffer) }
        } catch let error
            as FormatError
        {
            switch error {
            case .unsupportedVersion(let version):
                throw StorageError.unsupportedFormat(path: path, reason: StoreHeader.unsupportedVersionReason(version))
            case .invalidField:
                throw StorageError.unsupportedFormat(path: path, reason: error.description)
            default: throw StorageError.corrupt(path, at: 0, "store header: \(error)")
            }
        }
        guard size >= UInt64(header.pageSize) else {
            throw StorageError.corrupt(path, at: size, "page file shorter than its header page")
        }
        return (header, size)
    }

    deinit {
        lock?.unlock()
    }

    /// Releases the lock. The store stays readable until it is released.
    public func close() {
        lock?.unlock()
    }

    /// The store's page size in bytes.
    public var pageSize: Int { header.pageSize }

    /// Whether this version may write the store: false when its header has read-only-compatible feature bits
    /// this version does not know (FORMAT.md §2), so that ``Store/open(at:configuration:fileSystem:)``,
    /// compaction and `strata fsck --repair` refuse it.
    public var isWritable: Bool { header.isWritable }

    /// The state recovery would produce (the newest checkpoint and the log's committed transactions after
    /// it), as a snapshot. Its log part lives in memory only.
    public func snapshot() -> Snapshot {
        Snapshot(state: state, tree: tree, blobs: blobs)
    }

    /// Checks everything: the header, the log and what recovery would replay, every page reachable from
    /// every table's root and each tree's invariants, page accounting, every blob (unless
    /// `checkBlobContents` is false: then only the segments' accounting and headers), the files present.
    ///
    /// - Returns: the report; nothing is thrown: problems, including read errors, are in it.
    public func verify(checkBlobContents: Bool = true, progress: ProgressHandler? = nil) -> VerificationReport {
        var total: UInt64 = state.tables.values.reduce(0) { $0 + $1.rowCount }
        if checkBlobContents { total += BlobVerifier.chunkCount(of: state, tree: tree) }
        let throttle = ProgressThrottle(progress, phase: "verifying", total: total)
        var verifier = StoreVerifier(pages: pages)
        verifier.progress = throttle
        let rootRecordPages = rootRecord.map { $0.lastPage - $0.firstPage + 1 } ?? 0
        verifier.verifyTables(state, rootRecordPages: rootRecordPages)
        var report = verifier.report
        var blobVerifier = BlobVerifier(tree: tree, blobs: blobs)
        blobVerifier.checkContents = checkBlobContents
        blobVerifier.progress = verifier.progress
        blobVerifier.verify(state, into: &report)

        report.problems += logReport.problems
        report.notes += logReport.notes
        report.log = logReport.log
        report.walRecords = logReport.walRecords
        report.walBytes = logReport.walBytes
        Self.describe(header, into: &report)
        report.pageFileBytes = pageFileBytes
        report.checkpointGeneration = rootRecord?.generation ?? 0
        report.checkpointLSN = checkpointState.lsn
        let wholePages = pageFileBytes / UInt64(header.pageSize)
        report.tailPages = wholePages > pages.pageCount ? wholePages - pages.pageCount : 0
        report.lockHeldElsewhere = lockHeldElsewhere
        let pagePath = StoreFileNames.path(directory, StoreFileNames.pageFile)
        if report.tailPages > 0 {
            // Without any root record these are the pages of a first checkpoint that never completed (the
            // log, which then still starts at LSN 1, holds every commit); if a root record was lost instead,
            // the log's start LSN says so (LogVerifier).
            report.notes.append(
                .init(
                    file: pagePath, offset: pages.pageCount * UInt64(header.pageSize),
                    message: "\(report.tailPages) pages after the newest root record"
                        + (rootRecord == nil ? " (there is none)" : "")
                        + " (an interrupted checkpoint): ignored, and overwritten by the next checkpoint"))
        }
        if pageFileBytes % UInt64(header.pageSize) != 0 {
            report.notes.append(
                .init(
                    file: pagePath, offset: wholePages * UInt64(header.pageSize),
                    message: "\(pageFileBytes % UInt64(header.pageSize)) bytes of a partial page at the end (a torn "
                        + "write of an interrupted checkpoint): ignored"))
        }
        if !header.isWritable {
            report.notes.append(
                .init(
                    file: pagePath, offset: 28,
                    message:
                        "read-only-compatible features 0x\(String(header.unknownReadOnlyCompatibleFeatures, radix: 16)) "
                        + "are unknown to this version: it reads the store but will not write it (no compaction, "
                        + "no repair)"))
        }
        if lockHeldElsewhere {
            report.notes.append(
                .init(
                    file: StoreFileNames.path(directory, StoreFileNames.lock), offset: nil,
                    message: "another process has the store open: what it is writing may show as a torn tail"))
        }
        let leftovers = [
            StoreFileNames.pageFileCompacted, StoreFileNames.pageFileTemporary, StoreFileNames.walTemporary,
        ]
        for name in leftovers where fileSystem.exists(at: StoreFileNames.path(directory, name)) {
            report.notes.append(
                .init(
                    file: StoreFileNames.path(directory, name), offset: nil,
                    message:
                        "left by an interrupted \(name == StoreFileNames.pageFileCompacted ? "compaction" : "checkpoint or creation"): garbage",
                    remedy: name == StoreFileNames.pageFileCompacted ? .compaction : nil))
        }
        return report
    }

    static func describe(_ header: StoreHeader, into report: inout VerificationReport) {
        report.header = VerificationReport.HeaderSummary(
            formatVersion: header.formatVersion, pageSize: header.pageSize, checksumType: header.checksumType,
            compatibleFeatures: header.compatibleFeatures,
            readOnlyCompatibleFeatures: header.readOnlyCompatibleFeatures,
            incompatibleFeatures: header.incompatibleFeatures,
            storeID: header.storeID.map { String($0, radix: 16).leftPadded(to: 2) }.joined())
    }
}

extension String {
    /// The string with zeros in front up to `width` characters.
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
