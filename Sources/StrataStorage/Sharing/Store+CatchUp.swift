import StrataFormat
import StrataIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The writer lock (FORMAT.md §11.1) as ``Store/lockWriters(waiting:)`` took it: held on the open's handle of the
/// writer lock file until ``unlock()``.
struct WriterLock {
    let notices: any FileHandle

    /// Releases the lock. Safe to call more than once.
    func unlock() { notices.unlock() }
}

/// Several opens of one store (FORMAT.md §11, "Several processes"): every open holds the store lock shared, writers
/// take the writer lock for one transaction at a time, and each open follows the one log they all append to.
extension Store {
    /// Waits for the writer lock, which one write transaction (or checkpoint) of any process holds at a time. It dies
    /// with its holder: a writer killed while holding it blocks nobody, and the next writer cuts off what it left.
    ///
    /// The lock is taken on the handle this open keeps on the writer lock file for the commit notice, rather than on a
    /// new open of the file: a durable commit then costs no `open` and `close` (FORMAT.md §11.1). Locks of one handle
    /// do not exclude each other, so the caller holds ``writerGate``, which every taker of this lock does.
    ///
    /// - Parameter waiting: false to fail with `nil` at once when another open (in any process) holds it.
    func lockWriters(waiting: Bool = true) throws -> WriterLock? {
        do { try notices.lock(.exclusive, waiting: waiting) } catch {
            if !waiting && error.code == .wouldBlock { return nil }
            throw StorageError.io(error)
        }
        return WriterLock(notices: notices)
    }

    /// Calls `handler` with every batch of commits that this store takes in from other opens of it (other processes)
    /// when it catches up with the log: at each new snapshot and before each write transaction. `handler` runs on the
    /// thread that caught up, after the new state is visible; it must not block on this store's writes.
    public func onExternalCommits(_ handler: @escaping @Sendable (ExternalCommits) -> Void) {
        externalCommitHandlers.withLock { $0.append(handler) }
    }

    /// Brings this store's state up to the newest commit in the log, wherever it was made: what another process
    /// appended since this store last looked (read from where it stopped), or, when another process checkpointed and
    /// started a new log, that checkpoint's root record and the new log. Costs a read of the commit notice (through a
    /// mapping) when nothing changed.
    ///
    /// - Parameter writing: the caller holds the writer lock: what follows the last commit (a transaction of a writer
    ///   killed before its commit record, or a torn record) can be no live writer's, and is cut off.
    /// - Parameter trustingNotice: whether the commit notice's LSN must be in the log (false right after recovery,
    ///   which read the log itself, while the notice may be a stale one a power loss left).
    /// - Parameter reserve: how a writer tells the log's reserved space from a tail to cut (FORMAT.md §3.3):
    ///   `.wholeTail` right after recovery, where a power loss may have left written pages past unwritten ones.
    func catchUp(writing: Bool, trustingNotice: Bool = true, reserve: WALReader.ReserveCheck = .header) throws {
        let found = try follower.withLock { position -> ExternalCommits? in
            // A closed store's snapshots show what it had; its log handle is closed.
            if shared.withLock({ $0.closed }) { return nil }
            return try catchUp(&position, writing: writing, trustingNotice: trustingNotice, reserve: reserve)
        }
        guard let found else { return }
        for handler in externalCommitHandlers.withLock({ $0 }) { handler(found) }
    }

