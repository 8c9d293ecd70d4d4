/// What ``Store/compact(at:configuration:fileSystem:progress:)`` did: the store's size before and after
/// and what it copied.
public struct CompactionReport: Sendable, Equatable, Codable {
    /// Bytes of every file of the store (page file, log, blob segments, leftovers of an interrupted
    /// compaction) before and after.
    public var bytesBefore: UInt64 = 0
    public var bytesAfter: UInt64 = 0
    /// `bytesBefore - bytesAfter` (0 if the store grew, which a store without dead space can by a page).
    public var bytesReclaimed: UInt64 = 0
    public var pageFileBytesBefore: UInt64 = 0
    public var pageFileBytesAfter: UInt64 = 0
    public var segmentBytesBefore: UInt64 = 0
    public var segmentBytesAfter: UInt64 = 0
    /// The log's size, which compaction does not change (the checkpoint before it empties the log).
    public var walBytes: UInt64 = 0
    /// Tables (the engine's blob catalog included) and their rows, as copied.
    public var tableCount = 0
    public var rowCount: UInt64 = 0
    /// Secondary indexes written, and their entries.
    public var indexCount = 0
    public var indexEntryCount: UInt64 = 0
    /// Of ``indexCount``, the indexes copied entry for entry from the old page file: verified whole and in
    /// agreement with their tables before compaction began, and unchanged since. The others were rebuilt from their
    /// tables' rows. Either way the new tree holds the entries a rebuild gives.
    public var indexesCopied = 0
    /// Pages of the new page file: tree nodes, overflow pages, root-record pages (page 0 not counted).
    public var treePagesWritten = 0
    public var overflowPagesWritten = 0
    public var rootRecordPagesWritten = 0
    /// Live blobs copied into new segments, and the bytes their records take.
    public var blobsCopied = 0
    public var blobBytesCopied: UInt64 = 0
    /// Segment IDs before and after; every segment of `segmentsBefore` is deleted.
    public var segmentsBefore: [UInt32] = []
    public var segmentsAfter: [UInt32] = []
    /// The checkpoint generation of the compacted page file.
    public var generation: UInt64 = 0
    /// Whether the store had to be checkpointed first (its log held commits not yet in the page file: the
    /// recovery of opening it replayed them).
    public var checkpointedFirst = false
    /// Whether the store was verified as it was copied (its log held no record), each page checked as it was read,
    /// rather than by a full verification before (FORMAT.md §8.1 step 0).
    public var verifiedWhileCopying = false
    /// Removing the old segments after the swap failed (they are garbage: verification counts their
    /// bytes as orphaned, and the next compaction removes them). Compaction itself succeeded.
    public var cleanupFailure: String?
    /// Wall-clock seconds the compaction took.
    public var seconds: Double = 0

    public init() {}

    /// Pages written, page 0 included.
    public var pagesWritten: Int { 1 + treePagesWritten + overflowPagesWritten + rootRecordPagesWritten }

    public var description: String {
        "compacted \(tableCount) tables (\(rowCount) rows, \(blobsCopied) blobs): \(bytesBefore) -> \(bytesAfter) bytes, "
            + "\(bytesReclaimed) reclaimed; page file \(pageFileBytesBefore) -> \(pageFileBytesAfter), "
            + "blob segments \(segmentBytesBefore) -> \(segmentBytesAfter)"
    }
}
