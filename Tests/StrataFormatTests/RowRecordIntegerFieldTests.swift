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

    /// `shortestInteger(payload:in:)`, the call-free read of a kept row's integer: what `integerField` reads for
    /// every width, nil for a payload longer than its value needs or not 1 ... 8 bytes.
    @Test(arguments: values)
    func theShortestIntegerIsWhatIntegerFieldReads(_ value: Int64) throws {
        let row = RowRecord.encode(entityID: 3, rowVersion: 9, fields: [.null, .int64(value)])
        try row.withUnsafeBytes { bytes in
            let header = try RowRecord.Header.decode(bytes)
            let span = try header.span(ofField: 1, in: bytes)
            let payload = (span.lowerBound + 1)..<span.upperBound
            #expect(RowRecord.shortestInteger(payload: payload, in: bytes) == value)
            #expect(try RowRecord.integerField(at: 1, in: bytes, header: header) == value)
            #expect(RowRecord.shortestInteger(payload: payload.lowerBound..<payload.lowerBound, in: bytes) == nil)
        }
        // The same value one byte wider (sign-extended): refused.
        guard value != .min, value != .max, value.magnitude < 1 << 55 else { return }
        var wide = Array(withUnsafeBytes(of: value.littleEndian) { $0 })
        let width = (64 - UInt64(bitPattern: value ^ (value >> 63)).leadingZeroBitCount + 8) / 8
        wide = Array(wide[0...width])
        wide.withUnsafeBytes { bytes in
            #expect(RowRecord.shortestInteger(payload: 0..<(bytes.count - 1), in: bytes) == value)
            #expect(RowRecord.shortestInteger(payload: 0..<bytes.count, in: bytes) == nil)
        }
    }

    /// `commonFieldSpan(ofField:in:)`, the call-free span of a kept row's field: with every bit of every byte of rows
    /// of the common form flipped, it gives nil or exactly the span `Header.decode` and `span(ofField:in:)` give (nil
    /// whenever they throw), and the span for every field of the undamaged rows; nil for rows of other forms.
    @Test func theCommonFieldSpanIsTheDecodedSpanOrNothing() throws {
        let rows: [[UInt8]] = [
            RowRecord.encode(entityID: 3, rowVersion: 9, fields: [.int64(-300), .string("Ada"), .null, .reference(7)]),
            RowRecord.encode(entityID: 127, rowVersion: 127, fields: [.string("")]),
            RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.null, .null, .double(2.5), .boolean(true)]),
        ]
        var agreed = 0
        for original in rows {
            let fieldCount = Int(original[3])
            try original.withUnsafeBytes { bytes in
                let header = try RowRecord.Header.decode(bytes)
                for index in 0..<fieldCount {
                    let span = try header.span(ofField: index, in: bytes)
                    #expect(RowRecord.commonFieldSpan(ofField: index, in: bytes) == span)
                }
                #expect(RowRecord.commonFieldSpan(ofField: fieldCount, in: bytes) == nil)
                #expect(RowRecord.commonFieldSpan(ofField: -1, in: bytes) == nil)
            }
            for position in original.indices {
                for mask: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF] {
                    var damaged = original
                    damaged[position] ^= mask
                    damaged.withUnsafeBytes { bytes in
                        for index in 0..<(fieldCount + 1) {
                            guard let span = RowRecord.commonFieldSpan(ofField: index, in: bytes) else { continue }
                            let decoded = try? RowRecord.Header.decode(bytes).span(ofField: index, in: bytes)
                            #expect(decoded == span, "byte \(position) ^ \(mask), field \(index)")
                            agreed += 1
                        }
                    }
                }
            }
        }
        #expect(agreed > 0)
        // Another form: a row whose version needs two varint bytes, and one whose fields need two-byte ends.
        for row in [
            RowRecord.encode(entityID: 3, rowVersion: 300, fields: [.int64(1)]),
            RowRecord.encode(entityID: 3, rowVersion: 1, fields: [.string(String(repeating: "a", count: 300))]),
        ] {
            try row.withUnsafeBytes { bytes in
                let span = try RowRecord.Header.decode(bytes).span(ofField: 0, in: bytes)
                #expect(!span.isEmpty)
                #expect(RowRecord.commonFieldSpan(ofField: 0, in: bytes) == nil)
            }
        }
    }
}
