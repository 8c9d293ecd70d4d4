/// The encoding of one row of an entity's table: a small header, a table of field end offsets, then
/// the fields, so that one field is read without decoding the others (FORMAT.md, "Row records").
///
/// ```
/// row    := form:u8 entityID:varint rowVersion:varint fieldCount:varint fieldEnd:uW[fieldCount] fields
/// form   := 0x20 | W                  W = 1, 2 or 4: the narrowest width that holds the fields area's length
/// fields := field[fieldCount]         field i spans fieldEnd[i-1] ..< fieldEnd[i] (fieldEnd[-1] = 0),
///                                     offsets relative to the start of the fields area
/// field  := tag:u8 payload
/// ```
///
/// Row records know nothing of entities: the object graph maps an entity's persistent attributes to
/// field positions and values to ``Field`` cases. Decoding takes untrusted bytes: every offset and
/// length is checked, and a bad row is a ``FormatError``, never a trap.
///
/// For example:
///
///     let bytes = RowRecord.encode(entityID: 3, rowVersion: 1, fields: [.string("Ada"), .int64(36)])
///     let age = try RowRecord.field(at: 1, in: bytes)     // .int64(36)
///
/// ## Topics
///
/// ### Layout
/// - ``formatVersion``
/// - ``maximumFieldCount``
/// - ``Tag``
///
/// ### Values
/// - ``Field``
/// - ``DecimalBits``
///
/// ### Encoding
/// - ``encode(entityID:rowVersion:fields:)``
/// - ``Writer``
///
/// ### Decoding
/// - ``Header``
/// - ``field(at:in:)-(_,UnsafeRawBufferPointer)``
/// - ``decodeAll(_:)-(UnsafeRawBufferPointer)``
public enum RowRecord {
    // MARK: - Layout constants

    /// The only row format version this code writes and reads: the high nibble of a row's first byte.
    public static let formatVersion: UInt8 = 2

    /// The most fields a row holds.
    public static let maximumFieldCount = Int(UInt16.max)

    /// Payload bytes of a decimal field before its mantissa words (exponent and flags).
    static let decimalHeaderSize = 2

    /// The most mantissa words of a decimal field.
    static let maximumDecimalWords = 8

    /// The first byte of a row whose field ends are `width` bytes wide.
    @inline(__always)
    static func form(endWidth width: Int) -> UInt8 { formatVersion << 4 | UInt8(width) }

    /// The narrowest field end width (1, 2 or 4 bytes) that holds `length`, the fields area's length.
    @inline(__always)
    static func endWidth(forFieldsLength length: Int) -> Int {
        length <= 0xFF ? 1 : length <= 0xFFFF ? 2 : 4
    }

    /// The type byte that opens every field.
    public enum Tag: UInt8, Sendable, CaseIterable {
        /// No value; no payload.
        case null = 0
        /// 1 ... 8 bytes: a two's complement integer, little-endian, in as few bytes as hold it.
        case int64 = 1
        /// 8 bytes: IEEE 754 binary64 bits, little-endian.
        case double = 2
        /// 4 bytes: IEEE 754 binary32 bits, little-endian.
        case float = 3
        /// 1 byte: 0 (false) or 1 (true).
        case boolean = 4
        /// UTF-8 bytes, as many as the field's span leaves.
        case string = 5
        /// Raw bytes, as many as the field's span leaves.
        case bytes = 6
        /// 8 bytes: seconds since 2001-01-01 00:00:00 UTC as IEEE 754 binary64 bits, little-endian.
        case date = 7
        /// 16 bytes: the UUID's bytes in RFC 4122 order.
        case uuid = 8
        /// 2 + 2k bytes: exponent, flags and k ≤ 8 mantissa words (see ``DecimalBits``).
        case decimal = 9
        /// UTF-8 bytes of an absolute URI.
        case uri = 10
        /// 1 ... 8 bytes: the ID of a blob in the engine's blob store, unsigned little-endian, in as few bytes as hold it.
        case blobReference = 11
        /// 1 ... 8 bytes: the row ID of another row, unsigned little-endian, in as few bytes as hold it (to-one
        /// relationships).
        case reference = 12
    }

    // MARK: - Field

    /// One field of a row: a value in the raw form the format stores, free of Foundation types.
    ///
    /// Two fields are equal when their encodings are equal: doubles, floats and dates compare by bit
    /// pattern (so `-0.0 != 0.0` and a NaN equals itself) and strings by their UTF-8 bytes.
    public enum Field: Sendable, Hashable, CustomStringConvertible {
        /// No value (an attribute that is nil).
        case null
        /// A signed 64-bit integer (the storage of every integer attribute width).
        case int64(Int64)
        /// A binary64 floating-point number.
        case double(Double)
        /// A binary32 floating-point number.
        case float(Float)
        /// A Boolean.
        case boolean(Bool)
        /// A string, stored as UTF-8.
        case string(String)
        /// Bytes stored in the row itself.
        case bytes([UInt8])
        /// A point in time: seconds since 2001-01-01 00:00:00 UTC (Foundation's reference date, which is
        /// how `Date` itself stores its value, so the round trip is exact).
        case date(secondsSinceReferenceDate: Double)
        /// A UUID: its 16 bytes in RFC 4122 order read as one big-endian number, so that the number's
        /// 32 hexadecimal digits are the UUID's string form without dashes.
        case uuid(UInt128)
        /// An exact decimal number.
        case decimal(DecimalBits)
        /// A URI in its absolute string form.
        case uri(String)
        /// The ID of a blob in the engine's blob store (a binary value stored outside the row).
        case blobReference(UInt64)
        /// The row ID of a row of another (or the same) table.
        case reference(UInt64)

        /// The tag this field is written with.
        public var tag: Tag {
            switch self {
            case .null: .null
            case .int64: .int64
            case .double: .double
            case .float: .float
            case .boolean: .boolean
            case .string: .string
            case .bytes: .bytes
            case .date: .date
            case .uuid: .uuid
            case .decimal: .decimal
            case .uri: .uri
            case .blobReference: .blobReference
            case .reference: .reference
            }
        }

