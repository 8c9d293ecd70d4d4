import StrataFormat
import StrataQuery

/// A ``StoreFetchRequest/ResultKind/groups(keys:aggregates:)`` request answered on the Strata store's row bytes:
/// each row's group key read from its fields where they lie (a to-one as its row ID and entity field, never an
/// object ID; an attribute as its value) and each aggregate folded from its field (integers in place), into a
/// ``GroupFold``. Only the groups' keys become values, once per group.
///
/// It applies when every key is a stored attribute or a to-one of the fetched entity and every aggregate reads a
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

    /// One key's part of a row's group: cheap to hash, no boxed value for a to-one.
    enum KeyPart: Hashable {
        case null
        /// A to-one's destination: its row ID and the integer in the row's entity field (nil for anything else),
        /// what the reader resolves it with.
        case reference(rowID: UInt64, entityID: Int64?)
        case value(QueryValue)
    }

    /// A row's group: its first key's part, and the others' (no array for one key).
    struct Key: Hashable {
        var first: KeyPart
        var rest: [KeyPart]
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

    /// The grouping of `keys` and `aggregates` over rows of `entity`, or nil when a key or an aggregate is not
    /// one it reads on bytes.
    init?(keys: [QueryKeyPath], aggregates: [StoreFetchRequest.Aggregate], entity: EntityDescription) {
        func single(_ path: QueryKeyPath) -> String? {
            guard path.components.count == 1, case .key(let key) = path.components[0] else { return nil }
            return key
        }
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
        var key = Key(first: .null, rest: [])
        for (index, keyField) in keyFields.enumerated() {
            let part = try Self.part(keyField, bytes, header)
            if index == 0 { key.first = part } else { key.rest.append(part) }
        }
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
            ([key.first] + key.rest).enumerated().map { index, part in
                switch part {
                case .null: return .null
                case .value(let value): return value
                case .reference(let rowID, let entityID):
                    guard case .toOne(_, let relationship) = keyFields[index] else { return .null }
                    let target = reader.reference(
                        through: relationship, target: .reference(rowID),
                        entityField: entityID.map { .int64($0) } ?? .null)
                    return target.map { StoredObjectView(reader: reader, reference: $0, row: nil).predicateIdentity }
                        ?? .null
                }
            }
        }
    }

    private static func part(
        _ keyField: KeyField, _ bytes: UnsafeRawBufferPointer, _ header: RowRecord.Header
    ) throws -> KeyPart {
        switch keyField {
        case .attribute(let field, let attribute):
            let value = try value(field, attribute, bytes, header)
            return value == .null ? .null : .value(value)
        case .toOne(let field, let relationship):
            do {
                guard case .reference(let rowID) = try RowRecord.field(at: field, in: bytes, header: header) else {
                    return .null
                }
                // The entity field's integer read in place; anything else decoded (and checked) in full.
                var entityID = try RowRecord.integerField(at: field + 1, in: bytes, header: header)
                if entityID == nil,
                    case .int64(let number) = try RowRecord.field(at: field + 1, in: bytes, header: header)
                {
                    entityID = number
                }
                return .reference(rowID: rowID, entityID: entityID)
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
