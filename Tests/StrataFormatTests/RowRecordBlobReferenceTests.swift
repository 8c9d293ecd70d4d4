import Testing

@testable import StrataFormat

/// `RowRecord.blobReferences(in:)`, what a save reads of the row it replaces or deletes: the header and the blob
/// references `decodeAll` finds, by field index, and the same refusals for what it reads.
@Suite struct RowRecordBlobReferenceTests {
    static let layouts: [[RowRecord.Field]] = [
        [],
        [.int64(4), .string("no blob here"), .null],
        [.blobReference(7)],
        [.string("a"), .blobReference(1 << 40), .double(2), .blobReference(.max), .reference(3)],
        [.null, .bytes([1, 2, 3]), .blobReference(0)],
    ]

    @Test(arguments: layouts)
    func readsTheBlobsDecodeAllReads(_ fields: [RowRecord.Field]) throws {
        let row = RowRecord.encode(entityID: 5, rowVersion: 12, fields: fields)
        let whole = try RowRecord.decodeAll(row)
        var expected: [Int: UInt64] = [:]
        for (position, field) in whole.fields.enumerated() {
            if case .blobReference(let blob) = field { expected[position] = blob }
        }
        let read = try RowRecord.blobReferences(row)
        #expect(read.header == whole.header)
        #expect(read.header.rowVersion == 12)
        #expect(read.blobs == expected)
    }

    @Test func aBlobReferenceLongerThanItsValueNeedsIsRefused() throws {
        // Blob 0x0102 is written in two bytes (02 01); 02 00 is 2 in a byte too many: refused as decodeAll
        // refuses it.
        var row = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.blobReference(0x0102), .string("after")])
        try row.withUnsafeMutableBytes { bytes in
            let header = try RowRecord.Header.decode(UnsafeRawBufferPointer(bytes))
            let span = try header.span(ofField: 0, in: UnsafeRawBufferPointer(bytes))
            #expect(span.count == 3)
            bytes[span.lowerBound + 2] = 0
        }
        #expect(throws: FormatError.self) { try RowRecord.decodeAll(row) }
        #expect(throws: FormatError.self) { try RowRecord.blobReferences(row) }
    }

    @Test func aTruncatedRowIsRefused() throws {
        let row = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.string("x"), .blobReference(3)])
        for length in 0..<row.count {
            #expect(throws: FormatError.self) { try RowRecord.blobReferences(Array(row.prefix(length))) }
        }
    }
}
