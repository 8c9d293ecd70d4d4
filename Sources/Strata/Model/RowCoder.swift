import Foundation
import StrataFormat

/// Converts the persistent attribute values of one entity to a row record and back: the bridge
/// between ``AttributeValue`` and `RowRecord` (StrataFormat).
///
/// Values are given and returned in row order: element i belongs to
/// ``EntityDescription/persistentAttributes``[i]. Each type maps to one field kind:
///
/// | attribute type | field |
/// | --- | --- |
/// | integer 16/32/64 | `int64` (decoding checks the width) |
/// | double, float, boolean, string | `double`, `float`, `boolean`, `string` |
/// | decimal | `decimal`: Foundation's exact fields, so every `Decimal` comes back exactly |
/// | date | `date`: `timeIntervalSinceReferenceDate`, the `Double` `Date` itself holds, so exactly |
/// | binary data | `bytes` (a `blobReference` is the store's to resolve first) |
/// | UUID | `uuid` |
/// | URI | `uri`: `absoluteString` (a relative URL comes back absolute) |
/// | transformable | `bytes`: the value transformer's output (a `.data` value is taken as that output already) |
/// | nil | `null` |
///
/// A blob reference reaching ``value(from:of:transformers:)`` throws
/// ``RowCodingError/unresolvedBlobReference(attribute:blobID:)``.
///
/// For example:
///
///     let coder = RowCoder(entity: employee)
///     let bytes = try coder.encode([.string("Ada"), .integer(100), nil], rowVersion: 1)
///     let row = try coder.decode(bytes)                       // (rowVersion: 1, values: [...])
///     let name = try coder.value(of: employee.attributesByName["name"]!, in: bytes)
///
/// ## Topics
///
/// ### Creating a coder
/// - ``init(entity:transformers:)``
///
/// ### Whole rows
/// - ``encode(_:references:rowVersion:)``
/// - ``decode(_:)``
/// - ``fields(for:references:)``
/// - ``values(from:)``
/// - ``references(from:)``
///
/// ### One value
/// - ``value(of:in:)``
/// - ``field(for:of:transformers:)``
/// - ``value(from:of:transformers:)``
public final class RowCoder: Sendable {
    /// The entity whose rows this coder reads and writes.
    public let entity: EntityDescription
    /// Where transformable attributes find their transformers.
    public let transformers: ValueTransformerRegistry
    /// The entity IDs whose rows hold every persistent attribute of `entity` at the same position:
    /// the entity and its descendants.
    private let compatibleEntityIDs: Set<UInt16>
    /// How ``checkRow(_:header:)`` checks each persistent attribute's field in place, in storage order.
    let fieldChecks: [FieldCheck]
    /// The position of each to-one's reference field (its entity field follows), by
    /// ``RelationshipDescription/toOneIndex``.
    let toOneFields: [Int]
    /// How ``checkRow(_:header:)``'s one pass looks at the field at each position of a row (``PositionCheck``).
    let positionChecks: [PositionCheck]

    /// A coder for the rows of `entity`.
    ///
    /// - Parameters:
    ///   - entity: the entity.
    ///   - transformers: where transformable attributes find their transformers (default: the shared registry).
    public init(entity: EntityDescription, transformers: ValueTransformerRegistry = .shared) {
        self.entity = entity
        self.transformers = transformers
        self.compatibleEntityIDs = Set(entity.allEntitiesInHierarchyBelow.map(\.entityID))
        let fieldChecks = entity.persistentAttributes.map(FieldCheck.init)
        self.fieldChecks = fieldChecks
        self.toOneFields = entity.toOneRelationships.map { $0.fieldIndex! }
        self.positionChecks = entity.storedFields.enumerated().map { position, field in
            switch field {
            case .attribute(let storageIndex):
                precondition(fieldChecks[storageIndex].field == position, "an attribute's field is where it is stored")
                return .attribute(fieldChecks[storageIndex].kind)
            case .reference: return .reference
            case .referenceEntity: return .referenceEntity
            }
        }
    }

