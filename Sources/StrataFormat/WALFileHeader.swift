/// The 48-byte header that opens every WAL file (FORMAT.md, "Write-ahead log").
public struct WALFileHeader: Sendable, Equatable {
    /// The store this log belongs to; a log from another store is rejected.
    public var storeID: [UInt8]
    /// The LSN of the first record in this file; records follow with consecutive LSNs.
    public var startLSN: UInt64
    /// A random value chosen when the file is created, mixed into every record checksum so that
    /// bytes from an earlier log never pass as records of this one.
    public var salt: UInt32

    /// Creates a header.
    ///
    /// - Parameters:
    ///   - storeID: the store's 16-byte ID; any other length is a precondition failure.
    ///   - startLSN: the LSN of the file's first record, at least 1.
    ///   - salt: the file's checksum salt.
    public init(storeID: [UInt8], startLSN: UInt64, salt: UInt32) {
        precondition(storeID.count == 16)
        self.storeID = storeID
        self.startLSN = startLSN
        self.salt = salt
    }

    /// Encodes the header as the ``WALFormat/fileHeaderSize`` bytes that open the log.
    ///
    /// - Returns: magic, version, header length, store ID, start LSN, salt and the masked CRC-32C of
    ///   everything before it.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: WALFormat.fileHeaderSize)
        writer.writeBytes(WALFormat.magic)
        writer.writeUInt32LE(WALFormat.version)
        writer.writeUInt32LE(UInt32(WALFormat.fileHeaderSize))
        writer.writeBytes(storeID)
        writer.writeUInt64LE(startLSN)
        writer.writeUInt32LE(salt)
        writer.writeUInt32LE(CRC32C.mask(writer.withUnsafeBytes { CRC32C.checksum($0) }))
        return writer.take()
    }

    /// Decodes and verifies the header at the start of a log file.
    ///
    /// - Parameter bytes: at least ``WALFormat/fileHeaderSize`` bytes from the start of the file.
    /// - Returns: the decoded header. The caller checks that its store ID is the store's.
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than 48 bytes;
    ///   ``FormatError/badMagic`` when the file is not a Strata WAL;
    ///   ``FormatError/checksumMismatch(stored:computed:)`` for damaged bytes;
    ///   ``FormatError/unsupportedVersion(_:)`` for another version;
    ///   ``FormatError/invalidField(_:)`` for a wrong header length or a start LSN of 0.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> WALFileHeader {
        let size = WALFormat.fileHeaderSize
        guard bytes.count >= size else { throw .truncated(needed: size, available: bytes.count) }
        guard bytes.prefix(8).elementsEqual(WALFormat.magic) else { throw .badMagic }
        var reader = ByteReader(bytes, readerIndex: 8)
        let stored = try reader.getUInt32LE(at: size - 4)
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(size - 4)]))
        guard CRC32C.unmask(stored) == computed else {
            throw .checksumMismatch(stored: stored, computed: CRC32C.mask(computed))
        }
        let version = try reader.readUInt32LE()
        guard version == WALFormat.version else { throw .unsupportedVersion(version) }
        let headerLength = try reader.readUInt32LE()
        guard headerLength == UInt32(size) else {
            throw .invalid("WAL header length \(headerLength), expected \(size)")
        }
        let storeID = try reader.readBytes(16)
        let startLSN = try reader.readUInt64LE()
        guard startLSN >= 1, startLSN <= WALFormat.maximumLSN else {
            throw .invalid("WAL start LSN \(startLSN) out of range")
        }
        let salt = try reader.readUInt32LE()
        return WALFileHeader(storeID: storeID, startLSN: startLSN, salt: salt)
    }
}
