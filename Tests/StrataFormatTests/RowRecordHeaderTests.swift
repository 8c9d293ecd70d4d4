import StrataTestSupport
import Testing

@testable import StrataFormat

/// `RowRecord.Header.decode`'s inlined road for rows of one-byte varints and one-byte field ends (what a table scan
/// decodes on every row): it accepts exactly the rows the full decoder accepts and gives the same header, and every
/// row it does not take, damaged or not, gets the full decoder's answer, error included.
@Suite struct RowRecordHeaderTests {
    /// The outcome of a decode, comparable: the header's every part, or the error.
    private enum Outcome: Equatable {
        case header(entityID: UInt16, rowVersion: UInt64, fieldCount: Int, fieldsOffset: Int)
        case error(FormatError)
    }

    private static func outcome(_ body: () throws(FormatError) -> RowRecord.Header) -> Outcome {
        do {
            let header = try body()
            return .header(
                entityID: header.entityID, rowVersion: header.rowVersion, fieldCount: header.fieldCount,
                fieldsOffset: header.fieldsOffset)
        } catch {
            return .error(error)
        }
    }

    /// Both decoders on the same bytes.
    private static func outcomes(_ bytes: [UInt8]) -> (decoded: Outcome, inFull: Outcome) {
        bytes.withUnsafeBytes { buffer in
            (
                outcome { () throws(FormatError) in try RowRecord.Header.decode(buffer) },
                outcome { () throws(FormatError) in try RowRecord.Header.decodeInFull(buffer) }
            )
        }
    }

    /// Rows on both sides of each of the inlined road's limits: entity IDs, versions and field counts of one varint
    /// byte or two, no fields, and fields areas that need one-byte ends or two.
    static let rows: [[UInt8]] = {
        var rows: [[UInt8]] = []
        for entityID: UInt16 in [0, 1, 127, 128, 300] {
            for rowVersion: UInt64 in [0, 1, 127, 128, 1 << 40] {
                for fieldCount in [0, 1, 3, 127, 128] {
                    let fields = [RowRecord.Field](repeating: .int64(7), count: fieldCount)
                    rows.append(RowRecord.encode(entityID: entityID, rowVersion: rowVersion, fields: fields))
                }
            }
        }
        for length in [0, 100, 250, 251, 252, 253, 254, 300] {
            let fields: [RowRecord.Field] = [.int64(1), .bytes(Array(repeating: 9, count: length))]
            rows.append(RowRecord.encode(entityID: 2, rowVersion: 1, fields: fields))
        }
        return rows
    }()

    @Test func everyRowDecodesAsTheFullDecoderDecodesIt() {
        for row in Self.rows {
            let (decoded, inFull) = Self.outcomes(row)
            #expect(decoded == inFull, "row \(row.prefix(8))...")
            if case .error(let error) = decoded { Issue.record("a valid row was refused: \(error)") }
        }
    }

    /// The form the inlined road tests for is format version 2 with one-byte ends.
    @Test func theInlinedFormIsTheWritersOneByteForm() {
        #expect(RowRecord.form(endWidth: 1) == 0x21)
        let row = RowRecord.encode(entityID: 2, rowVersion: 1, fields: [.int64(100_000), .string("Ada")])
        #expect(row[0] == 0x21)
    }

    /// Every byte of short rows damaged every way, and every truncation and extension: the same header or the same
    /// error from both.
    @Test func damagedRowsGetTheFullDecodersAnswer() {
        let originals = [
            RowRecord.encode(entityID: 2, rowVersion: 1, fields: [.int64(100_000), .null, .string("Ada")]),
            RowRecord.encode(entityID: 127, rowVersion: 127, fields: [.int64(-1)]),
            RowRecord.encode(entityID: 1, rowVersion: 5, fields: []),
        ]
        for original in originals {
            for index in original.indices {
                for mask: UInt8 in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF] {
                    var damaged = original
                    damaged[index] ^= mask
                    let (decoded, inFull) = Self.outcomes(damaged)
                    #expect(decoded == inFull, "byte \(index) ^ \(mask) of \(original)")
                }
            }
            for length in 0...original.count {
                let (decoded, inFull) = Self.outcomes(Array(original.prefix(length)))
                #expect(decoded == inFull, "\(original) cut to \(length)")
            }
            for extra: [UInt8] in [[0], [0x21], [1, 2, 3]] {
                let (decoded, inFull) = Self.outcomes(original + extra)
                #expect(decoded == inFull, "\(original) + \(extra)")
            }
        }
    }

    @Test func randomRowsGetTheFullDecodersAnswer() {
        let seed: UInt64 = 0x5EED_0021
        var random = RepeatableRandomNumberGenerator(seed: seed)
        for _ in 0..<20_000 {
            // A one-byte form and three bytes below 0x80 half of the time, so that the inlined road's later tests
            // (the field count, the last end) meet random bytes.
            let count = Int.random(in: 0...24, using: &random)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            if bytes.count >= 4, Bool.random(using: &random) {
                bytes[0] = 0x21
                for index in 1...3 { bytes[index] &= 0x7F }
                bytes[3] %= 8
            }
            let (decoded, inFull) = Self.outcomes(bytes)
            #expect(decoded == inFull, "seed \(seed): \(bytes)")
        }
    }
}
