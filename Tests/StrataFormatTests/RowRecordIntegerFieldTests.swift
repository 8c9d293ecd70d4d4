import Testing

@testable import StrataFormat

/// `RowRecord.integerField(at:in:header:)`, the in-place read of compiled predicates: it gives exactly what
/// `field(at:in:)` decodes, for every payload width, with the payload at the end of the row (where no 8-byte load
/// fits) or not, nil for other tags, and refuses a payload longer than its value needs as the decoder does.
@Suite struct RowRecordIntegerFieldTests {
    static let values: [Int64] = [
        0, 1, -1, 127, 128, -128, -129, 255, 32_767, -32_768, 32_768, 8_388_607, -8_388_608, 1 << 31, -(1 << 31),
        (1 << 39) - 1, -(1 << 47), (1 << 55) + 3, .max, .min,
    ]

    @Test(arguments: values)
    func readsWhatTheDecoderReads(_ value: Int64) throws {
        let layouts: [[RowRecord.Field]] = [
            [.int64(value)], [.int64(value), .string("after")], [.null, .int64(value), .double(2)],
        ]
        for fields in layouts {
            let row = RowRecord.encode(entityID: 3, rowVersion: 9, fields: fields)
            let position = fields.firstIndex { if case .int64 = $0 { true } else { false } }!
            try row.withUnsafeBytes { bytes in
                let header = try RowRecord.Header.decode(bytes)
                #expect(try RowRecord.integerField(at: position, in: bytes, header: header) == value)
                #expect(try RowRecord.field(at: position, in: bytes) == .int64(value))
                for other in fields.indices where other != position {
                    #expect(try RowRecord.integerField(at: other, in: bytes, header: header) == nil)
                }
            }
        }
    }

    @Test func aPayloadLongerThanItsValueNeedsIsRefused() throws {
        // 5 as two bytes (05 00), then a string so that the word load fits: refused as the decoder refuses it.
        var row = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(300), .string("padding bytes")])
        try row.withUnsafeMutableBytes { bytes in
            let header = try RowRecord.Header.decode(UnsafeRawBufferPointer(bytes))
            let span = try header.span(ofField: 0, in: UnsafeRawBufferPointer(bytes))
            #expect(span.count == 3)
            bytes[span.lowerBound + 1] = 5
            bytes[span.lowerBound + 2] = 0
        }
        try row.withUnsafeBytes { bytes in
            let header = try RowRecord.Header.decode(bytes)
            #expect(throws: FormatError.self) { try RowRecord.field(at: 0, in: bytes) }
            #expect(throws: FormatError.self) { try RowRecord.integerField(at: 0, in: bytes, header: header) }
        }
    }

    /// `referenceField(at:in:header:)`, the in-place read of grouping by a to-one: what the decoder reads, nil for
    /// other tags, and a payload longer than its value needs refused.
    @Test(arguments: [UInt64(0), 1, 255, 256, 65_535, 1 << 40, .max])
    func referencesReadWhatTheDecoderReads(_ value: UInt64) throws {
        let fields: [RowRecord.Field] = [.int64(7), .reference(value), .null]
        let row = RowRecord.encode(entityID: 3, rowVersion: 9, fields: fields)
        try row.withUnsafeBytes { bytes in
            let header = try RowRecord.Header.decode(bytes)
            #expect(try RowRecord.referenceField(at: 1, in: bytes, header: header) == value)
            #expect(try RowRecord.field(at: 1, in: bytes) == .reference(value))
            #expect(try RowRecord.referenceField(at: 0, in: bytes, header: header) == nil)
            #expect(try RowRecord.referenceField(at: 2, in: bytes, header: header) == nil)
            #expect(throws: FormatError.self) { try RowRecord.referenceField(at: 3, in: bytes, header: header) }
        }
    }

    @Test func aReferenceLongerThanItsValueNeedsIsRefused() throws {
        var row = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.reference(300), .string("padding")])
        try row.withUnsafeMutableBytes { bytes in
            let header = try RowRecord.Header.decode(UnsafeRawBufferPointer(bytes))
            let span = try header.span(ofField: 0, in: UnsafeRawBufferPointer(bytes))
            #expect(span.count == 3)
            bytes[span.lowerBound + 1] = 5
            bytes[span.lowerBound + 2] = 0
        }
        try row.withUnsafeBytes { bytes in
            let header = try RowRecord.Header.decode(bytes)
            #expect(throws: FormatError.self) { try RowRecord.field(at: 0, in: bytes) }
            #expect(throws: FormatError.self) { try RowRecord.referenceField(at: 0, in: bytes, header: header) }
        }
    }
}
