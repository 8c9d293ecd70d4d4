/// The 48-byte header that opens every blob segment (FORMAT.md, "Blob segments").
public struct BlobSegmentHeader: Sendable, Equatable {
    /// The 16-byte ID of the store the segment belongs to; a segment from another store is rejected.
    public var storeID: [UInt8]
    /// The segment's number, which also names its file (``BlobSegmentFormat/fileName(segment:)``).
    public var segmentID: UInt32

    /// Creates a header.
    ///
    /// - Parameters:
    ///   - storeID: the store's 16-byte ID; any other length is a precondition failure.
    ///   - segmentID: the segment's number.
    public init(storeID: [UInt8], segmentID: UInt32) {
        precondition(storeID.count == 16)
        self.storeID = storeID
        self.segmentID = segmentID
    }

    /// Encodes the header as the ``BlobSegmentFormat/headerSize`` bytes that open the segment file.
    ///
    /// - Returns: magic, version, header length, store ID, segment ID, reserved zeros and the masked CRC-32C
    ///   of everything before it.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: BlobSegmentFormat.headerSize)
        writer.writeBytes(BlobSegmentFormat.magic)
        writer.writeUInt32LE(BlobSegmentFormat.version)
        writer.writeUInt32LE(UInt32(BlobSegmentFormat.headerSize))
        writer.writeBytes(storeID)
        writer.writeUInt32LE(segmentID)
        writer.writeZeros(8)
        writer.writeUInt32LE(CRC32C.mask(writer.withUnsafeBytes { CRC32C.checksum($0) }))
        return writer.take()
    }

    /// Decodes and verifies the header at the start of a segment file.
    ///
    /// - Parameter bytes: at least ``BlobSegmentFormat/headerSize`` bytes from the start of the file.
    /// - Returns: the decoded header. The caller compares its store and segment IDs with what it expects.
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than 48 bytes;
    ///   ``FormatError/badMagic`` when the file is not a blob segment;
    ///   ``FormatError/checksumMismatch(stored:computed:)`` for damaged bytes;
    ///   ``FormatError/unsupportedVersion(_:)`` for another version;
    ///   ``FormatError/invalidField(_:)`` for a wrong header length.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> BlobSegmentHeader {
        let size = BlobSegmentFormat.headerSize
        guard bytes.count >= size else { throw .truncated(needed: size, available: bytes.count) }
        guard bytes.prefix(8).elementsEqual(BlobSegmentFormat.magic) else { throw .badMagic }
        var reader = ByteReader(bytes, readerIndex: 8)
        let stored = try reader.getUInt32LE(at: size - 4)
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(size - 4)]))
        guard CRC32C.unmask(stored) == computed else {
            throw .checksumMismatch(stored: stored, computed: CRC32C.mask(computed))
        }
        let version = try reader.readUInt32LE()
        guard version == BlobSegmentFormat.version else { throw .unsupportedVersion(version) }
        guard try reader.readUInt32LE() == UInt32(size) else { throw .invalidField("blob segment header length") }
        let storeID = try reader.readBytes(16)
        let segmentID = try reader.readUInt32LE()
        return BlobSegmentHeader(storeID: storeID, segmentID: segmentID)
    }
}
