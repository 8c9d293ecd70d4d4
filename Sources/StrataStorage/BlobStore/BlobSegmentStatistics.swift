/// Live and dead bytes of one blob segment: what compaction would reclaim.
public struct BlobSegmentStatistics: Sendable, Equatable {
    /// The segment's number, which names its file (`blob-000001.seg` for 1).
    public var segmentID: UInt32
    /// The segment file's size.
    public var fileBytes: UInt64
    /// Bytes of records that belong to committed, not deleted blobs.
    public var liveBytes: UInt64
    /// Everything else after the header: deleted or replaced blobs, orphans of transactions that never
    /// committed, a torn tail.
    public var deadBytes: UInt64
    /// The number of committed, not deleted blobs whose records are in this segment.
    public var liveBlobs: Int
}
