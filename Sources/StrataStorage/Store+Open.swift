import Dispatch
import StrataFormat
import StrataIO

extension Store {
    /// Opens the store in `directory`, creating it when allowed, and recovers it after a crash.
    ///
    /// Recovery (FORMAT.md, "Recovery"):
    /// 1. Take the store's lock, shared: other opens (in any process) may hold it too; only compaction, which holds it
    ///    exclusive, makes an open fail with ``StorageError/storeLocked(path:)``.
    /// 2. Read and verify the store header (page 0 of the page file). A header with read-only-compatible
    ///    feature bits this version does not know is refused here (it may be read, with ``ReadOnlyStore``).
    /// 3. Find the newest valid root record (`RootRecordLocator`): the durable checkpoint.
    /// 4. Read the log from its start; skip records the checkpoint covers; apply every transaction whose
    ///    commit record is intact; drop a final transaction without its commit record; stop at the first
    ///    invalid record (a torn tail). A first pass over the log (its records' headers, and its commit records)
    ///    finds where its last commit record ends, so that the transactions before it, which are known to commit,
    ///    are applied to the state in place (``LogReplay``), not each to a copy of what the one before changed. A table the log filled in row order
    ///    is left unbuilt (``PendingTables``): its trees are built at the first read of it, the first write, `verify()`
    ///    or the checkpoint, whichever comes first.
    /// 5. If no other process is writing (the writer lock is free): if anything was replayed, or the log ends before
    ///    the root record's LSN (a large transaction's commit, FORMAT.md), checkpoint at once (this also starts a new
    ///    log); else cut the log back to the end of its last commit, so new records follow valid
    ///    ones. Otherwise the writer that holds the lock is alive, and the log's tail is its.
    ///
    /// - Parameters:
    ///   - directory: the store's directory.
    ///   - configuration: durability, page size for a new store, thresholds, logger.
    ///   - fileSystem: the file-system seam (`PosixFileSystem` unless testing).
    /// - Throws: ``StorageError/storeNotFound(path:)``, ``StorageError/storeLocked(path:)``,
    ///   ``StorageError/unsupportedFormat(path:reason:)`` (also for read-only-compatible features this version
    ///   does not know: such a store can be read with ``ReadOnlyStore`` but not written),
    ///   ``StorageError/corruption(file:offset:reason:)``,
    ///   ``StorageError/io(_:)``; ``StorageError/invalidArgument(_:)`` when the configured page size is not a
    ///   power of two in 512...65536 (checked even when the store exists).
    public static func open(
        at directory: String, configuration: StoreConfiguration = StoreConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> Store {
        guard StoreHeader.isValidPageSize(configuration.pageSize) else {
            throw StorageError.invalidArgument(
                "page size \(configuration.pageSize) is not a power of two in 512...65536")
        }
        let logger = configuration.logger
        if !fileSystem.exists(at: directory) {
            guard configuration.createIfMissing else { throw StorageError.storeNotFound(path: directory) }
            // Every directory created here is durable only once its parent is synced, top down.
            var missing: [String] = []
            var path = directory
            while !fileSystem.exists(at: path), !missing.contains(path) {
                missing.append(path)
                path = parentDirectory(of: path)
            }
            do {
                try fileSystem.createDirectory(at: directory)
                for created in missing.reversed() { try fileSystem.syncDirectory(at: parentDirectory(of: created)) }
            } catch { throw StorageError.io(error) }
        }
        // Without a page file and without leave to create one there is no store: say so before the lock
        // file is created, so that a mistaken path is left as it was.
        if !configuration.createIfMissing,
            !fileSystem.exists(at: StoreFileNames.path(directory, StoreFileNames.pageFile))
        {
            throw StorageError.storeNotFound(path: directory)
        }
        let lock: any FileLock
        do {
            lock = try fileSystem.lockFile(
                at: StoreFileNames.path(directory, StoreFileNames.lock), mode: .shared, waiting: false)
        } catch {
            if error.code == .wouldBlock { throw StorageError.storeLocked(path: directory) }
            throw StorageError.io(error)
        }
        do {
            return try openLocked(
                directory: directory, configuration: configuration, fileSystem: fileSystem, lock: lock)
        } catch {
            lock.unlock()
            logger.error("store could not be opened", metadata: ["directory": "\(directory)", "error": "\(error)"])
            throw error
        }
    }

    /// ``open(at:configuration:fileSystem:)`` steps 2 to 5, with the store's lock already held (and released
    /// by the caller if this throws).
    static func openLocked(
        directory: String, configuration: StoreConfiguration, fileSystem: any FileSystem, lock: any FileLock
    ) throws -> Store {
        let logger = configuration.logger
        let pagePath = StoreFileNames.path(directory, StoreFileNames.pageFile)
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        var created = false
        if !fileSystem.exists(at: pagePath) {
            guard configuration.createIfMissing else { throw StorageError.storeNotFound(path: directory) }
            // Under the writer lock, looking again: another process may be creating the same store.
            let writers: any FileLock
            do {
                writers = try fileSystem.lockFile(
                    at: StoreFileNames.path(directory, StoreFileNames.writerLock), mode: .exclusive, waiting: true)
            } catch { throw StorageError.io(error) }
            defer { writers.unlock() }
            if !fileSystem.exists(at: pagePath) {
                try StoreCreator(directory: directory, fileSystem: fileSystem).create(pageSize: configuration.pageSize)
                created = true
                logger.info(
                    "store created", metadata: ["directory": "\(directory)", "pageSize": "\(configuration.pageSize)"])
            }
        }

        // 2. The header.
        let pageFile: any FileHandle
        do { pageFile = try fileSystem.openFile(at: pagePath, mode: .existing) } catch { throw StorageError.io(error) }
        let header: StoreHeader
        let fileSize: UInt64
        do {
            fileSize = try pageFile.size()
            let bytes = try pageFile.read(count: StoreHeader.encodedSize, at: 0)
            header = try bytes.withUnsafeBytes { (buffer) throws(FormatError) in try StoreHeader.decode(buffer) }
        } catch let error as IOError {
            try? pageFile.close()
            throw StorageError.io(error)
        } catch let error as FormatError {
            try? pageFile.close()
            switch error {
            case .unsupportedVersion(let version):
                throw StorageError.unsupportedFormat(
                    path: pagePath, reason: StoreHeader.unsupportedVersionReason(version))
            case .invalidField:
                throw StorageError.unsupportedFormat(path: pagePath, reason: error.description)
            default:
                throw StorageError.corrupt(pagePath, at: 0, "store header: \(error)")
            }
        }
        guard fileSize >= UInt64(header.pageSize) else {
            try? pageFile.close()
            throw StorageError.corrupt(pagePath, at: fileSize, "page file shorter than its header page")
        }
        guard header.isWritable else {
            try? pageFile.close()
            throw StorageError.readOnlyFeatures(path: pagePath, features: header.unknownReadOnlyCompatibleFeatures)
        }

        // 3. The log's header, before the newest checkpoint: another process's checkpoint writes its root record
        //    before it renames its new log into place, so the root record a log follows is found after it.
        let (walFile, walRereader, walIdentity) = try openLog(walPath, fileSystem: fileSystem)
        let reader = WALReader(file: walFile)
        let walHeader: WALFileHeader
        do { walHeader = try reader.readHeader() } catch {
            try? walRereader.close()
            throw error
        }
        // The tables recovery leaves pending read their puts again through a handle of their own on the same file.
        let replayedLog = ReplayedLog(file: walRereader, path: walPath, salt: walHeader.salt)
        guard walHeader.storeID == header.storeID else {
            throw StorageError.corrupt(walPath, at: 16, "the write-ahead log belongs to another store")
        }
        let pageFileSize: UInt64
        do { pageFileSize = try pageFile.size() } catch { throw StorageError.io(error) }

        // 4. The newest checkpoint, then the log after it.
        let pageCountOnDisk = pageFileSize / UInt64(header.pageSize)
        let pages = PageStore(
            file: pageFile, pageSize: header.pageSize, salt: header.checksumSalt,
            cacheCapacity: configuration.pageCacheCapacity, durablePageCount: pageCountOnDisk)
        let found = try RootRecordLocator(pages: pages).locate(pageCount: pageCountOnDisk)
        let durablePages = found.map { $0.lastPage + 1 } ?? 1
        pages.setPageCount(durablePages)
        var state = StoreState()
        if let found { state.load(found.record) }
        let coveredLSN = state.lsn
        guard walHeader.startLSN <= coveredLSN + 1 else {
            throw StorageError.corrupt(
                walPath, at: 32,
                "the log starts at LSN \(walHeader.startLSN) but the newest valid checkpoint covers only up to \(coveredLSN)"
            )
        }
        if pageCountOnDisk > durablePages {
            logger.info(
                "ignoring pages after the newest root record (an interrupted checkpoint)",
                metadata: ["pages": "\(pageCountOnDisk - durablePages)"])
        }

        // A first pass finds where the last commit ends, so that every transaction before it is applied in place.
        let checkpointed = state
        func replayLog(knownCommittedEnd: UInt64) throws -> (LogReplay, WALReader.Summary) {
            var replay = LogReplay(
                state: checkpointed, tree: BTree(pages: pages), coveredLSN: coveredLSN, file: walPath,
                headerEnd: UInt64(WALFormat.fileHeaderSize), firstTag: 1, knownCommittedEnd: knownCommittedEnd,
                replayedLog: replayedLog, leavesTablesPending: true)
            let summary = try reader.read { recordHeader, payload, offset in
                try replay.consume(recordHeader, payload: payload, offset: offset)
            }
            try replay.finish()
            return (replay, summary)
        }
        var (replay, summary) = try replayLog(knownCommittedEnd: try reader.committedEnd())
        if replay.appliedUncommittedInPlace {
            // Another process cut the log back between the two passes (§11.5): read it again, one transaction at a
            // time.
            (replay, summary) = try replayLog(knownCommittedEnd: 0)
        }
        state = replay.state
        let discardedBytes = summary.contentEnd - replay.committedEnd
        if let reason = summary.stopReason {
            logger.warning(
                "log ends in an invalid record; discarding the tail",
                metadata: [
                    "offset": "\(summary.validEnd)", "bytes": "\(summary.contentEnd - summary.validEnd)",
                    "reason": "\(reason)",
                ])
        }
        if replay.uncommittedRecords > 0 {
            logger.warning(
                "discarding a transaction without its commit record",
                metadata: ["records": "\(replay.uncommittedRecords)"])
        }
        logger.info(
            "store opened",
            metadata: [
                "directory": "\(directory)", "checkpointGeneration": "\(found?.generation ?? 0)",
                "checkpointLSN": "\(coveredLSN)", "replayedTransactions": "\(replay.replayedTransactions)",
                "discardedLogBytes": "\(discardedBytes)",
            ])

        let wal = WALWriter(
            handle: walFile, salt: walHeader.salt, endOffset: replay.committedEnd,
            reservedEnd: discardedBytes == 0 ? summary.fileSize : replay.committedEnd, lastLSN: state.lsn,
            maximumReserve: configuration.logReserveBytes, repairsFailedSyncs: configuration.durability == .full)
        var shared = Shared(
            latest: state, published: state, checkpointLSN: coveredLSN, generation: found?.generation ?? 0,
            rootRecordPage: found?.firstPage ?? PageFormat.noPage, nextPage: durablePages,
            pageFileExamined: pageFileSize, nextTransactionTag: replay.nextTag)
        // A large transaction committed by its root record, and the crash came before a new log followed it.
        shared.logBehindCheckpoint = summary.lastLSN < coveredLSN
        let report = RecoveryReport(
            created: created, checkpointGeneration: found?.generation ?? 0, checkpointLSN: coveredLSN,
            replayedTransactions: replay.replayedTransactions, discardedRecords: replay.uncommittedRecords,
            discardedLogBytes: discardedBytes, logStopReason: summary.stopReason,
            ignoredTailPages: pageCountOnDisk - durablePages,
            checkpointsAfterOpen: replay.replayedTransactions > 0
                && replay.committedEnd - UInt64(WALFormat.fileHeaderSize)
                    >= configuration.backgroundRecoveryCheckpointBytes
        )
        let blobs = try BlobStore(
            directory: directory, fileSystem: fileSystem, storeID: header.storeID, salt: header.checksumSalt,
            segmentSizeLimit: configuration.blobSegmentSizeLimit)
        let position = LogPosition(
            file: FileIdentity(device: walIdentity.device, inode: walIdentity.inode, size: summary.fileSize),
            header: walHeader, committedEnd: replay.committedEnd)
        let notices: any FileHandle
        do {
            notices = try fileSystem.openFile(
                at: StoreFileNames.path(directory, StoreFileNames.writerLock), mode: .createIfMissing)
        } catch { throw StorageError.io(error) }
        let store = Store(
            directory: directory, configuration: configuration, fileSystem: fileSystem, header: header, pages: pages,
            wal: wal, blobs: blobs, lock: lock, shared: shared, position: position, notices: notices,
            recoveryReport: report)

        // 5. Leave a log that new records can follow, unless a live writer elsewhere is appending to it.
        if try store.finishRecovery(deferringCheckpoint: report.checkpointsAfterOpen) {
            store.checkpointAfterRecovery()
        }
        return store
    }

    /// Step 5 of ``open(at:configuration:fileSystem:)``: with the writer lock, if no other process holds it, cuts off
    /// the log's torn tail and checkpoints what was replayed, or makes the commit notice this log's.
    ///
    /// - Parameter deferringCheckpoint: leave the checkpoint of what was replayed to the caller
    ///   (``checkpointAfterRecovery()``), to run after `open` returns.
    /// - Returns: whether the caller must start that checkpoint.
    private func finishRecovery(deferringCheckpoint: Bool) throws -> Bool {
        writerGate.wait()
        defer { writerGate.signal() }
        guard let writers = try lockWriters(waiting: false) else { return false }
        defer { writers.unlock() }
        try catchUp(writing: true, trustingNotice: false, reserve: .wholeTail)
        // A log behind the root record (a large commit's, FORMAT.md §7.2.1) is replaced at once: nothing may follow it.
        if shared.withLock({ $0.logBehindCheckpoint })
            || (recoveryReport.replayedTransactions > 0 && !deferringCheckpoint)
        {
            try checkpointHoldingGate()
        } else {
            // A crash may have left a notice naming commits the log lost, or a torn one: make it this log's.
            follower.withLock { position in
                let lsn = shared.withLock { $0.latest.lsn }
                let notice = readNotice(&position)
                if notice?.lastCommitLSN != lsn || notice?.logStartLSN != position.header.startLSN {
                    try? postNotice(&position, lastCommitLSN: lsn, logStartLSN: position.header.startLSN)
                }
            }
        }
        return recoveryReport.replayedTransactions > 0 && deferringCheckpoint
    }

    /// The checkpoint of a large recovery, on another thread once `open` has returned: replaying W10's 100 MiB of log
    /// got fast enough that writing its pages would have been most of the open. It is an ordinary ``checkpoint()``
    /// (writers wait for it, readers do not), so a crash during it leaves the log that was replayed, valid until the
    /// new root record is durable; a failure is logged, and leaves the log for the next checkpoint or open.
    /// ``close()`` waits for it (the writer gate), and one that starts after `close` finds the store closed.
    private func checkpointAfterRecovery() {
        DispatchQueue.global(qos: .utility).async { [self] in
            do { try checkpoint() } catch StorageError.storeClosed {
            } catch {
                logger.warning(
                    "the checkpoint after recovery failed; the log keeps every commit",
                    metadata: ["directory": "\(directory)", "error": "\(error)"])
            }
        }
    }

    /// Opens the log twice: a handle for the store's writer, and one of recovery's own (``ReplayedLog``), on the same
    /// file (a new log another process's checkpoint renames into place between the two opens is opened twice again).
    ///
    /// - Returns: both handles and the file's identity.
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when there is no log; ``StorageError/io(_:)``.
    private static func openLog(
        _ path: String, fileSystem: any FileSystem
    ) throws -> (writer: any FileHandle, rereader: any FileHandle, identity: FileIdentity) {
        while true {
            let writer: any FileHandle
            do { writer = try fileSystem.openFile(at: path, mode: .existing) } catch {
                if error.code == .noSuchFile {
                    throw StorageError.corrupt(path, at: 0, "the write-ahead log is missing")
                }
                throw StorageError.io(error)
            }
            let rereader: any FileHandle
            do { rereader = try fileSystem.openFileForReading(at: path) } catch {
                try? writer.close()
                throw StorageError.io(error)
            }
            do throws(IOError) {
                let identity = try writer.identity()
                if try rereader.identity().isSameFile(as: identity) { return (writer, rereader, identity) }
            } catch {
                try? writer.close()
                try? rereader.close()
                throw StorageError.io(error)
            }
            try? writer.close()
            try? rereader.close()
        }
    }

    /// The directory that holds `path` ("." for a bare name).
    static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
