/// What ``Store/verify()`` or ``ReadOnlyStore/verify(checkBlobContents:progress:)`` found: every problem
/// with its location, findings that are not damage, and a summary of the store's structure.
///
/// A **problem** is damage, or a state recovery would have to clean up: the store is not clean while it
/// has one. A **note** is something worth knowing that is not damage (dead blob bytes a compaction would
/// reclaim, leftovers of an interrupted compaction, a lock held by another process). Either may carry a
/// ``Remedy``: what fixes it without losing committed data.
///
/// ## Topics
/// - ``Problem``
/// - ``Remedy``
/// - ``TableSummary``
/// - ``SegmentSummary``
/// - ``LogSummary``
/// - ``HeaderSummary``
public struct VerificationReport: Sendable, Equatable, Codable, CustomStringConvertible {
    /// How a finding can be fixed without losing committed data.
    public enum Remedy: String, Sendable, Equatable, Codable {
        /// Opening the store for writing runs recovery, which replays the log and cuts its torn tail.
        case recovery
        /// Compaction rewrites the store without dead space and removes files nothing references.
        case compaction
        /// Rebuilding the secondary index from its table's rows (``Store/repairIndexes()``): an index is
        /// derived data, so nothing committed is lost.
        case indexRebuild
    }

    /// One inconsistency, where it was found and what is wrong.
    public struct Problem: Sendable, Equatable, Codable, CustomStringConvertible {
        public var file: String
        /// The byte offset in the file, when the problem has one.
        public var offset: UInt64?
        public var message: String
        /// What fixes it without losing committed data; nil when nothing does (salvage what is readable).
        public var remedy: Remedy?
        /// The secondary index the problem is in, when it is in one.
        public var index: String?

        public init(file: String, offset: UInt64?, message: String, remedy: Remedy? = nil, index: String? = nil) {
            self.file = file
            self.offset = offset
            self.message = message
            self.remedy = remedy
            self.index = index
        }

        public var description: String {
            let location = offset.map { "\(file) @\($0)" } ?? file
            return "\(location): \(message)" + (remedy.map { " [fixed by \($0.rawValue)]" } ?? "")
        }
    }

    /// The store header's fields (page 0 of the page file).
    public struct HeaderSummary: Sendable, Equatable, Codable {
        public var formatVersion: UInt32
        public var pageSize: Int
        public var checksumType: UInt8
        public var compatibleFeatures: UInt32
        public var readOnlyCompatibleFeatures: UInt32
        public var incompatibleFeatures: UInt32
        /// The store's identity, 32 hexadecimal digits.
        public var storeID: String
    }

    /// One table of the verified state.
    public struct TableSummary: Sendable, Equatable, Codable {
        public var name: String
        public var tableID: UInt32
        /// Whether the engine owns the table (the blob catalog, `strata.blobs`).
        public var isEngineTable: Bool
        public var rowCount: UInt64
        public var nextRowID: UInt64
        /// Levels in the tree (1: the root is a leaf; 0: empty).
        public var height: Int
        /// The root page, when the root is on disk (nil for an empty table or a root only the log holds).
        public var rootPage: UInt64?
        public var leafPages = 0
        public var internalPages = 0
        public var overflowPages = 0
        /// Nodes only in memory: changes the log holds that no checkpoint has written yet.
        public var unwrittenNodes = 0
        /// Bytes of leaf bodies on disk (cells), for the fill factor: `leafBytes / (leafPages × page body)`.
        public var leafBytes: UInt64 = 0
    }

    /// One secondary index of the verified state.
    public struct IndexSummary: Sendable, Equatable, Codable {
        public var name: String
        public var indexID: UInt32
        /// The name of the table it indexes.
        public var table: String
        /// The row-record field positions of its key.
        public var fields: [Int]
        /// The entity IDs whose rows it indexes, sorted; nil: every row.
        public var entityIDs: [UInt16]?
        /// Entries, as the index counts them.
        public var entryCount: UInt64
        /// Levels in the tree (1: the root is a leaf; 0: empty).
        public var height = 0
        /// The root page, when the root is on disk.
        public var rootPage: UInt64?
        public var leafPages = 0
        public var internalPages = 0
        /// Nodes only in memory: changes the log holds that no checkpoint has written yet.
        public var unwrittenNodes = 0
        /// Bytes of leaf bodies on disk (entries), for the fill factor.
        public var leafBytes: UInt64 = 0
    }

