import Foundation
import StrataFormat

// Exact conversion between `Decimal` and the row format's `RowRecord.DecimalBits`.
//
// `Decimal`'s fields (`_exponent`, `_length`, `_isNegative`, `_isCompact`, `_mantissa`) are public on
// Apple platforms but internal in swift-foundation (Linux), and every public initializer normalizes
// (compacts) the mantissa. The one public, portable way to read and rebuild the exact fields is
// `Decimal`'s own `Codable` conformance, which since NSDecimal's first archives encodes exactly those
// fields under the keys `exponent`, `length`, `isNegative`, `isCompact` and `mantissa` (8 words). So:
//
// 1. To read the fields, encode the decimal with `FieldCapturingEncoder`, which only records values.
// 2. To rebuild a decimal, decode it with `FieldReplayingDecoder`, which hands those values back.
// 3. Should a future Foundation encode differently, both steps fall back to `sign`, `exponent`,
//    `significand` and string parsing: still the exact value, in Foundation's compact form.

extension Decimal {
    /// The decimal's exact representation for a row: every `Decimal` in normal form (the one every
    /// Foundation operation produces) comes back bit for bit; any other comes back as an equal value.
    var rowRecordBits: RowRecord.DecimalBits {
        Self.bitsThroughCoding(self) ?? Self.bitsThroughPublicAPI(self)
    }

    /// The decimal a row's representation describes, exactly.
    init(rowRecordBits bits: RowRecord.DecimalBits) {
        self = Self.decimalThroughCoding(bits) ?? Self.decimalThroughPublicAPI(bits)
    }

    // MARK: - Through Codable (exact representation)

    static func bitsThroughCoding(_ decimal: Decimal) -> RowRecord.DecimalBits? {
        let fields = CodedFields()
        do {
            try decimal.encode(to: FieldCapturingEncoder(fields: fields))
        } catch {
            return nil
        }
        guard case .int(let exponent)? = fields.values["exponent"], let exponent8 = Int8(exactly: exponent),
            case .int(let length)? = fields.values["length"], (0...8).contains(length),
            case .bool(let isNegative)? = fields.values["isNegative"],
            case .bool(let isCompact)? = fields.values["isCompact"],
            fields.mantissa.count == 8
        else { return nil }
        var words = Array(fields.mantissa.prefix(Int(length)))
        while words.last == 0 { words.removeLast() }
        return RowRecord.DecimalBits(exponent: exponent8, isNegative: isNegative, isCompact: isCompact, mantissa: words)
    }

    static func decimalThroughCoding(_ bits: RowRecord.DecimalBits) -> Decimal? {
        let fields = CodedFields()
        fields.values = [
            "exponent": .int(Int64(bits.exponent)), "length": .int(Int64(bits.mantissa.count)),
            "isNegative": .bool(bits.isNegative), "isCompact": .bool(bits.isCompact),
        ]
        fields.mantissa = bits.mantissa + Array(repeating: 0, count: 8 - bits.mantissa.count)
        return try? Decimal(from: FieldReplayingDecoder(fields: fields))
    }

    // MARK: - Through the public API (exact value, compact representation)

    static func bitsThroughPublicAPI(_ decimal: Decimal) -> RowRecord.DecimalBits {
        if decimal.isNaN { return RowRecord.DecimalBits(exponent: 0, isNegative: true, isCompact: false, mantissa: []) }
        // The significand is the mantissa with exponent 0: its description is the mantissa's digits.
        var mantissa = UInt128(decimal.significand.description) ?? 0
        let isCompact = mantissa == 0 || mantissa % 10 != 0
        var words: [UInt16] = []
        while mantissa != 0 {
            words.append(UInt16(truncatingIfNeeded: mantissa))
            mantissa >>= 16
        }
        return RowRecord.DecimalBits(
            exponent: Int8(clamping: decimal.exponent), isNegative: !words.isEmpty && decimal.sign == .minus,
            isCompact: isCompact, mantissa: words)
    }

    static func decimalThroughPublicAPI(_ bits: RowRecord.DecimalBits) -> Decimal {
        if bits.isNaN { return .nan }
        var mantissa: UInt128 = 0
        for word in bits.mantissa.reversed() { mantissa = mantissa << 16 | UInt128(word) }
        if mantissa == 0 { return Decimal() }
        // Parsing digits that fit in 128 bits is exact; the exponent then scales without rounding.
        let significand = Decimal(string: String(mantissa)) ?? .nan
        return Decimal(sign: bits.isNegative ? .minus : .plus, exponent: Int(bits.exponent), significand: significand)
    }
}

// MARK: - A minimal encoder and decoder for Decimal's Codable fields

/// A value `Decimal` encodes: every field is an integer or a Boolean.
private enum CodedValue {
    case int(Int64)
    case bool(Bool)
}

/// The fields captured from, or replayed to, `Decimal`'s `Codable` conformance.
private final class CodedFields {
    var values: [String: CodedValue] = [:]
    var mantissa: [UInt16] = []
}

