import Dispatch
import Logging
import StrataFormat
import StrataIO
import StrataLock

/// An open Strata store: a directory holding a write-ahead log and an append-only page file of
/// copy-on-write B+trees, one per table, keyed by row ID.
///
/// One write transaction runs at a time (``write(_:)``); any number of ``Snapshot``s read concurrently,
/// each seeing one committed state. A commit is acknowledged according to the configured
/// ``StoreConfiguration/Durability``; checkpoints move committed changes from the log into the page
/// file automatically and on ``close()``. Opening a store recovers it after a crash.
///
/// For example:
/// ```swift
/// let store = try Store.open(at: "/var/lib/app/store")
/// let people = try store.write { txn in try txn.createTable(named: "person") }
/// let ada = try store.write { txn in try txn.insert(Array("Ada".utf8), into: people) }
/// let name = try store.snapshot().row(ada, in: people)
/// try store.close()
/// ```
///
/// A store is `Sendable`: share one instance between threads. Any number of processes may open the same directory
/// (and one process may open it more than once): their write transactions take turns, each open sees the others'
/// commits at its next snapshot or write (``onExternalCommits(_:)`` says which rows they changed), and only
/// compaction needs the store to itself (FORMAT.md, "Several processes").
///
/// ## Topics
/// - ``open(at:configuration:fileSystem:)``
/// - ``write(_:)``
/// - ``snapshot()``
/// - ``checkpoint()``
/// - ``verify()``
/// - ``close()``
public final class Store: Sendable {
    /// The state shared between writers, readers and checkpoints.
    struct Shared: Sendable {
        /// The newest state: the base of the next write transaction (its commit may not be durable yet).
        var latest: StoreState
        /// The newest acknowledged state: what new snapshots see.
        var published: StoreState
        /// The LSN and generation of the newest checkpoint, and the first page of its root record.
        var checkpointLSN: UInt64
        var generation: UInt64
        var rootRecordPage: UInt64
        /// Where the next checkpoint appends pages.
        var nextPage: UInt64
        /// The size of the page file when this store last looked for root records written past ``nextPage``
        /// (by another process, whose checkpoint could not replace the log): only growth beyond it is looked at.
        var pageFileExamined: UInt64 = 0
        /// States appended to the log but not yet published (waiting for their sync), oldest first.
        var unacknowledged: [StoreState] = []
        var nextTransactionTag: UInt64 = 1
        var closed = false
        var flushScheduled = false
        /// A new log was renamed into place but the directory sync that makes it durable failed.
        var directorySyncPending = false
        /// The newest root record covers an LSN past the log's last record (a large transaction committed by its root
        /// record, and no new log followed it yet): nothing may be appended to this log, whose next record would
        /// leave a gap in the LSNs; the next writer starts a new log first (FORMAT.md, "Large transactions").
        var logBehindCheckpoint = false
        var commitCount = 0
        var largeCommitCount = 0
        var spilledPageCount = 0
        var checkpointCount = 0
    }

    /// The store's directory, as passed to ``open(at:configuration:fileSystem:)``.
    public let directory: String
    /// The write-ahead log's path, looked at before every write transaction (made once: joining paths allocates).
    let walPath: String
    /// The configuration the store was opened with. For an existing store, ``StoreConfiguration/pageSize``
    /// is what was asked for, not necessarily the store's page size, which was fixed at creation.
    public let configuration: StoreConfiguration
    /// What opening the store found and did.
    public let recoveryReport: RecoveryReport
    let fileSystem: any FileSystem
    let header: StoreHeader
    let pages: PageStore
    let tree: BTree
    let wal: WALWriter
    let blobs: BlobStore
    /// The store lock, held shared for as long as the store is open.
    let lock: any FileLock
    let shared: Lock<Shared>
    /// Where this open stands in the shared log; held while catching up and while appending.
    let follower: Lock<LogPosition>
    /// The writer lock file, open for its ``CommitNotice``.
    let notices: any FileHandle
    let externalCommitHandlers = Lock<[@Sendable (ExternalCommits) -> Void]>([])
    /// Held for the whole of a write transaction and of a checkpoint: one writer at a time.
    let writerGate = DispatchSemaphore(value: 1)
    var logger: Logger { configuration.logger }

