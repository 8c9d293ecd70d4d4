import StrataQuery

/// Managed objects are what predicates and sort keys evaluate on in memory (pending changes, in-memory
/// filtering): attributes answer their current values, a to-one its object (or nil), a to-many its objects,
/// and `SELF` is the object's ``ManagedObjectID``, as stores answer for their rows.
///
/// For example:
/// ```swift
/// let predicate = try ObjectPredicate(format: "salary > %d AND department.name == %@", 1000, "Sales")
/// try predicate.evaluate(with: employee)
/// ```
extension ManagedObject: PredicateEvaluable {
    /// The value of an attribute (``AttributeValue``s as ``QueryValue``s; floats as doubles) or a
    /// relationship, firing the fault when needed.
    ///
    /// - Throws: `PredicateEvaluationError.unknownKey` for a key the entity does not have; what reading
    ///   the value throws (``ObjectGraphError/objectInaccessible(_:)`` for a fault whose row is gone).
    public func predicateValue(forKey key: String) throws -> EvaluatedValue {
        if let relationship = entity.relationshipsByName[key] {
            if relationship.isToMany { return .collection(try toManyValue(relationship).objects.map { .object($0) }) }
            return try toOneValue(relationship).map { .object($0) } ?? .value(.null)
        }
        guard entity.attributesByName[key] != nil else {
            throw PredicateEvaluationError.unknownKey(key, in: entity.name)
        }
        return .value(try attributeValue(forKey: key)?.queryValue ?? .null)
    }

    /// The object's ID as an identity: `SELF == %@` and `SELF IN %@` compare it with IDs and objects.
    public var predicateIdentity: QueryValue { objectID.queryValue }
}

extension ManagedObject: QueryValueConvertible {
    /// The object's ID as an identity, so that objects can be predicate arguments (`department == %@`).
    public var queryValue: QueryValue { objectID.queryValue }
}

extension ManagedObjectID: QueryValueConvertible {
    /// ``QueryValue/identity(_:)`` of the ID, so that IDs can be predicate arguments (`SELF IN %@`).
    public var queryValue: QueryValue { .identity(ObjectIdentity(self)) }
}

extension QueryValue {
    /// The object ID an identity holds (a to-one in dictionary results, `SELF`), or nil.
    public var objectID: ManagedObjectID? {
        if case .identity(let identity) = self { return identity.base as? ManagedObjectID }
        return nil
    }
}
