/// A fetch index of a built model (Core Data's `NSFetchIndexDescription`): the checked form of a
/// ``FetchIndex``, with the row field of each element.
///
/// ## Topics
/// - ``name``
/// - ``entity``
/// - ``elements``
public struct FetchIndexDescription: Sendable, Hashable, CustomStringConvertible {
    /// The index's name, unique among its entity's indexes.
    public let name: String
    /// The entity that declares the index (it covers the entity's subentities too). Unowned: keep the model
    /// alive.
    public unowned let entity: EntityDescription
    /// The key's properties, in order.
    public let elements: [Element]

    /// One property of the key.
    public struct Element: Sendable, Hashable {
        /// The property's name: a persistent attribute or a to-one relationship.
        public let propertyName: String
        /// The attribute, when the element is an attribute.
        public let attribute: AttributeDescription?
        /// Whether the element is ascending in the model (the store's key order is ascending either way).
        public let isAscending: Bool
        /// The collation the model asks for.
        public let collationType: FetchIndex.CollationType
        /// The row field holding the element's value (for a to-one, the related row ID).
        public let fieldIndex: Int
    }

    /// E.g. `Employee.byName[lastName, age desc]`.
    public var description: String {
        let parts = elements.map { $0.isAscending ? $0.propertyName : $0.propertyName + " desc" }
        return "\(entity.name).\(name)[\(parts.joined(separator: ", "))]"
    }

    /// Equal when declared by the same entity under the same name with the same elements.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.entity === rhs.entity && lhs.name == rhs.name && lhs.elements == rhs.elements
    }

    /// Hashes the entity, name and elements.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(entity))
        hasher.combine(name)
        hasher.combine(elements)
    }
}
