/// Encoding and checking of one WAL record (FORMAT.md, "Write-ahead log").
public enum WALRecord {
    /// The fixed part of a record, decoded from its first 20 bytes.
    public struct Header: Sendable, Equatable {
        public var storedChecksum: UInt32
        public var payloadLength: Int
        public var type: WALRecordType
        public var lsn: UInt64
    }

    /// Appends one record to `writer`.
    public static func append(
        type: WALRecordType, lsn: UInt64, payload: UnsafeRawBufferPointer, salt: UInt32, to writer: inout ByteWriter
    ) {
        precondition(payload.count <= WALFormat.maximumPayloadSize)
        let start = writer.count
        writer.writeUInt32LE(0)  // checksum, set below
        writer.writeUInt32LE(UInt32(payload.count))
        writer.writeUInt8(type.rawValue)
        writer.writeUInt8(0)
        writer.writeUInt16LE(0)
        writer.writeUInt64LE(lsn)
        writer.writeBytes(payload)
        let crc = writer.bytes.withUnsafeBytes { all in
            checksum(salt: salt, covered: UnsafeRawBufferPointer(rebasing: all[(start + 4)...]))
        }
        writer.setUInt32LE(CRC32C.mask(crc), at: start)
    }

    /// The record checksum: CRC-32C of the salt followed by the record from its length field to its end.
    public static func checksum(salt: UInt32, covered: UnsafeRawBufferPointer) -> UInt32 {
        CRC32C.checksum(covered, continuing: CRC32C.checksum(of: salt))
    }

    /// Decodes a record header. Validates the type, flags and length bound; not the checksum
    /// (that needs the payload: see ``verify(header:recordBytes:salt:)``).
    public static func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> Header {
        var reader = ByteReader(bytes)
        let stored = try reader.readUInt32LE()
        let length = try reader.readUInt32LE()
        let rawType = try reader.readUInt8()
        let flags = try reader.readUInt8()
        let reserved = try reader.readUInt16LE()
        let lsn = try reader.readUInt64LE()
        guard let type = WALRecordType(rawValue: rawType) else { throw .invalid("unknown WAL record type \(rawType)") }
        guard flags == 0, reserved == 0 else { throw .invalid("WAL record flags or reserved bits set") }
        guard length <= UInt32(WALFormat.maximumPayloadSize) else {
            throw .invalid("WAL record payload length \(length) exceeds \(WALFormat.maximumPayloadSize)")
        }
        return Header(storedChecksum: stored, payloadLength: Int(length), type: type, lsn: lsn)
    }

    /// Checks a whole record (header and payload, `recordHeaderSize + payloadLength` bytes).
    public static func verify(header: Header, recordBytes: UnsafeRawBufferPointer, salt: UInt32) throws(FormatError) {
        let total = WALFormat.recordHeaderSize + header.payloadLength
        guard recordBytes.count >= total else { throw .truncated(needed: total, available: recordBytes.count) }
        let computed = checksum(salt: salt, covered: UnsafeRawBufferPointer(rebasing: recordBytes[4..<total]))
        guard CRC32C.unmask(header.storedChecksum) == computed else {
            throw .checksumMismatch(stored: header.storedChecksum, computed: CRC32C.mask(computed))
        }
    }
}