    // MARK: - Whole rows

    /// Encodes a row of the entity.
    ///
    /// - Parameters:
    ///   - values: one value per persistent attribute, in storage order.
    ///   - references: one value per to-one relationship, or none for a row whose to-ones are all nil.
    ///   - rowVersion: the row's version.
    /// - Returns: the row record.
    /// - Throws: ``RowCodingError/valueTypeMismatch(attribute:expected:)``,
    ///   ``RowCodingError/transformerNotRegistered(attribute:name:)``,
    ///   ``RowCodingError/transformationFailed(attribute:name:reason:)``.
    public func encode(
        _ values: [AttributeValue?], references: [StoredReference?] = [], rowVersion: UInt64
    ) throws(RowCodingError) -> [UInt8] {
        RowRecord.encode(
            entityID: entity.entityID, rowVersion: rowVersion, fields: try fields(for: values, references: references))
    }

    /// Decodes a whole row of the entity.
    ///
    /// - Parameter bytes: a row record of this entity.
    /// - Returns: the row's version and one value per persistent attribute, in row order.
    /// - Throws: ``RowCodingError/format(_:)`` for a damaged row, ``RowCodingError/entityMismatch(expected:found:)``,
    ///   ``RowCodingError/fieldCountMismatch(expected:found:)``, and what ``value(from:of:transformers:)`` throws.
    public func decode(
        _ bytes: [UInt8]
    ) throws(RowCodingError) -> (rowVersion: UInt64, values: [AttributeValue?], references: [StoredReference?]) {
        let decoded: (header: RowRecord.Header, fields: [RowRecord.Field])
        do {
            decoded = try RowRecord.decodeAll(bytes)
        } catch {
            throw .format(error)
        }
        guard decoded.header.entityID == entity.entityID else {
            throw .entityMismatch(expected: entity.entityID, found: decoded.header.entityID)
        }
        return (decoded.header.rowVersion, try values(from: decoded.fields), try references(from: decoded.fields))
    }

    /// Converts values to fields, without encoding a row (for a store that rewrites some fields, e.g.
    /// large binary values into blob references).
    ///
    /// - Parameter values: one value per persistent attribute, in row order.
    /// - Returns: one field per value.
    /// - Throws: what ``encode(_:rowVersion:)`` throws.
    public func fields(
        for values: [AttributeValue?], references: [StoredReference?] = []
    ) throws(RowCodingError) -> [RowRecord.Field] {
        let attributes = entity.persistentAttributes
        precondition(
            values.count == attributes.count,
            "\(values.count) values for \(attributes.count) persistent attributes of \(entity.name)")
        precondition(
            references.isEmpty || references.count == entity.toOneRelationships.count,
            "\(references.count) references for \(entity.toOneRelationships.count) to-ones of \(entity.name)")
        var fields: [RowRecord.Field] = []
        fields.reserveCapacity(entity.storedFields.count)
        for stored in entity.storedFields {
            switch stored {
            case .attribute(let index):
                fields.append(try Self.field(for: values[index], of: attributes[index], transformers: transformers))
            case .reference(let index):
                fields.append(references.isEmpty ? .null : references[index].map { .reference($0.rowID) } ?? .null)
            case .referenceEntity(let index):
                let reference = references.isEmpty ? nil : references[index]
                if let reference, !entity.toOneRelationships[index].destinationEntity.subentities.isEmpty {
                    fields.append(.int64(Int64(reference.entity.entityID)))
                } else {
                    fields.append(.null)
                }
            }
        }
        return fields
    }

