/// Encoding and checking of one WAL record (FORMAT.md, "Write-ahead log").
public enum WALRecord {
    /// The fixed part of a record, decoded from its first 20 bytes.
    public struct Header: Sendable, Equatable {
        /// The masked checksum as stored; ``WALRecord/verify(header:recordBytes:salt:)`` checks it.
        public var storedChecksum: UInt32
        /// The payload's length in bytes, at most ``WALFormat/maximumPayloadSize``.
        public var payloadLength: Int
        /// Whether the record holds operations or a commit.
        public var type: WALRecordType
        /// The record's log sequence number: one more than the previous record's.
        public var lsn: UInt64
    }

    /// Appends one record to `writer`.
    ///
    /// - Parameters:
    ///   - type: the record's type.
    ///   - lsn: the record's LSN: one more than the previous record's.
    ///   - payload: at most ``WALFormat/maximumPayloadSize`` bytes (a precondition).
    ///   - salt: the log file's checksum salt.
    ///   - writer: where the record is appended.
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
        let crc = writer.withUnsafeBytes { all in
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
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than 20 bytes;
    ///   ``FormatError/invalidField(_:)`` for an unknown type, flags or reserved bits set, or a payload
    ///   length above ``WALFormat/maximumPayloadSize``.
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
        guard lsn >= 1, lsn <= WALFormat.maximumLSN else { throw .invalid("WAL record LSN \(lsn) out of range") }
        guard length <= UInt32(WALFormat.maximumPayloadSize) else {
            throw .invalid("WAL record payload length \(length) exceeds \(WALFormat.maximumPayloadSize)")
        }
        return Header(storedChecksum: stored, payloadLength: Int(length), type: type, lsn: lsn)
    }

    /// Checks a whole record (header and payload, `recordHeaderSize + payloadLength` bytes).
    ///
    /// - Parameters:
    ///   - header: the record's decoded header.
    ///   - recordBytes: bytes from the record's start; any after its end are ignored.
    ///   - salt: the log file's checksum salt.
    /// - Throws: ``FormatError/truncated(needed:available:)`` when the bytes end before the record does;
    ///   ``FormatError/checksumMismatch(stored:computed:)`` when the record is damaged or from another log.
    public static func verify(header: Header, recordBytes: UnsafeRawBufferPointer, salt: UInt32) throws(FormatError) {
        let total = WALFormat.recordHeaderSize + header.payloadLength
        guard recordBytes.count >= total else { throw .truncated(needed: total, available: recordBytes.count) }
        let computed = checksum(salt: salt, covered: UnsafeRawBufferPointer(rebasing: recordBytes[4..<total]))
        guard CRC32C.unmask(header.storedChecksum) == computed else {
            throw .checksumMismatch(stored: header.storedChecksum, computed: CRC32C.mask(computed))
        }
    }
}
