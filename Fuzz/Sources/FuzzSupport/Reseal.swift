import StrataFormat

/// Recomputes the checksums of mutated files, so that a mutation reaches the code behind a checksum check
/// (without this nearly every mutation of a page, record or header stops at its checksum). Each harness
/// takes a mode byte whose bits say what to reseal; the unsealed path still checks the checksum code.
///
/// Every function here walks untrusted bytes with its own bounds checks and never traps.
public enum Reseal {
    /// A little-endian UInt32 at `offset`, or nil when it does not fit.
    public static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * index) }
        return value
    }

    /// A little-endian UInt64 at `offset`, or nil when it does not fit.
    public static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64? {
        guard let low = uint32(bytes, at: offset), let high = uint32(bytes, at: offset + 4) else { return nil }
        return UInt64(low) | UInt64(high) << 32
    }

    /// Stores a little-endian UInt32 at `offset` (which must fit).
    public static func store(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    static func crc(_ bytes: [UInt8], _ range: Range<Int>, continuing: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]), continuing: continuing) }
    }

    /// The store's checksum salt, from the store header at the start of a page file.
    public static func storeSalt(pageFile: [UInt8]) -> UInt64? {
        guard let low = uint64(pageFile, at: 36), let high = uint64(pageFile, at: 44) else { return nil }
        return low ^ high
    }

    /// The page size the store header claims, when it is a valid one.
    public static func pageSize(pageFile: [UInt8]) -> Int? {
        guard let size = uint32(pageFile, at: 16), StoreHeader.isValidPageSize(Int(size)) else { return nil }
        return Int(size)
    }

    /// The salt a WAL file header claims.
    public static func walSalt(_ wal: [UInt8]) -> UInt32? { uint32(wal, at: 40) }

    /// Re-checksums the 64-byte store header.
    public static func storeHeader(_ file: inout [UInt8]) {
        let size = StoreHeader.encodedSize
        guard file.count >= size else { return }
        store(CRC32C.mask(crc(file, 0..<(size - 4))), into: &file, at: size - 4)
    }

    /// Re-checksums a 48-byte WAL file header or blob segment header (same layout of the checksum).
    public static func fileHeader48(_ file: inout [UInt8]) {
        guard file.count >= 48 else { return }
        store(CRC32C.mask(crc(file, 0..<44)), into: &file, at: 44)
    }

    /// Re-checksums every page after page 0 (every whole page of `pageSize` bytes).
    public static func pages(_ file: inout [UInt8], pageSize: Int, salt: UInt64) {
        var start = pageSize
        while start + pageSize <= file.count {
            page(&file, at: start, size: pageSize, salt: salt)
            start += pageSize
        }
    }

    /// Re-checksums the page of `size` bytes at `start`.
    public static func page(_ file: inout [UInt8], at start: Int, size: Int, salt: UInt64) {
        guard size >= 8, start >= 0, start + size <= file.count else { return }
        let value = crc(file, (start + 4)..<(start + size), continuing: CRC32C.checksum(of: salt))
        store(CRC32C.mask(value), into: &file, at: start)
    }

    /// Walks WAL records from `start` by their length fields and re-checksums each whole one.
    public static func walRecords(_ file: inout [UInt8], from start: Int, salt: UInt32) {
        var offset = start
        while let length = uint32(file, at: offset + 4), length <= UInt32(WALFormat.maximumPayloadSize) {
            let end = offset + WALFormat.recordHeaderSize + Int(length)
            guard end <= file.count else { return }
            store(
                CRC32C.mask(crc(file, (offset + 4)..<end, continuing: CRC32C.checksum(of: salt))), into: &file,
                at: offset)
            offset = end
        }
    }

    /// Walks blob chunk records from `start` by their stored lengths and re-checksums each whole one.
    public static func blobRecords(_ file: inout [UInt8], from start: Int, salt: UInt64) {
        var offset = start
        while let stored = uint32(file, at: offset + 24), stored <= UInt32(BlobSegmentFormat.chunkSize) {
            let end = offset + BlobSegmentFormat.recordHeaderSize + Int(stored)
            guard end <= file.count else { return }
            store(
                CRC32C.mask(crc(file, (offset + 4)..<end, continuing: CRC32C.checksum(of: salt))), into: &file,
                at: offset)
            offset = end
        }
    }
}
