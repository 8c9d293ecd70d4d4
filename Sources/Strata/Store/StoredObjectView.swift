import Foundation
import StrataQuery

/// How a store reads what a predicate or sort key walks: rows, their attributes and their relationships,
/// without making managed objects. Each store has one (``StrataRowReader`` reads encoded rows in an engine
/// snapshot, the in-memory store its rows), so that both evaluate predicates through StrataQuery with the
/// same semantics as in-memory evaluation of managed objects.
package protocol StoredObjectReader: AnyObject {
    /// A row as the reader holds it.
    associatedtype Row

    /// The store whose rows these are (part of each object's ``ManagedObjectID``), interned once per reader:
    /// interning per row took a lock and hashed the UUID for every object a predicate compared.
    var storeIdentity: StoreIdentity { get }

    /// The row a reference names, or nil when it does not exist.
    func row(_ reference: StoredReference) throws -> Row?

    /// One persistent attribute's value in a row of `reference`'s entity.
    func value(of attribute: AttributeDescription, in row: Row) throws -> AttributeValue?

    /// The object a to-one names in a row, or nil.
    func toOne(_ relationship: RelationshipDescription, in row: Row) throws -> StoredReference?

    /// The objects a to-many relates `reference` to, in the relationship's order.
    func toMany(_ relationship: RelationshipDescription, of reference: StoredReference) throws -> [StoredReference]
}

/// A stored row seen as something a predicate evaluates on (``PredicateEvaluable``): attributes are values,
/// a to-one is the related row's view (read only when a key of it is asked), a to-many the collection of the
/// related rows' views, and `SELF` is the row's ``ManagedObjectID``, as for a ``ManagedObject``.
struct StoredObjectView<Reader: StoredObjectReader>: PredicateEvaluable {
    let reader: Reader
    let reference: StoredReference
    /// The row when it is at hand (the row being filtered); related rows are read on first use.
    var row: Reader.Row?

    init(reader: Reader, reference: StoredReference, row: Reader.Row?) {
        self.reader = reader
        self.reference = reference
        self.row = row
    }

    func predicateValue(forKey key: String) throws -> EvaluatedValue {
        let entity = reference.entity
        if let attribute = entity.attributesByName[key] {
            guard attribute.storageIndex != nil else {
                // Transient values live in objects only; a store has nothing to compare.
                throw PredicateEvaluationError.unknownKey(key, in: "\(entity.name) rows (transient attribute)")
            }
            guard let row = try row ?? reader.row(reference) else { return .value(.null) }
            return .value(try reader.value(of: attribute, in: row)?.queryValue ?? .null)
        }
        if let relationship = entity.relationshipsByName[key] {
            if relationship.isToMany {
                return .collection(
                    try reader.toMany(relationship, of: reference).map {
                        .object(StoredObjectView(reader: reader, reference: $0, row: nil))
                    })
            }
            guard let row = try row ?? reader.row(reference), let target = try reader.toOne(relationship, in: row)
            else { return .value(.null) }
            return .object(StoredObjectView(reader: reader, reference: target, row: nil))
        }
        throw PredicateEvaluationError.unknownKey(key, in: entity.name)
    }

    var predicateIdentity: QueryValue {
        .identity(
            ObjectIdentity(
                ManagedObjectID(entity: reference.entity, store: reader.storeIdentity, rowID: reference.rowID)
            ))
    }
}

extension StoredObjectReader {
    /// Whether a row matches a request's predicate.
    package func matches(_ predicate: ObjectPredicate?, _ reference: StoredReference, row: Row) throws -> Bool {
        guard let predicate else { return true }
        return try predicate.evaluate(with: StoredObjectView(reader: self, reference: reference, row: row))
    }

    /// A row's values of some key paths (sort keys, dictionary properties): objects become identities.
    package func values(of keyPaths: [QueryKeyPath], _ reference: StoredReference, row: Row) throws -> [QueryValue] {
        let view = StoredObjectView(reader: self, reference: reference, row: row)
        return try keyPaths.map { try SortKey($0).value(of: view) }
    }
}

extension AttributeValue {
    /// The value as predicates compare it: integers, floats and doubles as numbers, URLs as URLs, values of
    /// transformable attributes as opaque identities (equal when the values are).
    package var queryValue: QueryValue {
        switch self {
        case .integer(let value): .int(value)
        case .double(let value): .double(value)
        case .float(let value): .double(Double(value))
        case .decimal(let value): .decimal(value)
        case .boolean(let value): .bool(value)
        case .string(let value): .string(value)
        case .date(let value): .date(value)
        case .data(let value): .data(value)
        case .uuid(let value): .uuid(value)
        case .uri(let value): .url(value)
        case .object(let value): .identity(ObjectIdentity(value))
        }
    }

    /// The attribute value of a query value, for an attribute of `type`; nil when the value cannot be one.
    package init?(_ value: QueryValue, type: AttributeType) {
        switch (type, value) {
        case (.integer16, .int(let number)), (.integer32, .int(let number)), (.integer64, .int(let number)):
            guard type.integerRange?.contains(number) ?? true else { return nil }
            self = .integer(number)
        case (.integer16, .bool(let flag)), (.integer32, .bool(let flag)), (.integer64, .bool(let flag)):
            self = .integer(flag ? 1 : 0)
        case (.double, .double(let number)): self = .double(number)
        case (.double, .int(let number)): self = .double(Double(number))
        case (.float, .double(let number)): self = .float(Float(number))
        case (.float, .int(let number)): self = .float(Float(number))
        case (.decimal, .decimal(let number)): self = .decimal(number)
        case (.decimal, .int(let number)): self = .decimal(Decimal(number))
        case (.decimal, .double(let number)): self = .decimal(Decimal(number))
        case (.boolean, .bool(let flag)): self = .boolean(flag)
        case (.boolean, .int(let number)): self = .boolean(number != 0)
        case (.string, .string(let string)): self = .string(string)
        case (.date, .date(let date)): self = .date(date)
        case (.binaryData, .data(let data)): self = .data(data)
        case (.uuid, .uuid(let uuid)): self = .uuid(uuid)
        case (.uri, .url(let url)): self = .uri(url)
        default: return nil
        }
    }
}
