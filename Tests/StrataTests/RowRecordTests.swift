import Foundation
import StrataFormat
import StrataTestSupport
import Testing

@testable import Strata

/// The error a row decoder throws, or nil when it decoded; the decoders' typed throws make any other
/// error impossible, which this pins.
private func formatError<T>(_ body: () throws(FormatError) -> T) -> FormatError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

private func isTruncated(_ error: FormatError?) -> Bool {
    if case .truncated = error { return true }
    return false
}

private func isInvalidField(_ error: FormatError?) -> Bool {
    if case .invalidField = error { return true }
    return false
}

/// The row record format (StrataFormat's `RowRecord`): layout, round trips, single-field reads and
/// rejection of damaged rows.
@Suite struct RowRecordTests {
    /// One field of every kind, with edge values.
    static let everyKind: [RowRecord.Field] = [
        .null,
        .int64(.min), .int64(.max), .int64(0), .int64(-1),
        .double(-0.0), .double(.infinity), .double(.nan), .double(Double(bitPattern: 0x7FF8_0000_0000_BEEF)),
        .double(.leastNonzeroMagnitude), .double(1.5),
        .float(.greatestFiniteMagnitude), .float(-.leastNonzeroMagnitude), .float(.nan),
        .boolean(false), .boolean(true),
        .string(""), .string("Ada Lovelace"), .string("é👨‍👩‍👧\u{0}\u{10FFFF}"),
        .bytes([]), .bytes(Array(0...255)), .bytes(Array(repeating: 0xAB, count: 70_000)),
        .date(secondsSinceReferenceDate: 0), .date(secondsSinceReferenceDate: -978_307_200.123456789),
        .date(secondsSinceReferenceDate: .greatestFiniteMagnitude),
        .uuid(0), .uuid(.max), .uuid(0x0011_2233_4455_6677_8899_AABB_CCDD_EEFF),
        .decimal(.init(exponent: 0, isNegative: false, isCompact: false, mantissa: [])),
        .decimal(.init(exponent: 0, isNegative: true, isCompact: false, mantissa: [])),
        .decimal(.init(exponent: -128, isNegative: true, isCompact: true, mantissa: [1])),
        .decimal(
            .init(exponent: 127, isNegative: false, isCompact: true, mantissa: Array(repeating: 0xFFFF, count: 8))),
        .uri("https://example.com/a?b=c#d"), .uri(""),
        .blobReference(0), .blobReference(.max),
        .reference(1), .reference(.max),
    ]

    @Test func layoutIsPinnedByTheWorkedExample() throws {
        let bytes = RowRecord.encode(
            entityID: 2, rowVersion: 7, fields: [.string("Ada"), .int64(36), .null, .boolean(true)])
        let expected: [UInt8] = [
            0x21,  // form: format version 2, field ends of 1 byte
            0x02,  // entityID 2
            0x07,  // rowVersion 7
            0x04,  // fieldCount 4
            0x04, 0x06, 0x07, 0x09,  // fields 0 ... 3 end at 4, 6, 7 and 9
            0x05, 0x41, 0x64, 0x61,  // string "Ada"
            0x01, 0x24,  // int64 36, in one byte
            0x00,  // null
            0x04, 0x01,  // boolean true
        ]
        #expect(bytes == expected)
        #expect(RowRecord.formatVersion == 2)
        #expect(RowRecord.Tag.allCases.map(\.rawValue) == Array(0...12))
    }