    init(
        directory: String, configuration: StoreConfiguration, fileSystem: any FileSystem, header: StoreHeader,
        pages: PageStore, wal: WALWriter, blobs: BlobStore, lock: any FileLock, shared: Shared,
        position: LogPosition, notices: any FileHandle, recoveryReport: RecoveryReport
    ) {
        self.follower = Lock(position)
        self.notices = notices
        self.blobs = blobs
        self.directory = directory
        self.walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        self.configuration = configuration
        self.fileSystem = fileSystem
        self.header = header
        self.pages = pages
        self.tree = BTree(pages: pages)
        self.wal = wal
        self.lock = lock
        self.shared = Lock(shared)
        self.recoveryReport = recoveryReport
    }

    deinit {
        // Closing without close(): nothing is lost (the log holds every commit); the next open replays it.
        wal.close()
        try? notices.close()
        lock.unlock()
    }

    /// The store's page size in bytes.
    public var pageSize: Int { header.pageSize }

    /// The store's identity (16 bytes), written into every file of the store.
    public var storeID: [UInt8] { header.storeID }

    // MARK: - Writing

    /// Runs a write transaction and commits it when `body` returns.
    ///
    /// Only one write transaction runs at a time, in all the processes that have the store open; others wait. It
    /// starts from the newest commit of any of them. If `body` throws, nothing it did is kept.
    /// The commit is acknowledged (this method returns) according to the durability mode: with `.full`,
    /// once its log records are synced, sharing the sync with concurrent committers.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; ``StorageError/io(_:)`` when the log cannot be written or synced (the
    ///   transaction is then not applied); ``StorageError/storeFailed(reason:)`` after an earlier sync
    ///   failure; ``StorageError/storeClosed``.
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        // Counted from before the gate: a committer leading a sync waits a moment for writers on their way.
        wal.writerArrives()
        var arriving = true
        defer { if arriving { wal.writerLeaves() } }
        writerGate.wait()
        var holdsGate = true
        defer { if holdsGate { writerGate.signal() } }

        if shared.withLock({ $0.closed }) { throw StorageError.storeClosed }
        // A transaction reads the tables it changes: it starts from built trees.
        try buildPendingTables()
        var writers = try lockWriters()
        defer { writers?.unlock() }
        try catchUp(writing: true)
        if let failure = wal.failed {
            guard wal.isRepairable else { throw failure }
            try repairLog()
            // Other opens may have read what the repair cut (FORMAT.md §11.5): a new log makes each load its state
            // anew from the page file, instead of reading on from a position inside what is written next.
            try checkpointHoldingGate(startingNewLog: true)
        }
        // A large commit's root record with no new log after it: records appended here would follow a gap.
        if shared.withLock({ $0.logBehindCheckpoint }) { try checkpointHoldingGate(startingNewLog: true) }
        try syncDirectoryIfPending()
        let (base, tag, nextPage, generation) = shared.withLock { shared in
            shared.nextTransactionTag += 1
            return (shared.latest, shared.nextTransactionTag, shared.nextPage, shared.generation)
        }
        let transaction = WriteTransaction(
            state: base, tree: tree, blobs: blobs, tag: tag, salt: wal.currentSalt,
            largeBytes: configuration.largeTransactionBytes,
            spill: LeafSpill(
                pages: pages, startPage: nextPage, generation: generation &+ 1,
                boundBytes: configuration.largeTransactionMemoryBytes))
        let result: T
        do {
            result = try body(transaction)
            try transaction.prepareCommit()
            transaction.end()
        } catch {
            transaction.end()
            discardSpill(transaction.spill)
            throw error
        }
        guard !transaction.log.isEmpty else { return result }

        // A blob is durable before the commit that references it can be.
        if transaction.wroteBlobs { try blobs.syncWritten() }
        if transaction.log.isLarge {
            var committed = transaction.state
            committed.lsn = base.lsn + 1
            do {
                try transaction.spill.checkUsable()
                try checkpointHoldingGate(committing: committed, spilled: transaction.spill.written)
            } catch {
                discardSpill(transaction.spill)
                throw error
            }
            pages.setPendingLimit(0)
            shared.withLock { $0.spilledPageCount += transaction.spill.written.count }
            return result
        }
        precondition(transaction.spill.written.isEmpty, "only a large transaction writes its leaves before it commits")
        let (bytes, commitLSN) = transaction.log.finish()
        var committed = transaction.state
        committed.lsn = commitLSN
        let appended = try follower.withLock { position -> Result<Int, StorageError> in
            let start = position.committedEnd
            let epoch = try wal.append(bytes, lastLSN: commitLSN)
            do {
                try postNotice(&position, lastCommitLSN: commitLSN, logStartLSN: position.header.startLSN)
            } catch let error as StorageError {
                // Other opens would not see this commit (their notice is unchanged): it must not stay. Taken back
                // as a failed log write is, it leaves no trace (FORMAT.md §11.2).
                try wal.takeBack(to: start, lastLSN: base.lsn)
                return .failure(error)
            }
            position.committedEnd = wal.size
            position.file.size = position.committedEnd
            shared.withLock {
                $0.latest = committed
                $0.unacknowledged.append(committed)
                $0.commitCount += 1
            }
            return .success(epoch)
        }
        let epoch: Int
        switch appended {
        case .success(let value): epoch = value
        case .failure(let error):
            // Another open may have read the records taken back: a new log makes every open load its state anew.
            do { try checkpointHoldingGate(startingNewLog: true) } catch {
                logger.error("could not start a new log after a commit was taken back", metadata: ["error": "\(error)"])
            }
            throw error
        }
        writers?.unlock()
        writers = nil
        writerGate.signal()
        holdsGate = false
        wal.writerLeaves()
        arriving = false

