import StrataFormat
import StrataQuery

/// A ``StoreFetchRequest/ResultKind/groups(keys:aggregates:)`` request answered on the Strata store's row bytes:
/// each row's group key read from its fields where they lie (a to-one as its row ID and entity field, never an
/// object ID; an attribute as its value) and each aggregate folded from its field (integers in place), into a
/// ``GroupFold``. Only the groups' keys become values, once per group.
///
/// It applies when every key (two at most) is a stored attribute or a to-one of the fetched entity and every aggregate reads a
/// stored attribute that is never kept as a blob (``init(keys:aggregates:entity:)`` returns nil otherwise, and
/// ``StoreQuery`` reads the values). Values are the ones ``StrataRowReader``'s values reader gives for the same
/// paths, folded by the same accumulators in the same (row-ID) order.
struct RowGrouping {
    /// How one grouping key is read from a row.
    private enum KeyField {
        /// A stored attribute's field.
        case attribute(Int, AttributeDescription)
        /// A to-one: its reference field and the entity field after it.
        case toOne(Int, RelationshipDescription)
    }

    /// One key's part of a row's group, as plain words (no boxed value, nothing to retain): `kind` 0 for nil, 1
    /// for a to-one's destination (`a` its row ID, `b` the integer in the row's entity field), 2 for a destination
    /// whose entity field holds no integer, 3 for an attribute's value (`a` its number among the values seen).
    struct KeyPart: Hashable {
        var kind: UInt64 = 0
        var a: UInt64 = 0
        var b: UInt64 = 0
    }

    /// A row's group: one part per key (at most two).
    struct Key: Hashable {
        var first = KeyPart()
        var second = KeyPart()

        /// Two words a part (the kind folded into the second): half the hasher's rounds of hashing every word.
        func hash(into hasher: inout Hasher) {
            hasher.combine(first.a)
            hasher.combine(first.b &+ first.kind &* 0x9E37_79B9_7F4A_7C15)
            if second.kind != 0 {
                hasher.combine(second.a)
                hasher.combine(second.b &+ second.kind &* 0x9E37_79B9_7F4A_7C15)
            }
        }
    }

    /// How one aggregate's value is read from a row.
    private struct AggregateField {
        let field: Int
        let attribute: AttributeDescription
        let isInteger: Bool
    }

    private let keyFields: [KeyField]
    private let aggregateFields: [AggregateField]
    private var fold: GroupFold<Key>
    /// The attribute values keys hold, numbered in the order they came.
    private var valueNumbers: [QueryValue: UInt64] = [:]
    private var values: [QueryValue] = []

    /// The grouping of `keys` and `aggregates` over rows of `entity`, or nil when a key or an aggregate is not
    /// one it reads on bytes, or for more than two keys.
    init?(keys: [QueryKeyPath], aggregates: [StoreFetchRequest.Aggregate], entity: EntityDescription) {
        func single(_ path: QueryKeyPath) -> String? {
            guard path.components.count == 1, case .key(let key) = path.components[0] else { return nil }
            return key
        }
        guard keys.count <= 2 else { return nil }
        var keyFields: [KeyField] = []
        for path in keys {
            guard let key = single(path) else { return nil }
            if let attribute = entity.attributesByName[key], attribute.storageIndex != nil,
                let field = attribute.fieldIndex, !Self.mayBeBlob(attribute)
            {
                keyFields.append(.attribute(field, attribute))
            } else if let relationship = entity.relationshipsByName[key], !relationship.isToMany,
                let field = relationship.fieldIndex
            {
                keyFields.append(.toOne(field, relationship))
            } else {
                return nil
            }
        }
        var aggregateFields: [AggregateField] = []
        for aggregate in aggregates {
            guard let key = single(aggregate.keyPath), let attribute = entity.attributesByName[key],
                attribute.storageIndex != nil, let field = attribute.fieldIndex, !Self.mayBeBlob(attribute)
            else { return nil }
            let isInteger = [.integer16, .integer32, .integer64].contains(attribute.type)
            aggregateFields.append(AggregateField(field: field, attribute: attribute, isInteger: isInteger))
        }
        self.keyFields = keyFields
        self.aggregateFields = aggregateFields
        fold = GroupFold(aggregates.map(\.function))
    }

