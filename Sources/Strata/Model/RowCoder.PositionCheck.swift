import StrataFormat

extension RowCoder {
    /// What ``RowCoder/checkRow(_:header:)``'s one pass over a row accepts at one position: an attribute's field as
    /// its ``FieldCheck`` accepts it, or a to-one's reference or entity field as ``FieldCheck/acceptsToOne(at:in:header:)``
    /// accepts the pair.
    enum PositionCheck: Sendable {
        case attribute(FieldCheck.Kind)
        /// A to-one's row ID: null, or a reference in its shortest form.
        case reference
        /// A to-one's entity ID: null.
        case referenceEntity
    }

    /// Whether every field of a row is certainly one that ``checkRow(_:header:)``'s whole check accepts, found in one
    /// pass over the row's field ends, each end read once (looking at each field through `span(ofField:in:)`, as the
    /// whole check does, reads two ends and checks them again, and its integers and references a third time: about
    /// half of the check, W4c.graph). Yes implies no field references a blob (a blob reference is never accepted
    /// here). No means "not sure": a row with ends wider than a byte (a fields area over 255 bytes) or any field this
    /// pass does not accept (a blob reference, a string that is not ASCII, a decimal, a UUID, damage) is checked by
    /// the whole check, which gives the error, in its order.
    ///
    /// - Parameters:
    ///   - bytes: a whole row.
    ///   - header: its header, decoded (which checked that the end table fits and the last end is the fields' length),
    ///     with as many fields as ``positionChecks`` has positions.
    @inline(__always)
    func acceptsEveryField(_ bytes: UnsafeRawBufferPointer, header: RowRecord.Header) -> Bool {
        guard header.fieldEndWidth == 1 else { return false }
        let fieldsOffset = header.fieldsOffset
        // Safe: decode checked bytes.count >= fieldsOffset, and the table of fieldCount one-byte ends ends there.
        let fieldsLength = bytes.count &- fieldsOffset
        let endsOffset = fieldsOffset &- header.fieldCount
        var start = 0
        for (position, check) in positionChecks.enumerated() {
            // Safe: position < fieldCount, so the end lies in the table.
            let end = Int(bytes[endsOffset &+ position])
            // Every field has its tag, and lies within the fields area.
            guard start < end, end <= fieldsLength else { return false }
            // Safe: start < end ≤ fieldsLength, so the tag and the payload lie within bytes.
            let tag = bytes[fieldsOffset &+ start]
            let payload = fieldsOffset &+ start &+ 1
            let length = end &- start &- 1
            start = end
            if tag == RowRecord.Tag.null.rawValue {
                guard length == 0 else { return false }
                continue
            }
            switch check {
            case .attribute(let kind):
                guard kind.accepts(tag: tag, payload: payload, length: length, in: bytes) else { return false }
            case .reference:
                // The shortest unsigned form: 1 ... 8 bytes, the last (most significant) not zero unless it is the
                // only one (CompactInteger.readUnsigned).
                guard tag == RowRecord.Tag.reference.rawValue, length >= 1, length <= 8,
                    length == 1 || bytes[payload &+ length &- 1] != 0
                else { return false }
            case .referenceEntity:
                // Not null (null was taken above).
                return false
            }
        }
        return true
    }
}
