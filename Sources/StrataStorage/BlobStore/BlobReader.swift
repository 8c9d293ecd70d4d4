import StrataFormat

/// Streams a blob out of its segment one chunk (at most 1 MiB) at a time, verifying each chunk's
/// checksum as it goes and the whole blob's checksum at the end.
///
/// For example:
/// ```swift
/// if let reader = try store.snapshot().blobReader(photo) {
///     while let chunk = try reader.next() { output.write(chunk) }
/// }
/// ```
public final class BlobReader {
    /// The blob's length in bytes.
    public let length: UInt64
    private let blob: BlobID
    private let entry: BlobCatalogEntry
    private let blobs: BlobStore
    private var nextIndex: UInt32 = 0
    private var offset: UInt64
    private var delivered: UInt64 = 0
    private var checksum: UInt32 = 0
    private var ended = false
    /// The buffer chunk records are read into, reused from chunk to chunk.
    private var scratch: [UInt8] = []

    init(blob: BlobID, entry: BlobCatalogEntry, blobs: BlobStore) {
        self.blob = blob
        self.entry = entry
        self.blobs = blobs
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
        let record = try blobs.readChunkRecord(
            segment: entry.segmentID, offset: offset, blob: blob, index: nextIndex,
            limit: entry.storedBytes(from: offset), scratch: &scratch)
        let isLast = nextIndex == entry.chunkCount - 1
        let expected = isLast ? Int(clamping: entry.rawLength &- delivered) : BlobSegmentFormat.chunkSize
        guard record.rawLength == expected else {
            throw damaged("chunk \(nextIndex) holds \(record.rawLength) bytes, \(expected) expected")
        }
        // The chunk is decompressed (or copied) once, straight into the array handed out.
        var failure: FormatError?
        let raw = [UInt8](unsafeUninitializedCapacity: record.rawLength) { buffer, initialized in
            scratch.withUnsafeBytes { bytes in
                do throws(FormatError) {
                    try record.decodePayload(bytes, salt: blobs.salt, into: UnsafeMutableRawBufferPointer(buffer))
                    initialized = record.rawLength
                } catch {
                    failure = error
                    initialized = 0
                }
            }
        }
        if let failure { throw damaged("chunk \(nextIndex): \(failure)") }
        checksum = raw.withUnsafeBytes { CRC32C.checksum($0, continuing: checksum) }
        delivered += UInt64(raw.count)
        offset += UInt64(record.encodedSize)
        nextIndex += 1
        return raw
    }

    private func checkEnd() throws {
        guard offset - entry.offset == entry.storedBytes else {
            throw damaged("records take \(offset - entry.offset) bytes, the catalog says \(entry.storedBytes)")
        }
        guard CRC32C.mask(checksum) == entry.contentChecksum else { throw damaged("content checksum mismatch") }
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