    /// Binary and transformable values may lie outside the row, in a blob.
    private static func mayBeBlob(_ attribute: AttributeDescription) -> Bool {
        attribute.type == .binaryData || attribute.type == .transformable
    }

    /// Folds one row into its group.
    ///
    /// - Throws: `PredicateEvaluationError.evaluable` for a field that does not decode (as the values reader
    ///   reports it); `PredicateEvaluationError.invalidCollectionOperator` for a value `@sum` or `@avg` cannot add.
    mutating func add(_ bytes: UnsafeRawBufferPointer, header: RowRecord.Header) throws {
        var key = Key()
        if !keyFields.isEmpty { key.first = try part(keyFields[0], bytes, header) }
        if keyFields.count > 1 { key.second = try part(keyFields[1], bytes, header) }
        var position = fold.row(key)
        for aggregate in aggregateFields {
            if aggregate.isInteger,
                let number = try? RowRecord.integerField(at: aggregate.field, in: bytes, header: header),
                aggregate.attribute.type.integerRange?.contains(number) == true
            {
                fold.add(integer: number, at: position)
            } else {
                try fold.add(try Self.value(aggregate.field, aggregate.attribute, bytes, header), at: position)
            }
            position &+= 1
        }
    }

    /// The groups, their keys as the values reader gives them (a to-one as its destination's identity).
    func groups(_ reader: StrataRowReader) -> [StoreFetchResult.Group] {
        fold.groups { key in
            zip(keyFields, [key.first, key.second]).map { keyField, part in
                switch part.kind {
                case 3:
                    return values[Int(part.a)]
                case 1, 2:
                    guard case .toOne(_, let relationship) = keyField else { return .null }
                    let entityField: RowRecord.Field = part.kind == 1 ? .int64(Int64(bitPattern: part.b)) : .null
                    let target = reader.reference(
                        through: relationship, target: .reference(part.a), entityField: entityField)
                    return target.map { StoredObjectView(reader: reader, reference: $0, row: nil).predicateIdentity }
                        ?? .null
                default:
                    return .null
                }
            }
        }
    }

    private mutating func part(
        _ keyField: KeyField, _ bytes: UnsafeRawBufferPointer, _ header: RowRecord.Header
    ) throws -> KeyPart {
        switch keyField {
        case .attribute(let field, let attribute):
            let value = try Self.value(field, attribute, bytes, header)
            guard value != .null else { return KeyPart() }
            if let number = valueNumbers[value] { return KeyPart(kind: 3, a: number) }
            let number = UInt64(values.count)
            valueNumbers[value] = number
            values.append(value)
            return KeyPart(kind: 3, a: number)
        case .toOne(let field, let relationship):
            do {
                // Both fields read in place; anything else in them decoded (and checked) in full.
                var rowID = try RowRecord.referenceField(at: field, in: bytes, header: header)
                if rowID == nil, case .reference(let row) = try RowRecord.field(at: field, in: bytes, header: header) {
                    rowID = row
                }
                guard let rowID else { return KeyPart() }
                var entityID = try RowRecord.integerField(at: field + 1, in: bytes, header: header)
                if entityID == nil,
                    case .int64(let number) = try RowRecord.field(at: field + 1, in: bytes, header: header)
                {
                    entityID = number
                }
                guard let entityID else { return KeyPart(kind: 2, a: rowID) }
                return KeyPart(kind: 1, a: rowID, b: UInt64(bitPattern: entityID))
            } catch {
                throw PredicateEvaluationError.evaluable(key: relationship.name, underlying: error)
            }
        }
    }

    /// A field's value as ``StrataRowReader/value(of:in:)`` gives it (the attribute is never a blob here).
    private static func value(
        _ field: Int, _ attribute: AttributeDescription, _ bytes: UnsafeRawBufferPointer, _ header: RowRecord.Header
    ) throws -> QueryValue {
        do {
            return try RowCoder.value(from: RowRecord.field(at: field, in: bytes, header: header), of: attribute)?
                .queryValue ?? .null
        } catch {
            throw PredicateEvaluationError.evaluable(key: attribute.name, underlying: error)
        }
    }
}
