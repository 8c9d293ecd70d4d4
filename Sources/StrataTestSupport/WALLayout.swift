import StrataFormat

/// Where the records of a log file start and end, read without the engine: a map for byte surgery.
public struct WALLayout: Sendable, Equatable {
    /// One record: its offset, its total size (header and payload), type and LSN.
    public struct Record: Sendable, Equatable {
        /// The byte offset of the record's header in the file.
        public var offset: UInt64
        /// The record's total size in bytes: its 20-byte header plus its payload.
        public var size: UInt64
        /// Whether the record holds operations or a commit.
        public var type: WALRecordType
        /// The record's log sequence number.
        public var lsn: UInt64
        /// The offset just past the record.
        public var end: UInt64 { offset + size }
    }

    /// The decoded file header, whose salt every record checksum mixes in.
    public var header: WALFileHeader
    /// The records of the valid prefix, in order.
    public var records: [Record]
    /// Bytes in the file.
    public var fileSize: UInt64

    /// Parses `bytes` as a log, stopping at the first record that does not verify or does not have the
    /// next LSN.
    ///
    /// - Throws: the `FormatError` of a file header that does not decode.
    public init(_ bytes: [UInt8]) throws {
        header = try bytes.withUnsafeBytes { (buffer) throws(FormatError) in try WALFileHeader.decode(buffer) }
        fileSize = UInt64(bytes.count)
        records = []
        var offset = WALFormat.fileHeaderSize
        var expectedLSN = header.startLSN
        let salt = header.salt
        while bytes.count - offset >= WALFormat.recordHeaderSize {
            let start = offset
            let valid: Record? = bytes.withUnsafeBytes { all in
                let rest = UnsafeRawBufferPointer(rebasing: all[start...])
                guard let recordHeader = try? WALRecord.decodeHeader(rest),
                    recordHeader.lsn == expectedLSN,
                    (try? WALRecord.verify(header: recordHeader, recordBytes: rest, salt: salt)) != nil
                else { return nil }
                return Record(
                    offset: UInt64(start),
                    size: UInt64(WALFormat.recordHeaderSize + recordHeader.payloadLength),
                    type: recordHeader.type,
                    lsn: recordHeader.lsn
                )
            }
            guard let valid else { break }
            records.append(valid)
            offset = Int(valid.end)
            expectedLSN += 1
        }
    }

    /// The records that end a transaction.
    public var commitRecords: [Record] { records.filter { $0.type == .commit } }

    /// The end of the valid records (the header's end when there is none).
    public var recordsEnd: UInt64 { records.last?.end ?? UInt64(WALFormat.fileHeaderSize) }

    /// Whether every byte after the valid records is zero: the log's reserved space (FORMAT.md §3.3), or nothing.
    public static func endsInReservedSpace(_ bytes: [UInt8]) throws -> Bool {
        let layout = try WALLayout(bytes)
        return bytes[Int(layout.recordsEnd)...].allSatisfy { $0 == 0 }
    }

    /// Recomputes the checksum of the record at `offset` of a log in `bytes` after its other bytes were
    /// edited (LevelDB's `FixChecksum`), so that only the engine's structural checks can reject it.
    ///
    /// - Parameters:
    ///   - offset: the byte offset of the record's header; its length field must be intact.
    ///   - bytes: the whole log; the record must end within it (a precondition).
    ///   - salt: the log's salt (`WALFileHeader.salt`).
    public static func recomputeChecksum(ofRecordAt offset: Int, in bytes: inout [UInt8], salt: UInt32) {
        let length = bytes.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)))
        }
        let end = offset + WALFormat.recordHeaderSize + length
        precondition(end <= bytes.count, "the record runs past the end of the buffer")
        let crc = bytes.withUnsafeBytes { all in
            WALRecord.checksum(salt: salt, covered: UnsafeRawBufferPointer(rebasing: all[(offset + 4)..<end]))
        }
        let masked = CRC32C.mask(crc)
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: masked >> (8 * UInt32(index))) }
    }
}
