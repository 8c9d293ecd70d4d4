import StrataFormat

/// Applies the committed transactions of a log, read in order, to the checkpointed state.
///
/// Operations are applied as they are read. Records the checkpoint already covers (LSN at or below its LSN) are
/// skipped. Two ways of applying them:
///
/// - Before ``knownCommittedEnd`` (the end of the log's last commit record, which a caller that read the log once
///   already, as recovery does, passes): every transaction there is known to commit, so all of them are applied to
///   the state itself under one tag. A node the replay made is then changed in place by every later transaction,
///   instead of being copied once per transaction (recovery's profile was dominated by those copies and by freeing
///   them). The states between the commits are never seen: only the last one is.
///   Puts into tables that were empty are gathered instead (``ReplayBatch``) and built bottom-up once, when the
///   in-place part ends or something else touches their table: replaying a crashed bulk load costs a sort and a build,
///   not a tree insert per row and per index entry. At open (`leavesTablesPending`), a table gathered in row order is
///   not built then either, but left to ``PendingTables``.
/// - After it (or everywhere, without it): each transaction is applied to a working copy of the state under a tag of
///   its own, and becomes the state at its commit record. Operations with no commit record after them are dropped
///   whole with the working copy (they are still applied, so that one that cannot apply is reported as before).
struct LogReplay {
    private(set) var state: StoreState
    private var working: StoreState
    private let tree: BTree
    private let coveredLSN: UInt64
    private let file: String
    private var tag: UInt64
    /// Records before this offset belong to transactions whose commit record the log holds.
    private let knownCommittedEnd: UInt64
    /// Whether the transaction being read is applied to ``state`` itself (it commits: it lies before
    /// ``knownCommittedEnd``).
    private var inPlace = false
    /// Whether a transaction was applied in place, under ``tag``: the next one that is not takes a new tag.
    private var tagUsedInPlace = false
    private var pendingRecords: UInt32 = 0
    private var pendingOperations: UInt64 = 0
    private(set) var replayedTransactions = 0
    /// The end of the last commit record: where the log may be continued.
    private(set) var committedEnd: UInt64
    /// The rows the replayed transactions changed, when `collectsChanges` (catching up with other processes).
    private(set) var changes = ChangedRows()
    private var pendingChanges = ChangedRows()
    private let collectsChanges: Bool
    /// Puts of the in-place part into tables that were empty, applied together or left pending (``finish()``).
    private var batch: ReplayBatch
    /// Whether the tables gathered in row order are left unbuilt (``PendingTables``) when the in-place part ends,
    /// instead of built: recovery at open, whose states the store resolves where they are read.
    private let leavesTablesPending: Bool

    /// - Parameters:
    ///   - knownCommittedEnd: the end of the last commit record of the log (``WALReader/committedEnd()``), when the caller
    ///     read it already: transactions before it are applied in place. 0 when unknown.
    ///   - replayedLog: the log read, open for reading again: the puts gathered in the in-place part are read from it
    ///     when their tables are built. Required with `knownCommittedEnd`.
    ///   - leavesTablesPending: leave the tables gathered in row order unbuilt (``PendingTables``), carried by
    ///     ``state``.
    init(
        state: StoreState, tree: BTree, coveredLSN: UInt64, file: String, headerEnd: UInt64, firstTag: UInt64,
        collectsChanges: Bool = false, knownCommittedEnd: UInt64 = 0, replayedLog: ReplayedLog? = nil,
        leavesTablesPending: Bool = false
    ) {
        precondition(knownCommittedEnd == 0 || replayedLog != nil, "an in-place replay reads its puts again")
        self.collectsChanges = collectsChanges
        self.leavesTablesPending = leavesTablesPending
        self.state = state
        self.working = state
        self.tree = tree
        self.coveredLSN = coveredLSN
        self.file = file
        self.committedEnd = headerEnd
        self.tag = firstTag
        self.knownCommittedEnd = knownCommittedEnd
        self.batch = ReplayBatch(log: replayedLog)
    }

    /// The tag the next write transaction may use (above every tag replay used).
    var nextTag: UInt64 { tag + 1 }

    /// Operation records read since the last commit record: a transaction cut off by the end of the log.
    var uncommittedRecords: Int { Int(pendingRecords) }

    /// Whether the log ended inside a transaction applied in place: it began before ``knownCommittedEnd``, but its
    /// commit record was not there when the log was read again (another process cut the log back in between, FORMAT.md
    /// §11.5). ``state`` is then no committed state: the log must be replayed again without `knownCommittedEnd`.
    var appliedUncommittedInPlace: Bool { inPlace && pendingRecords > 0 }

