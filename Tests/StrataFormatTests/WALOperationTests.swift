import StrataFormat
import StrataTestSupport
import Testing

/// Operations inside an `operations` record, and the commit record payload.
@Suite struct WALOperationTests {
    private static let samples: [WALOperation] = [
        .createTable(tableID: 1, name: "person"),
        .createTable(tableID: .max, name: "ü" + String(repeating: "x", count: 1022)),
        .dropTable(tableID: 17),
        .put(tableID: 3, rowID: 1, value: []),
        .put(tableID: 3, rowID: .max, value: Array(0..<200)),
        .delete(tableID: 9, rowID: 0x0102_0304_0506_0708),
        .reserveRows(tableID: 4, nextRowID: 1 << 40),
        .createIndex(IndexDescriptor(indexID: 2, tableID: 3, name: "person.name", fields: [0, 4], entityIDs: nil)),
        .createIndex(
            IndexDescriptor(indexID: 3, tableID: 3, name: "i", fields: Array(0..<16), entityIDs: [1, 7, 900])),
        .dropIndex(indexID: 0x0403_0201),
    ]

    private func encode(_ operations: [WALOperation]) -> [UInt8] {
        var writer = ByteWriter()
        for operation in operations { operation.encode(into: &writer) }
        return writer.bytes
    }

    private func decodeAll(_ bytes: [UInt8]) throws -> [WALOperation] {
        var result: [WALOperation] = []
        try bytes.withUnsafeBytes { try WALOperation.decodeAll($0) { result.append($0) } }
        return result
    }

