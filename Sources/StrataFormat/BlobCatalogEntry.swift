/// Where a committed blob lives: the value of its row in the store's blob catalog table
/// (FORMAT.md, "Blob catalog").
///
/// ```
/// entry := version:u8 segmentID:u32 offset:u64 rawLength:u64 storedBytes:u64 chunkCount:u32 contentChecksum:u32
/// ```
public struct BlobCatalogEntry: Sendable, Equatable {
    public static let encodedSize = 37
    public static let version: UInt8 = 1

    public var segmentID: UInt32
    /// Offset of the first chunk record in the segment; the others follow it contiguously.
    public var offset: UInt64
    /// The blob's length.
    public var rawLength: UInt64
    /// Bytes the blob's records take in the segment, headers included.
    public var storedBytes: UInt64
    public var chunkCount: UInt32
    /// Masked CRC-32C of the blob's raw bytes, checked after a whole read.
    public var contentChecksum: UInt32

    public init(segmentID: UInt32, offset: UInt64, rawLength: UInt64, storedBytes: UInt64, chunkCount: UInt32, contentChecksum: UInt32) {
        self.segmentID = segmentID
        self.offset = offset
        self.rawLength = rawLength
        self.storedBytes = storedBytes
        self.chunkCount = chunkCount
        self.contentChecksum = contentChecksum
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedSize)
        writer.writeUInt8(Self.version)
        writer.writeUInt32LE(segmentID)
        writer.writeUInt64LE(offset)
        writer.writeUInt64LE(rawLength)
        writer.writeUInt64LE(storedBytes)
        writer.writeUInt32LE(chunkCount)
        writer.writeUInt32LE(contentChecksum)
        return writer.bytes
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> BlobCatalogEntry {
        guard bytes.count == encodedSize else { throw .invalidField("blob catalog entry of \(bytes.count) bytes") }
        var reader = ByteReader(bytes)
        let version = try reader.readUInt8()
        guard version == Self.version else { throw .unsupportedVersion(UInt32(version)) }
        let entry = BlobCatalogEntry(
            segmentID: try reader.readUInt32LE(), offset: try reader.readUInt64LE(), rawLength: try reader.readUInt64LE(),
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
