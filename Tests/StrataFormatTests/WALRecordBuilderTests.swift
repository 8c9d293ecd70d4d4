import StrataFormat
import StrataTestSupport
import Testing

/// A transaction's records: operations cut into records of about 1 MiB, then a commit record.
@Suite struct WALRecordBuilderTests {
    private let salt: UInt32 = 0x0BAD_CAFE

    /// The records of `bytes` (one transaction, no file header): type, LSN and payload of each.
    private func records(_ bytes: [UInt8]) throws -> [(type: WALRecordType, lsn: UInt64, payload: [UInt8])] {
        var result: [(WALRecordType, UInt64, [UInt8])] = []
        var offset = 0
        while offset < bytes.count {
            let (header, payload) = try bytes.withUnsafeBytes { all throws -> (WALRecord.Header, [UInt8]) in
                let rest = UnsafeRawBufferPointer(rebasing: all[offset...])
                let header = try WALRecord.decodeHeader(rest)
                try WALRecord.verify(header: header, recordBytes: rest, salt: salt)
                let start = WALFormat.recordHeaderSize
                return (header, Array(rest[start..<(start + header.payloadLength)]))
            }
            result.append((header.type, header.lsn, payload))
            offset += WALFormat.recordHeaderSize + header.payloadLength
        }
        return result
    }

    private func operations(of payload: [UInt8]) throws -> [WALOperation] {
        var result: [WALOperation] = []
        try payload.withUnsafeBytes { try WALOperation.decodeAll($0) { result.append($0) } }
        return result
    }

    @Test func smallTransactionIsOneOperationsRecordAndACommit() throws {
        var builder = WALRecordBuilder(salt: salt, firstLSN: 10)
        #expect(builder.isEmpty)
        let ops: [WALOperation] = [
            .createTable(tableID: 1, name: "t"), .put(tableID: 1, rowID: 1, value: [1, 2]),
            .delete(tableID: 1, rowID: 1),
        ]
        for op in ops { builder.appendOperation { op.encode(into: &$0) } }
        #expect(!builder.isEmpty)
        let (bytes, commitLSN) = builder.finish()
        #expect(commitLSN == 11)
        let parsed = try records(bytes)
        #expect(parsed.map(\.type) == [.operations, .commit])
        #expect(parsed.map(\.lsn) == [10, 11])
        #expect(try operations(of: parsed[0].payload) == ops)
        let commit = try parsed[1].payload.withUnsafeBytes { try WALCommit.decode($0) }
        #expect(commit == WALCommit(operationRecordCount: 1, operationCount: 3))
    }

    @Test func operationsAreCutIntoRecordsAtTheOneMebibyteTarget() throws {
        var builder = WALRecordBuilder(salt: salt, firstLSN: 1)
        let value = [UInt8](repeating: 0xAB, count: 1000)
        var expected: [WALOperation] = []
        // 3.5 MiB of puts: four operations records.
        for row in 1...3_600 {
            let op = WALOperation.put(tableID: 2, rowID: UInt64(row), value: value)
            expected.append(op)
            builder.appendOperation { op.encode(into: &$0) }
        }
        let (bytes, commitLSN) = builder.finish()
        let parsed = try records(bytes)
        #expect(parsed.count == 5)
        #expect(commitLSN == 5)
        #expect(parsed.map(\.lsn) == [1, 2, 3, 4, 5])
        let operationRecords = parsed.dropLast()
        for record in operationRecords.dropLast() {
            // Sealed as soon as the payload reaches the target: at least the target, less than target + one op.
            #expect(record.payload.count >= WALFormat.targetPayloadSize)
            #expect(record.payload.count < WALFormat.targetPayloadSize + WALOperation.putSize(valueLength: 1000))
        }
        var decoded: [WALOperation] = []
        for record in operationRecords { decoded += try operations(of: record.payload) }
        #expect(decoded == expected)
        let commit = try parsed.last!.payload.withUnsafeBytes { try WALCommit.decode($0) }
        #expect(commit == WALCommit(operationRecordCount: 4, operationCount: 3_600))
    }

    @Test func operationEndingExactlyAtTheTargetSealsTheRecord() throws {
        var builder = WALRecordBuilder(salt: salt, firstLSN: 1)
        // One put whose encoding is exactly the target size.
        let value = [UInt8](repeating: 1, count: WALFormat.targetPayloadSize - WALOperation.putSize(valueLength: 0))
        builder.appendOperation { WALOperation.put(tableID: 1, rowID: 1, value: value).encode(into: &$0) }
        builder.appendOperation { WALOperation.delete(tableID: 1, rowID: 1).encode(into: &$0) }
        let parsed = try records(builder.finish().bytes)
        #expect(parsed.map(\.type) == [.operations, .operations, .commit])
        #expect(parsed[0].payload.count == WALFormat.targetPayloadSize)
        #expect(try operations(of: parsed[1].payload) == [.delete(tableID: 1, rowID: 1)])
    }

    @Test func valueOfSeveralMebibytesFitsOneRecord() throws {
        var random = RepeatableRandomNumberGenerator(seed: 8)
        let value = random.bytes(5 << 20)
        var builder = WALRecordBuilder(salt: salt, firstLSN: 100)
        builder.appendOperation { WALOperation.put(tableID: 1, rowID: 9, value: value).encode(into: &$0) }
        builder.appendOperation { WALOperation.put(tableID: 1, rowID: 10, value: [7]).encode(into: &$0) }
        let parsed = try records(builder.finish().bytes)
        #expect(parsed.map(\.type) == [.operations, .operations, .commit])
        #expect(try operations(of: parsed[0].payload) == [.put(tableID: 1, rowID: 9, value: value)])
    }

    @Test func continuesLSNsAcrossTransactions() throws {
        var first = WALRecordBuilder(salt: salt, firstLSN: 1)
        first.appendOperation { WALOperation.dropTable(tableID: 1).encode(into: &$0) }
        let (_, lsn) = first.finish()
        var second = WALRecordBuilder(salt: salt, firstLSN: lsn + 1)
        second.appendOperation { WALOperation.dropTable(tableID: 2).encode(into: &$0) }
        #expect(try records(second.finish().bytes).map(\.lsn) == [3, 4])
    }

    @Test func theCountAppendingAnOperationIsTheCountAfterAppendingIt() {
        var builder = WALRecordBuilder(salt: salt, firstLSN: 1)
        // 2.4 MB of puts: the first opens a record (its header counts), as does each put after a cut at 1 MiB.
        for row in 0..<800 {
            let value = [UInt8](repeating: 7, count: (row * 37) % 6_000)
            let expected = builder.count(appending: WALOperation.putSize(valueLength: value.count))
            value.withUnsafeBytes { bytes in
                builder.appendOperation {
                    WALOperation.encodePut(tableID: 1, rowID: UInt64(row), value: bytes, into: &$0)
                }
            }
            #expect(builder.writer.count == expected, "put \(row)")
        }
        #expect(builder.operationRecordCount == 2)
    }
}