    @Test func fixedPayloadsArePinned() throws {
        func fieldBytes(_ field: RowRecord.Field) -> [UInt8] {
            let row = RowRecord.encode(entityID: 0, rowVersion: 0, fields: [field])
            let header = try? RowRecord.Header.decode(row)
            return Array(row.dropFirst(header?.fieldsOffset ?? row.count))
        }
        #expect(fieldBytes(.double(1.0)) == [2, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(fieldBytes(.float(1.0)) == [3, 0, 0, 0x80, 0x3F])
        #expect(fieldBytes(.date(secondsSinceReferenceDate: 1.0)) == [7, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(
            fieldBytes(.uuid(0x0011_2233_4455_6677_8899_AABB_CCDD_EEFF))
                == [8, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        // -123.456 = -123456 × 10^-3; 123456 = 0x0001_E240.
        #expect(
            fieldBytes(.decimal(.init(exponent: -3, isNegative: true, isCompact: true, mantissa: [0xE240, 0x0001])))
                == [9, 0xFD, 0x03, 0x40, 0xE2, 0x01, 0x00])
        #expect(fieldBytes(.uri("a:b")) == [10, 0x61, 0x3A, 0x62])
        #expect(fieldBytes(.bytes([9, 8])) == [6, 9, 8])
        #expect(fieldBytes(.boolean(false)) == [4, 0])
        for field in Self.everyKind { #expect(fieldBytes(field).count == field.encodedSize, "\(field)") }
    }

    /// Integers take as few bytes as hold them: two's complement for int64, unsigned for references.
    @Test func integersTakeTheirShortestWidth() throws {
        func fieldBytes(_ field: RowRecord.Field) -> [UInt8] {
            let row = RowRecord.encode(entityID: 0, rowVersion: 0, fields: [field])
            return Array(row.dropFirst(5))  // form, three one-byte varints, one field end
        }
        #expect(fieldBytes(.int64(0)) == [1, 0])
        #expect(fieldBytes(.int64(-2)) == [1, 0xFE])
        #expect(fieldBytes(.int64(127)) == [1, 0x7F])
        #expect(fieldBytes(.int64(128)) == [1, 0x80, 0x00])
        #expect(fieldBytes(.int64(-128)) == [1, 0x80])
        #expect(fieldBytes(.int64(-129)) == [1, 0x7F, 0xFF])
        #expect(fieldBytes(.int64(200_000)) == [1, 0x40, 0x0D, 0x03])
        #expect(fieldBytes(.int64(.max)) == [1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(fieldBytes(.int64(.min)) == [1, 0, 0, 0, 0, 0, 0, 0, 0x80])
        #expect(fieldBytes(.reference(5)) == [12, 5])
        #expect(fieldBytes(.reference(0)) == [12, 0])
        #expect(fieldBytes(.reference(255)) == [12, 0xFF])
        #expect(fieldBytes(.reference(256)) == [12, 0, 1])
        #expect(fieldBytes(.blobReference(0x0102)) == [11, 2, 1])
        #expect(fieldBytes(.blobReference(.max)) == [11] + Array(repeating: 0xFF, count: 8))
        // Every width decodes to its value, at the boundaries of each width.
        var values: [Int64] = [.min, .max, 0, -1]
        for width in 1...7 {
            let high = Int64(1) << (8 * width - 1)
            values += [high - 1, high, -high, -high - 1]
        }
        for value in values {
            let row = RowRecord.encode(
                entityID: 1, rowVersion: 1, fields: [.int64(value), .reference(UInt64(bitPattern: value))])
            #expect(try RowRecord.decodeAll(row).fields == [.int64(value), .reference(UInt64(bitPattern: value))])
        }
    }

    /// Field ends are 1, 2 or 4 bytes, the narrowest that holds the fields area's length; varints in the header.
    @Test func fieldEndWidthFollowsTheRowsSize() throws {
        for (length, width, form) in [
            (0, 1, 0x21), (253, 1, 0x21), (254, 2, 0x22), (65_533, 2, 0x22), (65_534, 4, 0x24),
        ] {
            let fields: [RowRecord.Field] = [.bytes(Array(repeating: 7, count: length)), .null]
            let row = RowRecord.encode(entityID: 300, rowVersion: 1 << 40, fields: fields)
            let header = try RowRecord.Header.decode(row)
            #expect(row[0] == UInt8(form), "fields of \(length + 2) bytes")
            // form, entityID in 2 bytes, rowVersion in 6, fieldCount in 1, then two ends.
            #expect(header.fieldsOffset == 1 + 2 + 6 + 1 + 2 * width)
            #expect(row.count == header.fieldsOffset + length + 2)
            #expect(try RowRecord.decodeAll(row).fields == fields)
            #expect(header == RowRecord.Header(entityID: 300, rowVersion: 1 << 40, fieldCount: 2))
        }
    }

    /// Only one encoding of a row decodes: a wider field end, a longer varint or integer is refused.
    @Test func nonCanonicalFormsAreRejected() {
        // Field ends of 2 bytes for a row that needs 1.
        let wide: [UInt8] = [0x22, 1, 1, 1, 2, 0, 1, 5]
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(wide) }))
        // Unknown end widths.
        for form: UInt8 in [0x20, 0x23, 0x28, 0x2F] {
            let row: [UInt8] = [form, 1, 1, 1, 1, 0]
            #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(row) }))
        }
        // entityID 1 as the two-byte varint 81 00.
        let longVarint: [UInt8] = [0x21, 0x81, 0x00, 1, 1, 1, 0]
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(longVarint) }))
        // entityID beyond 16 bits, fieldCount beyond 65,535.
        let bigEntity: [UInt8] = [0x21, 0x80, 0x80, 0x04, 1, 0]
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(bigEntity) }))
        // rowVersion beyond 64 bits, and 5 in 11 bytes (a tenth byte that goes on).
        let bigVersion: [UInt8] = [0x21, 1] + Array(repeating: 0xFF, count: 9) + [0x02, 0]
        let longVersion: [UInt8] = [0x21, 1, 0x85] + Array(repeating: 0x80, count: 9) + [0x01, 0]
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(longVersion) }))
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(bigVersion) }))
        // int64 5 in two bytes, -1 in two bytes, reference 5 in two bytes.
        for field: [UInt8] in [[1, 5, 0], [1, 0xFF, 0xFF], [12, 5, 0], [11, 0, 0]] {
            let bytes = row(withFieldBytes: field)
            #expect(
                isInvalidField(formatError { () throws(FormatError) in try RowRecord.decodeAll(bytes) }), "\(field)")
        }
    }

    @Test func everyFieldKindRoundTrips() throws {
        let bytes = RowRecord.encode(entityID: 0xBEEF, rowVersion: .max, fields: Self.everyKind)
        let (header, fields) = try RowRecord.decodeAll(bytes)
        #expect(header == RowRecord.Header(entityID: 0xBEEF, rowVersion: .max, fieldCount: Self.everyKind.count))
        #expect(fields == Self.everyKind)
        for field in Self.everyKind {
            let single = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [field])
            #expect(try RowRecord.decodeAll(single).fields == [field])
        }
    }

    @Test func fieldsCompareByTheirEncoding() {
        #expect(RowRecord.Field.double(.nan) == .double(.nan))
        #expect(RowRecord.Field.double(0.0) != .double(-0.0))
        #expect(RowRecord.Field.string("\u{E9}") != .string("e\u{301}"))  // equal Swift strings, different bytes
        #expect(RowRecord.Field.date(secondsSinceReferenceDate: 1) != .double(1))
        #expect(Set(Self.everyKind).count == Self.everyKind.count)
    }

    @Test func singleFieldReadsMatchTheWholeRow() throws {
        let bytes = RowRecord.encode(entityID: 3, rowVersion: 9, fields: Self.everyKind)
        for index in Self.everyKind.indices {
            #expect(try RowRecord.field(at: index, in: bytes) == Self.everyKind[index], "field \(index)")
        }
        try bytes.withUnsafeBytes { (buffer) throws in
            #expect(try RowRecord.field(at: 1, in: buffer) == .int64(.min))
            #expect(try RowRecord.Header.decode(buffer).fieldCount == Self.everyKind.count)
        }
    }

    /// `encode` lays the row out from its fields' sizes in one pass; the writer stages the fields: both must give the
    /// same bytes, for every kind of field and on both sides of each field end width.
    @Test func writerBuildsTheSameBytesAsEncode() {
        var rows: [[RowRecord.Field]] = [[], [.string("x"), .null, .reference(8)], Self.everyKind]
        for length in [252, 253, 254, 65_532, 65_533, 65_534] {
            rows.append([.bytes(Array(repeating: 7, count: length)), .null])
        }
        for (index, fields) in rows.enumerated() {
            let (entityID, rowVersion) = (UInt16(index * 100), UInt64(2) << index)
            var writer = RowRecord.Writer(entityID: entityID, rowVersion: rowVersion, fieldCount: fields.count)
            for field in fields { writer.append(field) }
            let encoded = RowRecord.encode(entityID: entityID, rowVersion: rowVersion, fields: fields)
            #expect(writer.finish() == encoded, "row \(index)")
        }
    }

    @Test func rowWithoutFieldsIsItsHeader() throws {
        let bytes = RowRecord.encode(entityID: 1, rowVersion: 2, fields: [])
        #expect(bytes == [0x21, 1, 2, 0])
        #expect(try RowRecord.decodeAll(bytes).fields.isEmpty)
        #expect(
            formatError { () throws(FormatError) in try RowRecord.field(at: 0, in: bytes) }.map(isInvalidField) == true)
    }

    @Test func headerDecodesWithoutReadingTheFields() throws {
        var bytes = RowRecord.encode(
            entityID: 0x1234, rowVersion: 0x0102_0304_0506_0708, fields: [.int64(1), .string("abc")])
        // form, entityID in 2 varint bytes, rowVersion (57 bits) in 9, fieldCount in 1, two 1-byte ends.
        bytes[15] = 0xFF  // damage field 0's tag: the header does not look at it
        let header = try RowRecord.Header.decode(bytes)
        #expect(header.entityID == 0x1234)
        #expect(header.rowVersion == 0x0102_0304_0506_0708)
        #expect(header.fieldCount == 2)
        #expect(header.fieldsOffset == 15)
        #expect(try RowRecord.field(at: 1, in: bytes) == .string("abc"))
        #expect(
            formatError { () throws(FormatError) in try RowRecord.field(at: 0, in: bytes) }.map(isInvalidField) == true)
    }

    @Test func unknownFormatVersionIsRejected() {
        for form: UInt8 in [0, 0x01, 0x11, 0x31, 0xF1] {
            var bytes = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.null])
            bytes[0] = form
            #expect(
                formatError { () throws(FormatError) in try RowRecord.decodeAll(bytes) }
                    == .unsupportedVersion(UInt32(form >> 4)))
        }
    }

    @Test func everyTruncationIsReportedAsTruncated() {
        let bytes = RowRecord.encode(
            entityID: 1, rowVersion: 1, fields: Self.everyKind.filter { $0.encodedSize < 1000 })
        for length in 0..<bytes.count {
            let prefix = Array(bytes[0..<length])
            let error = formatError { () throws(FormatError) in try RowRecord.decodeAll(prefix) }
            #expect(isTruncated(error), "cut to \(length): \(String(describing: error))")
            #expect(isTruncated(formatError { () throws(FormatError) in try RowRecord.field(at: 0, in: prefix) }))
        }
    }

    @Test func bytesAfterTheLastFieldAreRejected() {
        let bytes = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(5)]) + [0]
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.decodeAll(bytes) }))
        let empty = RowRecord.encode(entityID: 1, rowVersion: 1, fields: []) + [0]
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.Header.decode(empty) }))
    }

    @Test func fieldIndexOutsideTheRowIsRejected() {
        let bytes = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.null, .null])
        for index in [-1, 2, 1000, Int.max, Int.min] {
            #expect(
                isInvalidField(formatError { () throws(FormatError) in try RowRecord.field(at: index, in: bytes) }),
                "\(index)")
        }
    }

    /// A row of one field whose tag and payload are `field`, offsets made consistent.
    private func row(withFieldBytes field: [UInt8]) -> [UInt8] {
        precondition(field.count < 256)
        return [0x21, 1, 1, 1, UInt8(field.count)] + field
    }

    @Test func malformedFieldsAreRejected() {
        let malformed: [(String, [UInt8])] = [
            ("unknown tag 13", [13]),
            ("unknown tag 255", [0xFF, 0]),
            ("null with payload", [0, 0]),
            ("empty int64", [1]),
            ("long int64", [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ("short double", [2, 0]),
            ("long float", [3, 0, 0, 0, 0, 0]),
            ("empty boolean", [4]),
            ("boolean 2", [4, 2]),
            ("boolean 0xFF", [4, 0xFF]),
            ("string of invalid UTF-8", [5, 0xC3]),
            ("string with a surrogate", [5, 0xED, 0xA0, 0x80]),
            ("uri of invalid UTF-8", [10, 0xFF]),
            ("short date", [7, 0, 0, 0, 0]),
            ("short uuid", [8] + Array(repeating: 0, count: 15)),
            ("long uuid", [8] + Array(repeating: 0, count: 17)),
            ("decimal without header", [9, 0]),
            ("decimal of odd length", [9, 0, 0, 1]),
            ("decimal of 9 words", [9, 0, 0] + Array(repeating: 1, count: 18)),
            ("decimal with unknown flags", [9, 0, 0x04, 1, 0]),
            ("decimal with a zero top word", [9, 0, 0, 1, 0, 0, 0]),
            ("empty blob reference", [11]),
            ("long reference", [12] + Array(repeating: 1, count: 9)),
        ]
        for (name, field) in malformed {
            let bytes = row(withFieldBytes: field)
            #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.decodeAll(bytes) }), "\(name)")
            #expect(
                isInvalidField(formatError { () throws(FormatError) in try RowRecord.field(at: 0, in: bytes) }),
                "\(name)")
        }
    }

    @Test func offsetsThatDoNotIncreaseAreRejected() {
        var bytes = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(1), .int64(2), .int64(3)])
        #expect(bytes[4...6] == [2, 4, 6])  // the field ends, after form and three varints
        // field 1 ends where field 0 ends: an empty field (no tag).
        bytes[5] = 2
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.decodeAll(bytes) }))
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.field(at: 1, in: bytes) }))
        // field 1 ends before field 0 ends.
        bytes[5] = 1
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.field(at: 1, in: bytes) }))
        #expect(isInvalidField(formatError { () throws(FormatError) in try RowRecord.decodeAll(bytes) }))
        // field 0 ends past the row.
        var far = RowRecord.encode(entityID: 1, rowVersion: 1, fields: [.int64(1), .int64(2)])
        far[4] = 0xFF
        #expect(isTruncated(formatError { () throws(FormatError) in try RowRecord.field(at: 0, in: far) }))
        #expect(formatError { () throws(FormatError) in try RowRecord.field(at: 1, in: far) } != nil)
    }

    @Test func flippingAnyByteGivesATypedErrorOrADifferentRow() {
        let original = RowRecord.encode(
            entityID: 7, rowVersion: 3,
            fields: [
                .null, .int64(-5), .double(2.5), .float(1), .boolean(true), .string("héllo"), .bytes([1, 2, 3]),
                .date(secondsSinceReferenceDate: 86_400), .uuid(0x0123_4567_89AB_CDEF_0123_4567_89AB_CDEF),
                .decimal(.init(exponent: -2, isNegative: false, isCompact: true, mantissa: [12345])),
                .uri("https://a.b/c"), .blobReference(99), .reference(42),
            ])
        let decodedOriginal = try? RowRecord.decodeAll(original)
        var rejected = 0
        var different = 0
        for index in original.indices {
            for mask: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF] {
                var damaged = original
                damaged[index] ^= mask
                do {
                    let decoded = try RowRecord.decodeAll(damaged)
                    #expect(
                        decoded.header != decodedOriginal?.header || decoded.fields != decodedOriginal?.fields,
                        "byte \(index) ^ \(mask) decoded to the original row")
                    different += 1
                } catch {
                    rejected += 1
                }
                // Single-field reads of the damaged row must not trap either.
                for field in 0..<14 { _ = try? RowRecord.field(at: field, in: damaged) }
            }
        }
        #expect(rejected > 0 && different > 0)
        #expect(rejected + different == original.count * 9)
    }

    @Test func randomDamageNeverTraps() {
        let seed: UInt64 = 0x5EED_0001
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let original = RowRecord.encode(
            entityID: 1, rowVersion: 1, fields: Self.everyKind.filter { $0.encodedSize < 300 })
        for _ in 0..<2000 {
            var damaged = original
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let index = Int.random(in: damaged.indices, using: &random)
                damaged[index] = UInt8.random(in: 0...255, using: &random)
            }
            if Bool.random(using: &random) { damaged.removeLast(Int.random(in: 0...20, using: &random)) }
            _ = try? RowRecord.decodeAll(damaged)
            _ = try? RowRecord.field(at: Int.random(in: 0..<40, using: &random), in: damaged)
        }
    }
}

