import Logging

/// How a store is opened and how it trades durability for speed.
public struct StoreConfiguration: Sendable {
    /// When a commit is durable.
    public enum Durability: Sendable, Equatable {
        /// Commit returns once its commit record is synced to disk. Concurrent committers share one
        /// sync (group commit). Nothing acknowledged is lost at power failure.
        case full
        /// Commit returns at once; the log is synced within `maxDelayMilliseconds` and at every
        /// checkpoint. A power failure may lose the last moments of commits, never consistency.
        case normal(maxDelayMilliseconds: Int)
        /// The log is synced only at checkpoints (bulk loads, tests). A power failure may lose every
        /// commit since the last checkpoint, never consistency.
        case off
    }

    /// Create the store (and its directory) when it does not exist.
    public var createIfMissing: Bool
    /// When a commit is durable; ``Durability/full`` by default.
    public var durability: Durability
    /// Page size for a new store (a power of two, 512...65536). An existing store keeps its own.
    public var pageSize: Int
    /// A checkpoint runs after a commit once the log holds this many bytes.
    public var checkpointThresholdBytes: UInt64
    /// A write transaction whose log records pass this many bytes is a large transaction: it stops logging and
    /// commits by writing its pages to the page file, with a root record as its commit point (FORMAT.md, "Large
    /// transactions"). A bulk load then costs one write of its pages instead of a copy in the log and a copy in the
    /// page file, and the log never holds it.
    public var largeTransactionBytes: UInt64
    /// How many decoded pages the page cache keeps.
    public var pageCacheCapacity: Int
    /// Binary values at least this long belong in blob segments rather than inside rows
    /// (``shouldStoreAsBlob(length:)``); the object graph applies it to attributes that allow external storage.
    public var blobThreshold: Int
    /// A blob segment file rolls over to a new one once it holds this many bytes.
    public var blobSegmentSizeLimit: UInt64
    /// Where recovery, checkpoints and anything discarded are reported.
    public var logger: Logger
    /// An open that replays at least this many bytes of log checkpoints them after it returns, on another thread,
    /// rather than before (16 MiB). Nothing is at risk meanwhile: the log keeps every replayed commit until the
    /// checkpoint's root record is durable, as for any checkpoint. Writers wait for it as for any checkpoint;
    /// readers do not. `UInt64.max`: always before `open` returns.
    public var backgroundRecoveryCheckpointBytes: UInt64 = 16 << 20
    /// The peak memory of a large transaction's rows and index entries (16 MiB): once the rows it put since its last
    /// spill, with the index entries they noted, pass this many bytes, it writes its full leaves to the page file,
    /// where they stay invisible until its root record commits them, and keeps only their page numbers, and writes
    /// its loads into empty indexes as sorted runs (FORMAT.md, "Large transactions"). A bulk load's memory is then
    /// bounded by this setting, not by its size. Smaller values write more often; the rightmost leaf of each table,
    /// which an append fills next, stays in memory, and so do the index changes that are not such loads.
    public var largeTransactionMemoryBytes: UInt64 = 16 << 20
    /// The most zeros an append writes ahead of the log's records (1 MiB; 0: none), for later commits to write over
    /// (FORMAT.md §3.3). A sync of a write inside the file is cheaper than one of a write that extends it, whose new
    /// size the file system must also commit: on ext4 a durable commit costs about a third less. Each reserve is as
    /// large as the log already is, from 64 KiB up to this.
    public var logReserveBytes: UInt64 = 1 << 20

    /// Creates a configuration; every parameter has the default shown.
    ///
    /// - Parameters:
    ///   - createIfMissing: create the store (and its directory) when it does not exist.
    ///   - durability: when a commit is durable.
    ///   - pageSize: page size in bytes for a new store: a power of two in 512...65536.
    ///   - checkpointThresholdBytes: the log size in bytes that triggers a checkpoint after a commit (64 MiB).
    ///   - largeTransactionBytes: the size in bytes of a transaction's log records from which it commits by writing
    ///     its pages instead (8 MiB).
    ///   - pageCacheCapacity: how many decoded pages the page cache keeps.
    ///   - blobThreshold: the length in bytes from which binary values go to blob segments (16 KiB).
    ///   - blobSegmentSizeLimit: the size in bytes at which a blob segment rolls over (256 MiB).
    ///   - logger: where recovery, checkpoints and discarded data are reported.
    public init(
        createIfMissing: Bool = true,
        durability: Durability = .full,
        pageSize: Int = 4096,
        checkpointThresholdBytes: UInt64 = 64 << 20,
        largeTransactionBytes: UInt64 = 8 << 20,
        pageCacheCapacity: Int = 16384,
        blobThreshold: Int = 16 << 10,
        blobSegmentSizeLimit: UInt64 = 256 << 20,
        logger: Logger = Logger(label: "strata.storage")
    ) {
        self.createIfMissing = createIfMissing
        self.durability = durability
        self.pageSize = pageSize
        self.checkpointThresholdBytes = checkpointThresholdBytes
        self.largeTransactionBytes = largeTransactionBytes
        self.pageCacheCapacity = pageCacheCapacity
        self.blobThreshold = blobThreshold
        self.blobSegmentSizeLimit = blobSegmentSizeLimit
        self.logger = logger
    }

    /// Whether a binary value of `length` bytes should go to a blob segment instead of inline in its row.
    public func shouldStoreAsBlob(length: Int) -> Bool { length >= blobThreshold }
}
