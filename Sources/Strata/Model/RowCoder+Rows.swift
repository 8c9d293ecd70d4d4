import StrataFormat

extension RowCoder {
    /// A row's values, to-one references and blob references, decoded field by field where the row lies.
    struct DecodedRow {
        /// One value per persistent attribute, in storage order; nil for an attribute whose value is a blob.
        var values: [AttributeValue?]
        /// One reference per to-one relationship.
        var references: [StoredReference?]
        /// The blob each attribute kept outside the row refers to, by storage index.
        var external: [Int: UInt64]
    }

    /// Decodes every field of a row of this coder's entity, with no array of fields in between (what
    /// ``values(from:)`` and ``references(from:)`` take): the values in storage order, the to-ones, and the blob
    /// references, whose values stay nil until read.
    ///
    /// - Parameters:
    ///   - bytes: a whole row.
    ///   - header: its header, decoded.
    /// - Throws: `FormatError` for a damaged field (every field is decoded and checked, as
    ///   `RowRecord.decodeAll` checks them); ``RowCodingError/fieldCountMismatch(expected:found:)`` and what
    ///   ``value(from:of:transformers:)`` and ``values(from:)`` throw.
    func decodeRow(_ bytes: UnsafeRawBufferPointer, header: RowRecord.Header) throws -> DecodedRow {
        guard header.fieldCount == entity.storedFields.count else {
            throw RowCodingError.fieldCountMismatch(expected: entity.storedFields.count, found: header.fieldCount)
        }
        let attributes = entity.persistentAttributes
        var row = DecodedRow(values: [], references: [], external: [:])
        row.values.reserveCapacity(attributes.count)
        for attribute in attributes {
            let field = try RowRecord.field(at: attribute.fieldIndex!, in: bytes, header: header)
            if case .blobReference(let blob) = field {
                // Kept outside the row: read when the object reads the value.
                row.external[attribute.storageIndex!] = blob
                row.values.append(try Self.value(from: .null, of: attribute, transformers: transformers))
            } else {
                row.values.append(try Self.value(from: field, of: attribute, transformers: transformers))
            }
        }
        let toOnes = entity.toOneRelationships
        row.references.reserveCapacity(toOnes.count)
        for relationship in toOnes {
            let position = relationship.fieldIndex!
            row.references.append(
                try Self.reference(
                    try RowRecord.field(at: position, in: bytes, header: header),
                    try RowRecord.field(at: position + 1, in: bytes, header: header), of: relationship))
        }
        return row
    }

    /// Checks every field of a row of this coder's entity as ``decodeRow(_:header:)`` would decode it, without
    /// making the values: what a row kept as its record (``StoredRow``) needs so that decoding any field of it later
    /// cannot fail. Each field is first looked at in place (``FieldCheck``); one that is not certainly right there (a
    /// blob reference, a string that is not ASCII, a decimal, a UUID, damage) is checked as `decodeRow` checks it:
    /// strings and binary values where they lie, other values decoded (which allocates nothing) and dropped. Fields
    /// are checked in the same order either way, so the first wrong one gives the same error. The entity must keep its
    /// rows as records (no transformable or URI attribute, whose values can fail to decode after their fields are
    /// checked).
    ///
    /// - Returns: whether a field references a blob (a binary value kept outside the row): learnt here, where each such
    ///   field is looked at anyway, so that the row kept as its record need not be searched for them again.
    /// - Throws: what ``decodeRow(_:header:)`` throws for the same bytes.
    func checkRow(_ bytes: UnsafeRawBufferPointer, header: RowRecord.Header) throws -> Bool {
        precondition(entity.keepsRowsAsRecords, "\(entity.name)'s rows are not kept as records")
        guard header.fieldCount == entity.storedFields.count else {
            throw RowCodingError.fieldCountMismatch(expected: entity.storedFields.count, found: header.fieldCount)
        }
        // The common row, in one pass (a blob reference is never accepted there).
        if acceptsEveryField(bytes, header: header) { return false }
        var referencesBlobs = false
        // A blob reference is never accepted in place: each one comes through `checkField`.
        for (storageIndex, check) in fieldChecks.enumerated() where !check.accepts(in: bytes, header: header) {
            if try checkField(of: entity.persistentAttributes[storageIndex], in: bytes, header: header) {
                referencesBlobs = true
            }
        }
        try checkToOnes(bytes, header: header)
        return referencesBlobs
    }

    /// ``checkRow(_:header:)`` for a row made from a checked record without blob references, some of its fields
    /// replaced (an update of its changed fields): only the replaced fields are checked, the others being the record's.
    ///
    /// - Parameters:
    ///   - changed: the storage indexes of the attributes whose fields were replaced.
    ///   - references: whether the to-ones' fields were replaced.
    /// - Returns: whether a replaced field references a blob.
    /// - Throws: what ``checkRow(_:header:)`` throws for the same bytes.
    func checkReplacedFields(
        _ bytes: UnsafeRawBufferPointer, header: RowRecord.Header, changed: PropertyIndexSet, references: Bool
    ) throws -> Bool {
        precondition(entity.keepsRowsAsRecords, "\(entity.name)'s rows are not kept as records")
        guard header.fieldCount == entity.storedFields.count else {
            throw RowCodingError.fieldCountMismatch(expected: entity.storedFields.count, found: header.fieldCount)
        }
        var referencesBlobs = false
        for storageIndex in changed where !fieldChecks[storageIndex].accepts(in: bytes, header: header) {
            if try checkField(of: entity.persistentAttributes[storageIndex], in: bytes, header: header) {
                referencesBlobs = true
            }
        }
        guard references else { return referencesBlobs }
        try checkToOnes(bytes, header: header)
        return referencesBlobs
    }

    /// Checks the to-ones' fields as ``decodeRow(_:header:)`` would decode them.
    private func checkToOnes(_ bytes: UnsafeRawBufferPointer, header: RowRecord.Header) throws {
        for (toOneIndex, field) in toOneFields.enumerated()
        where !FieldCheck.acceptsToOne(at: field, in: bytes, header: header) {
            _ = try Self.reference(
                try RowRecord.field(at: field, in: bytes, header: header),
                try RowRecord.field(at: field + 1, in: bytes, header: header),
                of: entity.toOneRelationships[toOneIndex])
        }
    }

    /// Checks one attribute's field as ``decodeRow(_:header:)`` would decode it (``checkRow(_:header:)``'s road for a
    /// field it cannot accept in place), and tells whether it references a blob.
    private func checkField(
        of attribute: AttributeDescription, in bytes: UnsafeRawBufferPointer, header: RowRecord.Header
    ) throws -> Bool {
        let (tag, field) = try RowRecord.checkField(at: attribute.fieldIndex!, in: bytes, header: header)
        if let field {
            // Kept outside the row: only binary data is (a store writes no other kind there).
            if case .blobReference = field {
                guard attribute.type == .binaryData else {
                    throw RowCodingError.fieldTypeMismatch(
                        attribute: attribute.name, expected: attribute.type, found: .blobReference)
                }
                return true
            }
            _ = try Self.value(from: field, of: attribute, transformers: transformers)
            return false
        } else {
            // A string or bytes: right for its attribute's type, as value(from:of:) would find.
            switch (attribute.type, tag) {
            case (.string, .string), (.binaryData, .bytes): return false
            default:
                throw RowCodingError.fieldTypeMismatch(attribute: attribute.name, expected: attribute.type, found: tag)
            }
        }
    }
}