    /// ``catchUp(writing:)`` with the follower lock held.
    ///
    /// A reader first reads the commit notice: when it is the one it saw when it last read the log, nothing changed.
    /// Otherwise (and always when writing, where a torn tail must be found too) the log is looked at: read on from the
    /// end of the last commit this store has (never trusting the file's size alone, which a cut tail and a new append
    /// can bring back to the same value), or follow the new log another process's checkpoint renamed into place, or,
    /// when the log was cut back below what this store applied (a failed sync elsewhere, §11.5), load it anew.
    private func catchUp(
        _ position: inout LogPosition, writing: Bool, trustingNotice: Bool, reserve: WALReader.ReserveCheck
    ) throws -> ExternalCommits? {
        // A reader that finds, byte for byte, the notice it saw last has nothing to read.
        if !writing, let seen = position.noticeBytes, let mapping = position.noticeMapping,
            mapping.bytes.count >= CommitNotice.size, NoticeBytes(mapping.bytes) == seen
        {
            return nil
        }
        let notice = readNotice(&position)
        var rootLSN: UInt64?
        if writing {
            rootLSN = try followRootRecordsWithoutNewLog()
        } else if let notice, notice == position.notice {
            return nil
        }
        let now: FileIdentity
        do { now = try fileSystem.identity(ofFileAt: walPath) } catch { throw StorageError.io(error) }
        // What the notice names must be in this log: a notice is written after the records it names.
        let named = notice.flatMap {
            trustingNotice && $0.logStartLSN == position.header.startLSN ? $0.lastCommitLSN : nil
        }
        var found: ExternalCommits?
        if !now.isSameFile(as: position.file) {
            found = try followNewLog(&position, writing: writing, reloading: false, reserve: reserve)
            // The rename that put this log in place is durable only once the directory is synced, which its writer
            // may have failed to do (or been killed before): a power loss would bring the old log back without
            // whatever is appended here. A writer syncs the directory first (write() does, before appending).
            if writing { shared.withLock { $0.directorySyncPending = true } }
        } else if now.size < position.committedEnd || named.map({ $0 < shared.withLock { $0.latest.lsn } }) == true {
            found = try followNewLog(&position, writing: writing, reloading: true, reserve: reserve)
        } else if writing, reserve == .header, named.map({ $0 > shared.withLock { $0.latest.lsn } }) != true,
            try nothingFollows(position.committedEnd, fileSize: now.size)
        {
            found = nil
        } else {
            found = try readOn(
                &position, file: wal.file, fileSize: now.size, writing: writing, named: named, reserve: reserve)
        }
        if let rootLSN, rootLSN > shared.withLock({ $0.latest.lsn }) {
            // A large transaction elsewhere committed by a root record and stopped before a new log followed it: no
            // log holds it, the state is that root record's (FORMAT.md, "Large transactions").
            found = try followNewLog(&position, writing: writing, reloading: true, reserve: reserve)
        }
        // The log held at least what the notice named when it was read (a notice is written after its records).
        position.notice = notice
        return found
    }

