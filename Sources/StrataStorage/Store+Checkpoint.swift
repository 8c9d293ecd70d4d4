import StrataFormat
import StrataIO

extension Store {
    /// Moves every committed change from the log into the page file and starts a new, empty log.
    ///
    /// Runs automatically when the log outgrows ``StoreConfiguration/checkpointThresholdBytes`` and on
    /// ``close()``. Readers go on undisturbed; writers wait for it.
    ///
    /// - Throws: ``StorageError/io(_:)`` (a full disk, say): the previous checkpoint stays the valid one
    ///   and the log keeps every commit, so nothing is lost.
    public func checkpoint() throws {
        writerGate.wait()
        defer { writerGate.signal() }
        if shared.withLock({ $0.closed }) { throw StorageError.storeClosed }
        let writers = try lockWriters()
        defer { writers?.unlock() }
        try catchUp(writing: true)
        try checkpointHoldingGate()
    }

    /// The checkpoint algorithm (FORMAT.md, "Checkpoint"); the caller holds the writer gate and the writer lock, and
    /// has caught up with the log.
    ///
    /// 1. Sync the log, so that everything the checkpoint covers is durable there first.
    /// 2. Append every in-memory tree node (and overflow chain) as new pages after the newest root
    ///    record, children before parents; sync the page file.
    /// 3. Append the root record (every table's root, the covered LSN, the previous root record); sync.
    ///    This sync is the checkpoint's commit point: a crash before it leaves the previous root record
    ///    the newest valid one, and the pages written are unreferenced garbage.
    /// 4. Publish the state with on-disk roots, so memory held by in-memory nodes can be freed.
    /// 5. Replace the log with a new empty one starting at the next LSN (write, sync, rename, sync directory).
    ///
    /// A large transaction commits through the same steps (FORMAT.md, "Large transactions"): the state written is the
    /// transaction's (`committing`, one LSN past the newest commit), and step 3's root record is its commit point. Its
    /// changes never reach the log; once the root record is durable the commit stands, even if step 5 fails (the next
    /// writer then starts the new log first, ``Shared/logBehindCheckpoint``).
    ///
    /// - Parameters:
    ///   - startingNewLog: start a new log even when there is nothing to checkpoint (after the log was cut back:
    ///     other opens must not read on in it, FORMAT.md §11.5).
    ///   - committing: the state of a large transaction, based on the newest state.
    ///   - spilled: the leaves that large transaction wrote before its commit (``LeafSpill``), from the page file's
    ///     end on: step 2 appends after them, and a failure cuts them off with the rest.
    func checkpointHoldingGate(
        startingNewLog: Bool = false, committing large: StoreState? = nil, spilled: Range<UInt64> = 0..<0
    ) throws {
        var startingNewLog = startingNewLog || shared.withLock { $0.logBehindCheckpoint }
        if let failure = wal.failed {
            guard wal.isRepairable, large == nil else { throw failure }
            try repairLog()
            startingNewLog = true
        }
        // The trees recovery left unbuilt are written like any other (the log holds their rows until this
        // checkpoint's root record is durable).
        try buildPendingTables()
        let (latest, coveredLSN, generation, startPage, previousRoot) = shared.withLock {
            ($0.latest, $0.checkpointLSN, $0.generation, $0.nextPage, $0.rootRecordPage)
        }
        try wal.syncAll()
        publish(latest)
        if let large { precondition(large.lsn == latest.lsn + 1, "a large commit follows the newest state") }
        let state = large ?? latest
        precondition(state.pending == nil, "a checkpoint writes built trees")
        guard state.lsn > coveredLSN else {
            if startingNewLog { try resetLog(startLSN: state.lsn + 1) }
            return
        }
        // No store makes 2^64 checkpoints: a newest root record of the last generation was written by something else.
        guard generation < UInt64.max else {
            throw StorageError.corrupt(
                pages.fileName, at: pages.offset(of: previousRoot),
                "the newest root record has generation \(generation), which no checkpoint can follow")
        }

        precondition(spilled.isEmpty || (large != nil && spilled.lowerBound == startPage))
        var writer = CheckpointWriter(
            pages: pages, startPage: spilled.isEmpty ? startPage : spilled.upperBound, generation: generation + 1,
            spilledLeaves: spilled)
        let records: [RootRecord.Table]
        let indexRoots: [IndexID: (page: UInt64, height: Int)]
        let rootRecordPage: UInt64
        do {
            var tables: [RootRecord.Table] = []
            for table in state.tables.values.sorted(by: { $0.id < $1.id }) {
                let (root, height) = try writer.writeTree(table.root)
                tables.append(
                    RootRecord.Table(
                        tableID: table.id.rawValue, name: table.name, nextRowID: table.nextRowID,
                        rowCount: table.rowCount,
                        rootPage: root, height: height))
            }
            var roots: [IndexID: (page: UInt64, height: Int)] = [:]
            for index in state.indexes.values.sorted(by: { $0.id < $1.id }) {
                roots[index.id] = try writer.writeIndexTree(index.root)
            }
            try writer.flush()
            do { try pages.file.sync() } catch { throw StorageError.io(error) }
            let page = try writer.writeRootRecord(
                RootRecord(
                    walLSN: state.lsn, nextTableID: state.nextTableID, previousRootPage: previousRoot, tables: tables,
                    nextIndexID: state.nextIndexID, indexes: state.indexRecords(roots: roots)))
            try writer.flush()
            do { try pages.file.sync() } catch { throw StorageError.io(error) }
            (records, indexRoots, rootRecordPage) = (tables, roots, page)
        } catch {
            // Nothing of this checkpoint is referenced: its pages are garbage that any open (another process's
            // too) may write over, so neither its cached nodes nor the page file's examined size may stand.
            pages.cache.forget(startPage..<max(startPage, writer.nextPage))
            pages.indexCache.forget(startPage..<max(startPage, writer.nextPage))
            shared.withLock { $0.pageFileExamined = 0 }
            if large != nil { discardFailedLargeCommit(from: startPage) }
            throw error
        }
        pages.setPageCount(writer.nextPage)

        var checkpointed = state
        for record in records {
            checkpointed.tables[TableID(record.tableID)]?.root =
                record.rootPage == PageFormat.noPage ? nil : .page(record.rootPage)
        }
        for (id, root) in indexRoots {
            checkpointed.indexes[id]?.root = root.page == PageFormat.noPage ? nil : .page(root.page)
        }
        shared.withLock { shared in
            shared.latest = checkpointed
            if shared.published.lsn <= checkpointed.lsn { shared.published = checkpointed }
            shared.checkpointLSN = state.lsn
            shared.generation = generation + 1
            shared.rootRecordPage = rootRecordPage
            shared.nextPage = writer.nextPage
            shared.checkpointCount += 1
            if large != nil {
                shared.commitCount += 1
                shared.largeCommitCount += 1
                shared.logBehindCheckpoint = true
            }
        }
        logger.debug(
            large == nil ? "checkpoint written" : "large transaction committed",
            metadata: [
                "generation": "\(generation + 1)", "lsn": "\(state.lsn)", "pages": "\(writer.pagesWritten)",
                "rootRecordPage": "\(rootRecordPage)",
            ])
        guard large != nil else { return try resetLog(startLSN: state.lsn + 1) }
        // The commit stands: a log that cannot be replaced now is replaced by the next writer.
        do { try resetLog(startLSN: state.lsn + 1) } catch {
            logger.error(
                "a large transaction committed, but no new log could follow it yet", metadata: ["error": "\(error)"])
        }
    }

