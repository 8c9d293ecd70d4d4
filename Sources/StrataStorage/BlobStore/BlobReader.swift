import StrataFormat
import StrataIO

/// Streams a blob out of its segment one chunk (at most 1 MiB) at a time, verifying each chunk's
/// checksum as it goes and the whole blob's checksum at the end.
///
/// A snapshot's reader decompresses each chunk from where it lies in the segment's read-only mapping, straight
/// into the array it returns; once a blob was read whole and verified in an open, later readers of it check record
/// headers, lengths and bounds only (FORMAT.md §5.5). Where the file system cannot map, every read is a positional
/// read, verified in full.
///
/// For example:
/// ```swift
/// if let reader = try store.snapshot().blobReader(photo) {
///     while let chunk = try reader.next() { output.write(chunk) }
/// }
/// ```
public final class BlobReader {
    /// How a reader reads and checks a blob's records (FORMAT.md §5.5).
    enum Mode {
        /// A committed blob (a snapshot's): read in place through the segment's mapping where the file system
        /// maps; a blob verified whole once (every record checksum and the content checksum) is later read
        /// checking bounds and record headers only.
        case committed
        /// A committed blob read for verification or salvage: in place where possible, every checksum checked
        /// on every read (a full, successful read is remembered like a ``committed`` one).
        case verifyEverything
        /// A blob a write transaction may not have committed yet, whose segment may not be synced: positional
        /// reads, every checksum checked, nothing remembered.
        case uncommitted
    }

    /// The blob's length in bytes.
    public let length: UInt64
    private let blob: BlobID
    private let entry: BlobCatalogEntry
    private let blobs: BlobStore
    private let mode: Mode
    private var nextIndex: UInt32 = 0
    private var offset: UInt64
    private var delivered: UInt64 = 0
    private var checksum: UInt32 = 0
    private var ended = false
    /// The buffer chunk records are read into, reused from chunk to chunk (positional reads only).
    private var scratch: [UInt8] = []
    /// The segment's mapping, looked up on the first chunk (nil: positional reads).
    private var map: SegmentMap?
    private var mapLooked = false
    /// Whether the blob was verified whole through `map` before: checksums are then not computed again.
    private var trusted = false

    init(blob: BlobID, entry: BlobCatalogEntry, blobs: BlobStore, mode: Mode = .committed) {
        self.blob = blob
        self.entry = entry
        self.blobs = blobs
        self.mode = mode
        self.length = entry.rawLength
        self.offset = entry.offset
    }

    /// The next chunk, or nil at the end.
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the blob when a chunk is damaged.
    public func next() throws -> [UInt8]? {
        if ended { return nil }
        guard nextIndex < entry.chunkCount else {
            ended = true
            try checkEnd()
            return nil
        }
        if !mapLooked {
            mapLooked = true
            if mode != .uncommitted {
                let segment = try blobs.map(for: entry.segmentID)
                if segment.isAvailable {
                    map = segment
                    trusted =
                        mode == .committed
                        && segment.isVerified(blobAt: entry.offset, contentChecksum: entry.contentChecksum)
                }
            }
        }
        let isLast = nextIndex == entry.chunkCount - 1
        let expected = isLast ? Int(clamping: entry.rawLength &- delivered) : BlobSegmentFormat.chunkSize
        let raw: [UInt8]
        if let map, let record = try mappedRecord(map) {
            raw = try decode(record.header, from: record.bytes, expected: expected, checkingChecksum: !trusted)
            if entry.chunkCount > 1 {
                // A blob of several chunks is streamed: drop the pages of the record just decoded from this
                // process's resident memory (they stay in the page cache), so that reading a blob of any length
                // holds about one chunk at a time, as positional reads into one buffer did. A blob of one chunk
                // skips the system call; its pages count as resident until reclaimed, as the page file's do.
                let start = record.bytes.baseAddress! - record.mapping.bytes.baseAddress!
                record.mapping.releasePages(in: start..<(start + record.bytes.count))
            }
        } else {
            // Positional reads check every record (a blob verified before keeps its content unchecked).
            map = nil
            let header = try blobs.readChunkRecord(
                segment: entry.segmentID, offset: offset, blob: blob, index: nextIndex,
                limit: entry.storedBytes(from: offset), scratch: &scratch)
            raw = try scratch.withUnsafeBytes { bytes in
                try decode(header, from: bytes, expected: expected, checkingChecksum: true)
            }
        }
        if !trusted { checksum = raw.withUnsafeBytes { CRC32C.checksum($0, continuing: checksum) } }
        delivered += UInt64(raw.count)
        nextIndex += 1
        return raw
    }

