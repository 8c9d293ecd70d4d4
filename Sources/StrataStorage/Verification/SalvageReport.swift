/// What ``Store/salvage(from:to:configuration:fileSystem:progress:)`` copied out of a damaged store,
/// and what it had to leave behind.
public struct SalvageReport: Sendable, Equatable, Codable {
    /// One table of the source and what became of it.
    public struct Table: Sendable, Equatable, Codable {
        public var name: String
        public var tableID: UInt32
        /// Rows the source's root record says the table had, and rows copied (the log's changes included).
        public var rowsExpected: UInt64
        public var rowsCopied: UInt64 = 0
        /// Tree pages that could not be read: the rows under them are lost (unless the log rewrote them).
        public var pagesSkipped = 0
        /// Long values whose overflow chain could not be read: their rows are lost.
        public var valuesSkipped = 0
        /// The checkpoint generation the rows came from: older than the newest when its tree's root was
        /// unreadable and an older checkpoint's tree was read instead (its rows may be stale).
        public var generation: UInt64 = 0
    }

    public var tables: [Table] = []
    public var rowsCopied: UInt64 = 0
    public var blobsCopied = 0
    public var blobBytesCopied: UInt64 = 0
    /// Blobs the catalog names whose records are damaged or missing: not copied (rows referencing them dangle).
    public var blobsSkipped = 0
    public var pagesSkipped = 0
    public var valuesSkipped = 0
    /// The newest valid checkpoint of the source (0: none, the trees were empty).
    public var checkpointGeneration: UInt64 = 0
    /// Committed transactions of the source's log applied after the checkpoint, and operations of them
    /// that could not be applied.
    public var logTransactionsApplied = 0
    public var logOperationsSkipped = 0
    /// Whether the source's store header was damaged and rebuilt (its store ID from the log or a blob
    /// segment, its page size from the first pages that verify).
    public var headerRebuilt = false
    /// The first problems met, with their locations (at most 100).
    public var problems: [String] = []
    /// Problems met beyond the first 100.
    public var moreProblems = 0

    public init() {}

    /// Whether everything the source referenced was copied.
    public var isComplete: Bool { pagesSkipped == 0 && valuesSkipped == 0 && blobsSkipped == 0 && problems.isEmpty }

    mutating func note(_ problem: String) {
        if problems.count < 100 { problems.append(problem) } else { moreProblems += 1 }
    }
}
