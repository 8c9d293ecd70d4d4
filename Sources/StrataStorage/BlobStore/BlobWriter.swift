import StrataFormat

/// Streams one blob into the store, a chunk at a time, inside a write transaction: memory stays
/// bounded by one chunk (1 MiB) whatever the blob's size.
///
/// For example:
/// ```swift
/// let photo = try store.write { txn in
///     let writer = try txn.makeBlobWriter()
///     while let piece = source.next() { try writer.write(piece) }
///     return try writer.finish()
/// }
/// ```
/// A writer that is never finished leaves an orphan in its segment: invisible, reclaimed by compaction.
public final class BlobWriter {
    private let transaction: WriteTransaction
    private let blobs: BlobStore
    private let id: BlobID
    private let segment: UInt32
    private let start: UInt64
    private var buffer: [UInt8] = []
    private var rawLength: UInt64 = 0
    private var storedBytes: UInt64 = 0
    private var chunkCount: UInt32 = 0
    private var checksum: UInt32 = 0
    private var finished = false

    init(transaction: WriteTransaction, blobs: BlobStore, id: BlobID) throws {
        self.transaction = transaction
        self.blobs = blobs
        self.id = id
        (segment, start) = try blobs.beginBlob()
        buffer.reserveCapacity(BlobSegmentFormat.chunkSize)
    }

    /// Appends bytes to the blob. Every full chunk (1 MiB) is compressed and appended to the segment at once.
    ///
    /// Writing after ``finish()`` is a precondition failure.
    ///
    /// - Throws: ``StorageError/io(_:)`` when the segment cannot be written; the failed record is cut back
    ///   from the segment.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "write after finish")
        transaction.checkActive()
        var rest = bytes
        while !rest.isEmpty {
            let take = min(rest.count, BlobSegmentFormat.chunkSize - buffer.count)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<take]))
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if buffer.count == BlobSegmentFormat.chunkSize { try flushChunk() }
        }
    }

    /// Appends bytes to the blob; see ``write(_:)-(UnsafeRawBufferPointer)``.
    ///
    /// - Throws: ``StorageError/io(_:)`` when the segment cannot be written.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    private func flushChunk() throws {
        guard !buffer.isEmpty else { return }
        let record = buffer.withUnsafeBytes { chunk in
            checksum = CRC32C.checksum(chunk, continuing: checksum)
            return BlobChunkRecord.encode(chunk: chunk, blobID: id.rawValue, chunkIndex: chunkCount, salt: blobs.salt)
        }
        let offset = try blobs.append(record)
        precondition(offset == start + storedBytes, "a blob's chunks must be contiguous: one blob writer at a time")
        rawLength += UInt64(buffer.count)
        storedBytes += UInt64(record.count)
        chunkCount += 1
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes the last chunk and records the blob in the transaction.
    /// - Returns: the blob's ID, to keep in a row.
    /// - Throws: ``StorageError/io(_:)`` when the last chunk cannot be written. Calling `finish()` again
    ///   after it succeeded is a precondition failure.
    public func finish() throws -> BlobID {
        precondition(!finished, "finish called twice")
        try flushChunk()
        finished = true
        let entry = BlobCatalogEntry(
            segmentID: segment, offset: start, rawLength: rawLength, storedBytes: storedBytes, chunkCount: chunkCount,
            contentChecksum: CRC32C.mask(checksum))
        try transaction.recordBlob(id, entry: entry)
        return id
    }
}

@available(*, unavailable, message: "a blob writer belongs to its write transaction's thread")
extension BlobWriter: Sendable {}