    /// The record at `offset` read in place through `map`: header decoded and checked as this chunk's, bytes
    /// bounded by the file's size now. Nil when the file cannot be mapped.
    private func mappedRecord(
        _ map: SegmentMap
    ) throws -> (header: BlobChunkRecord, bytes: UnsafeRawBufferPointer, mapping: FileMapping)? {
        let path = map.file.path
        func damaged(_ reason: String) -> StorageError {
            .corruption(file: path, offset: offset, reason: "\(blob) chunk \(nextIndex): \(reason)")
        }
        // The readable end: what the file holds now (so nothing past its end is touched, even if it was cut
        // behind the store's back), and, for the segment this store appends to, no more than its writer's end
        // (the writer cuts a failed append back to that end, never below it).
        var end: UInt64
        do { end = try map.file.size() } catch { throw StorageError.io(error) }
        if let appendEnd = blobs.appendEnd(of: entry.segmentID) { end = min(end, appendEnd) }
        let limit = entry.storedBytes(from: offset)
        let want = min(limit, BlobSegmentFormat.recordHeaderSize + BlobSegmentFormat.chunkSize)
        guard want >= BlobSegmentFormat.recordHeaderSize else { throw damaged("the catalog leaves no room for it") }
        guard offset < end, UInt64(BlobSegmentFormat.recordHeaderSize) <= end &- offset else {
            throw damaged("record at \(offset) lies past the end of the segment")
        }
        // Safe: end > offset, so end - offset does not wrap; it is clamped to `want` (at most 1 MiB + 28).
        let available = Int(min(UInt64(want), end &- offset))
        guard let (bytes, mapping) = map.bytes(at: offset, count: available, fileEnd: end) else { return nil }
        let header: BlobChunkRecord
        do { header = try BlobChunkRecord.decodeHeader(bytes) } catch { throw damaged("\(error)") }
        guard header.blobID == blob.rawValue, header.chunkIndex == nextIndex else {
            throw damaged("record belongs to blob \(header.blobID) chunk \(header.chunkIndex)")
        }
        guard header.encodedSize <= available else { throw damaged("record cut short") }
        return (header, UnsafeRawBufferPointer(rebasing: bytes[..<header.encodedSize]), mapping)
    }

    /// Checks a record's length against the catalog and decodes (decompresses) it once, straight into the array
    /// handed out; its checksum is checked unless the blob was verified before.
    private func decode(
        _ header: BlobChunkRecord, from bytes: UnsafeRawBufferPointer, expected: Int, checkingChecksum: Bool
    ) throws -> [UInt8] {
        guard header.rawLength == expected else {
            throw damaged("chunk \(nextIndex) holds \(header.rawLength) bytes, \(expected) expected")
        }
        var failure: FormatError?
        let raw = [UInt8](unsafeUninitializedCapacity: header.rawLength) { buffer, initialized in
            do throws(FormatError) {
                let destination = UnsafeMutableRawBufferPointer(buffer)
                if checkingChecksum {
                    try header.decodePayload(bytes, salt: blobs.salt, into: destination)
                } else {
                    try header.decodeVerifiedPayload(bytes, into: destination)
                }
                initialized = header.rawLength
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw damaged("chunk \(nextIndex): \(failure)") }
        offset += UInt64(header.encodedSize)
        return raw
    }

    private func checkEnd() throws {
        guard offset - entry.offset == entry.storedBytes else {
            throw damaged("records take \(offset - entry.offset) bytes, the catalog says \(entry.storedBytes)")
        }
        if trusted { return }
        guard CRC32C.mask(checksum) == entry.contentChecksum else { throw damaged("content checksum mismatch") }
        // Every record and the content were verified through the mapping: remember it (FORMAT.md §5.5).
        if mode != .uncommitted, let map, entry.chunkCount > 0 {
            map.markVerified(blobAt: entry.offset, contentChecksum: entry.contentChecksum)
        }
    }

    private func damaged(_ reason: String) -> StorageError {
        .corruption(file: blobs.path(of: entry.segmentID), offset: entry.offset, reason: "\(blob): \(reason)")
    }

    /// Reads the rest of the blob into one array.
    ///
    /// - Returns: the bytes not yet returned by ``next()``: the whole blob for a new reader.
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` naming the blob when a chunk, the record
    ///   sizes or the content checksum do not match the catalog; ``StorageError/io(_:)`` when the segment
    ///   cannot be read.
    public func readAll() throws -> [UInt8] {
        var result: [UInt8] = []
        // The length comes from the catalog: reserve only a bounded amount up front, grow past it as chunks verify.
        if entry.chunkCount > 1 { result.reserveCapacity(Int(min(length, UInt64(BlobSegmentFormat.chunkSize * 16)))) }
        while let chunk = try next() {
            // A blob of one chunk is that chunk: hand it out without copying it again.
            if result.isEmpty, entry.chunkCount == 1 {
                result = chunk
            } else {
                result.append(contentsOf: chunk)
            }
        }
        return result
    }
}

@available(*, unavailable, message: "a blob reader is used from one thread")
extension BlobReader: Sendable {}
