/// What every property of an entity has, whatever its kind (Core Data's `NSPropertyDescription`).
///
/// ``EntityDescription/properties`` lists them in row order. Today every property is an
/// ``AttributeDescription``; relationships will conform too.
public protocol PropertyDescription: AnyObject, Sendable, CustomStringConvertible {
    /// The property's name, unique within its entity and the entity's ancestors and descendants.
    var name: String { get }
    /// The entity that declares the property. An inherited property belongs to the ancestor that
    /// declares it, and is the same object in every entity that inherits it.
    var entity: EntityDescription { get }
    /// Whether nil is a valid value.
    var isOptional: Bool { get }
    /// Whether the property is kept in memory only, never stored.
    var isTransient: Bool { get }
    /// The position of the property's field in the rows of its entity and of every entity below it,
    /// or nil for a transient property.
    var storageIndex: Int? { get }
}
