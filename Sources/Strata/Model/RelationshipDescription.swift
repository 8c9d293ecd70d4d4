/// A relationship of a built model (Core Data's `NSRelationshipDescription`): its destination, its
/// inverse, its cardinality and delete rule, and where the store keeps it.
///
/// Every to-one is stored in the source's row as two fields: the related row's ID and the related
/// object's entity ID (null when the destination has no subentities, so the ID alone names the object).
/// A to-many is not stored in the source's row: an unordered to-many whose inverse is a to-one is found
/// through the inverse's foreign key; every other to-many (many-to-many, ordered, or without an inverse)
/// keeps its links in a join table (FORMAT.md, "Object store tables").
///
/// ## Topics
///
/// ### Shape
/// - ``name``
/// - ``entity``
/// - ``destinationEntity``
/// - ``inverseRelationship``
/// - ``isToMany``
/// - ``isOrdered``
/// - ``isManyToMany``
///
/// ### Rules
/// - ``deleteRule``
/// - ``isOptional``
/// - ``minCount``
/// - ``maxCount``
///
/// ### Storage
/// - ``toOneIndex``
/// - ``fieldIndex``
/// - ``storage``
public final class RelationshipDescription: PropertyDescription, Hashable, @unchecked Sendable {
    // @unchecked Sendable: `destination` and `inverse` are set while `ManagedObjectModel.init` links the
    // model, before any description reaches a caller, and never again.

    /// The relationship's name.
    public let name: String
    /// The entity that declares it (subentities inherit it).
    public unowned let entity: EntityDescription
    /// Whether the relationship holds many objects.
    public let isToMany: Bool
    /// Whether a to-many keeps its objects in the user's order.
    public let isOrdered: Bool
    /// What deleting the source does to the related objects.
    public let deleteRule: DeleteRule
    /// Whether a to-one may be nil (a to-many's emptiness is governed by ``minCount``).
    public let isOptional: Bool
    /// The fewest objects a to-many may hold at save.
    public let minCount: Int
    /// The most objects a to-many may hold at save, nil for no limit.
    public let maxCount: Int?
    /// The position among the relationships of ``entity`` (inherited first).
    public let index: Int
    /// The position among the to-one relationships of ``entity`` (inherited first), nil for a to-many: the
    /// index of its value in a stored row's references.
    public let toOneIndex: Int?
    /// The row field of a to-one's related row ID (the entity ID follows it), nil for a to-many.
    public let fieldIndex: Int?
    /// Free-form key-value pairs for the application.
    public let userInfo: [String: String]
    /// The relationship's name in an earlier model version.
    public let renamingIdentifier: String?
    /// The string mixed into the entity's version hash for this relationship, if any.
    public let versionHashModifier: String?
    /// A relationship is never transient.
    public var isTransient: Bool { false }
    /// To-ones are stored in the row, but not among the attribute values: always nil.
    public var storageIndex: Int? { nil }

    let destinationName: String
    let inverseName: String?
    private unowned(unsafe) var destination: EntityDescription?
    private unowned(unsafe) var inverse: RelationshipDescription?

    init(definition: Relationship, entity: EntityDescription, index: Int, toOneIndex: Int?, fieldIndex: Int?) {
        self.name = definition.name
        self.entity = entity
        self.isToMany = definition.isToMany
        self.isOrdered = definition.isToMany && definition.isOrdered
        self.deleteRule = definition.deleteRule
        self.isOptional = definition.isToMany ? definition.minCount == 0 : definition.isOptional
        self.minCount = definition.isToMany ? definition.minCount : (definition.isOptional ? 0 : 1)
        self.maxCount = definition.isToMany ? definition.maxCount : 1
        self.index = index
        self.toOneIndex = toOneIndex
        self.fieldIndex = fieldIndex
        self.destinationName = definition.destinationName
        self.inverseName = definition.inverseName
        self.userInfo = definition.userInfo
        self.renamingIdentifier = definition.renamingIdentifier
        self.versionHashModifier = definition.versionHashModifier
    }

    /// The entity at the other end.
    public var destinationEntity: EntityDescription { destination! }

    /// The destination's relationship that leads back, nil for a unidirectional relationship.
    public var inverseRelationship: RelationshipDescription? { inverse }

    /// Whether both this relationship and its inverse are to-many.
    public var isManyToMany: Bool { isToMany && inverse?.isToMany == true }

    /// How the store keeps the relationship.
    public var storage: RelationshipStorage {
        if !isToMany { return .foreignKey }
        if let inverse, !inverse.isToMany, !isOrdered { return .inverseForeignKey(inverse) }
        return .joinTable(JoinTableSide(self))
    }

    func link(destination: EntityDescription, inverse: RelationshipDescription?) {
        self.destination = destination
        self.inverse = inverse
    }

    /// E.g. `employees: to-many Employee (inverse department, cascade)`.
    public var description: String {
        var text = "\(name): \(isToMany ? (isOrdered ? "ordered to-many" : "to-many") : "to-one") \(destinationName)"
        text += " (inverse \(inverseName ?? "none"), \(deleteRule))"
        return text
    }

    /// Identity: two descriptions are equal when they are the same object.
    public static func == (lhs: RelationshipDescription, rhs: RelationshipDescription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Where a store keeps a relationship's links.
public enum RelationshipStorage: Sendable {
    /// A to-one: the related row's ID is a field of the source's row.
    case foreignKey
    /// An unordered to-many whose inverse is a to-one: the members are the rows whose inverse foreign key
    /// names the source.
    case inverseForeignKey(RelationshipDescription)
    /// A many-to-many, an ordered to-many or a to-many without inverse: links are rows of a join table.
    case joinTable(JoinTableSide)
}

/// One side of a join table: which column holds this side's source and which its members.
///
/// A relationship and its inverse share one table, named after the side whose `Entity.relationship` name
/// sorts first (the owner side). Each link row holds the owner side's source row, the member row, the
/// member's and the owner's entity IDs, and for an ordered side its position (FORMAT.md).
public struct JoinTableSide: Sendable, Hashable {
    /// The relationship this side reads.
    public let relationship: RelationshipDescription
    /// Whether this side is the owner side: its sources are in column 0.
    public let isOwnerSide: Bool

    init(_ relationship: RelationshipDescription) {
        self.relationship = relationship
        if let inverse = relationship.inverseRelationship, inverse.isToMany {
            isOwnerSide = JoinTableSide.precedes(relationship, inverse)
        } else {
            isOwnerSide = true
        }
    }

    /// The relationship whose name the table carries.
    public var ownerRelationship: RelationshipDescription {
        isOwnerSide ? relationship : relationship.inverseRelationship!
    }

    /// The join table's name: `join.<Entity>.<relationship>` of the owner side.
    public var tableName: String {
        let owner = ownerRelationship
        return "join.\(owner.entity.name).\(owner.name)"
    }

    /// The field of a link row holding this side's source row ID.
    public var sourceField: Int { isOwnerSide ? 0 : 1 }
    /// The field holding this side's member row ID.
    public var memberField: Int { isOwnerSide ? 1 : 0 }
    /// The field holding this side's member entity ID.
    public var memberEntityField: Int { isOwnerSide ? 3 : 2 }
    /// The field holding this side's position (meaningful when the relationship is ordered).
    public var positionField: Int { isOwnerSide ? 4 : 5 }

    static func precedes(_ lhs: RelationshipDescription, _ rhs: RelationshipDescription) -> Bool {
        let left = lhs.entity.name + "." + lhs.name
        let right = rhs.entity.name + "." + rhs.name
        return left.utf8.lexicographicallyPrecedes(right.utf8)
    }
}
