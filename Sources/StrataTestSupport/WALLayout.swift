import StrataFormat

/// Where the records of a log file start and end, read without the engine: a map for byte surgery.
public struct WALLayout: Sendable, Equatable {
    /// One record: its offset, its total size (header and payload), type and LSN.
    public struct Record: Sendable, Equatable {
        public var offset: UInt64
        public var size: UInt64
        public var type: WALRecordType
        public var lsn: UInt64
        /// The offset just past the record.
        public var end: UInt64 { offset + size }
    }

    public var header: WALFileHeader
    /// The records of the valid prefix, in order.
    public var records: [Record]
    /// Bytes in the file.
    public var fileSize: UInt64

    /// Parses `bytes` as a log, stopping at the first record that does not verify.
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

    /// Recomputes the checksum of the record at `offset` of a log in `bytes` after its other bytes were
    /// edited (LevelDB's `FixChecksum`), so that only the engine's structural checks can reject it.
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