/// Exact conversion of `Decimal` to the row's decimal fields.
@Suite struct DecimalRowRecordTests {
    static let edgeCases: [Decimal] = [
        0, 1, -1, 10, 100, 1000,
        Decimal(string: "0.1")!, Decimal(string: "123.456")!, Decimal(string: "-123.456")!,
        Decimal(string: "3.0")!, Decimal(string: "1e-128")!, Decimal(string: "-1e127")!,
        Decimal(string: "12345678901234567890123456789012345678")!,
        Decimal(string: "0.00000000000000000000000000000000000001")!,
        .greatestFiniteMagnitude, .leastFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude, .pi, .nan,
        Decimal(Int64.max), Decimal(Int64.min), Decimal(UInt64.max),
        Decimal(string: "1.5")! * 2, Decimal(1) / Decimal(3), Decimal(string: "0.1")! + Decimal(string: "0.2")!,
    ]

    private func sameRepresentation(_ lhs: Decimal, _ rhs: Decimal) -> Bool {
        if lhs.isNaN || rhs.isNaN { return lhs.isNaN && rhs.isNaN }
        return lhs == rhs && lhs.exponent == rhs.exponent && lhs.significand == rhs.significand
            && lhs.description == rhs.description && lhs.sign == rhs.sign
    }

