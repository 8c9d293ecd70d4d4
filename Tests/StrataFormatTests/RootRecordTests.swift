import StrataFormat
import StrataTestSupport
import Testing

/// The root record a checkpoint appends last: payload coding, page parts, and validation.
@Suite struct RootRecordTests {
    private let salt: UInt64 = 0xABCDEF

    private func table(
        _ id: UInt32,
        _ name: String,
        root: UInt64 = 5,
        rows: UInt64 = 3,
        height: Int = 2
    ) -> RootRecord.Table {
        RootRecord.Table(tableID: id, name: name, nextRowID: rows + 10, rowCount: rows, rootPage: root, height: height)
    }

    private var sample: RootRecord {
        RootRecord(
            walLSN: 1234,
            nextTableID: 9,
            previousRootPage: 30,
            tables: [
                table(1, "person"), table(4, "empty", root: PageFormat.noPage, rows: 0, height: 0),
                table(8, "ünïcode", root: 39, rows: 1, height: 1),
            ]
        )
    }

    private func decode(_ payload: [UInt8], firstPage: UInt64 = 40) -> Result<RootRecord, FormatError> {
        payload.withUnsafeBytes { buffer in
            Result { () throws(FormatError) in try RootRecord.decode(buffer, firstPage: firstPage) }
        }
    }

    @Test func payloadRoundTrips() throws {
        #expect(try decode(sample.encodedPayload()).get() == sample)
        let empty = RootRecord(walLSN: 0, nextTableID: 1, previousRootPage: PageFormat.noPage, tables: [])
        #expect(try decode(empty.encodedPayload()).get() == empty)
        #expect(empty.encodedPayload().count == 24)
    }

    @Test func everyTruncationIsRejected() {
        let payload = sample.encodedPayload()
        for length in 0..<payload.count {
            #expect(decode(Array(payload[0..<length])).failure != nil, "length \(length)")
        }
    }

    @Test func trailingBytesAreInvalid() {
        #expect(isInvalidField(decode(sample.encodedPayload() + [0]).failure))
    }

    @Test func inconsistentTablesAreInvalid() {
        func rejects(_ record: RootRecord, firstPage: UInt64 = 40, _ why: String) {
            #expect(isInvalidField(decode(record.encodedPayload(), firstPage: firstPage).failure), "\(why)")
        }
        var record = sample
        record.tables.append(table(1, "other"))
        rejects(record, "duplicate ID")
        record = sample
        record.tables.append(table(2, "person"))
        rejects(record, "duplicate name")
        record = sample
        record.nextTableID = 8
        rejects(record, "table ID not below nextTableID")
        rejects(sample, firstPage: 39, "root at the record's own first page")
        record = sample
        record.tables[0].rootPage = 0
        rejects(record, "root at page 0")
        record = sample
        record.tables[0].height = 0
        rejects(record, "non-empty tree of height 0")
        record = sample
        record.tables[0].rowCount = 0
        rejects(record, "non-empty tree without rows")
        record = sample
        record.tables[1].height = 1
        rejects(record, "empty tree of height 1")
        record = sample
        record.tables[1].rowCount = 1
        rejects(record, "empty tree with rows")
        record = sample
        record.tables[0].height = 33
        rejects(record, "height over the limit")
        record = sample
        record.previousRootPage = 40
        rejects(record, "previous record not before this one")
    }

    @Test func emptyOrOverlongNamesAndHugeCountsAreInvalid() {
        var payload = RootRecord(
            walLSN: 1,
            nextTableID: 2,
            previousRootPage: PageFormat.noPage,
            tables: [table(1, "a")]
        ).encodedPayload()
        payload[24 + 29] = 0  // name length 0
        payload[24 + 30] = 0
        #expect(isInvalidField(decode(Array(payload.dropLast())).failure))
        var counted = sample.encodedPayload()
        storeLE(UInt32.max, at: 20, in: &counted)
        #expect(isInvalidField(decode(counted).failure))
    }

    @Test func partsSplitAndReassembleAcrossPages() throws {
        let tables = (1...40).map { table(UInt32($0), "table-\($0)-" + String(repeating: "n", count: $0)) }
        let record = RootRecord(walLSN: 99, nextTableID: 41, previousRootPage: 2, tables: tables)
        let payload = record.encodedPayload()
        let count = RootRecord.pageCount(payloadLength: payload.count, pageSize: 512)
        #expect(count == (payload.count + 479) / 480)
        #expect(count > 2)
        var reassembled: [UInt8] = []
        for index in 0..<count {
            let number = UInt64(50 + index)
            let bytes = makePage(size: 512) { page in
                RootRecord.encodePart(
                    payload,
                    index: index,
                    count: count,
                    into: page,
                    pageNumber: number,
                    generation: 4,
                    salt: salt
                )
            }
            let (part, body) = try decodePage(bytes, number: number, salt: salt) { buffer, header in
                (try RootRecord.part(of: header), Array(header.body(of: buffer)))
            }.get()
            #expect(part.index == index && part.count == count)
            reassembled += body
        }
        #expect(try decode(reassembled, firstPage: 50).get() == record)
        #expect(RootRecord.pageCount(payloadLength: 0, pageSize: 512) == 1)
    }

    @Test func partNumbersAreValidated() {
        func header(type: PageType = .rootRecord, extra: UInt32) -> PageHeader {
            PageHeader(type: type, itemCount: 0, pageNumber: 5, generation: 1, bodyLength: 0, extra: extra)
        }
        #expect(throws: FormatError.self) { try RootRecord.part(of: header(extra: 0)) }
        #expect(throws: FormatError.self) { try RootRecord.part(of: header(extra: 2 << 16 | 2)) }
        #expect(throws: FormatError.self) { try RootRecord.part(of: header(extra: 4097)) }
        #expect(throws: FormatError.self) { try RootRecord.part(of: header(type: .leaf, extra: 1)) }
        #expect((try? RootRecord.part(of: header(extra: 1 << 16 | 2)))! == (1, 2))
    }

    @Test func randomMutationsNeverTrap() {
        mutateAndDecode(sample.encodedPayload(), seed: 71, mutations: 4000) { buffer in
            try RootRecord.decode(buffer, firstPage: 40)
        }
        var random = RepeatableRandomNumberGenerator(seed: 72)
        for _ in 0..<2000 {
            _ = decode(random.bytes(Int.random(in: 0...120, using: &random)))
        }
    }
}
