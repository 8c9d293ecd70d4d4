import Foundation

extension ManagedObjectContext {
    /// Computes the derived attributes (``AttributeDescription/derivation``) of what a save writes, before
    /// validation, as Core Data's store does at save:
    ///
    /// 1. Owners first: an object whose derivation reads a relationship (an aggregate over a to-many, or a key
    ///    path through a to-one) is recomputed when a related object it reaches through that relationship's
    ///    first step is inserted, updated or deleted, so an owner not otherwise changed is found through the
    ///    inverse of that step (a derivation whose relationship has no inverse is recomputed only when its owner
    ///    is saved).
    /// 2. Then every inserted and updated object with derived attributes gets their values; `now()` is the
    ///    same date for the whole save. A value equal to the current one is not set, so an owner whose
    ///    derived values did not change is not written.
    ///
    /// - Throws: ``ValidationError/valueTooLarge(object:key:value:limit:)`` (or `valueTooSmall`) when an
    ///   aggregate does not fit its integer attribute; what faulting throws.
    func updateDerivedAttributes(now: Date) throws {
        // The save path of every model runs this: one flag when there is nothing to compute.
        guard coordinator.model.hasDerivedAttributes else { return }
        let changed = inserted.objects + Array(updated.values) + Array(deleted.values)
        var owners: [ObjectIdentifier: ManagedObject] = [:]
        for object in changed {
            for owner in try Self.derivationOwners(of: object) where owner.managedObjectContext === self {
                owners[ObjectIdentifier(owner)] = owner
            }
        }
        // Objects the save writes get every derived value; owners only those that read relationships (an owner
        // not otherwise changed keeps its `now()`, which is the date of its own last save).
        var due = (inserted.objects + Array(updated.values)).map { ($0, true) }
        for owner in owners.values
        where !owner.isDeleted && !isInsertedHere(owner) && updated[ObjectIdentifier(owner)] == nil {
            due.append((owner, false))
        }
        for (object, isSaved) in due {
            for attribute in object.entity.derivedAttributes where isSaved || attribute.derivation != .now {
                let value = try Self.derivedValue(of: attribute, for: object, now: now)
                if try object.attributeValue(forKey: attribute.name) != value {
                    try object.setAttributeValue(value, forKey: attribute.name)
                }
            }
        }
    }

    /// The objects whose derived attributes read `object` through their first relationship step: the objects at
    /// the other end of that relationship's inverse, as `object` holds them now (for a deleted object, as its
    /// committed state still names them when the delete rules have not cleared them).
    private static func derivationOwners(of object: ManagedObject) throws -> [ManagedObject] {
        var owners: [ManagedObject] = []
        for relationship in object.entity.relationships {
            guard let inverse = relationship.inverseRelationship, readsFirst(inverse) else { continue }
            if relationship.isToMany {
                owners += try object.toManyValue(relationship).objects
            } else if let owner = try object.toOneValue(relationship) {
                owners.append(owner)
            }
        }
        return owners
    }

    /// Whether some derived attribute of `relationship`'s entity (or its subentities) starts its path with it.
    static func readsFirst(_ relationship: RelationshipDescription) -> Bool {
        relationship.entity.allEntitiesInHierarchyBelow.contains { entity in
            entity.derivedAttributes.contains { attribute in
                switch attribute.derivation! {
                case .now: false
                case .keyPath(let path): path.count > 1 && path[0] == relationship.name
                case .aggregate(_, let name, _): name == relationship.name
                }
            }
        }
    }

    /// The value `attribute`'s derivation gives for `object` now.
    private static func derivedValue(
        of attribute: AttributeDescription, for object: ManagedObject, now: Date
    ) throws -> AttributeValue? {
        switch attribute.derivation! {
        case .now:
            return .date(now)
        case .keyPath(let path):
            var current = object
            for step in path.dropLast() {
                guard let next = try current.toOneValue(current.entity.relationshipsByName[step]!) else { return nil }
                current = next
            }
            return try current.attributeValue(forKey: path.last!)
        case .aggregate(let function, let relationshipName, let attributeName):
            let members = try object.toManyValue(object.entity.relationshipsByName[relationshipName]!).objects
            let values = try attributeName.map { name in try members.map { try $0.attributeValue(forKey: name) } } ?? []
            return try aggregate(function, count: members.count, values: values, as: attribute, of: object.objectID)
        }
    }

    /// An aggregate derivation's value over a to-many's `count` members whose aggregated attribute holds `values`
    /// (one per member; none for `@count`), as `attribute`'s type. The object path and batch requests
    /// (``BatchDerivation``) both compute it here.
    ///
    /// - Throws: ``ValidationError/valueTooLarge(object:key:value:limit:)`` (or `valueTooSmall`) when the result
    ///   does not fit an integer attribute.
    static func aggregate(
        _ function: Derivation.AggregateFunction, count: Int, values: [AttributeValue?],
        as attribute: AttributeDescription, of object: ManagedObjectID
    ) throws -> AttributeValue? {
        if function == .count { return .integer(Int64(count)) }
        let numbers = values.compactMap { $0.flatMap(decimal) }
        let result: Decimal?
        switch function {
        case .count: result = Decimal(count)
        case .sum: result = numbers.reduce(0, +)
        case .min: result = numbers.min()
        case .max: result = numbers.max()
        case .average: result = numbers.isEmpty ? nil : numbers.reduce(0, +) / Decimal(numbers.count)
        }
        guard let result else { return nil }
        return try value(result, as: attribute, of: object)
    }

    /// A numeric attribute value as a `Decimal` (exact for integers and decimals).
    private static func decimal(_ value: AttributeValue) -> Decimal? {
        switch value {
        case .integer(let number): Decimal(number)
        case .decimal(let number): number
        case .double(let number): number.isFinite ? Decimal(number) : nil
        case .float(let number): number.isFinite ? Decimal(Double(number)) : nil
        default: nil
        }
    }

    /// `number` as a value of `attribute`'s type; an integer attribute takes the number rounded toward zero and
    /// refuses one outside its range.
    private static func value(
        _ number: Decimal, as attribute: AttributeDescription, of object: ManagedObjectID
    ) throws -> AttributeValue {
        let double = NSDecimalNumber(decimal: number).doubleValue
        switch attribute.type {
        case .decimal: return .decimal(number)
        case .double: return .double(double)
        case .float: return .float(Float(double))
        default:
            var rounded = Decimal()
            var source = number
            NSDecimalRound(&rounded, &source, 0, .down)
            let range = attribute.type.integerRange!
            if rounded > Decimal(range.upperBound) {
                throw ValidationError.valueTooLarge(
                    object: ValidatedObject(object), key: attribute.name, value: .double(double),
                    limit: .integer(range.upperBound))
            }
            if rounded < Decimal(range.lowerBound) {
                throw ValidationError.valueTooSmall(
                    object: ValidatedObject(object), key: attribute.name, value: .double(double),
                    limit: .integer(range.lowerBound))
            }
            return .integer(Int64(NSDecimalNumber(decimal: rounded).int64Value))
        }
    }
}