        /// The bytes this field takes in the fields area: its tag plus its payload.
        public var encodedSize: Int {
            switch self {
            case .null: 1
            case .int64(let value): 1 + CompactInteger.signedWidth(value)
            case .blobReference(let value), .reference(let value): 1 + CompactInteger.unsignedWidth(value)
            case .double, .date: 9
            case .float: 5
            case .boolean: 2
            case .string(let value), .uri(let value): 1 + value.utf8.count
            case .bytes(let value): 1 + value.count
            case .uuid: 17
            case .decimal(let value): 1 + decimalHeaderSize + 2 * value.mantissa.count
            }
        }

        /// Appends the tag and payload.
        func encode(into writer: inout ByteWriter) {
            writer.writeUInt8(tag.rawValue)
            switch self {
            case .null: break
            case .int64(let value):
                CompactInteger.write(UInt64(bitPattern: value), width: CompactInteger.signedWidth(value), into: &writer)
            case .double(let value): writer.writeUInt64LE(value.bitPattern)
            case .float(let value): writer.writeUInt32LE(value.bitPattern)
            case .boolean(let value): writer.writeUInt8(value ? 1 : 0)
            case .string(let value), .uri(let value): writer.writeBytes(value.utf8)
            case .bytes(let value): writer.writeBytes(value)
            case .date(let value): writer.writeUInt64LE(value.bitPattern)
            case .uuid(let value):
                // Most significant byte first: RFC 4122 byte order.
                writer.writeUInt64LE(UInt64(truncatingIfNeeded: value >> 64).byteSwapped)
                writer.writeUInt64LE(UInt64(truncatingIfNeeded: value).byteSwapped)
            case .decimal(let value): value.encode(into: &writer)
            case .blobReference(let value), .reference(let value):
                CompactInteger.write(value, width: CompactInteger.unsignedWidth(value), into: &writer)
            }
        }

        /// Whether two fields have the same encoding.
        public static func == (lhs: Field, rhs: Field) -> Bool {
            switch (lhs, rhs) {
            case (.null, .null): true
            case (.int64(let a), .int64(let b)): a == b
            case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
            case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
            case (.boolean(let a), .boolean(let b)): a == b
            case (.string(let a), .string(let b)), (.uri(let a), .uri(let b)): a.utf8.elementsEqual(b.utf8)
            case (.bytes(let a), .bytes(let b)): a == b
            case (.date(let a), .date(let b)): a.bitPattern == b.bitPattern
            case (.uuid(let a), .uuid(let b)): a == b
            case (.decimal(let a), .decimal(let b)): a == b
            case (.blobReference(let a), .blobReference(let b)), (.reference(let a), .reference(let b)): a == b
            default: false
            }
        }

        /// Hashes the field's encoding-level identity (consistent with `==`).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(tag)
            switch self {
            case .null: break
            case .int64(let value): hasher.combine(value)
            case .double(let value), .date(let value): hasher.combine(value.bitPattern)
            case .float(let value): hasher.combine(value.bitPattern)
            case .boolean(let value): hasher.combine(value)
            case .string(let value), .uri(let value):
                for byte in value.utf8 { hasher.combine(byte) }
            case .bytes(let value): hasher.combine(value)
            case .uuid(let value): hasher.combine(value)
            case .decimal(let value): hasher.combine(value)
            case .blobReference(let value), .reference(let value): hasher.combine(value)
            }
        }

