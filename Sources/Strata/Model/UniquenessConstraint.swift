/// A uniqueness constraint of a built model (Core Data's `uniquenessConstraints`): one or more persistent
/// attributes whose values, together, no two objects of the declaring ``entity`` and its subentities may
/// share.
///
/// Declare constraints with ``Entity/init(_:parent:abstract:className:uniquenessConstraints:indexes:properties:)``;
/// subentities inherit them (and may add their own). They are checked only at save, as in Core Data:
/// duplicates may coexist in a context until then. A save compares each inserted object, and each updated
/// object whose constrained values changed, with the other objects of the save and with the store's rows
/// (through the Strata store's `unique.<Entity>.<a>+<b>` secondary index). An object with a nil value in any
/// of the constraint's attributes is never a duplicate (as SQL's `UNIQUE`). What a duplicate does depends on
/// the context's ``ManagedObjectContext/mergePolicy``: see ``ObjectGraphError/constraintConflicts(_:)``.
///
/// The check reads the store before the save's write transaction and the index does not refuse duplicates
/// itself: two coordinators (or contexts on different threads) saving the same values at the same moment can
/// both pass it.
///
/// For example:
///
///     Entity("Employee", uniquenessConstraints: [["email"], ["firstName", "lastName"]]) {
///         Attribute("email", .string)
///         Attribute("firstName", .string)
///         Attribute("lastName", .string)
///     }
///
/// ## Topics
/// - ``entity``
/// - ``attributes``
/// - ``attributeNames``
public struct UniquenessConstraint: Sendable, Hashable, CustomStringConvertible {
    /// The entity that declares the constraint: it covers its objects and those of its subentities. An
    /// unowned reference, like ``AttributeDescription/entity``: keep the model alive.
    public unowned let entity: EntityDescription
    /// The constrained attributes, in declaration order.
    public let attributes: [AttributeDescription]

    /// The constrained attributes' names, in declaration order.
    public var attributeNames: [String] { attributes.map(\.name) }

    /// E.g. `Employee[firstName, lastName]`.
    public var description: String { "\(entity.name)[\(attributeNames.joined(separator: ", "))]" }

    /// Whether `object`'s entity is covered by the constraint.
    func covers(_ entity: EntityDescription) -> Bool { entity.isKind(of: self.entity) }

    /// The constrained values of a row of a covered entity (by storage index), nil when one is nil.
    func key(of values: [AttributeValue?]) -> [AttributeValue]? {
        var key: [AttributeValue] = []
        for attribute in attributes {
            guard let value = values[attribute.storageIndex!] else { return nil }
            key.append(value)
        }
        return key
    }

    /// Two constraints are equal when they are declared by the same entity on the same attributes.
    public static func == (lhs: UniquenessConstraint, rhs: UniquenessConstraint) -> Bool {
        lhs.entity === rhs.entity
            && lhs.attributes.map(ObjectIdentifier.init) == rhs.attributes.map(ObjectIdentifier.init)
    }

    /// Hashes the declaring entity and the attributes' names.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(entity))
        hasher.combine(attributeNames)
    }
}
