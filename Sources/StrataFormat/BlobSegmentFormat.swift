/// Layout of blob segment files (FORMAT.md, "Blob segments"), shared by their writer and reader.
///
/// ```
/// segment := header record*
/// header  := magic[8] version:u32 headerLength:u32 storeID[16] segmentID:u32 reserved[8] checksum:u32      (48 bytes)
/// record  := checksum:u32 codec:u8 flags:u8 reserved:u16 blobID:u64 chunkIndex:u32 rawLength:u32 storedLength:u32 payload[storedLength]
/// ```
/// A record's checksum is the masked CRC-32C of the store's checksum salt (u64 LE) followed by the
/// record's bytes 4..<end: it covers the stored (compressed) bytes and, as context, the blob and chunk.
public enum BlobSegmentFormat {
    /// `0x89 'S' 'B' 'L' 'B' '\r' '\n' 0x1A`.
    public static let magic: [UInt8] = [0x89, 0x53, 0x42, 0x4C, 0x42, 0x0D, 0x0A, 0x1A]
    /// The segment format version this code writes and reads.
    public static let version: UInt32 = 1
    /// The size of a segment header in bytes; the first chunk record starts at this offset.
    public static let headerSize = 48
    /// The size of a chunk record's header in bytes, before its payload.
    public static let recordHeaderSize = 28
    /// The largest raw chunk: blobs longer than this are cut into chunks of exactly this size (the last shorter).
    public static let chunkSize = 1 << 20

    /// The file name of segment `id`: `blob-000001.seg`.
    public static func fileName(segment id: UInt32) -> String {
        let digits = String(id)
        return "blob-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".seg"
    }

    /// The segment ID a file name stands for, or nil when it is not a segment name.
    public static func segmentID(fileName: String) -> UInt32? {
        guard fileName.hasPrefix("blob-"), fileName.hasSuffix(".seg") else { return nil }
        let digits = fileName.dropFirst(5).dropLast(4)
        guard digits.count >= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let id = UInt32(digits),
            fileName == Self.fileName(segment: id)
        else { return nil }
        return id
    }
}

/// How a chunk's payload is stored.
public enum BlobCodec: UInt8, Sendable {
    /// The raw bytes (they did not compress).
    case raw = 0
    /// An LZ4 block.
    case lz4 = 1
}
