/// The order-preserving encoding of secondary-index keys (FORMAT.md, "Index keys").
///
/// A key is a list of 1 to ``maximumParts`` row-record fields; its encoding is the concatenation of each
/// part's encoding, and two encodings compare bytewise (unsigned, shorter-is-smaller on a common prefix)
/// exactly as the keys compare part by part in value order. Every part is self-delimiting, so the encoding
/// of a key's first parts is a byte prefix of the whole key's: prefix scans are byte-prefix scans.
///
/// ```
/// part := type:u8 payload          type = the field's RowRecord tag (null 0 sorts first)
/// ```
///
/// | type | payload |
/// | --- | --- |
/// | null (0) | none |
/// | int64 (1) | 8 bytes big-endian, sign bit flipped |
/// | double (2), date (7) | 8 bytes big-endian: IEEE bits, all flipped when negative, else the sign bit set |
/// | float (3) | 4 bytes, as double |
/// | boolean (4) | 1 byte, 0 or 1 |
/// | string (5), bytes (6), uri (10) | the bytes with 0x00 escaped as `00 FF`, then the terminator `00 00` |
/// | uuid (8) | 16 bytes, RFC 4122 order |
/// | decimal (9) | class byte (1 negative, 2 zero, 3 positive, 4 NaN), then for nonzero numbers a biased exponent and digits |
/// | blobReference (11), reference (12) | 8 bytes big-endian |
///
/// Normalisation (the only loss in a round trip): `-0.0` becomes `0.0` and every NaN the canonical quiet
/// NaN (doubles, floats, dates); decimals lose trailing zeros and their compact flag (`1.50` and `1.5` are one
/// key). Values of different types order by type byte, not by value. Decoding takes untrusted bytes: every
/// failure is a ``FormatError``, and only canonical encodings decode, so `encode(decode(b)) == b`.
///
/// An index **entry**, as stored in an index tree, is the encoded key followed by the row ID (8 bytes,
/// big-endian): entries are unique while keys repeat, and entries of one key come in row-ID order.
///
/// For example:
///
///     let key = IndexKey.encode([.string("Lovelace"), .int64(36)])
///     let entry = IndexKey.entry(key: key, rowID: 7)
///     let (fields, row) = try IndexKey.decodeEntry(entry)   // ([.string("Lovelace"), .int64(36)], 7)
public enum IndexKey {
    /// The most parts (fields) an index key has.
    public static let maximumParts = 16
    /// The bytes of the row ID that ends every entry.
    public static let rowIDSize = 8

    /// Decimal class bytes, in value order.
    static let decimalNegative: UInt8 = 1
    static let decimalZero: UInt8 = 2
    static let decimalPositive: UInt8 = 3
    static let decimalNaN: UInt8 = 4
    /// The exponent of a nonzero decimal (value = 0.d1d2…dn × 10^E) is stored as E + this, big-endian.
    static let decimalExponentBias = 0x8000
    /// A 128-bit mantissa has at most 39 decimal digits.
    static let maximumDecimalDigits = 39

    // MARK: - Encoding