    @Test func everyDecimalComesBackWithTheSameRepresentation() {
        for decimal in Self.edgeCases {
            let bits = decimal.rowRecordBits
            let back = Decimal(rowRecordBits: bits)
            #expect(sameRepresentation(back, decimal), "\(decimal) -> \(bits) -> \(back)")
            #expect(back.rowRecordBits == bits, "\(decimal)")
        }
    }

    @Test func codingPathIsUsedAndMatchesFoundationsFields() throws {
        let bits = try #require(Decimal.bitsThroughCoding(Decimal(string: "-123.456")!))
        #expect(
            bits == RowRecord.DecimalBits(exponent: -3, isNegative: true, isCompact: true, mantissa: [0xE240, 0x0001]))
        #expect(try #require(Decimal.bitsThroughCoding(.nan)).isNaN)
        #expect(try #require(Decimal.bitsThroughCoding(0)).mantissa.isEmpty)
        #expect(Decimal.bitsThroughCoding(.greatestFiniteMagnitude)?.mantissa == Array(repeating: 0xFFFF, count: 8))
        for decimal in Self.edgeCases {
            #expect(Decimal.decimalThroughCoding(decimal.rowRecordBits) != nil, "\(decimal)")
        }
    }

    @Test func nonCompactRepresentationsRoundTripThroughCoding() throws {
        // 30 × 10^-1 ("3.0"), which Foundation's parser would compact to 3.
        let bits = RowRecord.DecimalBits(exponent: -1, isNegative: false, isCompact: false, mantissa: [30])
        let decimal = try #require(Decimal.decimalThroughCoding(bits))
        #expect(decimal == 3)
        #expect(decimal.exponent == -1)
        #expect(decimal.rowRecordBits == bits)
    }

    @Test func publicAPIFallbackKeepsTheExactValue() {
        for decimal in Self.edgeCases {
            let bits = Decimal.bitsThroughPublicAPI(decimal)
            let back = Decimal.decimalThroughPublicAPI(bits)
            if decimal.isNaN {
                #expect(back.isNaN)
            } else {
                #expect(back == decimal, "\(decimal) -> \(bits) -> \(back)")
                #expect(back.description == decimal.description, "\(decimal)")
            }
            // The fallback reads what the coding path wrote: the same value.
            let crossed = Decimal.decimalThroughPublicAPI(decimal.rowRecordBits)
            #expect(decimal.isNaN ? crossed.isNaN : crossed == decimal, "\(decimal)")
        }
    }

    @Test func decimalsRoundTripThroughARow() throws {
        let model = try ManagedObjectModel { Entity("Price") { Attribute("amount", .decimal) } }
        let coder = RowCoder(entity: try #require(model.entity(named: "Price")))
        for decimal in Self.edgeCases {
            let bytes = try coder.encode([.decimal(decimal)], rowVersion: 1)
            guard case .decimal(let back)?? = try coder.decode(bytes).values.first else {
                Issue.record("no decimal for \(decimal)")
                continue
            }
            #expect(sameRepresentation(back, decimal), "\(decimal)")
        }
    }
}

