/// Counters and sizes of an open store, for tools and benchmarks.
public struct StoreStatistics: Sendable, Equatable {
    /// Bytes of the current write-ahead log file up to the end of its records (the reserved space after them, FORMAT.md
    /// §3.3, not counted): what the checkpoint threshold compares.
    public var walBytes: UInt64
    /// Bytes in the page file up to the end of the newest checkpoint.
    public var pageFileBytes: UInt64
    /// Checkpoints completed since the store was opened.
    public var checkpointCount: Int
    /// Transactions committed since the store was opened.
    public var commitCount: Int
    /// Of those, the large ones, which committed by writing their pages (``StoreConfiguration/largeTransactionBytes``).
    public var largeCommitCount: Int
    /// Pages large transactions wrote before their commit (or rollback) to bound their memory
    /// (``StoreConfiguration/largeTransactionMemoryBytes``), since the store was opened.
    public var spilledPageCount: Int
    /// Log syncs since the store was opened (fewer than commits when group commit shares them).
    public var walSyncCount: Int
    /// The LSN of the newest commit.
    public var lastLSN: UInt64
    /// The LSN the newest checkpoint covers.
    public var checkpointLSN: UInt64
    /// The generation of the newest checkpoint.
    public var generation: UInt64
    /// Page-cache lookups that found the decoded node, since the store was opened.
    public var pageCacheHits: Int
    /// Page-cache lookups that had to read and decode the page, since the store was opened.
    public var pageCacheMisses: Int
}

/// What opening a store found and did (also logged).
public struct RecoveryReport: Sendable, Equatable {
    /// Whether the store was created by this open.
    public var created: Bool
    /// The generation and WAL position of the checkpoint recovery started from.
    public var checkpointGeneration: UInt64
    /// The last WAL LSN that checkpoint contains: replay started after it.
    public var checkpointLSN: UInt64
    /// Committed transactions replayed from the log.
    public var replayedTransactions: Int
    /// Operation records of a transaction without its commit record, discarded whole.
    public var discardedRecords: Int
    /// Bytes after the log's valid prefix (a torn tail), discarded.
    public var discardedLogBytes: UInt64
    /// Why reading the log stopped before its end, if it did.
    public var logStopReason: String?
    /// Pages after the newest valid root record (an interrupted checkpoint), ignored.
    public var ignoredTailPages: UInt64
    /// Whether the checkpoint of what was replayed runs after `open` returned, on another thread (a replay of at
    /// least ``StoreConfiguration/backgroundRecoveryCheckpointBytes``), rather than before.
    public var checkpointsAfterOpen = false
}