    mutating func consume(_ header: WALRecord.Header, payload: UnsafeRawBufferPointer, offset: UInt64) throws {
        switch header.type {
        case .operations:
            if pendingRecords == 0 { try startTransaction(at: offset) }
            pendingRecords += 1
            guard header.lsn > coveredLSN else { return }
            do {
                if inPlace {
                    try consumeInPlace(
                        payload, record: ReplayBatch.LentRecord(payload: payload, offset: offset, lsn: header.lsn))
                } else {
                    try WALOperation.decodeAll(payload) { operation in
                        try working.apply(operation, tree: tree, owner: tag)
                        if collectsChanges { pendingChanges.note(operation) }
                        pendingOperations += 1
                    }
                }
            } catch let error as FormatError {
                throw StorageError.corrupt(file, at: offset, "operation record LSN \(header.lsn): \(error)")
            } catch StorageError.corruption(let file, let at, let reason) where file == self.file {
                // A gathered put of an earlier record, reported at its own record when its table was applied.
                throw StorageError.corruption(file: file, offset: at, reason: reason)
            } catch StorageError.io(let error) {
                throw StorageError.io(error)
            } catch let error as StorageError {
                throw StorageError.corrupt(
                    file, at: offset, "operation record LSN \(header.lsn) does not apply: \(error)")
            }
        case .commit:
            if pendingRecords == 0 { try startTransaction(at: offset) }
            let commit: WALCommit
            do { commit = try WALCommit.decode(payload) } catch {
                throw StorageError.corrupt(file, at: offset, "commit record LSN \(header.lsn): \(error)")
            }
            guard commit.operationRecordCount == pendingRecords else {
                throw StorageError.corrupt(
                    file, at: offset,
                    "commit LSN \(header.lsn) names \(commit.operationRecordCount) operation records, the log has \(pendingRecords)"
                )
            }
            if header.lsn > coveredLSN {
                guard commit.operationCount == pendingOperations else {
                    throw StorageError.corrupt(
                        file, at: offset,
                        "commit LSN \(header.lsn) names \(commit.operationCount) operations, the log has \(pendingOperations)"
                    )
                }
                if inPlace {
                    state.lsn = header.lsn
                    tagUsedInPlace = true
                } else {
                    working.lsn = header.lsn
                    state = working
                    tag += 1
                }
                replayedTransactions += 1
                changes.merge(pendingChanges)
            }
            pendingChanges = ChangedRows()
            pendingRecords = 0
            pendingOperations = 0
            committedEnd = offset + UInt64(WALFormat.recordHeaderSize + payload.count)
        }
    }

    /// Applies what the in-place part gathered (``ReplayBatch``), or leaves it pending: to be called once the log is
    /// read, before ``state`` is used.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the record of a gathered put that cannot be
    ///   applied (checked when its table is built: not here for the tables left pending).
    mutating func finish() throws {
        try endGathering()
    }

    /// Applies what was gathered, or with ``leavesTablesPending`` leaves the tables gathered in row order pending in
    /// ``state`` (a later change to one of them, in a transaction after the in-place part, resolves it first).
    private mutating func endGathering() throws {
        if leavesTablesPending {
            try batch.leavePending(in: &state, tree: tree, owner: tag)
        } else {
            try batch.applyAll(to: &state, tree: tree, owner: tag)
        }
    }

    /// The operations of a record of a transaction known to commit, applied to ``state`` itself: puts into tables
    /// that were empty gathered (a run at a time while their row IDs increase), everything else applied.
    private mutating func consumeInPlace(_ payload: UnsafeRawBufferPointer, record: ReplayBatch.LentRecord) throws {
        let indexTree = IndexTree(pages: tree.pages)
        var reader = ByteReader(payload)
        while reader.remaining > 0 {
            // A bulk load's puts, a run at a time (a run's rows are not noted one by one for catching up).
            if !collectsChanges, let table = WALOperation.putTableID(at: reader).map(TableID.init),
                batch.gathers(table: table) || batch.startGathering(table: table, state: state)
            {
                let taken = try batch.gatherRun(table: table, from: &reader, of: record)
                pendingOperations += UInt64(taken)
                if taken > 0 { continue }
            }
            try WALOperation.decodeNext(
                from: &reader,
                lendingPuts: { table, row, value in
                    // The state is read only when a table is not gathered yet: passed from this closure, it is copied.
                    guard
                        batch.gathers(table: TableID(table))
                            || batch.startGathering(table: TableID(table), state: state)
                    else { return false }
                    try batch.gather(table: TableID(table), row: row, value: value, of: record, indexTree: indexTree)
                    if collectsChanges { pendingChanges.note(table: table, row: row) }
                    pendingOperations += 1
                    return true
                }
            ) { operation in
                try applyInPlace(operation)
                if collectsChanges { pendingChanges.note(operation) }
                pendingOperations += 1
            }
        }
    }

    /// An operation of a transaction known to commit that was not gathered (a put into a table that was empty is, as
    /// its record is decoded): it first applies what was gathered for the tables it may touch, then applies itself.
    private mutating func applyInPlace(_ operation: WALOperation) throws {
        switch operation {
        case .put:
            break  // into a table that was not empty: nothing of it is gathered
        case .delete(let id, _):
            try batch.apply(table: TableID(id), to: &state, tree: tree, owner: tag)
        case .reserveRows:
            break  // raises the next row ID only: the gathered puts raise it as far again when applied
        case .createTable, .dropTable, .createIndex, .dropIndex:
            if !batch.isEmpty { try batch.applyAll(to: &state, tree: tree, owner: tag) }
        }
        try state.apply(operation, tree: tree, owner: tag)
    }

    /// The first record of a transaction, at `offset`: decides how it is applied.
    private mutating func startTransaction(at offset: UInt64) throws {
        inPlace = offset < knownCommittedEnd
        guard !inPlace else { return }
        if !batch.isEmpty { try endGathering() }
        // A working copy under a tag no node of the state carries, so that what it changes is copied first.
        if tagUsedInPlace {
            tag += 1
            tagUsedInPlace = false
        }
        working = state
    }
}
