/// Builds the WAL records of one transaction in memory: operations are appended straight into
/// `operations` records of about ``WALFormat/targetPayloadSize`` bytes, each sealed (length, LSN,
/// checksum) when full, and ``finish()`` adds the commit record.
public struct WALRecordBuilder: Sendable {
    /// The transaction's sealed records so far, plus the open `operations` record when there is one.
    public private(set) var writer: ByteWriter
    /// The log file's checksum salt (``WALFileHeader/salt``), mixed into every record's checksum.
    public let salt: UInt32
    /// The LSN the next sealed record gets.
    public private(set) var nextLSN: UInt64
    /// The number of `operations` records sealed so far.
    public private(set) var operationRecordCount: UInt32 = 0
    /// The number of operations appended so far.
    public private(set) var operationCount: UInt64 = 0
    private var openRecordStart: Int?

    /// Creates an empty builder.
    ///
    /// - Parameters:
    ///   - salt: the log file's checksum salt.
    ///   - firstLSN: the LSN of the transaction's first record: one more than the last record in the log.
    public init(salt: UInt32, firstLSN: UInt64) {
        // Room for a small transaction's records up front (a row or two and the commit record): growing from empty
        // took two allocations a single-row commit.
        self.writer = ByteWriter(capacity: 512)
        self.salt = salt
        self.nextLSN = firstLSN
    }

    /// Whether no operation was appended.
    public var isEmpty: Bool { operationCount == 0 }

    /// The size of the records so far (``writer``'s count) once an operation of `operationBytes` encoded bytes is
    /// appended: the operation, and the header of the `operations` record it opens when none is open. (Sealing a
    /// record adds no byte.)
    public func count(appending operationBytes: Int) -> Int {
        writer.count + (openRecordStart == nil ? WALFormat.recordHeaderSize : 0) + operationBytes
    }

    /// Appends one operation, written by `encode`.
    public mutating func appendOperation(_ encode: (inout ByteWriter) -> Void) {
        if openRecordStart == nil {
            openRecordStart = writer.count
            writer.writeZeros(WALFormat.recordHeaderSize)
        }
        encode(&writer)
        operationCount += 1
        if let start = openRecordStart, writer.count - start - WALFormat.recordHeaderSize >= WALFormat.targetPayloadSize
        {
            sealOpenRecord(type: .operations)
        }
    }

    /// Seals the last operations record, appends the commit record and returns every byte to append
    /// to the log and the commit record's LSN.
    public mutating func finish() -> (bytes: [UInt8], commitLSN: UInt64) {
        precondition(!isEmpty, "an empty transaction writes nothing")
        if openRecordStart != nil { sealOpenRecord(type: .operations) }
        let commit = WALCommit(operationRecordCount: operationRecordCount, operationCount: operationCount)
        let lsn = nextLSN
        withUnsafeTemporaryAllocation(byteCount: WALCommit.encodedSize, alignment: 8) { payload in
            commit.encode(into: payload)
            WALRecord.append(type: .commit, lsn: lsn, payload: UnsafeRawBufferPointer(payload), salt: salt, to: &writer)
        }
        nextLSN += 1
        return (writer.take(), lsn)
    }

    private mutating func sealOpenRecord(type: WALRecordType) {
        guard let start = openRecordStart else { return }
        let payloadLength = writer.count - start - WALFormat.recordHeaderSize
        precondition(payloadLength <= WALFormat.maximumPayloadSize)
        writer.setLE(UInt32(payloadLength), at: start + 4)
        writer.setLE(type.rawValue, at: start + 8)
        writer.setLE(nextLSN, at: start + 12)
        let crc = writer.withUnsafeBytes { all in
            WALRecord.checksum(salt: salt, covered: UnsafeRawBufferPointer(rebasing: all[(start + 4)...]))
        }
        writer.setLE(CRC32C.mask(crc), at: start)
        nextLSN += 1
        operationRecordCount += 1
        openRecordStart = nil
    }
}
