import StrataFormat
import StrataTestSupport
import Testing

/// One WAL record: header layout, checksum over the salt and the record, and rejection of damage.
@Suite struct WALRecordTests {
    private let salt: UInt32 = 0x5A17_5A17

    private func record(type: WALRecordType = .operations, lsn: UInt64 = 7, payload: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        payload.withUnsafeBytes { WALRecord.append(type: type, lsn: lsn, payload: $0, salt: salt, to: &writer) }
        return writer.bytes
    }

    /// Decodes and verifies a whole record as a reader does.
    private func read(_ bytes: [UInt8], salt: UInt32? = nil) -> Result<WALRecord.Header, FormatError> {
        let salt = salt ?? self.salt
        return bytes.withUnsafeBytes { buffer in
            Result { () throws(FormatError) -> WALRecord.Header in
                let header = try WALRecord.decodeHeader(buffer)
                try WALRecord.verify(header: header, recordBytes: buffer, salt: salt)
                return header
            }
        }
    }

    @Test func layoutIsPinned() {
        let bytes = record(type: .commit, lsn: 0x1122_3344_5566_7788, payload: [9, 8, 7])
        #expect(WALFormat.recordHeaderSize == 20)
        #expect(bytes.count == 23)
        #expect(loadLE(UInt32.self, at: 4, in: bytes) == 3)
        #expect(bytes[8] == WALRecordType.commit.rawValue)
        #expect(bytes[9] == 0 && bytes[10] == 0 && bytes[11] == 0)
        #expect(loadLE(UInt64.self, at: 12, in: bytes) == 0x1122_3344_5566_7788)
        #expect(Array(bytes[20...]) == [9, 8, 7])
        // The checksum covers the salt, then bytes 4..<end.
        let crc = CRC32C.checksum(Array(bytes[4...]), continuing: CRC32C.checksum(of: salt))
        #expect(loadLE(UInt32.self, at: 0, in: bytes) == CRC32C.mask(crc))
    }

    @Test(arguments: [0, 1, 19, 20, 4096, 70_000])
    func roundTripsPayloadsOfManySizes(size: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(size))
        let payload = random.bytes(size)
        let bytes = record(lsn: 42, payload: payload)
        let header = try read(bytes).get()
        #expect(header.payloadLength == size)
        #expect(header.lsn == 42)
        #expect(header.type == .operations)
        #expect(Array(bytes[20...]) == payload)
    }

    @Test func everyTruncationIsRejected() {
        let bytes = record(payload: Array(0..<40))
        for length in 0..<bytes.count {
            let result = read(Array(bytes[0..<length]))
            guard case .failure(let error) = result else {
                Issue.record("a record cut to \(length) bytes verified")
                continue
            }
            #expect(isTruncated(error), "length \(length): \(error)")
        }
    }

    @Test func everyByteFlipIsRejected() {
        let bytes = record(
            type: .commit,
            lsn: 3,
            payload: WALCommit(operationRecordCount: 2, operationCount: 9).encoded()
        )
        for index in bytes.indices {
            for mask: UInt8 in [0x01, 0x10, 0xFF] {
                var copy = bytes
                copy[index] ^= mask
                if case .success = read(copy) { Issue.record("flip of byte \(index) by \(mask) verified") }
            }
        }
    }

    @Test func recordFromAnotherLogFileIsRejectedBySalt() {
        let bytes = record(payload: [1, 2, 3])
        guard case .failure(let error) = read(bytes, salt: salt ^ 1) else {
            Issue.record("a record verified under another log's salt")
            return
        }
        #expect(isChecksumMismatch(error))
    }

    @Test func unknownTypeFlagsAndReservedBitsAreInvalid() {
        for (offset, value) in [(8, UInt8(0)), (8, 3), (8, 0xFF), (9, 1), (10, 1), (11, 0x80)] {
            var bytes = record(payload: [1])
            bytes[offset] = value
            #expect(isInvalidField(formatError(bytes) { try WALRecord.decodeHeader($0) }), "byte \(offset) = \(value)")
        }
    }

    @Test func payloadLengthAboveTheMaximumIsRejectedBeforeAllocating() {
        var bytes = record(payload: [])
        storeLE(UInt32(WALFormat.maximumPayloadSize + 1), at: 4, in: &bytes)
        #expect(isInvalidField(formatError(bytes) { try WALRecord.decodeHeader($0) }))
        storeLE(UInt32.max, at: 4, in: &bytes)
        #expect(isInvalidField(formatError(bytes) { try WALRecord.decodeHeader($0) }))
        storeLE(UInt32(WALFormat.maximumPayloadSize), at: 4, in: &bytes)
        #expect(formatError(bytes) { try WALRecord.decodeHeader($0) } == nil)
        // The header decodes, but the bytes are not there.
        #expect(isTruncated(read(bytes).failure))
    }

    @Test func randomMutationsNeverTrapAndAreRejected() {
        let bytes = record(payload: Array(0..<64))
        var random = RepeatableRandomNumberGenerator(seed: 5)
        for _ in 0..<2000 {
            var copy = bytes
            copy[Int.random(in: copy.indices, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            if case .success = read(copy) { Issue.record("a mutated record verified") }
        }
    }
}

extension Result {
    /// The failure, if any.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
