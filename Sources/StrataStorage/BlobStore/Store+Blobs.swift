import StrataFormat
import StrataIO

extension Store {
    /// Live and dead bytes of every blob segment, from the newest committed state's blob catalog.
    public func blobSegmentStatistics() throws -> [BlobSegmentStatistics] {
        try blobSegmentStatistics(of: snapshot())
    }

    func blobSegmentStatistics(of snapshot: Snapshot) throws -> [BlobSegmentStatistics] {
        try BlobVerifier.segmentStatistics(of: snapshot.state, tree: tree, blobs: blobs)
    }
}