    /// Whether the log holds nothing after `end`: the file ends there, or reserved space follows (a record header's
    /// worth of zero bytes, FORMAT.md §3.3). One read of 20 bytes; a writer of this store that committed last finds
    /// this with no other read of the log.
    private func nothingFollows(_ end: UInt64, fileSize: UInt64) throws -> Bool {
        guard fileSize > end else { return true }
        let count = Int(min(fileSize - end, UInt64(WALFormat.recordHeaderSize)))
        return try withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
            let read: Int
            do throws(IOError) { read = try wal.file.read(into: buffer, at: end) } catch {
                throw StorageError.io(error)
            }
            return UnsafeRawBufferPointer(rebasing: buffer[..<read]).allSatisfy { $0 == 0 }
        }
    }

    /// The commit notice, if it decodes (a stale or torn one is no error: the log says the rest): read through a
    /// mapping of the file once it is long enough to hold one, else with a positional read.
    func readNotice(_ position: inout LogPosition) -> CommitNotice? {
        if let mapping = position.noticeMapping { return CommitNotice.decode(mapping.bytes) }
        guard let bytes = try? notices.read(count: CommitNotice.size, at: 0) else { return nil }
        // The file never shrinks, so a mapping of bytes it holds never faults.
        if bytes.count == CommitNotice.size {
            position.noticeMapping = try? notices.mapReadOnly(length: CommitNotice.size)
        }
        return CommitNotice.decode(bytes)
    }

    /// Tells the other opens which commit is the newest, with the notice's next sequence number, and makes it the
    /// notice `position` matches; the caller holds the writer lock and the follower lock.
    ///
    /// - Throws: ``StorageError/io(_:)`` when the notice cannot be written (the caller decides what that costs: a
    ///   commit whose notice is not posted is not acknowledged, since other opens' snapshots would not see it).
    func postNotice(_ position: inout LogPosition, lastCommitLSN: UInt64, logStartLSN: UInt64) throws {
        let sequence = (readNotice(&position)?.sequence ?? 0) &+ 1
        let notice = CommitNotice(sequence: sequence, lastCommitLSN: lastCommitLSN, logStartLSN: logStartLSN)
        position.notice = nil
        do {
            try withUnsafeTemporaryAllocation(byteCount: CommitNotice.size, alignment: 8) { bytes throws(IOError) in
                notice.encode(into: bytes)
                try notices.write(UnsafeRawBufferPointer(bytes), at: 0)
            }
        } catch {
            logger.error("could not write the commit notice", metadata: ["error": "\(error)"])
            throw StorageError.io(error)
        }
        position.notice = notice
    }

    /// Applies the commits appended to the current log after `position`. If they do not reach the commit the notice
    /// `named` (the log was cut back and written again since this store read it, §11.5; or, after a power loss, the
    /// notice outlived records that were never synced), the log is loaded anew instead, before any tail is cut.
    private func readOn(
        _ position: inout LogPosition, file: any FileHandle, fileSize: UInt64, writing: Bool, named: UInt64?,
        reserve: WALReader.ReserveCheck
    ) throws -> ExternalCommits? {
        let (before, firstTag) = shared.withLock { ($0.latest, $0.nextTransactionTag + 1) }
        var replay = LogReplay(
            state: before, tree: tree, coveredLSN: before.lsn, file: walPath, headerEnd: position.committedEnd,
            firstTag: firstTag, collectsChanges: true)
        let summary = try WALReader(file: file).read(
            from: position.committedEnd, header: position.header, previousLSN: before.lsn, reserve: reserve
        ) { header, payload, offset in try replay.consume(header, payload: payload, offset: offset) }
        if let named, replay.state.lsn < named {
            return try followNewLog(&position, writing: writing, reloading: true, reserve: reserve)
        }
        position.file.size = summary.fileSize
        if replay.replayedTransactions > 0 {
            position.committedEnd = replay.committedEnd
            wal.follow(endOffset: replay.committedEnd, lastLSN: replay.state.lsn, fileSize: summary.fileSize)
            adopt(replay.state, nextTag: replay.nextTag)
        }
        if writing, summary.contentEnd > position.committedEnd { try cutTail(&position, summary: summary) }
        guard replay.replayedTransactions > 0 else { return nil }
        return ExternalCommits(
            fromLSN: before.lsn, toLSN: replay.state.lsn, rows: replay.changes.rows,
            isComplete: !replay.changes.catalogChanged)
    }

    /// Another process checkpointed and renamed a new log into place: notes what the rest of the old log changed (read
    /// through the handle still open on it), then starts from the checkpoint that new log follows and applies the new
    /// log's commits.
    ///
    /// With `reloading`, the log is the one this store reads, cut back below what it applied: its state is loaded
    /// anew from the newest root record and the whole log, and may go back; every row may have changed.
    private func followNewLog(
        _ position: inout LogPosition, writing: Bool, reloading: Bool, reserve: WALReader.ReserveCheck
    ) throws -> ExternalCommits? {
        let before = shared.withLock { $0.latest }
        var oldChanges = ChangedRows()
        let oldSummary = try WALReader(file: wal.file).read(
            from: position.committedEnd, header: position.header, previousLSN: before.lsn, reserve: .header
        ) { header, payload, _ in
            guard header.type == .operations else { return }
            try? WALOperation.decodeAll(payload) { oldChanges.note($0) }
        }
        // A checkpoint in progress elsewhere may show a root record newer than the log at hand, or (between its root
        // record and its rename) the new log may not be in place yet: look again until both agree.
        for attempt in 0..<1_000 {
            if attempt > 0 { usleep(1_000) }
            let handle: any FileHandle
            do { handle = try fileSystem.openFile(at: walPath, mode: .existing) } catch { throw StorageError.io(error) }
            let file: FileIdentity
            let header: WALFileHeader
            do {
                file = try handle.identity()
                header = try WALReader(file: handle).readHeader()
            } catch {
                try? handle.close()
                throw error
            }
            guard header.storeID == self.header.storeID else {
                try? handle.close()
                throw StorageError.corrupt(walPath, at: 16, "the write-ahead log belongs to another store")
            }
            let pageFileSize: UInt64
            do { pageFileSize = try pages.file.size() } catch {
                try? handle.close()
                throw StorageError.io(error)
            }
            // No root record: no checkpoint ever completed, and the log must start at the first LSN.
            let found = try RootRecordLocator(pages: pages).locate(pageCount: pageFileSize / UInt64(pageSize))
            guard (found?.record.walLSN ?? 0) >= header.startLSN - 1 else {
                try? handle.close()
                continue
            }
            var state = StoreState()
            if let found {
                state.load(found.record)
                pages.setPageCount(found.lastPage + 1)
            }
            let firstTag = shared.withLock { $0.nextTransactionTag + 1 }
            var replay = LogReplay(
                state: state, tree: tree, coveredLSN: state.lsn, file: walPath,
                headerEnd: UInt64(WALFormat.fileHeaderSize), firstTag: firstTag, collectsChanges: true)
            let summary = try WALReader(file: handle).read(reserve: reserve) { header, payload, offset in
                try replay.consume(header, payload: payload, offset: offset)
            }
            shared.withLock { shared in
                if let found {
                    shared.checkpointLSN = found.record.walLSN
                    shared.generation = found.generation
                    shared.rootRecordPage = found.firstPage
                    shared.nextPage = max(shared.nextPage, found.lastPage + 1)
                }
                if reloading {
                    shared.unacknowledged.removeAll()
                } else {
                    shared.unacknowledged.removeAll { $0.lsn <= replay.state.lsn }
                }
                shared.logBehindCheckpoint = summary.lastLSN < (found?.record.walLSN ?? 0)
            }
            // A state older than this store's means the log it had read was cut back (§11.5): it is not the truth.
            let replacing = reloading || replay.state.lsn < before.lsn
            adopt(replay.state, nextTag: replay.nextTag, replacing: replacing)
            wal.adopt(
                handle, salt: header.salt, startLSN: header.startLSN, endOffset: replay.committedEnd,
                fileSize: summary.fileSize, lastLSN: replay.state.lsn)
            position = LogPosition(
                file: FileIdentity(device: file.device, inode: file.inode, size: summary.fileSize), header: header,
                committedEnd: replay.committedEnd, noticeMapping: position.noticeMapping)
            if writing, summary.contentEnd > position.committedEnd { try cutTail(&position, summary: summary) }
            // Every change is named only if the old log was read up to the checkpoint and the new log from it.
            var changes = oldChanges
            changes.merge(replay.changes)
            let covered = found?.record.walLSN ?? 0
            let complete =
                !replacing && oldSummary.lastLSN >= header.startLSN - 1 && covered == header.startLSN - 1
                && !changes.catalogChanged
            logger.debug(
                reloading ? "loaded the log anew" : "caught up with a checkpoint made elsewhere",
                metadata: ["generation": "\(found?.generation ?? 0)", "lsn": "\(replay.state.lsn)"])
            guard replay.state.lsn != before.lsn || !complete else { return nil }
            return ExternalCommits(
                fromLSN: before.lsn, toLSN: replay.state.lsn, rows: changes.rows, isComplete: complete)
        }
        throw StorageError.corrupt(
            walPath, at: 0, "the write-ahead log follows no root record of the page file (looked 1,000 times)")
    }

    /// A checkpoint made elsewhere that wrote its root record but could not rename its new log into place leaves the
    /// log as it was, so following the log does not show it; its pages lie past ``Shared/nextPage``, and this store's
    /// next checkpoint must follow them (as the newer generation, after its last page), never write over them: the
    /// other process's snapshots read them. Pages past the newest root record are garbage to every process (a
    /// checkpoint holds the writer lock until its root record is durable), so they may be written over.
    ///
    /// Looks only at growth of the page file since the last look; the caller holds the writer lock.
    ///
    /// - Returns: the LSN a newer root record found covers: if the log does not bring this store that far, the root
    ///   record holds a large transaction (FORMAT.md, "Large transactions") that only it holds.
    private func followRootRecordsWithoutNewLog() throws -> UInt64? {
        let size: UInt64
        do { size = try pages.file.size() } catch { throw StorageError.io(error) }
        let (examined, known) = shared.withLock { ($0.pageFileExamined, $0.nextPage) }
        let pageSize = UInt64(self.pageSize)
        guard size > examined, size > known * pageSize else { return nil }
        let found = try RootRecordLocator(pages: pages).locate(pageCount: (size + pageSize - 1) / pageSize)
        let newer = shared.withLock { shared -> UInt64? in
            shared.pageFileExamined = size
            guard let found, found.generation > shared.generation, found.lastPage + 1 > shared.nextPage else {
                return nil
            }
            logger.debug(
                "following a root record written elsewhere without a new log",
                metadata: ["generation": "\(found.generation)", "page": "\(found.firstPage)"])
            shared.generation = found.generation
            shared.rootRecordPage = found.firstPage
            shared.nextPage = found.lastPage + 1
            return found.record.walLSN
        }
        pages.setPageCount(max(pages.pageCount, found.map { $0.lastPage + 1 } ?? 0))
        return newer
    }

    /// Makes `state` (which contains every commit this store had, unless `replacing` a state the log no longer
    /// holds) the newest and the published one.
    private func adopt(_ state: StoreState, nextTag: UInt64, replacing: Bool = false) {
        shared.withLock { shared in
            shared.latest = state
            if replacing || state.lsn >= shared.published.lsn { shared.published = state }
            shared.nextTransactionTag = max(shared.nextTransactionTag, nextTag)
        }
    }

    /// Cuts the log back to the end of its last commit, under the writer lock: what follows was left by a writer that
    /// died before its commit record (or is torn), and new records must follow valid ones.
    private func cutTail(_ position: inout LogPosition, summary: WALReader.Summary) throws {
        logger.warning(
            "the log ends in a transaction without its commit record or an invalid record; cutting it off",
            metadata: [
                "offset": "\(position.committedEnd)", "bytes": "\(summary.contentEnd - position.committedEnd)",
                "reason": "\(summary.stopReason ?? "an uncommitted transaction")",
            ])
        try wal.truncate(to: position.committedEnd)
        position.file.size = position.committedEnd
    }
}