    /// Encodes a key.
    ///
    /// - Parameter parts: 1 to ``maximumParts`` fields (a precondition).
    /// - Returns: the key's bytes.
    public static func encode(_ parts: [RowRecord.Field]) -> [UInt8] {
        precondition(!parts.isEmpty && parts.count <= maximumParts, "an index key has 1...16 parts")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 * parts.count)
        for part in parts { append(part, to: &bytes) }
        return bytes
    }

    /// Encodes a prefix of a key: 0 to ``maximumParts`` fields (a precondition). An empty prefix is no bytes.
    public static func encodePrefix(_ parts: [RowRecord.Field]) -> [UInt8] {
        precondition(parts.count <= maximumParts, "an index key has at most 16 parts")
        var bytes: [UInt8] = []
        for part in parts { append(part, to: &bytes) }
        return bytes
    }

    /// Appends the encoding of one part.
    public static func append(_ part: RowRecord.Field, to bytes: inout [UInt8]) {
        bytes.append(part.tag.rawValue)
        switch part {
        case .null: break
        case .int64(let value): appendBigEndian(UInt64(bitPattern: value) ^ (1 << 63), to: &bytes)
        case .double(let value), .date(let value): appendBigEndian(orderedBits(value), to: &bytes)
        case .float(let value): appendBigEndian(orderedBits(value), to: &bytes)
        case .boolean(let value): bytes.append(value ? 1 : 0)
        case .string(let value), .uri(let value): appendEscaped(value.utf8, to: &bytes)
        case .bytes(let value): appendEscaped(value, to: &bytes)
        case .uuid(let value):
            appendBigEndian(UInt64(truncatingIfNeeded: value >> 64), to: &bytes)
            appendBigEndian(UInt64(truncatingIfNeeded: value), to: &bytes)
        case .decimal(let value): appendDecimal(value, to: &bytes)
        case .blobReference(let value), .reference(let value): appendBigEndian(value, to: &bytes)
        }
    }

    /// Encodes the key of a row: the fields at `positions`, a position at or past the row's field count
    /// counting as null.
    ///
    /// - Parameters:
    ///   - positions: field positions, each `0...65534`.
    ///   - row: a whole row record whose header is `header`.
    ///   - header: the row's header, from ``RowRecord/Header/decode(_:)-(UnsafeRawBufferPointer)``.
    ///   - bytes: where the key is appended.
    /// - Throws: the ``FormatError`` of a field that does not decode.
    public static func appendKey(
        fields positions: [Int], of row: UnsafeRawBufferPointer, header: RowRecord.Header, to bytes: inout [UInt8]
    ) throws(FormatError) {
        for position in positions {
            if position >= header.fieldCount {
                bytes.append(RowRecord.Tag.null.rawValue)
                continue
            }
            let field = UnsafeRawBufferPointer(rebasing: row[try header.span(ofField: position, in: row)])
            if try !appendIntegerPart(field, index: position, to: &bytes) {
                append(try RowRecord.decodeField(field, index: position), to: &bytes)
            }
        }
    }

    /// Appends the part of an integer field (int64, reference, blob reference: the keys of most indexes) read straight
    /// from its compact bytes, checked as ``RowRecord/decodeField(_:index:)`` checks them, without making a
    /// ``RowRecord/Field`` first; false for a field of another type.
    @inline(__always)
    private static func appendIntegerPart(
        _ field: UnsafeRawBufferPointer, index: Int, to bytes: inout [UInt8]
    ) throws(FormatError) -> Bool {
        guard let rawTag = field.first else { return false }
        let payload = UnsafeRawBufferPointer(rebasing: field[1...])
        let ordered: UInt64
        switch rawTag {
        case RowRecord.Tag.int64.rawValue:
            ordered = UInt64(bitPattern: try CompactInteger.readSigned(payload, field: index)) ^ (1 << 63)
        case RowRecord.Tag.reference.rawValue, RowRecord.Tag.blobReference.rawValue:
            ordered = try CompactInteger.readUnsigned(payload, field: index)
        default: return false
        }
        bytes.append(rawTag)
        appendBigEndian(ordered, to: &bytes)
        return true
    }

    /// Checks the fields at `positions` of a row as ``appendKey(fields:of:header:to:)`` decodes them, without encoding
    /// the key, and returns a length the key it would encode never exceeds: how recovery checks a row whose entry is
    /// made later (a string's bound counts every byte as escaped).
    ///
    /// - Throws: a ``FormatError`` exactly when ``appendKey(fields:of:header:to:)`` throws one for the same row.
    public static func keyLengthBound(
        fields positions: [Int], of row: UnsafeRawBufferPointer, header: RowRecord.Header
    ) throws(FormatError) -> Int {
        var bound = 0
        for position in positions {
            guard position < header.fieldCount else {
                bound &+= 1
                continue
            }
            let (tag, _) = try RowRecord.checkField(at: position, in: row, header: header)
            switch tag {
            case .null: bound &+= 1
            case .boolean: bound &+= 2
            case .int64, .double, .float, .date, .reference, .blobReference: bound &+= 9
            case .uuid: bound &+= 17
            // Sign, exponent (2), at most 39 digits of a 128-bit mantissa and the end byte, after the tag.
            case .decimal: bound &+= 44
            case .string, .uri, .bytes:
                // Safe: the span was checked by checkField; it holds the tag and the payload.
                let payload = try header.span(ofField: position, in: row).count &- 1
                bound &+= 3 &+ 2 &* payload
            }
        }
        return bound
    }

    /// An index entry: a key followed by a row ID (big-endian).
    public static func entry(key: [UInt8], rowID: UInt64) -> [UInt8] {
        var bytes = key
        appendBigEndian(rowID, to: &bytes)
        return bytes
    }

    /// The smallest byte string greater than every string that starts with `prefix`, or nil when there is
    /// none (the prefix is empty or all `FF`).
    public static func prefixSuccessor(_ prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    /// The shortest byte string `s` with `lower < s <= upper` (`lower < upper` is a precondition): a
    /// separator for an internal node that divides the two.
    public static func shortestSeparator(after lower: [UInt8], upTo upper: [UInt8]) -> [UInt8] {
        var index = 0
        while index < lower.count, index < upper.count, lower[index] == upper[index] { index += 1 }
        precondition(index < upper.count, "separator bounds out of order")
        return Array(upper[...index])
    }

    /// Compares two byte strings: negative, zero or positive as `a` sorts before, with or after `b`.
    @inline(__always)
    public static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in compare(a, b) } }
    }

    /// ``compare(_:_:)`` of bytes where they lie (entries and separators of mapped pages).
    @inline(__always)
    public static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        compare(a.assumingMemoryBound(to: UInt8.self), b.assumingMemoryBound(to: UInt8.self))
    }

    @inline(__always)
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        var index = 0
        // Eight bytes at a time, compared as big-endian integers.
        while index &+ 8 <= common {
            let x = UInt64(bigEndian: UnsafeRawPointer(a.baseAddress! + index).loadUnaligned(as: UInt64.self))
            let y = UInt64(bigEndian: UnsafeRawPointer(b.baseAddress! + index).loadUnaligned(as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            index &+= 8
        }
        while index < common {
            if a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
            index &+= 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        // As typed bytes, the append is one copy (a raw buffer's went byte by byte).
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    static func appendEscaped(_ source: some Sequence<UInt8>, to bytes: inout [UInt8]) {
        for byte in source {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
        }
        bytes.append(0)
        bytes.append(0)
    }

    /// The bits of a double, ordered: -0.0 is 0.0, every NaN the canonical one (sorting after +∞).
    static func orderedBits(_ value: Double) -> UInt64 {
        let bits = value.isNaN ? Double.nan.bitPattern : (value == 0 ? 0 : value.bitPattern)
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func orderedBits(_ value: Float) -> UInt32 {
        let bits = value.isNaN ? Float.nan.bitPattern : (value == 0 ? 0 : value.bitPattern)
        return bits & (1 << 31) != 0 ? ~bits : bits | (1 << 31)
    }

    /// value = ±0.d1d2…dn × 10^E with d1 and dn nonzero: class, then E + bias (u16 BE), then each digit + 1,
    /// then 0. Negative numbers complement the exponent and digit bytes and end in FF, so larger magnitudes
    /// sort first.
    static func appendDecimal(_ value: RowRecord.DecimalBits, to bytes: inout [UInt8]) {
        if value.isNaN {
            bytes.append(decimalNaN)
            return
        }
        var mantissa: UInt128 = 0
        for word in value.mantissa.reversed() { mantissa = mantissa << 16 | UInt128(word) }
        guard mantissa != 0 else {
            bytes.append(decimalZero)
            return
        }
        var digits: [UInt8] = []  // least significant first
        var exponent = Int(value.exponent)
        while mantissa != 0 {
            let (quotient, remainder) = mantissa.quotientAndRemainder(dividingBy: 10)
            if digits.isEmpty, remainder == 0 {
                exponent += 1  // a trailing zero
            } else {
                digits.append(UInt8(remainder))
            }
            mantissa = quotient
        }
        let scaled = exponent + digits.count
        let negative = value.isNegative
        let flip: UInt8 = negative ? 0xFF : 0
        bytes.append(negative ? decimalNegative : decimalPositive)
        let biased = UInt16(scaled + decimalExponentBias)
        appendBigEndian(negative ? ~biased : biased, to: &bytes)
        for digit in digits.reversed() { bytes.append((digit + 1) ^ flip) }
        bytes.append(flip)
    }

    // MARK: - Decoding

    /// Decodes a whole key.
    ///
    /// - Parameter bytes: untrusted bytes.
    /// - Returns: the parts, normalised (see the type's documentation).
    /// - Throws: ``FormatError/truncated(needed:available:)`` for a part cut short;
    ///   ``FormatError/invalidField(_:)`` for an unknown type byte, a non-canonical payload (a negative zero,
    ///   a non-canonical NaN, a Boolean byte other than 0 or 1, a bad escape, invalid UTF-8, a decimal out of
    ///   range or not normalised), no parts, or more than ``maximumParts``.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> [RowRecord.Field] {
        var reader = ByteReader(bytes)
        var parts: [RowRecord.Field] = []
        while reader.remaining > 0 {
            guard parts.count < maximumParts else { throw .invalid("index key has more than \(maximumParts) parts") }
            parts.append(try decodePart(&reader))
        }
        guard !parts.isEmpty else { throw .invalid("index key has no parts") }
        return parts
    }

    /// Decodes part `index` of a key where it lies, skipping the parts before it: what a covering scan reads
    /// without building the key's array.
    ///
    /// - Throws: as ``decode(_:)-(UnsafeRawBufferPointer)`` for the parts up to `index`;
    ///   ``FormatError/truncated(needed:available:)`` when the key has no part `index`.
    public static func decodePart(_ index: Int, of key: UnsafeRawBufferPointer) throws(FormatError) -> RowRecord.Field {
        var reader = ByteReader(key)
        for _ in 0..<index { _ = try decodePart(&reader) }
        return try decodePart(&reader)
    }

    /// Checks a key where it lies part by part, as ``decode(_:)-(UnsafeRawBufferPointer)`` does, without gathering
    /// the parts: what verification reads for every entry of an index.
    ///
    /// - Returns: the number of parts.
    /// - Throws: as ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func partCount(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> Int {
        var reader = ByteReader(bytes)
        var count = 0
        while reader.remaining > 0 {
            guard count < maximumParts else { throw .invalid("index key has more than \(maximumParts) parts") }
            _ = try decodePart(&reader)
            count += 1
        }
        guard count > 0 else { throw .invalid("index key has no parts") }
        return count
    }

    /// Decodes a whole key held in an array; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> [RowRecord.Field] {
        try bytes.withUnsafeBytes { buffer in Result { () throws(FormatError) in try decode(buffer) } }.get()
    }

    /// Decodes an entry: the key's parts and the row ID after them.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` for fewer than 9 bytes; what
    ///   ``decode(_:)-(UnsafeRawBufferPointer)`` throws for the key.
    public static func decodeEntry(_ bytes: [UInt8]) throws(FormatError) -> (key: [RowRecord.Field], rowID: UInt64) {
        try bytes.withUnsafeBytes { buffer in Result { () throws(FormatError) in try decodeEntry(buffer) } }.get()
    }

    /// Decodes an entry where it lies (an entry lent by an index page), as ``decodeEntry(_:)-([UInt8])``.
    public static func decodeEntry(
        _ bytes: UnsafeRawBufferPointer
    ) throws(FormatError) -> (key: [RowRecord.Field], rowID: UInt64) {
        guard bytes.count > rowIDSize else { throw .truncated(needed: rowIDSize + 1, available: bytes.count) }
        let keyLength = bytes.count - rowIDSize
        return (try decode(UnsafeRawBufferPointer(rebasing: bytes[..<keyLength])), rowID(ofEntry: bytes))
    }

    /// The row ID that ends an entry where it lies (at least 8 bytes long: a precondition).
    @inline(__always)
    public static func rowID(ofEntry bytes: UnsafeRawBufferPointer) -> UInt64 {
        precondition(bytes.count >= rowIDSize)
        return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: bytes.count &- rowIDSize, as: UInt64.self))
    }

    /// The row ID that ends an entry (at least 8 bytes long: a precondition).
    @inline(__always)
    public static func rowID(ofEntry bytes: [UInt8]) -> UInt64 {
        precondition(bytes.count >= rowIDSize)
        return bytes.withUnsafeBytes {
            UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: bytes.count &- rowIDSize, as: UInt64.self))
        }
    }

    /// Reads 8 bytes as a big-endian integer.
    static func readBigEndian64(_ reader: inout ByteReader) throws(FormatError) -> UInt64 {
        try reader.readUInt64LE().byteSwapped
    }

    static func decodePart(_ reader: inout ByteReader) throws(FormatError) -> RowRecord.Field {
        let rawType = try reader.readUInt8()
        guard let tag = RowRecord.Tag(rawValue: rawType) else { throw .invalid("unknown index key type \(rawType)") }
        switch tag {
        case .null: return .null
        case .int64: return .int64(Int64(bitPattern: try readBigEndian64(&reader) ^ (1 << 63)))
        case .double, .date:
            let value = try decodeDouble(try readBigEndian64(&reader))
            return tag == .double ? .double(value) : .date(secondsSinceReferenceDate: value)
        case .float:
            let ordered = try reader.readUInt32LE().byteSwapped
            let bits = ordered & (1 << 31) != 0 ? ordered & ~(1 << 31) : ~ordered
            let value = Float(bitPattern: bits)
            guard orderedBits(value) == ordered else { throw .invalid("non-canonical float in index key") }
            return .float(value)
        case .boolean:
            switch try reader.readUInt8() {
            case 0: return .boolean(false)
            case 1: return .boolean(true)
            case let byte: throw .invalid("index key boolean byte \(byte)")
            }
        case .string, .uri:
            let bytes = try readEscaped(&reader)
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw .invalid("index key string is not valid UTF-8")
            }
            return tag == .string ? .string(string) : .uri(string)
        case .bytes: return .bytes(try readEscaped(&reader))
        case .uuid:
            let high = try readBigEndian64(&reader)
            let low = try readBigEndian64(&reader)
            return .uuid(UInt128(high) << 64 | UInt128(low))
        case .decimal: return .decimal(try decodeDecimal(&reader))
        case .blobReference: return .blobReference(try readBigEndian64(&reader))
        case .reference: return .reference(try readBigEndian64(&reader))
        }
    }

    static func decodeDouble(_ ordered: UInt64) throws(FormatError) -> Double {
        let bits = ordered & (1 << 63) != 0 ? ordered & ~(1 << 63) : ~ordered
        let value = Double(bitPattern: bits)
        guard orderedBits(value) == ordered else { throw .invalid("non-canonical double in index key") }
        return value
    }

    static func readEscaped(_ reader: inout ByteReader) throws(FormatError) -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let byte = try reader.readUInt8()
            guard byte == 0 else {
                bytes.append(byte)
                continue
            }
            switch try reader.readUInt8() {
            case 0: return bytes
            case 0xFF: bytes.append(0)
            case let next: throw .invalid("index key escape 00 \(String(next, radix: 16))")
            }
        }
    }

    static func decodeDecimal(_ reader: inout ByteReader) throws(FormatError) -> RowRecord.DecimalBits {
        let kind = try reader.readUInt8()
        switch kind {
        case decimalNaN: return RowRecord.DecimalBits(exponent: 0, isNegative: true, isCompact: false, mantissa: [])
        case decimalZero: return RowRecord.DecimalBits(exponent: 0, isNegative: false, isCompact: false, mantissa: [])
        case decimalNegative, decimalPositive: break
        default: throw .invalid("index key decimal class \(kind)")
        }
        let negative = kind == decimalNegative
        let flip: UInt8 = negative ? 0xFF : 0
        let high = try reader.readUInt8() ^ flip
        let low = try reader.readUInt8() ^ flip
        let scaled = (Int(high) << 8 | Int(low)) - decimalExponentBias
        var digits: [UInt8] = []
        while true {
            let byte = try reader.readUInt8() ^ flip
            if byte == 0 { break }
            guard byte <= 10, digits.count < maximumDecimalDigits else {
                throw .invalid("index key decimal digit byte \(byte) or more than \(maximumDecimalDigits) digits")
            }
            digits.append(byte - 1)
        }
        guard let first = digits.first, first != 0, let last = digits.last, last != 0 else {
            throw .invalid("index key decimal digits not normalised")
        }
        var exponent = scaled - digits.count
        var mantissa: UInt128 = 0
        for digit in digits {
            let (times10, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt128(digit))
            guard !overflow, !carry else { throw .invalid("index key decimal mantissa exceeds 128 bits") }
            mantissa = sum
        }
        var compact = true
        // An exponent above Int8.max keeps trailing zeros in the mantissa instead (as the row had them).
        while exponent > Int(Int8.max) {
            let (times10, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            guard !overflow else { throw .invalid("index key decimal exponent out of range") }
            mantissa = times10
            exponent -= 1
            compact = false
        }
        guard exponent >= Int(Int8.min) else { throw .invalid("index key decimal exponent out of range") }
        var words: [UInt16] = []
        while mantissa != 0 {
            words.append(UInt16(truncatingIfNeeded: mantissa))
            mantissa >>= 16
        }
        return RowRecord.DecimalBits(
            exponent: Int8(exponent), isNegative: negative, isCompact: compact, mantissa: words)
    }
}
