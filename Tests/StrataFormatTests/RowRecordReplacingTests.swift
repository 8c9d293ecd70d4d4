import Testing

@testable import StrataFormat

/// `RowRecord.encode(entityID:rowVersion:replacing:in:header:)`: a row rewritten from another row's bytes with some
/// fields replaced is byte for byte the row encoded whole from the same fields, whatever the fields' lengths do to the
/// width of the field ends; damaged field ends in the old row are errors, never a read outside it.
@Suite struct RowRecordReplacingTests {
    /// Rows of a few shapes: short fields, a string long enough for two-byte field ends, nulls, references.
    static let rows: [[RowRecord.Field]] = [
        [.string("Ada"), .int64(36), .null, .date(secondsSinceReferenceDate: 12.5), .reference(7), .null],
        [.int64(-1)],
        [.string(String(repeating: "x", count: 300)), .boolean(true), .bytes([1, 2, 3])],
        [.null, .null, .null, .null],
        [.double(1.5), .string("Zoë"), .uuid(0x0123_4567_89AB_CDEF_0123_4567_89AB_CDEF), .blobReference(90)],
    ]

    /// New fields for the replacements: shorter, longer, and long enough to widen the field ends past one byte.
    static let replacementFields: [RowRecord.Field] = [
        .null, .int64(52_000), .string("Grace Hopper"), .string(String(repeating: "y", count: 260)), .float(2.5),
        .reference(1 << 40),
    ]

    /// Every subset of positions (up to 6 fields), each replaced by a field of the list in turn.
    @Test func aRowWithFieldsReplacedIsTheRowEncodedWhole() throws {
        var checked = 0
        for fields in Self.rows {
            let old = RowRecord.encode(entityID: 3, rowVersion: 9, fields: fields)
            for mask in 0..<(1 << fields.count) {
                for shift in 0..<Self.replacementFields.count {
                    var replacements: [(position: Int, field: RowRecord.Field)] = []
                    var expected = fields
                    for position in fields.indices where mask & (1 << position) != 0 {
                        let field = Self.replacementFields[(position + shift) % Self.replacementFields.count]
                        replacements.append((position, field))
                        expected[position] = field
                    }
                    let rewritten = try old.withUnsafeBytes { bytes in
                        try RowRecord.encode(
                            entityID: 4, rowVersion: 10, replacing: replacements, in: bytes,
                            header: try RowRecord.Header.decode(bytes))
                    }
                    #expect(rewritten == RowRecord.encode(entityID: 4, rowVersion: 10, fields: expected))
                    let decoded = try RowRecord.decodeAll(rewritten)
                    #expect(decoded.fields == expected)
                    #expect(decoded.header.entityID == 4 && decoded.header.rowVersion == 10)
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
    }

    /// A field end table that does not increase, or that points past the row, is refused before anything is copied.
    @Test func damagedFieldEndsInTheOldRowAreErrors() throws {
        let old = RowRecord.encode(entityID: 3, rowVersion: 9, fields: [.int64(1), .int64(2), .int64(3)])
        let header = try RowRecord.Header.decode(old)
        // One-byte ends after the header's four bytes: 2, 4, 6. The middle one made equal to the first (an empty
        // field), then larger than the last (past the fields area, checked before the last end is reached).
        #expect(Array(old[4..<7]) == [2, 4, 6])
        var empty = old
        empty[5] = 2
        var past = old
        past[5] = 9
        for damaged in [empty, past] {
            #expect(throws: FormatError.self) {
                try damaged.withUnsafeBytes { bytes in
                    try RowRecord.encode(
                        entityID: 3, rowVersion: 10, replacing: [(2, .int64(4))], in: bytes, header: header)
                }
            }
        }
    }
}
