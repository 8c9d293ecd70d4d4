/// One chunk of a blob in a segment: up to ``BlobSegmentFormat/chunkSize`` raw bytes, LZ4-compressed
/// when that makes them smaller (FORMAT.md, "Blob segments").
public struct BlobChunkRecord: Sendable, Equatable {
    /// How the payload is stored: raw, or as an LZ4 block.
    public var codec: BlobCodec
    /// The blob the chunk belongs to, checked against the catalog when the blob is read.
    public var blobID: UInt64
    /// The chunk's position in its blob, from 0.
    public var chunkIndex: UInt32
    /// The chunk's length before compression, at most ``BlobSegmentFormat/chunkSize`` bytes.
    public var rawLength: Int
    /// The payload's length on disk: equal to ``rawLength`` for a raw chunk, strictly smaller for an LZ4 one.
    public var storedLength: Int

    /// The record's size on disk.
    public var encodedSize: Int { BlobSegmentFormat.recordHeaderSize + storedLength }

    /// Encodes a chunk, compressing it when LZ4 makes it smaller.
    ///
    /// - Parameters:
    ///   - chunk: the raw bytes, at most ``BlobSegmentFormat/chunkSize`` (a precondition).
    ///   - blobID: the blob the chunk belongs to.
    ///   - chunkIndex: the chunk's position in the blob, from 0.
    ///   - salt: the store's checksum salt, mixed into the record's checksum.
    /// - Returns: the whole record: header, then the raw or compressed payload.
    public static func encode(
        chunk: UnsafeRawBufferPointer, blobID: UInt64, chunkIndex: UInt32, salt: UInt64
    ) -> [UInt8] {
        precondition(chunk.count <= BlobSegmentFormat.chunkSize)
        let compressed = LZ4Block.compress(chunk)
        var writer = ByteWriter(capacity: BlobSegmentFormat.recordHeaderSize + (compressed?.count ?? chunk.count))
        writer.writeUInt32LE(0)
        writer.writeUInt8(compressed == nil ? BlobCodec.raw.rawValue : BlobCodec.lz4.rawValue)
        writer.writeUInt8(0)
        writer.writeUInt16LE(0)
        writer.writeUInt64LE(blobID)
        writer.writeUInt32LE(chunkIndex)
        writer.writeUInt32LE(UInt32(chunk.count))
        if let compressed {
            writer.writeUInt32LE(UInt32(compressed.count))
            writer.writeBytes(compressed)
        } else {
            writer.writeUInt32LE(UInt32(chunk.count))
            writer.writeBytes(chunk)
        }
        let crc = writer.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[4...]), salt: salt) }
        writer.setLE(CRC32C.mask(crc), at: 0)
        return writer.take()
    }

    static func checksum(_ covered: UnsafeRawBufferPointer, salt: UInt64) -> UInt32 {
        CRC32C.checksum(covered, continuing: CRC32C.checksum(of: salt))
    }

    /// Decodes and bounds a record header (the first 28 bytes). Lengths are checked against the format's
    /// limits here; the caller checks that the payload fits in the file before reading it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than 28 bytes;
    ///   ``FormatError/invalidField(_:)`` for an unknown codec, flags or reserved bits set, a raw length
    ///   above ``BlobSegmentFormat/chunkSize``, or a stored length the codec does not allow.
    public static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> BlobChunkRecord {
        var reader = ByteReader(bytes)
        _ = try reader.readUInt32LE()
        let rawCodec = try reader.readUInt8()
        guard let codec = BlobCodec(rawValue: rawCodec) else { throw .invalidField("unknown blob codec \(rawCodec)") }
        let flags = try reader.readUInt8()
        let reserved = try reader.readUInt16LE()
        guard flags == 0, reserved == 0 else {
            throw .invalidField("blob record flags or reserved bits set")
        }
        let blobID = try reader.readUInt64LE()
        let chunkIndex = try reader.readUInt32LE()
        let rawLength = Int(try reader.readUInt32LE())
        let storedLength = Int(try reader.readUInt32LE())
        guard rawLength <= BlobSegmentFormat.chunkSize else {
            throw .invalidField("blob chunk of \(rawLength) raw bytes")
        }
        switch codec {
        case .raw:
            guard storedLength == rawLength else {
                throw .invalidField("raw blob chunk stores \(storedLength) of \(rawLength) bytes")
            }
        case .lz4:
            guard storedLength >= 1, storedLength < rawLength else {
                throw .invalidField("compressed blob chunk of \(storedLength) bytes for \(rawLength)")
            }
        }
        return BlobChunkRecord(
            codec: codec, blobID: blobID, chunkIndex: chunkIndex, rawLength: rawLength, storedLength: storedLength)
    }

    /// Verifies a whole record (`encodedSize` bytes) and returns its raw bytes.
    ///
    /// - Parameters:
    ///   - record: the record's bytes from its start; any after ``encodedSize`` are ignored.
    ///   - salt: the store's checksum salt.
    /// - Returns: the chunk's ``rawLength`` raw bytes.
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than ``encodedSize`` bytes;
    ///   ``FormatError/checksumMismatch(stored:computed:)`` for a damaged record;
    ///   ``FormatError/invalidField(_:)`` for a malformed LZ4 payload or one that yields another length.
    public func decodePayload(_ record: UnsafeRawBufferPointer, salt: UInt64) throws(FormatError) -> [UInt8] {
        var failure: FormatError?
        let output = [UInt8](unsafeUninitializedCapacity: rawLength) { buffer, initialized in
            do throws(FormatError) {
                try decodePayload(record, salt: salt, into: UnsafeMutableRawBufferPointer(buffer))
                initialized = rawLength
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return output
    }

    /// Verifies a whole record (`encodedSize` bytes) and writes its raw bytes straight into `destination`
    /// (``rawLength`` bytes: a precondition), decompressing there when the chunk is compressed: no copy between.
    ///
    /// - Throws: as ``decodePayload(_:salt:)``; `destination` then holds no meaningful bytes.
    public func decodePayload(
        _ record: UnsafeRawBufferPointer, salt: UInt64, into destination: UnsafeMutableRawBufferPointer
    ) throws(FormatError) {
        try verifyChecksum(record, salt: salt)
        try decodeVerifiedPayload(record, into: destination)
    }

    /// Checks a whole record's checksum (`encodedSize` bytes) without decoding its payload.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than ``encodedSize`` bytes;
    ///   ``FormatError/checksumMismatch(stored:computed:)`` for a damaged record.
    public func verifyChecksum(_ record: UnsafeRawBufferPointer, salt: UInt64) throws(FormatError) {
        guard record.count >= encodedSize else { throw .truncated(needed: encodedSize, available: record.count) }
        let stored = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let computed = Self.checksum(UnsafeRawBufferPointer(rebasing: record[4..<encodedSize]), salt: salt)
        guard CRC32C.unmask(stored) == computed else {
            throw .checksumMismatch(stored: stored, computed: CRC32C.mask(computed))
        }
    }

    /// Writes a record's raw bytes into `destination` (``rawLength`` bytes: a precondition) **without** checking its
    /// checksum: for a record whose bytes were verified before (``verifyChecksum(_:salt:)``) and cannot have changed
    /// since. Bounds are still checked and decompression is still the safe one, so hostile bytes give an error or
    /// wrong bytes, never a read or write out of bounds.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than ``encodedSize`` bytes;
    ///   ``FormatError/invalidField(_:)`` for a malformed LZ4 payload or one that yields another length.
    public func decodeVerifiedPayload(
        _ record: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(FormatError) {
        precondition(destination.count == rawLength)
        guard record.count >= encodedSize else { throw .truncated(needed: encodedSize, available: record.count) }
        let payload = UnsafeRawBufferPointer(rebasing: record[BlobSegmentFormat.recordHeaderSize..<encodedSize])
        switch codec {
        case .raw:
            if !payload.isEmpty { destination.copyMemory(from: payload) }
        case .lz4:
            try LZ4Block.decompress(payload, into: destination)
        }
    }
}