/// Thrown for any use of the coding containers that `Decimal`'s conformance does not make.
private struct UnexpectedCoding: Error {}

private struct FieldCapturingEncoder: Encoder {
    let fields: CodedFields
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedCapture(fields: fields))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { MantissaCapture(fields: fields, isMantissa: false) }
    func singleValueContainer() -> any SingleValueEncodingContainer { RejectingSingleValue() }
}

private struct KeyedCapture<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let fields: CodedFields
    var codingPath: [any CodingKey] { [] }

    private func store(_ value: CodedValue, _ key: Key) { fields.values[key.stringValue] = value }
    private func store<T: BinaryInteger>(_ value: T, _ key: Key) throws {
        guard let value = Int64(exactly: value) else { throw UnexpectedCoding() }
        store(.int(value), key)
    }

    mutating func encodeNil(forKey key: Key) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { store(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Double, forKey key: Key) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Float, forKey key: Key) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try store(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try store(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw UnexpectedCoding() }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedCapture<NestedKey>(fields: CodedFields()))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        MantissaCapture(fields: fields, isMantissa: key.stringValue == "mantissa")
    }
    mutating func superEncoder() -> any Encoder { FieldCapturingEncoder(fields: CodedFields()) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { FieldCapturingEncoder(fields: CodedFields()) }
}

private struct MantissaCapture: UnkeyedEncodingContainer {
    let fields: CodedFields
    let isMantissa: Bool
    var codingPath: [any CodingKey] { [] }
    var count: Int { fields.mantissa.count }

    private func append(_ word: UInt16) throws {
        guard isMantissa else { throw UnexpectedCoding() }
        fields.mantissa.append(word)
    }

    mutating func encodeNil() throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Bool) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: String) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Double) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Float) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int8) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int16) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int32) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int64) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt8) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt16) throws { try append(value) }
    mutating func encode(_ value: UInt32) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt64) throws { throw UnexpectedCoding() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw UnexpectedCoding() }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedCapture<NestedKey>(fields: CodedFields()))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        MantissaCapture(fields: CodedFields(), isMantissa: false)
    }
    mutating func superEncoder() -> any Encoder { FieldCapturingEncoder(fields: CodedFields()) }
}

private struct RejectingSingleValue: SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil() throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Bool) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: String) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Double) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Float) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int8) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int16) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int32) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: Int64) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt8) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt16) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt32) throws { throw UnexpectedCoding() }
    mutating func encode(_ value: UInt64) throws { throw UnexpectedCoding() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw UnexpectedCoding() }
}

private struct FieldReplayingDecoder: Decoder {
    let fields: CodedFields
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedReplay(fields: fields))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw UnexpectedCoding() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw UnexpectedCoding() }
}

private struct KeyedReplay<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: CodedFields
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { fields.values.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { fields.values[key.stringValue] != nil || key.stringValue == "mantissa" }

    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        guard case .int(let value)? = fields.values[key.stringValue], let result = T(exactly: value) else {
            throw UnexpectedCoding()
        }
        return result
    }

    func decodeNil(forKey key: Key) throws -> Bool { false }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard case .bool(let value)? = fields.values[key.stringValue] else { throw UnexpectedCoding() }
        return value
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { throw UnexpectedCoding() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw UnexpectedCoding() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw UnexpectedCoding() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { throw UnexpectedCoding() }
    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw UnexpectedCoding()
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        guard key.stringValue == "mantissa" else { throw UnexpectedCoding() }
        return MantissaReplay(words: fields.mantissa)
    }
    func superDecoder() throws -> any Decoder { throw UnexpectedCoding() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw UnexpectedCoding() }
}

private struct MantissaReplay: UnkeyedDecodingContainer {
    let words: [UInt16]
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var count: Int? { words.count }
    var isAtEnd: Bool { currentIndex >= words.count }

    init(words: [UInt16]) { self.words = words }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode(_ type: Bool.Type) throws -> Bool { throw UnexpectedCoding() }
    mutating func decode(_ type: String.Type) throws -> String { throw UnexpectedCoding() }
    mutating func decode(_ type: Double.Type) throws -> Double { throw UnexpectedCoding() }
    mutating func decode(_ type: Float.Type) throws -> Float { throw UnexpectedCoding() }
    mutating func decode(_ type: Int.Type) throws -> Int { throw UnexpectedCoding() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { throw UnexpectedCoding() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { throw UnexpectedCoding() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { throw UnexpectedCoding() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { throw UnexpectedCoding() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { throw UnexpectedCoding() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { throw UnexpectedCoding() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        guard !isAtEnd else { throw UnexpectedCoding() }
        defer { currentIndex += 1 }
        return words[currentIndex]
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { throw UnexpectedCoding() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { throw UnexpectedCoding() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw UnexpectedCoding() }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw UnexpectedCoding()
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw UnexpectedCoding() }
    mutating func superDecoder() throws -> any Decoder { throw UnexpectedCoding() }
}