/// `RowCoder`: attribute values of an entity to row records and back.
@Suite struct RowCoderTests {
    struct Point: Codable, Hashable, Sendable {
        var x: Int
        var y: Int
    }

    static let registry: ValueTransformerRegistry = {
        let registry = ValueTransformerRegistry()
        registry.register(CodableValueTransformer<Point>(), named: "Point")
        return registry
    }()

    static func everyTypeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Everything") {
                Attribute("i16", .integer16)
                Attribute("i32", .integer32)
                Attribute("i64", .integer64)
                Attribute("decimal", .decimal)
                Attribute("double", .double)
                Attribute("float", .float)
                Attribute("string", .string)
                Attribute("boolean", .boolean)
                Attribute("date", .date)
                Attribute("data", .binaryData).allowsExternalStorage()
                Attribute("uuid", .uuid)
                Attribute("uri", .uri)
                Attribute("point", .transformable, valueTransformerName: "Point")
                Attribute("scratch", .undefined).transient()
            }
            Entity("Other") { Attribute("i16", .integer16) }
        }
    }

    static let values: [AttributeValue?] = [
        .integer(-32768), .integer(2_147_483_647), .integer(.min), .decimal(Decimal(string: "-98765.4321")!),
        .double(-0.0), .float(3.25), .string("Zoë 🚀"), .boolean(true),
        .date(Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)), .data(Data([0, 1, 2, 255])),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .uri(URL(string: "https://example.com/x?y=1")!),
        .object(AnyHashableSendable(Point(x: 1, y: -2))),
    ]

    @Test func everyAttributeTypeRoundTrips() throws {
        let entity = try #require(try Self.everyTypeModel().entity(named: "Everything"))
        let coder = RowCoder(entity: entity, transformers: Self.registry)
        let bytes = try coder.encode(Self.values, rowVersion: 12)
        let row = try coder.decode(bytes)
        #expect(row.rowVersion == 12)
        #expect(row.values == Self.values)
        #expect(try RowRecord.Header.decode(bytes).entityID == entity.entityID)
    }

    @Test func aRowDecodedInPlaceHasTheValuesOfTheArrayDecodeAndItsBlobReferencesApart() throws {
        let entity = try #require(try Self.everyTypeModel().entity(named: "Everything"))
        let coder = RowCoder(entity: entity, transformers: Self.registry)
        let bytes = try coder.encode(Self.values, rowVersion: 12)
        let whole = try bytes.withUnsafeBytes { try coder.decodeRow($0, header: try RowRecord.Header.decode($0)) }
        #expect(whole.values == (try coder.decode(bytes).values))
        #expect(whole.external.isEmpty)
        // The binary value kept as a blob: a reference apart, no value.
        var fields = try coder.fields(for: Self.values)
        fields[9] = .blobReference(77)
        let withBlob = RowRecord.encode(entityID: entity.entityID, rowVersion: 3, fields: fields)
        let decoded = try withBlob.withUnsafeBytes {
            try coder.decodeRow($0, header: try RowRecord.Header.decode($0))
        }
        #expect(decoded.external == [9: 77])
        var expected = Self.values
        expected[9] = nil
        #expect(decoded.values == expected)
        // A row with a field too few is not a row of the entity.
        let short = RowRecord.encode(entityID: entity.entityID, rowVersion: 3, fields: Array(fields.dropLast()))
        #expect(throws: RowCodingError.self) {
            try short.withUnsafeBytes { try coder.decodeRow($0, header: try RowRecord.Header.decode($0)) }
        }
    }

    @Test func fieldsUseTheDocumentedKinds() throws {
        let entity = try #require(try Self.everyTypeModel().entity(named: "Everything"))
        let fields = try RowCoder(entity: entity, transformers: Self.registry).fields(for: Self.values)
        #expect(
            fields.map(\.tag) == [
                .int64, .int64, .int64, .decimal, .double, .float, .string, .boolean, .date, .bytes, .uuid, .uri,
                .bytes,
            ])
        #expect(fields[8] == .date(secondsSinceReferenceDate: 123_456_789.123_456_789))
        #expect(fields[10] == .uuid(0xE621_E1F8_C36C_495A_93FC_0C24_7A3E_6E5F))
        #expect(fields[11] == .uri("https://example.com/x?y=1"))
        #expect(fields[12] == .bytes(Array(#"{"x":1,"y":-2}"#.utf8)))
    }

    @Test func nilValuesBecomeNullFields() throws {
        let entity = try #require(try Self.everyTypeModel().entity(named: "Everything"))
        let coder = RowCoder(entity: entity, transformers: Self.registry)
        let nils = [AttributeValue?](repeating: nil, count: entity.persistentAttributes.count)
        #expect(try coder.fields(for: nils).allSatisfy { $0 == .null })
        #expect(try coder.decode(coder.encode(nils, rowVersion: 1)).values == nils)
    }

    @Test func singleValueIsReadFromTheEntitysAndItsDescendantsRows() throws {
        let model = try CompanyModel.make()
        let employee = try #require(model.entity(named: "Employee"))
        let manager = try #require(model.entity(named: "Manager"))
        let department = try #require(model.entity(named: "Department"))
        let managerRow = try RowCoder(entity: manager).encode(
            [.string("Grace"), .integer(10), nil, .double(2.5)], rowVersion: 1)
        let employeeCoder = RowCoder(entity: employee)
        #expect(
            try employeeCoder.value(of: try #require(employee.attributesByName["name"]), in: managerRow)
                == .string("Grace"))
        #expect(try employeeCoder.value(of: try #require(employee.attributesByName["photo"]), in: managerRow) == nil)
        #expect(
            try RowCoder(entity: manager).value(of: try #require(manager.attributesByName["bonus"]), in: managerRow)
                == .double(2.5))
        let departmentRow = try RowCoder(entity: department).encode([.string("R&D"), .double(1)], rowVersion: 1)
        #expect(throws: RowCodingError.entityMismatch(expected: employee.entityID, found: department.entityID)) {
            try employeeCoder.value(of: try #require(employee.attributesByName["name"]), in: departmentRow)
        }
        #expect(throws: RowCodingError.entityMismatch(expected: employee.entityID, found: manager.entityID)) {
            try employeeCoder.decode(managerRow)
        }
    }

    @Test func damagedRowsAreFormatErrors() throws {
        let entity = try #require(try CompanyModel.make().entity(named: "Department"))
        let coder = RowCoder(entity: entity)
        let bytes = try coder.encode([.string("R&D"), .double(1)], rowVersion: 1)
        #expect(throws: RowCodingError.format(.truncated(needed: 13, available: 12))) {
            try coder.decode(Array(bytes.dropLast()))
        }
        #expect(throws: RowCodingError.format(.unsupportedVersion(9))) {
            try coder.value(of: entity.attributesByName["name"]!, in: [0x91] + bytes.dropFirst())
        }
    }

    @Test func rowsThatDoNotFitTheEntityAreRejected() throws {
        let model = try Self.everyTypeModel()
        let other = try #require(model.entity(named: "Other"))
        let coder = RowCoder(entity: other)
        func row(_ fields: [RowRecord.Field]) -> [UInt8] {
            RowRecord.encode(entityID: other.entityID, rowVersion: 1, fields: fields)
        }
        #expect(throws: RowCodingError.fieldCountMismatch(expected: 1, found: 2)) {
            try coder.decode(row([.null, .null]))
        }
        #expect(throws: RowCodingError.fieldTypeMismatch(attribute: "i16", expected: .integer16, found: .string)) {
            try coder.decode(row([.string("1")]))
        }
        #expect(throws: RowCodingError.integerOutOfRange(attribute: "i16", value: 40_000)) {
            try coder.decode(row([.int64(40_000)]))
        }
    }

    @Test func fieldProblemsAreNamed() throws {
        let entity = try #require(try Self.everyTypeModel().entity(named: "Everything"))
        let uri = try #require(entity.attributesByName["uri"])
        let data = try #require(entity.attributesByName["data"])
        let point = try #require(entity.attributesByName["point"])
        #expect(throws: RowCodingError.invalidURI(attribute: "uri", string: "")) {
            try RowCoder.value(from: .uri(""), of: uri)
        }
        #expect(throws: RowCodingError.unresolvedBlobReference(attribute: "data", blobID: 77)) {
            try RowCoder.value(from: .blobReference(77), of: data)
        }
        #expect(throws: RowCodingError.transformerNotRegistered(attribute: "point", name: "Point")) {
            try RowCoder.value(from: .bytes([]), of: point, transformers: ValueTransformerRegistry())
        }
        #expect(throws: RowCodingError.self) {
            try RowCoder.value(from: .bytes(Array("not json".utf8)), of: point, transformers: Self.registry)
        }
    }

    @Test func valuesThatDoNotFitTheirAttributeAreRejected() throws {
        let entity = try #require(try Self.everyTypeModel().entity(named: "Everything"))
        let string = try #require(entity.attributesByName["string"])
        let point = try #require(entity.attributesByName["point"])
        #expect(throws: RowCodingError.valueTypeMismatch(attribute: "string", expected: .string)) {
            try RowCoder.field(for: .integer(1), of: string)
        }
        #expect(throws: RowCodingError.transformerNotRegistered(attribute: "point", name: "Point")) {
            try RowCoder.field(
                for: .object(AnyHashableSendable(Point(x: 0, y: 0))), of: point,
                transformers: ValueTransformerRegistry())
        }
        do {
            _ = try RowCoder.field(
                for: .object(AnyHashableSendable("a string")), of: point, transformers: Self.registry)
            Issue.record("a string went through the Point transformer")
        } catch .transformationFailed(let attribute, let name, _) {
            #expect(attribute == "point" && name == "Point")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func datesAndUUIDsRoundTripExactly() throws {
        let model = try ManagedObjectModel {
            Entity("E") {
                Attribute("d", .date); Attribute("u", .uuid)
            }
        }
        let coder = RowCoder(entity: try #require(model.entity(named: "E")))
        // 0.1 s after the reference date would come back as 0.10000002384185791 through a 1970 epoch.
        let nearReference = Date(timeIntervalSinceReferenceDate: 0.1)
        #expect(
            try coder.decode(coder.encode([.date(nearReference), nil], rowVersion: 1)).values == [
                .date(nearReference), nil,
            ])
        var random = RepeatableRandomNumberGenerator(seed: 42)
        for _ in 0..<500 {
            let date = Date(
                timeIntervalSinceReferenceDate: Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF)
                    * (Bool.random(using: &random) ? 1 : -1))
            let uuid = UUID(bigEndianNumber: UInt128(random.next()) << 64 | UInt128(random.next()))
            let back = try coder.decode(coder.encode([.date(date), .uuid(uuid)], rowVersion: 1)).values
            #expect(back == [.date(date), .uuid(uuid)])
            #expect(
                uuid.uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                    == String(StableHasher.hex(uuid.bigEndianNumber)))
        }
    }
}
