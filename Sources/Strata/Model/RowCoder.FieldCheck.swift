import StrataFormat

extension RowCoder {
    /// How ``RowCoder/checkRow(_:header:)`` checks one attribute's field where it lies: the field's position and what
    /// its attribute's type accepts, with no reference to the attribute (checking a row retained and released each
    /// attribute and its type's payload: a third of the check).
    ///
    /// ``accepts(in:header:)`` answers yes only for a field that `checkRow`'s whole check accepts too; its no means
    /// "not sure", and the field is then checked as before, which gives the error.
    struct FieldCheck: Sendable {
        enum Kind: Sendable {
            case integer(ClosedRange<Int64>)
            case double, float, boolean, date, string, binaryData
            /// A kind checked by decoding only (decimal, UUID).
            case decoded

            /// Whether a field of this kind with tag `tag` (not null) and a payload of `length` bytes at `payload`
            /// in `bytes` certainly decodes to a value of the type (see ``FieldCheck/accepts(in:header:)``).
            @inline(__always)
            func accepts(tag: UInt8, payload: Int, length: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
                switch self {
                case .integer(let range):
                    // The shortest two's complement form of 1 ... 8 bytes, least significant first, as
                    // RowRecord.integerField reads it.
                    guard tag == RowRecord.Tag.int64.rawValue, length >= 1, length <= 8 else { return false }
                    var bits: UInt64 = 0
                    // Safe: the payload's bytes lie within the field's span.
                    for offset in stride(from: payload &+ length &- 1, through: payload, by: -1) {
                        bits = bits << 8 | UInt64(bytes[offset])
                    }
                    // Safe: length is 1 ... 8, so the shift is 0 ... 56.
                    let shift = UInt64(64 &- 8 &* length)
                    let value = Int64(bitPattern: bits << shift) >> shift
                    let magnitude = UInt64(bitPattern: value ^ (value >> 63))
                    return (64 &- magnitude.leadingZeroBitCount &+ 8) / 8 == length && range.contains(value)
                case .double:
                    return tag == RowRecord.Tag.double.rawValue && length == 8
                case .float:
                    return tag == RowRecord.Tag.float.rawValue && length == 4
                case .boolean:
                    // Safe: the payload's one byte lies within the span.
                    return tag == RowRecord.Tag.boolean.rawValue && length == 1 && bytes[payload] <= 1
                case .date:
                    guard tag == RowRecord.Tag.date.rawValue, length == 8 else { return false }
                    return !Double(
                        bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: payload, as: UInt64.self))
                    )
                    .isNaN
                case .string:
                    return tag == RowRecord.Tag.string.rawValue
                        && ByteReader.isASCII(UnsafeRawBufferPointer(rebasing: bytes[payload..<(payload &+ length)]))
                case .binaryData:
                    return tag == RowRecord.Tag.bytes.rawValue
                case .decoded:
                    return false
                }
            }
        }

        /// The field's position in the row.
        let field: Int
        let kind: Kind

        init(_ attribute: AttributeDescription) {
            field = attribute.fieldIndex!
            switch attribute.type {
            case .integer16, .integer32, .integer64: kind = .integer(attribute.type.integerRange!)
            case .double: kind = .double
            case .float: kind = .float
            case .boolean: kind = .boolean
            case .date: kind = .date
            case .string: kind = .string
            case .binaryData: kind = .binaryData
            default: kind = .decoded
            }
        }

        /// Whether the field is certainly one the whole check accepts: null, or its type's tag with a payload that
        /// decodes to a value of the type (an integer in its shortest form and range, a date that is a number, an
        /// ASCII string, bytes kept in the row). False for anything else, a blob reference and a non-ASCII string
        /// included.
        @inline(__always)
        func accepts(in bytes: UnsafeRawBufferPointer, header: RowRecord.Header) -> Bool {
            guard let span = try? header.span(ofField: field, in: bytes) else { return false }
            // Safe: a span is never empty (every field has its tag) and lies within bytes.
            let tag = bytes[span.lowerBound]
            let payload = span.lowerBound &+ 1
            let length = span.upperBound &- payload
            if tag == RowRecord.Tag.null.rawValue { return length == 0 }
            return kind.accepts(tag: tag, payload: payload, length: length, in: bytes)
        }

        /// Whether the to-one whose reference field is at `field` is certainly one the whole check accepts: a null or
        /// a reference in its shortest form, and a null entity field. False for anything else.
        @inline(__always)
        static func acceptsToOne(at field: Int, in bytes: UnsafeRawBufferPointer, header: RowRecord.Header) -> Bool {
            guard let reference = try? header.span(ofField: field, in: bytes),
                let entity = try? header.span(ofField: field &+ 1, in: bytes)
            else { return false }
            // Safe: spans are never empty and lie within bytes.
            guard bytes[entity.lowerBound] == RowRecord.Tag.null.rawValue, entity.count == 1 else { return false }
            if bytes[reference.lowerBound] == RowRecord.Tag.null.rawValue { return reference.count == 1 }
            // `try?` flattens: nil for another tag and for a damaged reference alike.
            return (try? RowRecord.referenceField(at: field, in: bytes, header: header)) != nil
        }
    }
}
