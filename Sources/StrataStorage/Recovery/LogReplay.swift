import StrataFormat

/// Applies the committed transactions of a log, read in order, to the checkpointed state.
///
/// Operations are applied as they are read to a working copy of the state, under a tag of their own for
/// each transaction; at the transaction's commit record the working copy becomes the state. Operations
/// with no commit record after them are dropped whole with the working copy. Records the checkpoint
/// already covers (LSN at or below its LSN) are skipped.
struct LogReplay {
    private(set) var state: StoreState
    private var working: StoreState
    private let tree: BTree
    private let coveredLSN: UInt64
    private let file: String
    private var tag: UInt64
    private var pendingRecords: UInt32 = 0
    private var pendingOperations: UInt64 = 0
    private(set) var replayedTransactions = 0
    /// The end of the last commit record: where the log may be continued.
    private(set) var committedEnd: UInt64
    /// The rows the replayed transactions changed, when `collectsChanges` (catching up with other processes).
    private(set) var changes = ChangedRows()
    private var pendingChanges = ChangedRows()
    private let collectsChanges: Bool

    init(
        state: StoreState, tree: BTree, coveredLSN: UInt64, file: String, headerEnd: UInt64, firstTag: UInt64,
        collectsChanges: Bool = false
    ) {
        self.collectsChanges = collectsChanges
        self.state = state
        self.working = state
        self.tree = tree
        self.coveredLSN = coveredLSN
        self.file = file
        self.committedEnd = headerEnd
        self.tag = firstTag
    }

    /// The tag the next write transaction may use (above every tag replay used).
    var nextTag: UInt64 { tag + 1 }

    /// Operation records read since the last commit record: a transaction cut off by the end of the log.
    var uncommittedRecords: Int { Int(pendingRecords) }

    mutating func consume(_ header: WALRecord.Header, payload: UnsafeRawBufferPointer, offset: UInt64) throws {
        switch header.type {
        case .operations:
            pendingRecords += 1
            guard header.lsn > coveredLSN else { return }
            do {
                try WALOperation.decodeAll(payload) { operation in
                    try working.apply(operation, tree: tree, owner: tag)
                    if collectsChanges { pendingChanges.note(operation) }
                    pendingOperations += 1
                }
            } catch let error as FormatError {
                throw StorageError.corrupt(file, at: offset, "operation record LSN \(header.lsn): \(error)")
            } catch StorageError.io(let error) {
                throw StorageError.io(error)
            } catch let error as StorageError {
                throw StorageError.corrupt(
                    file, at: offset, "operation record LSN \(header.lsn) does not apply: \(error)")
            }
        case .commit:
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
                working.lsn = header.lsn
                state = working
                replayedTransactions += 1
                tag += 1
                changes.merge(pendingChanges)
            }
            pendingChanges = ChangedRows()
            pendingRecords = 0
            pendingOperations = 0
            committedEnd = offset + UInt64(WALFormat.recordHeaderSize + payload.count)
        }
    }
}
