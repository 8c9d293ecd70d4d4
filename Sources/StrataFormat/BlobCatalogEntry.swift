/// Where a committed blob lives: the value of its row in the store's blob catalog table
/// (FORMAT.md, "Blob catalog").
///
/// ```
/// entry := version:u8 segmentID:u32 offset:u64 rawLength:u64 storedBytes:u64 chunkCount:u32 contentChecksum:u32
/// ```
public struct BlobCatalogEntry: Sendable, Equatable {
    /// The size of an encoded entry in bytes: the version byte and six fixed-width fields.
    public static let encodedSize = 37
    /// The entry format version this code writes and reads; ``decode(_:)`` rejects any other.
    public static let version: UInt8 = 1

    /// The segment file that holds the blob (see ``BlobSegmentFormat/fileName(segment:)``).
    public var segmentID: UInt32
    /// Offset of the first chunk record in the segment; the others follow it contiguously.
    public var offset: UInt64
    /// The blob's length in bytes, before compression.
    public var rawLength: UInt64
    /// Bytes the blob's records take in the segment, headers included.
    public var storedBytes: UInt64
    /// The number of chunk records: the raw length divided by ``BlobSegmentFormat/chunkSize``, rounded up
    /// (0 for an empty blob).
    public var chunkCount: UInt32
    /// Masked CRC-32C of the blob's raw bytes, checked after a whole read.
    public var contentChecksum: UInt32

    /// Creates an entry from its fields; nothing is validated until the entry is decoded again.
    ///
    /// - Parameters:
    ///   - segmentID: the segment that holds the blob.
    ///   - offset: the byte offset of the blob's first chunk record in that segment.
    ///   - rawLength: the blob's length in bytes, before compression.
    ///   - storedBytes: the bytes the blob's chunk records take in the segment, record headers included.
    ///   - chunkCount: the number of chunk records.
    ///   - contentChecksum: the masked CRC-32C of the blob's raw bytes.
    public init(
        segmentID: UInt32, offset: UInt64, rawLength: UInt64, storedBytes: UInt64, chunkCount: UInt32,
        contentChecksum: UInt32
    ) {
        self.segmentID = segmentID
        self.offset = offset
        self.rawLength = rawLength
        self.storedBytes = storedBytes
        self.chunkCount = chunkCount
        self.contentChecksum = contentChecksum
    }

    /// Encodes the entry as the ``encodedSize`` bytes stored in the blob catalog table.
    ///
    /// - Returns: the version byte followed by the fields, little-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedSize)
        writer.writeUInt8(Self.version)
        writer.writeUInt32LE(segmentID)
        writer.writeUInt64LE(offset)
        writer.writeUInt64LE(rawLength)
        writer.writeUInt64LE(storedBytes)
        writer.writeUInt32LE(chunkCount)
        writer.writeUInt32LE(contentChecksum)
        return writer.take()
    }

    /// Decodes and checks an entry read from the blob catalog table.
    ///
    /// Besides the layout, the fields must agree with one another: the chunk count must match the raw
    /// length, the first record must follow the segment header, the stored bytes must cover at least
    /// every record header, and the blob must end within `Int64.max`.
    ///
    /// - Parameter bytes: exactly ``encodedSize`` bytes.
    /// - Returns: the decoded entry.
    /// - Throws: ``FormatError/unsupportedVersion(_:)`` for a version other than ``version``;
    ///   ``FormatError/invalidField(_:)`` for a wrong length or inconsistent fields.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> BlobCatalogEntry {
        guard bytes.count == encodedSize else { throw .invalidField("blob catalog entry of \(bytes.count) bytes") }
        var reader = ByteReader(bytes)
        let version = try reader.readUInt8()
        guard version == Self.version else { throw .unsupportedVersion(UInt32(version)) }
        let entry = BlobCatalogEntry(
            segmentID: try reader.readUInt32LE(), offset: try reader.readUInt64LE(),
            rawLength: try reader.readUInt64LE(),
            storedBytes: try reader.readUInt64LE(), chunkCount: try reader.readUInt32LE(),
            contentChecksum: try reader.readUInt32LE())
        let chunk = UInt64(BlobSegmentFormat.chunkSize)
        // Division, not rounding up by addition: a hostile length near UInt64.max must not overflow.
        let expectedChunks = entry.rawLength / chunk + (entry.rawLength % chunk == 0 ? 0 : 1)
        let (end, overflow) = entry.offset.addingReportingOverflow(entry.storedBytes)
        guard UInt64(entry.chunkCount) == expectedChunks, entry.offset >= UInt64(BlobSegmentFormat.headerSize),
            entry.storedBytes >= UInt64(entry.chunkCount) * UInt64(BlobSegmentFormat.recordHeaderSize),
            !overflow, end <= UInt64(Int64.max)
        else { throw .invalidField("blob catalog entry is inconsistent") }
        return entry
    }
}