    @Test func layoutIsPinned() {
        #expect(encode([.dropTable(tableID: 0x0403_0201)]) == [2, 1, 2, 3, 4])
        #expect(encode([.delete(tableID: 1, rowID: 2)]) == [4, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
        #expect(encode([.createTable(tableID: 1, name: "ab")]) == [1, 1, 0, 0, 0, 2, 0, 0x61, 0x62])
        #expect(
            encode([.put(tableID: 1, rowID: 2, value: [9])]) == [3, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9]
        )
        #expect(encode([.reserveRows(tableID: 1, nextRowID: 0x0102)]) == [5, 1, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0])
        #expect(encode([.dropIndex(indexID: 0x0403_0201)]) == [7, 1, 2, 3, 4])
        #expect(
            encode([.createIndex(IndexDescriptor(indexID: 2, tableID: 3, name: "i", fields: [5], entityIDs: [9]))])
                == [6, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0x69, 1, 5, 0, 1, 1, 0, 9, 0])
        #expect(WALOperation.putSize(valueLength: 1) == 18)
        #expect(
            WALOperation.putSize(valueLength: 1000)
                == encode([.put(tableID: 1, rowID: 1, value: Array(repeating: 0, count: 1000))]).count
        )
    }

    @Test func everyOperationRoundTrips() throws {
        for operation in Self.samples {
            #expect(try decodeAll(encode([operation])) == [operation])
        }
        #expect(try decodeAll(encode(Self.samples)) == Self.samples)
        #expect(try decodeAll([]) == [])
    }

    @Test func encodePutMatchesEncodeOfAPutValue() {
        var direct = ByteWriter()
        [UInt8](arrayLiteral: 1, 2, 3).withUnsafeBytes {
            WALOperation.encodePut(tableID: 5, rowID: 6, value: $0, into: &direct)
        }
        #expect(direct.bytes == encode([.put(tableID: 5, rowID: 6, value: [1, 2, 3])]))
    }

    @Test func everyTruncationOfEveryOperationThrowsTruncated() {
        for operation in Self.samples {
            let bytes = encode([operation])
            for length in 1..<bytes.count {
                let error = formatError(Array(bytes[0..<length])) { buffer in
                    var reader = ByteReader(buffer)
                    return try WALOperation.decode(from: &reader)
                }
                #expect(isTruncated(error), "\(operation) cut to \(length): \(String(describing: error))")
            }
        }
    }

    @Test func unknownTagIsInvalid() {
        for tag: UInt8 in [0, 8, 0xFF] {
            let error = formatError([tag, 1, 0, 0, 0]) { buffer in
                var reader = ByteReader(buffer)
                return try WALOperation.decode(from: &reader)
            }
            #expect(isInvalidField(error), "tag \(tag)")
        }
    }

    @Test func tableNameLengthOutsideTheLimitsIsInvalid() {
        for length: UInt16 in [0, 1025, .max] {
            var bytes: [UInt8] = [1, 1, 0, 0, 0, 0, 0]
            storeLE(length, at: 5, in: &bytes)
            bytes += [UInt8](repeating: 0x61, count: Int(min(length, 2000)))
            #expect(
                isInvalidField(
                    formatError(bytes) { buffer in
                        var reader = ByteReader(buffer)
                        return try WALOperation.decode(from: &reader)
                    }
                ),
                "length \(length)"
            )
        }
    }

    @Test func invalidUTF8TableNameIsInvalid() {
        let bytes: [UInt8] = [1, 1, 0, 0, 0, 2, 0, 0xC3, 0x28]
        #expect(
            isInvalidField(
                formatError(bytes) { buffer in
                    var reader = ByteReader(buffer)
                    return try WALOperation.decode(from: &reader)
                }
            )
        )
    }

    @Test func valueLongerThanTheMaximumIsRejectedBeforeAllocating() {
        var bytes = encode([.put(tableID: 1, rowID: 1, value: [])])
        storeLE(UInt32(WALFormat.maximumValueSize + 1), at: 13, in: &bytes)
        #expect(
            isInvalidField(
                formatError(bytes) { buffer in
                    var reader = ByteReader(buffer)
                    return try WALOperation.decode(from: &reader)
                }
            )
        )
        storeLE(UInt32.max, at: 13, in: &bytes)
        #expect(
            isInvalidField(
                formatError(bytes) { buffer in
                    var reader = ByteReader(buffer)
                    return try WALOperation.decode(from: &reader)
                }
            )
        )
    }

    @Test func decodeAllRejectsATrailingPartialOperation() {
        let bytes = encode(Self.samples) + [3, 1]
        #expect(throws: FormatError.self) { try decodeAll(bytes) }
    }

    /// 2,000 copies of `bytes` with 1 to 4 bytes each set at random (repeatably, from `seed`).
    private static func mutations(of bytes: [UInt8], seed: UInt64) -> [[UInt8]] {
        var random = RepeatableRandomNumberGenerator(seed: seed)
        return (0..<2000).map { _ in
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            return mutated
        }
    }

    /// Decodes with ``WALOperation/decodeAll(_:lendingPuts:_:)``, taking the puts `takes` accepts (by their order
    /// among the puts): the operations in order, taken puts rebuilt from what was lent, and the error, if any.
    private func decodeLending(
        _ bytes: [UInt8], takes: (Int) -> Bool
    ) -> (operations: [WALOperation], error: String?) {
        var operations: [WALOperation] = []
        var puts = 0
        do {
            try bytes.withUnsafeBytes { buffer in
                try WALOperation.decodeAll(
                    buffer,
                    lendingPuts: { table, row, value in
                        defer { puts += 1 }
                        guard takes(puts) else { return false }
                        operations.append(.put(tableID: table, rowID: row, value: Array(value)))
                        return true
                    }
                ) { operations.append($0) }
            }
            return (operations, nil)
        } catch {
            return (operations, "\(error)")
        }
    }

    /// What ``WALOperation/decodeAll(_:_:)`` gives: the operations before the first that fails, and its error.
    private func decodeAllUpToError(_ bytes: [UInt8]) -> (operations: [WALOperation], error: String?) {
        var operations: [WALOperation] = []
        do {
            try bytes.withUnsafeBytes { try WALOperation.decodeAll($0) { operations.append($0) } }
            return (operations, nil)
        } catch {
            return (operations, "\(error)")
        }
    }

    @Test func lendingPutsDecodesWhatDecodeAllDecodes() {
        let bytes = encode(Self.samples + Self.samples.reversed())
        for takes in [{ (_: Int) in true }, { _ in false }, { $0 % 2 == 0 }] {
            let lent = decodeLending(bytes, takes: takes)
            #expect(lent.error == nil)
            #expect(lent.operations == Self.samples + Self.samples.reversed())
        }
    }

    @Test func lendingPutsFailsWhereDecodeAllFails() {
        let bytes = encode(Self.samples)
        var cases: [[UInt8]] = (0..<bytes.count).map { Array(bytes[0..<$0]) }
        var tooLong = encode([.put(tableID: 1, rowID: 1, value: [])])
        storeLE(UInt32(WALFormat.maximumValueSize + 1), at: 13, in: &tooLong)
        cases.append(tooLong)
        cases += Self.mutations(of: bytes, seed: 23)
        for (number, bytes) in cases.enumerated() {
            let expected = decodeAllUpToError(bytes)
            let lent = decodeLending(bytes, takes: { $0 % 3 != 1 })
            #expect(lent.operations == expected.operations, "case \(number)")
            #expect(lent.error == expected.error, "case \(number)")
        }
    }

    /// Reads `bytes` as recovery does: at each put, the run ``WALOperation/scanPutRun(_:table:after:)`` finds for its
    /// table (above that table's last row ID so far), else one operation with
    /// ``WALOperation/decodeNext(from:lendingPuts:_:)``. The operations in order (a run's puts decoded again from its
    /// span, after checking that the run describes them), the runs' sizes, and the error, if any.
    private func decodeScanningRuns(_ bytes: [UInt8]) -> (operations: [WALOperation], runs: [Int], error: String?) {
        var operations: [WALOperation] = []
        var runs: [Int] = []
        var lastRows: [UInt32: UInt64] = [:]
        do {
            try bytes.withUnsafeBytes { buffer in
                var reader = ByteReader(buffer)
                while reader.remaining > 0 {
                    let start = reader.readerIndex
                    if let table = WALOperation.putTableID(at: reader),
                        let run = WALOperation.scanPutRun(&reader, table: table, after: lastRows[table])
                    {
                        var puts: [WALOperation] = []
                        var starts: [Int] = []
                        var spanReader = ByteReader(
                            UnsafeRawBufferPointer(rebasing: buffer[..<reader.readerIndex]), readerIndex: start)
                        while spanReader.remaining > 0 {
                            try WALOperation.decodeNext(
                                from: &spanReader,
                                lendingPuts: { table, row, value in
                                    starts.append(value.baseAddress! - buffer.baseAddress!)
                                    puts.append(.put(tableID: table, rowID: row, value: Array(value)))
                                    return true
                                }, { puts.append($0) })
                        }
                        let rows = puts.map { operation -> UInt64 in
                            guard case .put(let id, let row, _) = operation, id == table else { return 0 }
                            return row
                        }
                        #expect(rows.count == run.count && rows.first == run.firstRowID && rows.last == run.lastRowID)
                        #expect(zip(rows, rows.dropFirst()).allSatisfy { $0 < $1 })
                        #expect(lastRows[table].map { rows[0] > $0 } ?? true)
                        #expect(starts.first == run.firstValueStart && starts.last == run.lastValueStart)
                        lastRows[table] = run.lastRowID
                        operations += puts
                        runs.append(run.count)
                        continue
                    }
                    #expect(reader.readerIndex == start, "a put that does not extend its table's run moves nothing")
                    try WALOperation.decodeNext(
                        from: &reader, lendingPuts: { _, _, _ in false }, { operations.append($0) })
                }
            }
            return (operations, runs, nil)
        } catch {
            return (operations, runs, "\(error)")
        }
    }

    @Test func scanningPutRunsReadsWhatDecodeAllReads() {
        // A bulk load of two tables, interleaved, with a row ID going back and other operations between runs.
        var load: [WALOperation] = []
        for row in 1...40 {
            load.append(.put(tableID: 3, rowID: UInt64(row * 2), value: [UInt8](repeating: 7, count: row)))
        }
        load.append(.put(tableID: 4, rowID: 9, value: []))
        load.append(.put(tableID: 4, rowID: 10, value: [1]))
        load.append(.put(tableID: 3, rowID: 81, value: [2]))
        load.append(.put(tableID: 3, rowID: 5, value: [3]))
        load.append(.delete(tableID: 3, rowID: 5))
        load.append(.put(tableID: 3, rowID: 90, value: [4]))
        load += Self.samples
        let bytes = encode(load)
        let scanned = decodeScanningRuns(bytes)
        #expect(scanned.error == nil)
        #expect(scanned.operations == load)
        #expect(scanned.runs.prefix(3) == [40, 2, 1])
        // Damaged and cut payloads fail where decodeAll fails, after the same operations.
        let cases = (0..<bytes.count).map { Array(bytes[0..<$0]) } + Self.mutations(of: bytes, seed: 29)
        for (number, bytes) in cases.enumerated() {
            let expected = decodeAllUpToError(bytes)
            let scanned = decodeScanningRuns(bytes)
            #expect(scanned.operations == expected.operations, "case \(number)")
            #expect(scanned.error == expected.error, "case \(number)")
        }
    }

    @Test func randomMutationsNeverTrap() {
        let bytes = encode(Self.samples)
        mutateAndDecode(bytes, seed: 21, mutations: 3000) { buffer in
            var reader = ByteReader(buffer)
            var operations: [WALOperation] = []
            while reader.remaining > 0 { operations.append(try WALOperation.decode(from: &reader)) }
            return operations
        }
    }

    @Test func randomBytesNeverTrap() {
        var random = RepeatableRandomNumberGenerator(seed: 22)
        for _ in 0..<3000 {
            let bytes = random.bytes(Int.random(in: 0...64, using: &random))
            _ = formatError(bytes) { buffer in
                var reader = ByteReader(buffer)
                while reader.remaining > 0 { _ = try WALOperation.decode(from: &reader) }
            }
        }
    }
}

/// The payload of a commit record.
@Suite struct WALCommitTests {
    @Test func roundTripsAndIsTwelveBytes() throws {
        let commit = WALCommit(operationRecordCount: 0x0102_0304, operationCount: 0x0506_0708_090A_0B0C)
        let bytes = commit.encoded()
        #expect(bytes.count == 12)
        #expect(WALCommit.encodedSize == 12)
        // Little-endian: the record count, then the operation count (FORMAT.md).
        #expect(bytes == [0x04, 0x03, 0x02, 0x01, 0x0C, 0x0B, 0x0A, 0x09, 0x08, 0x07, 0x06, 0x05])
        #expect(try bytes.withUnsafeBytes { try WALCommit.decode($0) } == commit)
    }

    @Test func anyOtherLengthIsInvalid() {
        let bytes = WALCommit(operationRecordCount: 1, operationCount: 1).encoded()
        for length in [0, 1, 11, 13, 100] {
            let input = length <= 12 ? Array(bytes[0..<length]) : bytes + [UInt8](repeating: 0, count: length - 12)
            #expect(isInvalidField(formatError(input) { try WALCommit.decode($0) }), "length \(length)")
        }
    }
}