    /// A large commit that failed may have left its root record in the file, unsynced or synced by a failed sync that
    /// reached the disk after all: then it would commit the transaction the caller was told failed, at the next open
    /// or for another process that finds it. The pages are cut off and the cut synced; if even that fails, the store
    /// writes nothing more (the outcome is unknown, as for a log whose sync failed).
    private func discardFailedLargeCommit(from startPage: UInt64) {
        do throws(IOError) {
            try pages.file.truncate(to: startPage * UInt64(pageSize))
            try pages.file.sync()
        } catch {
            logger.error("could not cut off a failed large commit's pages", metadata: ["error": "\(error)"])
            wal.fail(.storeFailed(reason: "a failed large commit's pages could not be cut off: \(error)"))
        }
    }

    /// Replaces the log with an empty one whose first record will have `startLSN`.
    func resetLog(startLSN: UInt64) throws {
        let temporary = StoreFileNames.path(directory, StoreFileNames.walTemporary)
        let final = StoreFileNames.path(directory, StoreFileNames.wal)
        let salt = UInt32.random(in: .min ... .max)
        let handle: any FileHandle
        do {
            handle = try fileSystem.openFile(at: temporary, mode: .truncate)
            try handle.write(WALFileHeader(storeID: header.storeID, startLSN: startLSN, salt: salt).encoded(), at: 0)
            try handle.sync()
        } catch { throw StorageError.io(error) }
        let identity: FileIdentity
        do { identity = try handle.identity() } catch {
            try? handle.close()
            throw StorageError.io(error)
        }
        try follower.withLock { position in
            do throws(IOError) { try fileSystem.rename(from: temporary, to: final) } catch {
                try? handle.close()
                throw StorageError.io(error)
            }
            wal.replace(
                with: handle, salt: salt, endOffset: UInt64(WALFormat.fileHeaderSize), lastLSN: startLSN - 1)
            position = LogPosition(
                file: identity, header: WALFileHeader(storeID: header.storeID, startLSN: startLSN, salt: salt),
                committedEnd: UInt64(WALFormat.fileHeaderSize), noticeMapping: position.noticeMapping)
            // A notice that cannot be written leaves the others reading the old log: still right, since this
            // log holds nothing yet, and the next notice any open writes sends them to it.
            try? postNotice(&position, lastCommitLSN: startLSN - 1, logStartLSN: startLSN)
        }
        shared.withLock {
            $0.directorySyncPending = true
            $0.logBehindCheckpoint = false
        }
        try syncDirectoryIfPending()
    }

    /// Until the rename of a new log is durable, a crash could bring the old log back and lose what the new
    /// one receives: no commit may be logged before the directory sync succeeds.
    func syncDirectoryIfPending() throws {
        guard shared.withLock({ $0.directorySyncPending }) else { return }
        do { try fileSystem.syncDirectory(at: directory) } catch { throw StorageError.io(error) }
        shared.withLock { $0.directorySyncPending = false }
    }
}
