import StrataFormat
import StrataIO

extension Store {
    /// Live and dead bytes of every blob segment, from the newest committed state's blob catalog.
    public func blobSegmentStatistics() throws -> [BlobSegmentStatistics] {
        try blobSegmentStatistics(of: snapshot())
    }

    func blobSegmentStatistics(of snapshot: Snapshot) throws -> [BlobSegmentStatistics] {
        var statistics: [UInt32: BlobSegmentStatistics] = [:]
        for id in try blobs.segmentIDs() {
            let size: UInt64
            do {
                let file = try blobs.reader(for: id)
                size = try file.size()
            } catch let error as StorageError { throw error } catch let error as IOError { throw StorageError.io(error) }
            statistics[id] = BlobSegmentStatistics(segmentID: id, fileBytes: size, liveBytes: 0, deadBytes: 0, liveBlobs: 0)
        }
        try forEachCatalogEntry(in: snapshot) { _, entry in
            statistics[entry.segmentID, default: BlobSegmentStatistics(
                segmentID: entry.segmentID, fileBytes: 0, liveBytes: 0, deadBytes: 0, liveBlobs: 0)].liveBytes += entry.storedBytes
            statistics[entry.segmentID]?.liveBlobs += 1
        }
        return statistics.values.sorted { $0.segmentID < $1.segmentID }.map { segment in
            var segment = segment
            let used = UInt64(BlobSegmentFormat.headerSize) + segment.liveBytes
            segment.deadBytes = segment.fileBytes > used ? segment.fileBytes - used : 0
            return segment
        }
    }

    func forEachCatalogEntry(in snapshot: Snapshot, _ body: (BlobID, BlobCatalogEntry) throws -> Void) throws {
        guard let table = snapshot.state.tableIDs[BlobCatalog.tableName] else { return }
        try tree.forEach(snapshot.state.table(table).root, from: 0, through: .max, reverse: false) { key, value in
            try body(BlobID(key), BlobCatalog.entry(value, pages: pages, blob: BlobID(key)))
            return true
        }
    }

    /// Verifies every committed blob (each chunk's checksum, decompression, the content checksum) and the
    /// segment accounting: blobs inside their segment's file, never overlapping. Counts orphaned bytes.
    func verifyBlobs(of state: StoreState, into report: inout VerificationReport) {
        let snapshot = Snapshot(state: state, tree: tree, blobs: blobs)
        var ranges: [UInt32: [(start: UInt64, end: UInt64, blob: BlobID)]] = [:]
        do {
            try forEachCatalogEntry(in: snapshot) { blob, entry in
                report.blobCount += 1
                report.blobBytes += entry.rawLength
                ranges[entry.segmentID, default: []].append((entry.offset, entry.offset + entry.storedBytes, blob))
                do {
                    let reader = BlobReader(blob: blob, entry: entry, blobs: blobs)
                    while try reader.next() != nil {}
                } catch {
                    report.problems.append(
                        .init(file: blobs.path(of: entry.segmentID), offset: entry.offset, message: "\(error)"))
                }
            }
            for segment in try blobSegmentStatistics(of: snapshot) {
                report.orphanedBlobBytes += segment.deadBytes
                if segment.liveBlobs > 0, !blobs.hasValidHeader(try blobs.reader(for: segment.segmentID), segment.segmentID) {
                    report.problems.append(
                        .init(file: blobs.path(of: segment.segmentID), offset: 0, message: "segment header is damaged"))
                }
                let sorted = (ranges[segment.segmentID] ?? []).sorted { $0.start < $1.start }
                for (index, range) in sorted.enumerated() {
                    if range.end > segment.fileBytes {
                        report.problems.append(
                            .init(file: blobs.path(of: segment.segmentID), offset: range.start,
                                  message: "\(range.blob) runs past the end of its segment"))
                    }
                    if index > 0, sorted[index - 1].end > range.start {
                        report.problems.append(
                            .init(file: blobs.path(of: segment.segmentID), offset: range.start,
                                  message: "\(range.blob) overlaps \(sorted[index - 1].blob)"))
                    }
                }
            }
        } catch {
            report.problems.append(.init(file: blobs.directory, offset: nil, message: "blob catalog: \(error)"))
        }
    }
}