        switch configuration.durability {
        case .full: try wal.waitUntilDurable(commitLSN, epoch: epoch, gathering: true)
        case .normal(let delay): scheduleFlush(afterMilliseconds: delay)
        case .off: break
        }
        publish(committed)
        if wal.size >= configuration.checkpointThresholdBytes {
            do { try checkpoint() } catch {
                logger.error("automatic checkpoint failed; the log keeps every commit", metadata: ["error": "\(error)"])
            }
        }
        return result
    }

    /// Takes back what a large transaction that did not commit wrote before its commit (``LeafSpill``): the store is
    /// left as it was. Nothing references those pages; cutting them off is tidiness, not safety (the next checkpoint
    /// writes over them), so a failure to cut is only logged.
    private func discardSpill(_ spill: LeafSpill) {
        let written = spill.written
        pages.setPendingLimit(0)
        guard !written.isEmpty else { return }
        pages.cache.forget(written)
        pages.indexCache.forget(written)
        shared.withLock {
            $0.spilledPageCount += written.count
            // The growth this store examined for other processes' root records held these pages.
            $0.pageFileExamined = 0
        }
        do throws(IOError) { try pages.file.truncate(to: written.lowerBound * UInt64(pageSize)) } catch {
            logger.error("could not cut off a rolled-back transaction's pages", metadata: ["error": "\(error)"])
        }
    }

    /// Makes `state` visible to new snapshots unless a newer state already is (commits acknowledged out of order).
    func publish(_ state: StoreState) {
        shared.withLock { shared in
            if state.lsn > shared.published.lsn { shared.published = state }
            shared.unacknowledged.removeAll { $0.lsn <= shared.published.lsn }
        }
    }

    /// After a failed log sync (full durability): cuts the log back to its last durable commit and rolls the
    /// writers' state back to match. Commits past that point were never acknowledged: their `write` threw.
    /// The caller holds the writer gate.
    func repairLog() throws {
        let durable = try follower.withLock { position in
            let durable = try wal.repair()
            position.committedEnd = wal.size
            position.file.size = position.committedEnd
            try? postNotice(&position, lastCommitLSN: durable, logStartLSN: position.header.startLSN)
            return durable
        }
        shared.withLock { shared in
            let candidates = [shared.published] + shared.unacknowledged.filter { $0.lsn <= durable }
            let restored = candidates.max { $0.lsn < $1.lsn }!
            precondition(restored.lsn == durable, "no state for the durable LSN \(durable)")
            shared.latest = restored
            shared.published = restored
            shared.unacknowledged.removeAll()
        }
        logger.warning("log cut back to its last durable commit after a failed sync", metadata: ["lsn": "\(durable)"])
    }

    private func scheduleFlush(afterMilliseconds delay: Int) {
        let schedule = shared.withLock { shared -> Bool in
            if shared.flushScheduled { return false }
            shared.flushScheduled = true
            return true
        }
        guard schedule else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(max(0, delay))) { [weak self] in
            guard let self else { return }
            self.shared.withLock { $0.flushScheduled = false }
            do { try self.wal.syncAll() } catch {
                self.logger.error("background log sync failed", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: - Reading

    /// A consistent view of the newest acknowledged commit, this process's or another's.
    ///
    /// Taking it first catches up with commits other processes made since this store last looked (a read of the commit
    /// notice, through a mapping, when there are none: FORMAT.md §11.2). Should that fail (an I/O error), the snapshot shows what this store had, and the
    /// error is logged: the next snapshot or write tries again.
    public func snapshot() -> Snapshot {
        do { try catchUp(writing: false) } catch {
            logger.error("could not catch up with the log", metadata: ["error": "\(error)"])
        }
        let published = shared.withLock { $0.published }
        guard let pending = published.pending, pending.isBuilt else {
            return Snapshot(state: published, tree: tree, blobs: blobs)
        }
        // An earlier snapshot built the tables a recovery left pending: the states shared carry the trees from now on.
        // (Once built, they cannot fail to build.)
        do { try buildPendingTables() } catch { return Snapshot(state: published, tree: tree, blobs: blobs) }
        return Snapshot(state: shared.withLock { $0.published }, tree: tree, blobs: blobs)
    }

    /// The bytes of a row in the newest acknowledged commit, this process's or another's: what
    /// `snapshot().row(row, in: table)` returns, without a snapshot. A snapshot copies the store's whole state, and
    /// releases it after, for one row (about 400 instructions of a W3.graph lookup's row read): a read of one row
    /// needs only its table's root.
    ///
    /// - Returns: the row's bytes, or nil when the row does not exist.
    /// - Throws: what ``Snapshot/row(_:in:)`` throws.
    public func row(_ row: RowID, in table: TableID) throws -> [UInt8]? {
        do { try catchUp(writing: false) } catch {
            logger.error("could not catch up with the log", metadata: ["error": "\(error)"])
        }
        // The root taken under the lock keeps what the descent reads alive, as a snapshot's state would.
        let published = shared.withLock { shared -> (found: Bool, root: NodeRef?)? in
            // Tables a recovery left pending are built through a snapshot.
            guard shared.published.pending == nil else { return nil }
            guard let state = shared.published.tables[table] else { return (false, nil) }
            return (true, state.root)
        }
        guard let published else { return try snapshot().row(row, in: table) }
        guard published.found else { throw StorageError.noSuchTable(table.description) }
        guard let value = try tree.get(published.root, row.rawValue) else { return nil }
        return try tree.pages.bytes(of: value)
    }

    /// Builds the tables a recovery left pending (``PendingTables``), if any, and puts their trees into every state
    /// this store shares: the base of the next write, what new snapshots see, and the commits not yet acknowledged. A
    /// snapshot taken before keeps the pending tables and finds the same trees when it reads them.
    ///
    /// - Throws: what ``PendingTables/built()`` throws: the states keep the tables pending, and the log keeps every
    ///   commit.
    func buildPendingTables() throws {
        guard let pending = shared.withLock({ $0.latest.pending ?? $0.published.pending }) else { return }
        // Outside the shared lock: the build takes a while, and readers and committers must not wait for it.
        _ = try pending.built()
        try shared.withLock { shared in
            shared.latest = try pending.resolve(shared.latest)
            shared.published = try pending.resolve(shared.published)
            shared.unacknowledged = try shared.unacknowledged.map { try pending.resolve($0) }
        }
    }

    /// Counters and sizes.
    public var statistics: StoreStatistics {
        let shared = shared.withLock { $0 }
        let cache = pages.cache.counters
        return StoreStatistics(
            walBytes: wal.size, pageFileBytes: pages.pageCount * UInt64(pageSize),
            checkpointCount: shared.checkpointCount,
            commitCount: shared.commitCount, largeCommitCount: shared.largeCommitCount,
            spilledPageCount: shared.spilledPageCount, walSyncCount: wal.syncs,
            lastLSN: shared.latest.lsn,
            checkpointLSN: shared.checkpointLSN, generation: shared.generation, pageCacheHits: cache.hits,
            pageCacheMisses: cache.misses)
    }

    // MARK: - Closing

    /// Checkpoints (unless an earlier failure forbids writing), releases the lock and closes the files.
    /// Snapshots taken before stay readable. Closing twice does nothing.
    ///
    /// - Throws: the error of the final checkpoint (``StorageError/io(_:)`` for a full disk, for example).
    ///   The store is closed and its lock released even then; its commits stay in the log, which the
    ///   next open replays.
    public func close() throws {
        writerGate.wait()
        defer { writerGate.signal() }
        if shared.withLock({ $0.closed }) { return }
        var checkpointError: Error?
        if wal.failed == nil || wal.isRepairable {
            // checkpointHoldingGate first cuts back a log whose last sync failed, so that a commit that was
            // reported as failed does not come back at the next open.
            do {
                let writers = try lockWriters()
                defer { writers?.unlock() }
                try catchUp(writing: true)
                try checkpointHoldingGate()
            } catch { checkpointError = error }
        }
        // Under the follower lock, so that no snapshot is catching up through the log handle as it closes.
        follower.withLock { _ in
            shared.withLock { $0.closed = true }
            wal.close()
        }
        lock.unlock()
        if let checkpointError { throw checkpointError }
    }
}