    /// The fields an update of some values writes, by position in the row and in its order (for
    /// `RowRecord.encode(entityID:rowVersion:replacing:in:header:)`, which keeps the other fields' bytes): the field
    /// of each value `changed` names, and both fields of every to-one when `references` is given.
    ///
    /// - Parameters:
    ///   - changed: storage indexes of the values that changed.
    ///   - values: values in storage order; only the slots `changed` names are read.
    ///   - references: every to-one's value by ``RelationshipDescription/toOneIndex`` when the to-ones are rewritten,
    ///     nil when they keep their fields.
    /// - Throws: what ``field(for:of:transformers:)`` throws.
    func fields(
        replacing changed: PropertyIndexSet, of values: [AttributeValue?], references: [StoredReference?]?
    ) throws(RowCodingError) -> [(position: Int, field: RowRecord.Field)] {
        let attributes = entity.persistentAttributes
        var fields: [(position: Int, field: RowRecord.Field)] = []
        fields.reserveCapacity(changed.count + (references == nil ? 0 : 2 * entity.toOneRelationships.count))
        guard let references else {
            // Attributes' fields lie in storage order (an entity's after its superentity's, to-ones between): the
            // changed ones, in increasing storage order, are in increasing position order.
            for index in changed {
                fields.append(
                    (
                        fieldChecks[index].field,
                        try Self.field(for: values[index], of: attributes[index], transformers: transformers)
                    ))
            }
            return fields
        }
        for (position, stored) in entity.storedFields.enumerated() {
            switch stored {
            case .attribute(let index):
                guard changed.contains(index) else { continue }
                fields.append(
                    (position, try Self.field(for: values[index], of: attributes[index], transformers: transformers)))
            case .reference(let index):
                fields.append((position, references[index].map { .reference($0.rowID) } ?? .null))
            case .referenceEntity(let index):
                if let reference = references[index],
                    !entity.toOneRelationships[index].destinationEntity.subentities.isEmpty
                {
                    fields.append((position, .int64(Int64(reference.entity.entityID))))
                } else {
                    fields.append((position, .null))
                }
            }
        }
        return fields
    }

    /// Converts a row's fields to its attribute values.
    ///
    /// - Parameter fields: the row's fields (``EntityDescription/storedFields``).
    /// - Returns: one value per persistent attribute, in storage order.
    /// - Throws: ``RowCodingError/fieldCountMismatch(expected:found:)`` and what ``value(from:of:transformers:)``
    ///   throws.
    public func values(from fields: [RowRecord.Field]) throws(RowCodingError) -> [AttributeValue?] {
        let attributes = entity.persistentAttributes
        guard fields.count == entity.storedFields.count else {
            throw .fieldCountMismatch(expected: entity.storedFields.count, found: fields.count)
        }
        var values: [AttributeValue?] = []
        values.reserveCapacity(attributes.count)
        for attribute in attributes {
            values.append(
                try Self.value(from: fields[attribute.fieldIndex!], of: attribute, transformers: transformers))
        }
        return values
    }

    /// Converts a row's fields to its to-one references.
    ///
    /// - Parameter fields: the row's fields (``EntityDescription/storedFields``).
    /// - Returns: one reference per to-one relationship (``EntityDescription/toOneRelationships``), nil for none.
    /// - Throws: ``RowCodingError/fieldCountMismatch(expected:found:)``; ``RowCodingError/format(_:)`` when a
    ///   reference field holds something else or names an entity outside the destination's hierarchy.
    public func references(from fields: [RowRecord.Field]) throws(RowCodingError) -> [StoredReference?] {
        guard fields.count == entity.storedFields.count else {
            throw .fieldCountMismatch(expected: entity.storedFields.count, found: fields.count)
        }
        var references: [StoredReference?] = []
        references.reserveCapacity(entity.toOneRelationships.count)
        for relationship in entity.toOneRelationships {
            let position = relationship.fieldIndex!
            references.append(try Self.reference(fields[position], fields[position + 1], of: relationship))
        }
        return references
    }

