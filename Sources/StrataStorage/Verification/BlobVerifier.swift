import StrataFormat
import StrataIO

/// Checks the blobs of a state against their segments.
///
/// 1. Every blob the catalog names: each chunk record (checksum, blob ID, chunk index, decompression to
///    exactly its length) and the whole blob's content checksum, read as ``BlobReader`` reads it (skipped
///    when `checkContents` is off: `strata info` only accounts).
/// 2. Every segment file in the directory: its header (magic, checksum, this store's ID, the ID in its
///    name); live blobs inside the file and never overlapping; live, dead (orphaned) and raw bytes.
/// 3. Segments the catalog names that are not in the directory.
struct BlobVerifier {
    let tree: BTree
    let blobs: BlobStore
    var checkContents = true
    /// Told of every blob chunk checked, if set.
    var progress: ProgressThrottle?

    init(tree: BTree, blobs: BlobStore) {
        self.tree = tree
        self.blobs = blobs
    }

    /// Calls `body` with every catalog entry of `state`, in blob-ID order.
    static func forEachEntry(
        in state: StoreState, tree: BTree, _ body: (BlobID, BlobCatalogEntry) throws -> Void
    ) throws {
        guard let table = state.tableIDs[BlobCatalog.tableName] else { return }
        try tree.forEach(state.table(table).root, from: 0, through: .max, reverse: false) { key, value in
            try body(BlobID(key), BlobCatalog.entry(value, pages: tree.pages, blob: BlobID(key)))
            return true
        }
    }

    /// Live and dead bytes of every segment in the directory (and of segments the catalog names that are
    /// not there, with a size of 0).
    static func segmentStatistics(of state: StoreState, tree: BTree, blobs: BlobStore) throws -> [BlobSegmentStatistics]
    {
        try segmentSummaries(of: state, tree: tree, blobs: blobs).map {
            BlobSegmentStatistics(
                segmentID: $0.segmentID, fileBytes: $0.fileBytes, liveBytes: $0.liveBytes, deadBytes: $0.deadBytes,
                liveBlobs: $0.liveBlobs)
        }
    }

    private static func segmentSummaries(
        of state: StoreState, tree: BTree, blobs: BlobStore
    ) throws -> [VerificationReport.SegmentSummary] {
        var segments: [UInt32: VerificationReport.SegmentSummary] = [:]
        func empty(_ id: UInt32) -> VerificationReport.SegmentSummary {
            .init(
                segmentID: id, fileBytes: 0, liveBytes: 0, deadBytes: 0, liveBlobs: 0, rawBytes: 0, headerIsValid: false
            )
        }
        for id in try blobs.segmentIDs() {
            let file = try blobs.reader(for: id)
            var segment = empty(id)
            do { segment.fileBytes = try file.size() } catch { throw StorageError.io(error) }
            segment.headerIsValid = blobs.hasValidHeader(file, id)
            segments[id] = segment
        }
        try forEachEntry(in: state, tree: tree) { _, entry in
            segments[entry.segmentID, default: empty(entry.segmentID)].liveBytes += entry.storedBytes
            segments[entry.segmentID]?.rawBytes += entry.rawLength
            segments[entry.segmentID]?.liveBlobs += 1
        }
        return segments.values.sorted { $0.segmentID < $1.segmentID }.map { segment in
            var segment = segment
            let used = UInt64(BlobSegmentFormat.headerSize) + segment.liveBytes
            segment.deadBytes = segment.fileBytes > used ? segment.fileBytes - used : 0
            return segment
        }
    }

    /// The number of chunks the blobs of `state` have: the total for progress.
    static func chunkCount(of state: StoreState, tree: BTree) -> UInt64 {
        var count: UInt64 = 0
        try? forEachEntry(in: state, tree: tree) { _, entry in count += UInt64(entry.chunkCount) }
        return count
    }

    mutating func verify(_ state: StoreState, into report: inout VerificationReport) {
        var ranges: [UInt32: [(start: UInt64, end: UInt64, blob: BlobID)]] = [:]
        do {
            try Self.forEachEntry(in: state, tree: tree) { blob, entry in
                report.blobCount += 1
                report.blobBytes += entry.rawLength
                ranges[entry.segmentID, default: []].append((entry.offset, entry.offset + entry.storedBytes, blob))
                guard checkContents else { return }
                do {
                    let reader = BlobReader(blob: blob, entry: entry, blobs: blobs, mode: .verifyEverything)
                    while try reader.next() != nil { progress?.advance() }
                } catch {
                    report.problems.append(
                        .init(file: blobs.path(of: entry.segmentID), offset: entry.offset, message: "\(error)"))
                }
            }
            let present = Set(try blobs.segmentIDs())
            let segments = try Self.segmentSummaries(of: state, tree: tree, blobs: blobs)
            report.segments = segments
            for segment in segments {
                let path = blobs.path(of: segment.segmentID)
                report.orphanedBlobBytes += segment.deadBytes
                guard present.contains(segment.segmentID) else {
                    report.problems.append(
                        .init(
                            file: path, offset: nil,
                            message:
                                "blob segment \(segment.segmentID) is missing; the catalog names \(segment.liveBlobs) blobs in it"
                        ))
                    continue
                }
                if !segment.headerIsValid {
                    if segment.liveBlobs > 0 {
                        report.problems.append(.init(file: path, offset: 0, message: "segment header is damaged"))
                    } else {
                        report.notes.append(
                            .init(
                                file: path, offset: 0,
                                message: "segment without a valid header and without live blobs (an interrupted "
                                    + "segment creation, or another store's file): garbage",
                                remedy: .compaction))
                    }
                }
                let sorted = (ranges[segment.segmentID] ?? []).sorted { $0.start < $1.start }
                for (index, range) in sorted.enumerated() {
                    if range.end > segment.fileBytes {
                        report.problems.append(
                            .init(
                                file: path, offset: range.start,
                                message: "\(range.blob) runs past the end of its segment"))
                    }
                    if index > 0, sorted[index - 1].end > range.start {
                        report.problems.append(
                            .init(
                                file: path, offset: range.start,
                                message: "\(range.blob) overlaps \(sorted[index - 1].blob)"))
                    }
                }
            }
        } catch {
            report.problems.append(.init(file: blobs.directory, offset: nil, message: "blob catalog: \(error)"))
        }
        if report.orphanedBlobBytes > 0 {
            report.notes.append(
                .init(
                    file: blobs.directory, offset: nil,
                    message: "\(report.orphanedBlobBytes) bytes of blob segments hold no live blob (deleted blobs, "
                        + "orphans of transactions that never committed, torn tails)",
                    remedy: .compaction))
        }
    }
}