        /// The field in a short readable form, e.g. `int64(36)`.
        public var description: String {
            switch self {
            case .null: "null"
            case .int64(let value): "int64(\(value))"
            case .double(let value): "double(\(value))"
            case .float(let value): "float(\(value))"
            case .boolean(let value): "boolean(\(value))"
            case .string(let value): "string(\(value.debugDescription))"
            case .bytes(let value): "bytes(\(value.count) bytes)"
            case .date(let value): "date(\(value) s since 2001)"
            case .uuid(let value): "uuid(\(String(value, radix: 16)))"
            case .decimal(let value): "decimal(\(value))"
            case .uri(let value): "uri(\(value))"
            case .blobReference(let value): "blobReference(\(value))"
            case .reference(let value): "reference(\(value))"
            }
        }
    }

    // MARK: - Decimal

    /// An exact decimal number as Foundation's `Decimal` holds it:
    /// `(-1)^isNegative × mantissa × 10^exponent`, with the mantissa a little-endian sequence of 16-bit
    /// words (at most 8: 128 bits).
    ///
    /// The fields mirror `Decimal`'s own (`_exponent`, `_isNegative`, `_isCompact`, and `_mantissa` up to
    /// `_length` words), so that a round trip gives back the very same representation, not just an
    /// equal value. No mantissa words and `isNegative` is NaN; no words without it is zero.
    ///
    /// ```
    /// decimal := exponent:i8 flags:u8 mantissa:u16[k]    k = (payloadLength − 2) / 2 ≤ 8, mantissa[k−1] ≠ 0
    /// flags   := isNegative (bit 0) | isCompact (bit 1); bits 2-7 zero
    /// ```
    public struct DecimalBits: Sendable, Hashable, CustomStringConvertible {
        /// The power of ten the mantissa is multiplied by.
        public let exponent: Int8
        /// The sign (with no mantissa words: NaN).
        public let isNegative: Bool
        /// `Decimal`'s flag saying its mantissa has no trailing decimal zeros.
        public let isCompact: Bool
        /// The mantissa words, least significant first: at most 8, and the last one is not zero (so the
        /// count is `Decimal`'s `_length`).
        public let mantissa: [UInt16]

        /// A decimal from its parts.
        ///
        /// - Parameters:
        ///   - exponent: the power of ten.
        ///   - isNegative: the sign; with an empty mantissa, NaN.
        ///   - isCompact: `Decimal`'s compact flag.
        ///   - mantissa: at most 8 words, least significant first, the last one not zero.
        public init(exponent: Int8, isNegative: Bool, isCompact: Bool, mantissa: [UInt16]) {
            precondition(mantissa.count <= RowRecord.maximumDecimalWords, "a decimal mantissa has at most 8 words")
            precondition(mantissa.last != 0, "a decimal mantissa's most significant word is not zero")
            self.exponent = exponent
            self.isNegative = isNegative
            self.isCompact = isCompact
            self.mantissa = mantissa
        }

        /// Whether this is NaN: negative with no mantissa.
        public var isNaN: Bool { isNegative && mantissa.isEmpty }

        /// The decimal in a short readable form: sign, mantissa words (most significant first), exponent.
        public var description: String {
            if isNaN { return "NaN" }
            let words = mantissa.reversed().map { String($0, radix: 16) }.joined(separator: ":")
            return "\(isNegative ? "-" : "")0x[\(words)]e\(exponent)\(isCompact ? " compact" : "")"
        }

        func encode(into writer: inout ByteWriter) {
            writer.writeUInt8(UInt8(bitPattern: exponent))
            writer.writeUInt8((isNegative ? 0x01 : 0) | (isCompact ? 0x02 : 0))
            for word in mantissa { writer.writeUInt16LE(word) }
        }

        static func decode(_ payload: inout ByteReader, field index: Int) throws(FormatError) -> DecimalBits {
            let payloadLength = payload.remaining
            guard payloadLength >= decimalHeaderSize else {
                throw .invalid("field \(index): decimal payload of \(payloadLength) bytes, at least 2 expected")
            }
            // Safe: payloadLength >= 2.
            let mantissaBytes = payloadLength &- decimalHeaderSize
            guard mantissaBytes % 2 == 0, mantissaBytes / 2 <= maximumDecimalWords else {
                throw .invalid("field \(index): decimal mantissa of \(mantissaBytes) bytes, expected an even 0 ... 16")
            }
            let exponent = Int8(bitPattern: try payload.readUInt8())
            let flags = try payload.readUInt8()
            guard flags & 0xFC == 0 else {
                throw .invalid("field \(index): decimal flags 0x\(String(flags, radix: 16)) has unknown bits")
            }
            var mantissa: [UInt16] = []
            mantissa.reserveCapacity(mantissaBytes / 2)
            for _ in 0..<(mantissaBytes / 2) { mantissa.append(try payload.readUInt16LE()) }
            guard mantissa.last != 0 else {
                throw .invalid("field \(index): decimal mantissa's most significant word is zero")
            }
            return DecimalBits(
                exponent: exponent, isNegative: flags & 0x01 != 0, isCompact: flags & 0x02 != 0, mantissa: mantissa)
        }
    }

    // MARK: - Header

    /// What precedes the fields: the entity the row belongs to, its version and how many fields it has, and
    /// where the field end table and the fields lie.
    public struct Header: Sendable, Equatable {
        /// The row's entity, as the object graph's model numbers entities.
        public let entityID: UInt16
        /// The row's version, raised by every update (the optimistic-locking counter).
        public let rowVersion: UInt64
        /// The number of fields.
        public let fieldCount: Int
        /// Where the field end table starts: after the form byte and the three varints.
        @usableFromInline let endsOffset: Int
        /// Bytes of one field end: 1, 2 or 4.
        @usableFromInline let endWidth: Int

        /// Where the fields area starts: after the header and the field end table.
        @inlinable public var fieldsOffset: Int { endsOffset &+ endWidth &* fieldCount }
        /// Bytes of one field end: 1, 2 or 4. The table of the ends lies just before the fields area, so with ends of
        /// one byte, field `i` ends `bytes[fieldsOffset - fieldCount + i]` bytes into it.
        @inlinable public var fieldEndWidth: Int { endWidth }

        /// A header from its parts, laid out as the writer lays it out for a fields area of
        /// `fieldsLength` bytes.
        public init(entityID: UInt16, rowVersion: UInt64, fieldCount: Int, fieldsLength: Int = 0) {
            self.entityID = entityID
            self.rowVersion = rowVersion
            self.fieldCount = fieldCount
            endsOffset =
                1 + Varint.size(UInt64(entityID)) + Varint.size(rowVersion) + Varint.size(UInt64(fieldCount))
            endWidth = RowRecord.endWidth(forFieldsLength: fieldsLength)
        }

        @usableFromInline
        init(entityID: UInt16, rowVersion: UInt64, fieldCount: Int, endsOffset: Int, endWidth: Int) {
            self.entityID = entityID
            self.rowVersion = rowVersion
            self.fieldCount = fieldCount
            self.endsOffset = endsOffset
            self.endWidth = endWidth
        }

        /// Two headers are equal when they name the same entity, version and field count.
        public static func == (lhs: Header, rhs: Header) -> Bool {
            lhs.entityID == rhs.entityID && lhs.rowVersion == rhs.rowVersion && lhs.fieldCount == rhs.fieldCount
        }

        /// Decodes the header of a row and checks that the row's length agrees with it: the form is known,
        /// the varints are canonical, the field end table fits, the last field ends exactly at the end of the
        /// bytes and the end width is the narrowest that holds that length. Costs a handful of loads, whatever
        /// the row's size.
        ///
        /// - Parameter bytes: a whole row.
        /// - Returns: the header.
        /// - Throws: ``FormatError/truncated(needed:available:)`` when the bytes end before the header, the
        ///   field end table or the last field; ``FormatError/unsupportedVersion(_:)`` for a format version
        ///   other than 2; ``FormatError/invalidField(_:)`` for an unknown end width, a varint out of range or
        ///   not canonical, bytes after the last field or a wider end width than needed.
        @inlinable @inline(__always)
        public static func decode(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> Header {
            // Inlined for the common row, whose entity ID, version and field count are one varint byte each and whose
            // field ends are one byte: a form of 0x21, three bytes below 0x80 (canonical and in range), and a last
            // field end equal to the fields' length (at most 255, so one-byte ends are the narrowest). A table scan
            // decodes every row's header: the call and the header it stored for the caller to load back were a
            // fifth of its time. Every other row, and every row this does not accept, is decoded in full.
            if bytes.count >= 4 {
                let word = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
                let fieldCount = Int(word >> 24)
                // Safe: fieldCount ≤ 127, so the sum is at most 131.
                let fieldsOffset = 4 &+ fieldCount
                // 0x21: form(endWidth: 1) of format version 2, a literal (a static let of another module is read
                // through its accessor).
                if word & 0x8080_80FF == 0x21, fieldCount > 0, bytes.count >= fieldsOffset,
                    Int(bytes[fieldsOffset &- 1]) == bytes.count &- fieldsOffset
                {
                    return Header(
                        entityID: UInt16(truncatingIfNeeded: word >> 8 & 0x7F),
                        rowVersion: UInt64(word >> 16 & 0x7F), fieldCount: fieldCount, endsOffset: 4, endWidth: 1)
                }
            }
            return try decodeInFull(bytes)
        }

        /// ``decode(_:)-(UnsafeRawBufferPointer)`` for every row, out of line.
        @usableFromInline
        static func decodeInFull(_ bytes: UnsafeRawBufferPointer) throws(FormatError) -> Header {
            guard bytes.count >= 4 else { throw .truncated(needed: 4, available: bytes.count) }
            let form = bytes[0]
            guard form >> 4 == formatVersion else { throw .unsupportedVersion(UInt32(form >> 4)) }
            let width = Int(form & 0x0F)
            guard width == 1 || width == 2 || width == 4 else {
                throw .invalid("row form 0x\(String(form, radix: 16)): field ends of \(width) bytes")
            }
            var position = 1
            let entityID = try Varint.read(bytes, at: &position, maximum: UInt64(UInt16.max), "entity ID")
            let rowVersion = try Varint.read(bytes, at: &position, maximum: .max, "row version")
            let fieldCount = Int(
                try Varint.read(bytes, at: &position, maximum: UInt64(maximumFieldCount), "field count"))
            let header = Header(
                entityID: UInt16(entityID), rowVersion: rowVersion, fieldCount: fieldCount, endsOffset: position,
                endWidth: width)
            // Safe: position ≤ 17 and fieldCount ≤ 65535.
            let fieldsOffset = header.fieldsOffset
            guard bytes.count >= fieldsOffset else { throw .truncated(needed: fieldsOffset, available: bytes.count) }
            // Safe: bytes.count >= fieldsOffset.
            let fieldsLength = bytes.count &- fieldsOffset
            let lastEnd = fieldCount == 0 ? 0 : header.end(at: fieldCount &- 1, in: bytes)
            if lastEnd > fieldsLength { throw .truncated(needed: lastEnd, available: fieldsLength) }
            if lastEnd < fieldsLength {
                throw .invalid("row has \(fieldsLength - lastEnd) bytes after its last field")
            }
            guard width == RowRecord.endWidth(forFieldsLength: fieldsLength) else {
                throw .invalid("row of \(fieldsLength) field bytes has \(width)-byte field ends")
            }
            return header
        }

        /// Decodes the header of a row held in an array; see ``decode(_:)-(UnsafeRawBufferPointer)``.
        ///
        /// - Throws: the same ``FormatError`` cases as the buffer overload.
        public static func decode(_ bytes: [UInt8]) throws(FormatError) -> Header {
            try bytes.withUnsafeBytes { buffer in Result { () throws(FormatError) in try decode(buffer) } }.get()
        }

        /// Field end `index` (which must be below fieldCount, in bytes that hold the table).
        @inlinable @inline(__always)
        func end(at index: Int, in bytes: UnsafeRawBufferPointer) -> Int {
            let at = endsOffset &+ endWidth &* index
            switch endWidth {
            case 1: return Int(bytes[at])
            case 2: return Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
            default: return Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
            }
        }

        /// The byte range of field `index` within the whole row, checked against the bytes (which must be
        /// the ones the header was decoded from).
        // Public, not `package`, as integerField and referenceField: the body of a `package` function is not
        // serialized, so the object graph's scans could neither inline nor specialize them (see the Strata
        // documentation, Objects in Memory).
        @inlinable @inline(__always)
        public func span(ofField index: Int, in bytes: UnsafeRawBufferPointer) throws(FormatError) -> Range<Int> {
            guard index >= 0, index < fieldCount else { throw Self.fieldOutside(index, fieldCount) }
            // Safe: decode checked that the table fits (index < fieldCount).
            let start = index == 0 ? 0 : end(at: index &- 1, in: bytes)
            let end = self.end(at: index, in: bytes)
            // Safe: decode checked bytes.count >= fieldsOffset.
            let fieldsLength = bytes.count &- fieldsOffset
            guard start < end else { throw Self.fieldOffsetsDecrease(index, start, end) }
            guard end <= fieldsLength else { throw .truncated(needed: end, available: fieldsLength) }
            // Safe: end ≤ fieldsLength, so both sums are at most bytes.count.
            return (fieldsOffset &+ start)..<(fieldsOffset &+ end)
        }

        // Out of line: the errors of the inlined span(ofField:in:).
        @usableFromInline
        static func fieldOutside(_ index: Int, _ fieldCount: Int) -> FormatError {
            .invalid("field index \(index) outside 0..<\(fieldCount)")
        }

        @usableFromInline
        static func fieldOffsetsDecrease(_ index: Int, _ start: Int, _ end: Int) -> FormatError {
            .invalid("field \(index) spans \(start)..<\(end): offsets must increase, every field has a tag")
        }
    }

    // MARK: - Encoding

    /// Builds a row field by field, without an intermediate array of fields (the hot path of every save).
    ///
    /// For example:
    ///
    ///     var writer = RowRecord.Writer(entityID: 2, rowVersion: 1, fieldCount: 2)
    ///     writer.append(.string("Ada"))
    ///     writer.append(.null)
    ///     let bytes = writer.finish()
    public struct Writer: Sendable {
        /// The field ends as u32 (the width is known only at the end), then the fields.
        private var writer: ByteWriter
        private let entityID: UInt16
        private let rowVersion: UInt64
        private let fieldCount: Int
        private var fieldsWritten = 0

        /// Starts a row of exactly `fieldCount` fields.
        ///
        /// - Parameters:
        ///   - entityID: the row's entity.
        ///   - rowVersion: the row's version.
        ///   - fieldCount: how many fields will be appended, at most ``RowRecord/maximumFieldCount``.
        ///   - capacity: bytes to reserve for the fields area (a size hint).
        public init(entityID: UInt16, rowVersion: UInt64, fieldCount: Int, capacity: Int = 0) {
            precondition(fieldCount >= 0 && fieldCount <= maximumFieldCount, "a row has 0 ... 65535 fields")
            self.entityID = entityID
            self.rowVersion = rowVersion
            self.fieldCount = fieldCount
            writer = ByteWriter(capacity: 4 * fieldCount + capacity)
            writer.writeZeros(4 * fieldCount)
        }

        /// Appends the next field.
        public mutating func append(_ field: Field) {
            precondition(fieldsWritten < fieldCount, "more fields than the row was started with")
            field.encode(into: &writer)
            let end = writer.count - 4 * fieldCount
            precondition(end <= Int(UInt32.max), "a row's fields exceed 4 GiB")
            writer.setUInt32LE(UInt32(end), at: 4 * fieldsWritten)
            fieldsWritten += 1
        }

        /// Appends the next field as its encoded bytes (its tag and payload, as ``Header/span(ofField:in:)``
        /// delimits them in another row): a copy without decoding, for rewriting rows field by field.
        package mutating func appendEncoded(_ field: UnsafeRawBufferPointer) {
            precondition(fieldsWritten < fieldCount, "more fields than the row was started with")
            precondition(!field.isEmpty, "a field has at least its tag")
            writer.writeBytes(field)
            let end = writer.count - 4 * fieldCount
            precondition(end <= Int(UInt32.max), "a row's fields exceed 4 GiB")
            writer.setUInt32LE(UInt32(end), at: 4 * fieldsWritten)
            fieldsWritten += 1
        }

        /// Returns the encoded row; every announced field must have been appended.
        public mutating func finish() -> [UInt8] {
            precondition(fieldsWritten == fieldCount, "\(fieldsWritten) of \(fieldCount) fields appended")
            let staged = writer.take()
            let fieldsLength = staged.count - 4 * fieldCount
            let header = Header(
                entityID: entityID, rowVersion: rowVersion, fieldCount: fieldCount, fieldsLength: fieldsLength)
            let fieldsOffset = header.fieldsOffset
            return [UInt8](unsafeUninitializedCapacity: fieldsOffset + fieldsLength) { row, count in
                let raw = UnsafeMutableRawBufferPointer(row)
                var position = header.writeLeadingBytes(into: raw)
                staged.withUnsafeBytes { source in
                    for index in 0..<fieldCount {
                        let end = UInt32(littleEndian: source.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
                        header.storeEnd(Int(end), into: raw, at: position)
                        position += header.endWidth
                    }
                    if fieldsLength > 0 {
                        UnsafeMutableRawBufferPointer(rebasing: raw[position..<(position + fieldsLength)]).copyMemory(
                            from: UnsafeRawBufferPointer(rebasing: source[(4 * fieldCount)...]))
                    }
                }
                count = fieldsOffset + fieldsLength
            }
        }
    }

    /// Encodes a whole row.
    ///
    /// - Parameters:
    ///   - entityID: the row's entity.
    ///   - rowVersion: the row's version.
    ///   - fields: the fields in order, at most ``maximumFieldCount``.
    /// - Returns: the row's bytes.
    public static func encode(entityID: UInt16, rowVersion: UInt64, fields: [Field]) -> [UInt8] {
        // The fields' sizes give the whole layout up front, so the row is written once, in order, into the array it is
        // returned in (``Writer`` stages the fields and copies them behind the header: a third of a save's encoding).
        precondition(fields.count <= maximumFieldCount, "a row has 0 ... 65535 fields")
        var fieldsLength = 0
        for field in fields { fieldsLength += field.encodedSize }
        precondition(fieldsLength <= Int(UInt32.max), "a row's fields exceed 4 GiB")
        let header = Header(
            entityID: entityID, rowVersion: rowVersion, fieldCount: fields.count, fieldsLength: fieldsLength)
        var writer = ByteWriter(capacity: header.fieldsOffset + fieldsLength)
        writer.write(header.endsOffset) { raw in _ = header.writeLeadingBytes(into: raw) }
        writer.write(header.endWidth * fields.count) { raw in
            var end = 0
            var position = 0
            for field in fields {
                end += field.encodedSize
                header.storeEnd(end, into: raw, at: position)
                position += header.endWidth
            }
        }
        for field in fields { field.encode(into: &writer) }
        precondition(writer.count == header.fieldsOffset + fieldsLength, "a field's size and its encoding disagree")
        return writer.take()
    }

    /// Encodes a row from another row's fields, some of them replaced: every field of `old` that `replacements` does
    /// not name is copied as its bytes (tag and payload), never decoded; the named ones are encoded. The new row has
    /// `old`'s field count, laid out anew (its field ends' width is the one its fields' length needs). An update of a
    /// few fields of a row is then the cost of those fields and one copy of the others, in runs.
    ///
    /// For example, raising the version of a row and setting its second field:
    ///
    ///     let header = try RowRecord.Header.decode(old)
    ///     let new = try RowRecord.encode(
    ///         entityID: header.entityID, rowVersion: header.rowVersion + 1, replacing: [(1, .int64(52_000))],
    ///         in: old, header: header)
    ///
    /// - Parameters:
    ///   - entityID: the new row's entity.
    ///   - rowVersion: the new row's version.
    ///   - replacements: the new fields by position, in increasing position order, each position below
    ///     `header.fieldCount` and named once.
    ///   - old: a whole row (untrusted: every field end is checked).
    ///   - header: `old`'s header, as ``Header/decode(_:)-(UnsafeRawBufferPointer)`` returned it.
    /// - Returns: the new row's bytes.
    /// - Throws: ``FormatError/invalidField(_:)`` for field ends in `old` that do not increase (a field without its
    ///   tag); ``FormatError/truncated(needed:available:)`` for a field that ends past `old`.
    public static func encode(
        entityID: UInt16, rowVersion: UInt64, replacing replacements: [(position: Int, field: Field)],
        in old: UnsafeRawBufferPointer, header: Header
    ) throws(FormatError) -> [UInt8] {
        let fieldCount = header.fieldCount
        // Safe: decode checked old.count >= fieldsOffset.
        let oldFieldsLength = old.count &- header.fieldsOffset
        // Every field end checked once (decode checked only the last): each field then spans at least its tag, within
        // the old row, and the copies below read only the old row's bytes.
        var fieldsLength = 0
        var next = 0
        var previousEnd = 0
        for index in 0..<fieldCount {
            let end = header.end(at: index, in: old)
            guard previousEnd < end else { throw Header.fieldOffsetsDecrease(index, previousEnd, end) }
            guard end <= oldFieldsLength else { throw .truncated(needed: end, available: oldFieldsLength) }
            if next < replacements.count, replacements[next].position == index {
                fieldsLength += replacements[next].field.encodedSize
                next += 1
            } else {
                // Safe: previousEnd < end.
                fieldsLength += end &- previousEnd
            }
            previousEnd = end
        }
        precondition(next == replacements.count, "replacements must name fields of the row once, in order")
        precondition(fieldsLength <= Int(UInt32.max), "a row's fields exceed 4 GiB")
        let newHeader = Header(
            entityID: entityID, rowVersion: rowVersion, fieldCount: fieldCount, fieldsLength: fieldsLength)
        var writer = ByteWriter(capacity: newHeader.fieldsOffset + fieldsLength)
        writer.write(newHeader.endsOffset) { raw in _ = newHeader.writeLeadingBytes(into: raw) }
        writer.write(newHeader.endWidth * fieldCount) { raw in
            var end = 0
            var position = 0
            var next = 0
            var previousEnd = 0
            for index in 0..<fieldCount {
                let oldEnd = header.end(at: index, in: old)
                if next < replacements.count, replacements[next].position == index {
                    end += replacements[next].field.encodedSize
                    next += 1
                } else {
                    end += oldEnd - previousEnd
                }
                previousEnd = oldEnd
                newHeader.storeEnd(end, into: raw, at: position)
                position += newHeader.endWidth
            }
        }
        // The fields: the old bytes between replaced fields copied in runs, each replacement encoded in its place.
        var copied = header.fieldsOffset
        for (position, field) in replacements {
            let start = header.fieldsOffset &+ (position == 0 ? 0 : header.end(at: position &- 1, in: old))
            if start > copied { writer.writeBytes(UnsafeRawBufferPointer(rebasing: old[copied..<start])) }
            field.encode(into: &writer)
            copied = header.fieldsOffset &+ header.end(at: position, in: old)
        }
        if old.count > copied { writer.writeBytes(UnsafeRawBufferPointer(rebasing: old[copied..<old.count])) }
        precondition(writer.count == newHeader.fieldsOffset + fieldsLength, "a field's size and its encoding disagree")
        return writer.take()
    }

    // MARK: - Decoding

    /// Decodes field `index` of a row, reading only the header, two entries of the field end table and
    /// that field.
    ///
    /// - Parameters:
    ///   - index: the field's position, `0 ..< fieldCount`.
    ///   - bytes: a whole row.
    /// - Returns: the field.
    /// - Throws: what ``Header/decode(_:)-(UnsafeRawBufferPointer)`` throws; ``FormatError/invalidField(_:)``
    ///   for an index outside the row, offsets that do not increase, an unknown tag or a payload that is
    ///   wrong for its tag (length, UTF-8, Boolean byte, decimal flags); ``FormatError/truncated(needed:available:)``
    ///   for a field that ends past the row.
    public static func field(at index: Int, in bytes: UnsafeRawBufferPointer) throws(FormatError) -> Field {
        try field(at: index, in: bytes, header: try Header.decode(bytes))
    }

    /// Field `index` read in place when it is an integer (``Field/int64``); nil for any other tag, which the caller
    /// decodes in full. The fast path of the object store's compiled predicates.
    ///
    /// - Throws: the same ``FormatError`` cases as ``field(at:in:)-(_,UnsafeRawBufferPointer)``.
    /// Inlinable (with ``Header/span(ofField:in:)``), so that a scan's predicate reads the integer without a call.
    @inlinable @inline(__always)
    public static func integerField(
        at index: Int, in bytes: UnsafeRawBufferPointer, header: Header
    ) throws(FormatError) -> Int64? {
        let span = try header.span(ofField: index, in: bytes)
        // Safe: span is not empty (every field has a tag) and lies within bytes.
        guard bytes[span.lowerBound] == Tag.int64.rawValue else { return nil }
        let start = span.lowerBound &+ 1
        let width = span.upperBound &- start
        // Safe: start + 8 ≤ bytes.count is checked first. One unaligned load of the payload's word, its low
        // `width` bytes kept: the payload is least significant byte first (FORMAT.md §6).
        guard width >= 1, width <= 8, start &+ 8 <= bytes.count else {
            return try integerPayload(UnsafeRawBufferPointer(rebasing: bytes[start..<span.upperBound]), field: index)
        }
        let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        // Safe: width is 1 ... 8, so the shift is 0 ... 56.
        let shift = UInt64(64 &- 8 &* width)
        let value = Int64(bitPattern: word << shift) >> shift
        // The shortest form's width (CompactInteger.signedWidth): the bits that differ from the sign, plus the sign.
        let magnitude = UInt64(bitPattern: value ^ (value >> 63))
        guard (64 &- magnitude.leadingZeroBitCount &+ 8) / 8 == width else {
            throw notShortest(value, width: width, field: index)
        }
        return value
    }

    /// The byte range of field `index` of a row of the common form, the one ``Header/decode(_:)-(UnsafeRawBufferPointer)``
    /// decodes inline (entity ID, version and field count of one varint byte each, one-byte field ends), checked as
    /// ``Header/decode(_:)-(UnsafeRawBufferPointer)`` and ``Header/span(ofField:in:)`` check it; nil for a row of
    /// another form, an index outside the row or a damaged header or span, which the caller reads the whole way (that
    /// way gives the error). Makes no call: a caller that inlines it holds nothing alive across it (an inlined read of
    /// a kept row through `decode` and `span` retained the row's bytes around the error paths' calls).
    @inlinable @inline(__always)
    public static func commonFieldSpan(ofField index: Int, in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        guard bytes.count >= 4 else { return nil }
        let word = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
        let fieldCount = Int(word >> 24)
        // Safe: fieldCount ≤ 127 (its varint byte is below 0x80), so the sum is at most 131.
        let fieldsOffset = 4 &+ fieldCount
        guard word & 0x8080_80FF == 0x21, index >= 0, index < fieldCount, bytes.count >= fieldsOffset else {
            return nil
        }
        // Safe: bytes.count >= fieldsOffset.
        let fieldsLength = bytes.count &- fieldsOffset
        // Safe: index < fieldCount, so both ends lie in the table (bytes 4 ..< fieldsOffset).
        let start = index == 0 ? 0 : Int(bytes[4 &+ index &- 1])
        let end = Int(bytes[4 &+ index])
        guard Int(bytes[fieldsOffset &- 1]) == fieldsLength, start < end, end <= fieldsLength else { return nil }
        // Safe: end ≤ fieldsLength, so both sums are at most bytes.count.
        return (fieldsOffset &+ start)..<(fieldsOffset &+ end)
    }

    /// The integer an int64 field's payload (the bytes after its tag, `payload` within `bytes`) holds; nil for a
    /// payload that is not 1 ... 8 bytes or not the shortest form, which ``integerField(at:in:header:)`` reports. Makes
    /// no call (see ``commonFieldSpan(ofField:in:)``).
    @inlinable @inline(__always)
    public static func shortestInteger(payload: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Int64? {
        let width = payload.count
        guard width >= 1, width <= 8 else { return nil }
        var bits: UInt64 = 0
        // Least significant byte first (FORMAT.md §6); the caller's range lies within bytes.
        for offset in payload.reversed() { bits = bits << 8 | UInt64(bytes[offset]) }
        // Safe: width is 1 ... 8, so the shift is 0 ... 56.
        let shift = UInt64(64 &- 8 &* width)
        let value = Int64(bitPattern: bits << shift) >> shift
        // The shortest form's width (CompactInteger.signedWidth): the bits that differ from the sign, plus the sign.
        let magnitude = UInt64(bitPattern: value ^ (value >> 63))
        return (64 &- magnitude.leadingZeroBitCount &+ 8) / 8 == width ? value : nil
    }

    /// Field `index` read in place when it is a reference (``Field/reference``): the referenced row ID; nil for any
    /// other tag. What grouping by a to-one reads on every row.
    ///
    /// - Throws: the same ``FormatError`` cases as ``field(at:in:)-(_,UnsafeRawBufferPointer)``.
    @inlinable @inline(__always)
    public static func referenceField(
        at index: Int, in bytes: UnsafeRawBufferPointer, header: Header
    ) throws(FormatError) -> UInt64? {
        let span = try header.span(ofField: index, in: bytes)
        // Safe: span is not empty (every field has a tag) and lies within bytes.
        guard bytes[span.lowerBound] == Tag.reference.rawValue else { return nil }
        return try referencePayload(
            UnsafeRawBufferPointer(rebasing: bytes[(span.lowerBound &+ 1)..<span.upperBound]), field: index)
    }

    @usableFromInline
    static func referencePayload(_ payload: UnsafeRawBufferPointer, field index: Int) throws(FormatError) -> UInt64 {
        try CompactInteger.readUnsigned(payload, field: index)
    }

    // Out of line: the slow road and the error of the inlined integerField(at:in:header:).
    @usableFromInline
    static func integerPayload(_ payload: UnsafeRawBufferPointer, field index: Int) throws(FormatError) -> Int64 {
        try CompactInteger.readSigned(payload, field: index)
    }

    @usableFromInline
    static func notShortest(_ value: Int64, width: Int, field index: Int) -> FormatError {
        .invalid("field \(index): integer \(value) in \(width) bytes, not its shortest form")
    }

    /// Decodes field `index` of a row whose header was decoded already (a scan that read it to filter by entity).
    ///
    /// - Throws: the same ``FormatError`` cases as ``field(at:in:)-(_,UnsafeRawBufferPointer)``.
    package static func field(
        at index: Int, in bytes: UnsafeRawBufferPointer, header: Header
    ) throws(FormatError) -> Field {
        let span = try header.span(ofField: index, in: bytes)
        return try decodeField(UnsafeRawBufferPointer(rebasing: bytes[span]), index: index)
    }

    /// Decodes field `index` of a row held in an array; see ``field(at:in:)-(_,UnsafeRawBufferPointer)``.
    ///
    /// - Throws: the same ``FormatError`` cases as the buffer overload.
    public static func field(at index: Int, in bytes: [UInt8]) throws(FormatError) -> Field {
        try bytes.withUnsafeBytes { buffer in Result { () throws(FormatError) in try field(at: index, in: buffer) } }
            .get()
    }

    /// Decodes a whole row, checking every offset and field.
    ///
    /// - Parameter bytes: a whole row.
    /// - Returns: the header and the fields in order.
    /// - Throws: what ``field(at:in:)-(_,UnsafeRawBufferPointer)`` throws, for the first bad field.
    public static func decodeAll(
        _ bytes: UnsafeRawBufferPointer
    ) throws(FormatError) -> (header: Header, fields: [Field]) {
        let header = try Header.decode(bytes)
        var fields: [Field] = []
        fields.reserveCapacity(header.fieldCount)
        for index in 0..<header.fieldCount {
            let span = try header.span(ofField: index, in: bytes)
            fields.append(try decodeField(UnsafeRawBufferPointer(rebasing: bytes[span]), index: index))
        }
        return (header, fields)
    }

    /// Decodes a whole row held in an array; see ``decodeAll(_:)-(UnsafeRawBufferPointer)``.
    ///
    /// - Throws: the same ``FormatError`` cases as the buffer overload.
    public static func decodeAll(_ bytes: [UInt8]) throws(FormatError) -> (header: Header, fields: [Field]) {
        try bytes.withUnsafeBytes { buffer in Result { () throws(FormatError) in try decodeAll(buffer) } }.get()
    }

    /// The header of a row and the blobs its fields name (``Field/blobReference``), by field index: what a save
    /// needs of the row it replaces or deletes (its version to check, the blobs to keep or free), without decoding
    /// the other fields. Every offset is checked as ``decodeAll(_:)-(UnsafeRawBufferPointer)`` checks it; only
    /// blob references are decoded.
    ///
    /// - Throws: what ``Header/decode(_:)-(UnsafeRawBufferPointer)`` throws; ``FormatError/invalidField(_:)`` for
    ///   offsets that do not increase or a blob reference whose payload is not its shortest form;
    ///   ``FormatError/truncated(needed:available:)`` for a field that ends past the row.
    public static func blobReferences(
        in bytes: UnsafeRawBufferPointer
    ) throws(FormatError) -> (header: Header, blobs: [Int: UInt64]) {
        let header = try Header.decode(bytes)
        var blobs: [Int: UInt64] = [:]
        for index in 0..<header.fieldCount {
            let span = try header.span(ofField: index, in: bytes)
            // Safe: a span is never empty (start < end) and lies within bytes.
            guard bytes[span.lowerBound] == Tag.blobReference.rawValue else { continue }
            if case .blobReference(let blob) = try decodeField(
                UnsafeRawBufferPointer(rebasing: bytes[span]), index: index)
            {
                blobs[index] = blob
            }
        }
        return (header, blobs)
    }

    /// ``blobReferences(in:)-(UnsafeRawBufferPointer)`` of a row held in an array.
    public static func blobReferences(_ bytes: [UInt8]) throws(FormatError) -> (header: Header, blobs: [Int: UInt64]) {
        try bytes.withUnsafeBytes { buffer in Result { () throws(FormatError) in try blobReferences(in: buffer) } }
            .get()
    }

    /// Checks field `index` of a row whose header was decoded already by the rules ``field(at:in:)-(_,UnsafeRawBufferPointer)``
    /// applies, without making a string, URI or byte array: those payloads are checked where they lie (UTF-8 for
    /// strings and URIs). What a reader that keeps the row's bytes and decodes each field when it is read checks
    /// once, up front; every other kind is decoded (it allocates nothing) and returned.
    ///
    /// - Returns: the field's tag, and the field itself unless its tag is ``Tag/string``, ``Tag/uri`` or
    ///   ``Tag/bytes``.
    /// - Throws: exactly what ``field(at:in:)-(_,UnsafeRawBufferPointer)`` throws for the same bytes.
    public static func checkField(
        at index: Int, in bytes: UnsafeRawBufferPointer, header: Header
    ) throws(FormatError) -> (tag: Tag, field: Field?) {
        let span = try header.span(ofField: index, in: bytes)
        let field = UnsafeRawBufferPointer(rebasing: bytes[span])
        // Safe: a span is never empty (every field has its tag).
        switch Tag(rawValue: field[0]) {
        case .bytes:
            return (.bytes, nil)
        case .string, .uri:
            let payload = UnsafeRawBufferPointer(rebasing: field[1...])
            // The check ByteReader.readUTF8 makes; a string is made (and dropped) only when the bytes are not ASCII.
            guard ByteReader.isASCII(payload) || String(validating: payload, as: UTF8.self) != nil else {
                throw .invalidField("string is not valid UTF-8")
            }
            return (Tag(rawValue: field[0])!, nil)
        default:
            let decoded = try decodeField(field, index: index)
            return (decoded.tag, decoded)
        }
    }

    /// Decodes one field from exactly its bytes (tag and payload).
    ///
    /// Numbers, dates and booleans are read where they lie, without a reader: the field's span is known, so only the
    /// payload's length needs checking (this path is every indexed or compared field of every row a scan reads).
    static func decodeField(_ field: UnsafeRawBufferPointer, index: Int) throws(FormatError) -> Field {
        guard let rawTag = field.first else { throw .truncated(needed: 1, available: 0) }
        guard let tag = Tag(rawValue: rawTag) else { throw .invalid("field \(index): unknown tag \(rawTag)") }
        // Safe: the field holds its tag.
        let payload = UnsafeRawBufferPointer(rebasing: field[1...])
        let payloadLength = payload.count
        func expectPayload(_ size: Int) throws(FormatError) {
            guard payloadLength == size else {
                throw .invalid("field \(index): \(tag) payload of \(payloadLength) bytes, expected \(size)")
            }
        }
        switch tag {
        case .null:
            try expectPayload(0)
            return .null
        case .int64:
            return .int64(try CompactInteger.readSigned(payload, field: index))
        case .double:
            try expectPayload(8)
            return .double(Double(bitPattern: UInt64(littleEndian: payload.loadUnaligned(as: UInt64.self))))
        case .float:
            try expectPayload(4)
            return .float(Float(bitPattern: UInt32(littleEndian: payload.loadUnaligned(as: UInt32.self))))
        case .boolean:
            try expectPayload(1)
            switch payload[0] {
            case 0: return .boolean(false)
            case 1: return .boolean(true)
            case let byte: throw .invalid("field \(index): boolean byte \(byte), expected 0 or 1")
            }
        case .date:
            try expectPayload(8)
            return .date(
                secondsSinceReferenceDate: Double(
                    bitPattern: UInt64(littleEndian: payload.loadUnaligned(as: UInt64.self))))
        case .blobReference:
            return .blobReference(try CompactInteger.readUnsigned(payload, field: index))
        case .reference:
            return .reference(try CompactInteger.readUnsigned(payload, field: index))
        case .string:
            var reader = ByteReader(payload)
            return .string(try reader.readUTF8(payloadLength))
        case .bytes:
            var reader = ByteReader(payload)
            return .bytes(try reader.readBytes(payloadLength))
        case .uuid:
            try expectPayload(16)
            let high = UInt64(littleEndian: payload.loadUnaligned(as: UInt64.self)).byteSwapped
            let low = UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: 8, as: UInt64.self)).byteSwapped
            return .uuid(UInt128(high) << 64 | UInt128(low))
        case .decimal:
            var reader = ByteReader(payload)
            return .decimal(try DecimalBits.decode(&reader, field: index))
        case .uri:
            var reader = ByteReader(payload)
            return .uri(try reader.readUTF8(payloadLength))
        }
    }
}

extension RowRecord.Header {
    /// Writes the bytes before the field ends (form, entity, version, field count) at the start of `raw`, which holds
    /// at least ``endsOffset`` bytes, and returns where the field ends begin: every row writer's one header layout.
    @inline(__always)
    func writeLeadingBytes(into raw: UnsafeMutableRawBufferPointer) -> Int {
        raw[0] = RowRecord.form(endWidth: endWidth)
        var position = 1
        Varint.write(UInt64(entityID), into: raw, at: &position)
        Varint.write(rowVersion, into: raw, at: &position)
        Varint.write(UInt64(fieldCount), into: raw, at: &position)
        return position
    }

    /// Stores field end `end` at `position` of `raw`, in this header's end width.
    @inline(__always)
    func storeEnd(_ end: Int, into raw: UnsafeMutableRawBufferPointer, at position: Int) {
        switch endWidth {
        case 1: raw[position] = UInt8(truncatingIfNeeded: end)
        case 2: raw.storeLE(UInt16(truncatingIfNeeded: end), at: position)
        default: raw.storeLE(UInt32(truncatingIfNeeded: end), at: position)
        }
    }
}