    /// One blob segment file.
    public struct SegmentSummary: Sendable, Equatable, Codable {
        public var segmentID: UInt32
        public var fileBytes: UInt64
        /// Bytes of the records of live blobs.
        public var liveBytes: UInt64
        /// Everything else after the header: deleted blobs, orphans, torn tails.
        public var deadBytes: UInt64
        public var liveBlobs: Int
        /// The live blobs' length before compression: `rawBytes / liveBytes` is the compression ratio.
        public var rawBytes: UInt64
        public var headerIsValid: Bool
    }

    /// The write-ahead log, and what recovery would do with it.
    public struct LogSummary: Sendable, Equatable, Codable {
        public var fileBytes: UInt64 = 0
        public var startLSN: UInt64 = 0
        /// The LSN of the last valid record (startLSN − 1 when there is none).
        public var lastLSN: UInt64 = 0
        public var records = 0
        /// The end of the last valid record.
        public var validEnd: UInt64 = 0
        /// The end of the last commit record: where recovery cuts the log.
        public var committedEnd: UInt64 = 0
        /// Records the newest checkpoint already contains (LSN at or below its LSN).
        public var coveredRecords = 0
        /// Committed transactions after the checkpoint: what recovery replays.
        public var transactionsToReplay = 0
        public var operationsToReplay = 0
        /// Operation records after the last commit record: a transaction recovery discards whole.
        public var uncommittedRecords = 0
        /// Why reading stopped before the end of the file, if it did.
        public var stopReason: String?
        /// Where, after the first invalid record, a valid one was found (damage in the middle of the log
        /// rather than a torn tail), if one was.
        public var validRecordAfterDamage: UInt64?
        /// Zero bytes at the end of the file, written ahead for later records to write over (FORMAT.md §3.3).
        public var reservedBytes: UInt64 = 0
        /// Bytes recovery would discard: everything after the last commit record but reserved space.
        public var discardedBytes: UInt64 {
            fileBytes - reservedBytes > committedEnd ? fileBytes - reservedBytes - committedEnd : 0
        }
    }

    public var problems: [Problem] = []
    /// Findings that are not damage.
    public var notes: [Problem] = []
    public var header: HeaderSummary?
    public var tableCount = 0
    public var rowCount: UInt64 = 0
    public var tables: [TableSummary] = []
    /// Every secondary index, in index-ID order.
    public var indexes: [IndexSummary] = []
    /// Tree pages reachable from the newest checkpoint's roots (index trees included).
    public var treePages = 0
    /// Overflow pages reachable through leaves.
    public var overflowPages = 0
    /// Pages in the page file up to the newest root record, page 0 included.
    public var pageFilePages: UInt64 = 0
    /// Pages no current tree references (superseded by later checkpoints, or older root records):
    /// what compaction would reclaim.
    public var unreferencedPages: UInt64 = 0
    /// Pages of the newest root record.
    public var rootRecordPages: UInt64 = 0
    /// The page file's size in bytes, and whole pages after the newest root record (an interrupted
    /// checkpoint: ignored, and overwritten by the next one).
    public var pageFileBytes: UInt64 = 0
    public var tailPages: UInt64 = 0
    /// The newest checkpoint: its generation and the LSN it covers.
    public var checkpointGeneration: UInt64 = 0
    public var checkpointLSN: UInt64 = 0
    /// Committed blobs and their total length.
    public var blobCount = 0
    public var blobBytes: UInt64 = 0
    /// Bytes in blob segments that no committed blob uses (deleted blobs, orphans, torn tails).
    public var orphanedBlobBytes: UInt64 = 0
    public var segments: [SegmentSummary] = []
    /// Valid records in the log.
    public var walRecords = 0
    public var walBytes: UInt64 = 0
    public var log: LogSummary?
    /// Whether another process held the store's lock while it was verified (it may have been writing).
    public var lockHeldElsewhere = false

    public init() {}

    /// Whether no problem was found (notes do not count).
    public var isClean: Bool { problems.isEmpty }

    /// Pages the newest state references: page 0, tree and overflow pages, the root record.
    public var reachablePages: UInt64 { 1 + UInt64(treePages) + UInt64(overflowPages) + rootRecordPages }

    public var description: String {
        var lines = [
            "tables \(tableCount), rows \(rowCount), tree pages \(treePages), overflow pages \(overflowPages), "
                + "page file pages \(pageFilePages) (\(unreferencedPages) unreferenced), WAL records \(walRecords) (\(walBytes) bytes), "
                + "blobs \(blobCount) (\(blobBytes) bytes, \(orphanedBlobBytes) orphaned bytes in segments)"
        ]
        lines += problems.map { "problem: \($0)" }
        lines += notes.map { "note: \($0)" }
        return lines.joined(separator: "\n")
    }
}