    /// A to-one's reference from its two fields (the row ID, and the concrete entity's ID when the destination
    /// has subentities); nil for none.
    static func reference(
        _ row: RowRecord.Field, _ entity: RowRecord.Field, of relationship: RelationshipDescription
    ) throws(RowCodingError) -> StoredReference? {
        switch (row, entity) {
        case (.null, _):
            return nil
        case (.reference(let rowID), .null):
            return StoredReference(entity: relationship.destinationEntity, rowID: rowID)
        case (.reference(let rowID), .int64(let entityID)):
            guard
                let concrete = relationship.destinationEntity.allEntitiesInHierarchyBelow.first(where: {
                    Int64($0.entityID) == entityID
                })
            else {
                throw .format(.invalidField("\(relationship.name) names entity \(entityID)"))
            }
            return StoredReference(entity: concrete, rowID: rowID)
        default:
            throw .format(.invalidField("\(relationship.name) is not a reference"))
        }
    }

    // MARK: - One value

    /// Reads one attribute's value from a row without decoding the other fields. The row may belong to
    /// the coder's entity or to any entity below it (inherited attributes keep their position).
    ///
    /// - Parameters:
    ///   - attribute: a persistent attribute of the coder's entity.
    ///   - bytes: a row record.
    /// - Returns: the value.
    /// - Throws: ``RowCodingError/format(_:)``, ``RowCodingError/entityMismatch(expected:found:)``, and what
    ///   ``value(from:of:transformers:)`` throws.
    public func value(of attribute: AttributeDescription, in bytes: [UInt8]) throws(RowCodingError) -> AttributeValue? {
        guard attribute.storageIndex != nil, entity.isKind(of: attribute.entity) else {
            preconditionFailure("\(attribute.name) is not a persistent attribute of \(entity.name)")
        }
        let header: RowRecord.Header
        do {
            header = try RowRecord.Header.decode(bytes)
        } catch {
            throw .format(error)
        }
        guard compatibleEntityIDs.contains(header.entityID) else {
            throw .entityMismatch(expected: entity.entityID, found: header.entityID)
        }
        let field: RowRecord.Field
        do {
            field = try RowRecord.field(at: attribute.fieldIndex!, in: bytes)
        } catch {
            throw .format(error)
        }
        return try Self.value(from: field, of: attribute, transformers: transformers)
    }

    /// Converts one value to its field.
    ///
    /// - Parameters:
    ///   - value: the attribute's value, nil for none.
    ///   - attribute: a persistent attribute.
    ///   - transformers: where a transformable attribute finds its transformer.
    /// - Returns: the field.
    /// - Throws: ``RowCodingError/valueTypeMismatch(attribute:expected:)``,
    ///   ``RowCodingError/transformerNotRegistered(attribute:name:)``,
    ///   ``RowCodingError/transformationFailed(attribute:name:reason:)``.
    public static func field(
        for value: AttributeValue?, of attribute: AttributeDescription, transformers: ValueTransformerRegistry = .shared
    ) throws(RowCodingError) -> RowRecord.Field {
        guard let value else { return .null }
        switch (attribute.type, value) {
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
            return .int64(number)
        case (.double, .double(let number)): return .double(number)
        case (.float, .float(let number)): return .float(number)
        case (.boolean, .boolean(let flag)): return .boolean(flag)
        case (.string, .string(let string)): return .string(string)
        case (.decimal, .decimal(let decimal)): return .decimal(decimal.rowRecordBits)
        case (.date, .date(let date)): return .date(secondsSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        case (.binaryData, .data(let data)): return .bytes(Array(data))
        case (.uuid, .uuid(let uuid)): return .uuid(uuid.bigEndianNumber)
        case (.uri, .uri(let url)): return .uri(url.absoluteString)
        case (.transformable, .data(let data)):
            // Bytes a transformer wrote elsewhere (an import of Core Data's stored bytes): kept as they are. The
            // object graph never hands a transformable `.data` (key-value coding boxes every value as `.object`).
            return .bytes(Array(data))
        case (.transformable, .object(let object)):
            let name = attribute.valueTransformerName ?? ""
            guard let transformer = transformers.transformer(named: name) else {
                throw .transformerNotRegistered(attribute: attribute.name, name: name)
            }
            do {
                return .bytes(Array(try transformer.transformedValue(object.value)))
            } catch {
                throw .transformationFailed(attribute: attribute.name, name: name, reason: String(describing: error))
            }
        default:
            throw .valueTypeMismatch(attribute: attribute.name, expected: attribute.type)
        }
    }

    /// Converts one field to its attribute's value.
    ///
    /// - Parameters:
    ///   - field: the field.
    ///   - attribute: the persistent attribute it belongs to.
    ///   - transformers: where a transformable attribute finds its transformer.
    /// - Returns: the value, nil for a null field.
    /// - Throws: ``RowCodingError/fieldTypeMismatch(attribute:expected:found:)``,
    ///   ``RowCodingError/integerOutOfRange(attribute:value:)``, ``RowCodingError/invalidURI(attribute:string:)``,
    ///   ``RowCodingError/unresolvedBlobReference(attribute:blobID:)``,
    ///   ``RowCodingError/transformerNotRegistered(attribute:name:)``,
    ///   ``RowCodingError/transformationFailed(attribute:name:reason:)``.
    public static func value(
        from field: RowRecord.Field, of attribute: AttributeDescription,
        transformers: ValueTransformerRegistry = .shared
    ) throws(RowCodingError) -> AttributeValue? {
        switch (attribute.type, field) {
        case (_, .null): return nil
        case (.integer16, .int64(let number)), (.integer32, .int64(let number)), (.integer64, .int64(let number)):
            guard attribute.type.integerRange?.contains(number) ?? false else {
                throw .integerOutOfRange(attribute: attribute.name, value: number)
            }
            return .integer(number)
        case (.double, .double(let number)): return .double(number)
        case (.float, .float(let number)): return .float(number)
        case (.boolean, .boolean(let flag)): return .boolean(flag)
        case (.string, .string(let string)): return .string(string)
        case (.decimal, .decimal(let bits)): return .decimal(Decimal(rowRecordBits: bits))
        case (.date, .date(let seconds)):
            // No Date holds NaN (a damaged row; Foundation traps printing one).
            guard !seconds.isNaN else {
                throw .format(.invalidField("date field of \(attribute.name) is not a number"))
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.binaryData, .bytes(let bytes)): return .data(Data(bytes))
        case (.binaryData, .blobReference(let blobID)), (.transformable, .blobReference(let blobID)):
            throw .unresolvedBlobReference(attribute: attribute.name, blobID: blobID)
        case (.uuid, .uuid(let number)): return .uuid(UUID(bigEndianNumber: number))
        case (.uri, .uri(let string)):
            guard let url = URL(string: string) else { throw .invalidURI(attribute: attribute.name, string: string) }
            return .uri(url)
        case (.transformable, .bytes(let bytes)):
            let name = attribute.valueTransformerName ?? ""
            guard let transformer = transformers.transformer(named: name) else {
                throw .transformerNotRegistered(attribute: attribute.name, name: name)
            }
            do {
                return .object(AnyHashableSendable(try transformer.reverseTransformedValue(Data(bytes))))
            } catch {
                throw .transformationFailed(attribute: attribute.name, name: name, reason: String(describing: error))
            }
        default:
            throw .fieldTypeMismatch(attribute: attribute.name, expected: attribute.type, found: field.tag)
        }
    }
}

extension UUID {
    /// The UUID's 16 bytes (RFC 4122 order) as one big-endian number: its hexadecimal digits are the
    /// UUID string's.
    var bigEndianNumber: UInt128 {
        withUnsafeBytes(of: uuid) { bytes in bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
    }

    /// The UUID whose bytes, read as one big-endian number, are `number`.
    init(bigEndianNumber number: UInt128) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            for index in 0..<16 { buffer[index] = UInt8(truncatingIfNeeded: number >> (8 * (15 - index))) }
        }
        self.init(uuid: bytes)
    }
}
