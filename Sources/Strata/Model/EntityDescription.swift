/// An entity of a built model (Core Data's `NSEntityDescription`): its place in the inheritance tree,
/// its attributes in row order, and the identifiers the store keeps.
///
/// Entities are built by ``ManagedObjectModel/init(entities:)`` and never change afterwards. The model
/// owns them: an entity holds its ``superentity`` strongly and its ``subentities`` unowned, so keep the
/// model alive while you use them (a coordinator does).
///
/// A whole inheritance hierarchy is stored in one table, the ``rootEntity``'s, as Core Data's SQLite
/// store does; each row records its entity's ``entityID``. Inherited attributes come first, so an
/// attribute has the same ``AttributeDescription/storageIndex`` in the rows of every entity that has it.
///
/// For example:
///
///     let manager = model.entity(named: "Manager")!
///     manager.superentity?.name                   // "Employee"
///     manager.attributes.map(\.name)              // ["name", "salary", "photo", "fullName", "bonus"]
///     manager.isKind(of: model.entity(named: "Employee")!)   // true
///
/// ## Topics
///
/// ### Identity
/// - ``name``
/// - ``entityID``
/// - ``managedObjectClassName``
/// - ``classIdentifier``
/// - ``versionHash``
///
/// ### Inheritance
/// - ``isAbstract``
/// - ``superentity``
/// - ``subentities``
/// - ``rootEntity``
/// - ``allEntitiesInHierarchyBelow``
/// - ``isKind(of:)``
///
/// ### Properties
/// - ``properties``
/// - ``propertiesByName``
/// - ``attributes``
/// - ``attributesByName``
/// - ``persistentAttributes``
public final class EntityDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    // @unchecked Sendable: the `var`s below are written only while `ManagedObjectModel.init` builds the
    // model, before any entity is returned to a caller, and never again; afterwards every stored
    // property is read-only and every reachable object is immutable.

    /// The entity's name, unique in its model.
    public let name: String
    /// Whether the entity has no instances of its own; its subentities do.
    public let isAbstract: Bool
    /// The name under which the object graph finds the entity's managed object class, or nil for plain
    /// managed objects. Classes are resolved through a registry by ``classIdentifier``, so the model
    /// holds no class references.
    public let managedObjectClassName: String?
    /// The entity's number in its model and in the rows of its table: its position in the model's
    /// entities sorted by name, from 1. Stable for a given model, but adding or renaming an entity can
    /// renumber others: stores record the name of each ID.
    public let entityID: UInt16
    /// The entity it inherits from, if any.
    public let superentity: EntityDescription?

    private var subentityReferences: [UnownedEntity] = []
    /// The entity's own properties and the inherited ones, in row order: inherited first.
    public private(set) var properties: [any PropertyDescription] = []
    /// ``properties`` by name.
    public private(set) var propertiesByName: [String: any PropertyDescription] = [:]
    /// The entity's attributes: inherited ones first (the superentity's ``attributes``), then its own
    /// in declaration order.
    public private(set) var attributes: [AttributeDescription] = []
    /// ``attributes`` by name.
    public private(set) var attributesByName: [String: AttributeDescription] = [:]
    /// The non-transient attributes, in row order: element i has ``AttributeDescription/storageIndex`` i.
    public private(set) var persistentAttributes: [AttributeDescription] = []
    /// A hash of what the entity's rows depend on, as 32 lowercase hexadecimal digits: the name, the
    /// superentity's name, the abstract flag and each persistent attribute's name, type, optionality and
    /// transformer name, in row order. Validation rules, defaults, indexes, external storage and
    /// transient attributes are not part of it (as in Core Data). See ``ManagedObjectModel/versionHash``.
    public private(set) var versionHash: String = ""
    /// The hash as a number (what the model's hash combines).
    private(set) var versionHashValue: UInt128 = 0

    init(
        name: String, isAbstract: Bool, managedObjectClassName: String?, entityID: UInt16,
        superentity: EntityDescription?
    ) {
        self.name = name
        self.isAbstract = isAbstract
        self.managedObjectClassName = managedObjectClassName
        self.entityID = entityID
        self.superentity = superentity
    }

    /// The key the object graph's class registry uses for this entity: ``managedObjectClassName``, or
    /// `"ManagedObject"` for entities without a class of their own (Core Data reports `NSManagedObject`).
    public var classIdentifier: String { managedObjectClassName ?? "ManagedObject" }

    /// The entities that inherit directly from this one, sorted by name.
    public var subentities: [EntityDescription] { subentityReferences.map(\.entity) }

    /// The top of the inheritance chain (the entity itself when it has no superentity): its table holds
    /// the rows of the whole hierarchy.
    public var rootEntity: EntityDescription {
        var entity = self
        while let parent = entity.superentity { entity = parent }
        return entity
    }

    /// The entity itself followed by all its descendants, depth first, siblings by name: the entities a
    /// fetch that includes subentities covers.
    public var allEntitiesInHierarchyBelow: [EntityDescription] {
        var result: [EntityDescription] = [self]
        for child in subentities { result += child.allEntitiesInHierarchyBelow }
        return result
    }

    /// Whether this entity is `entity` or inherits from it (Core Data's `isKindOf(entity:)`).
    ///
    /// - Parameter entity: a possible ancestor.
    /// - Returns: true when `entity` is this entity or one of its ancestors.
    public func isKind(of entity: EntityDescription) -> Bool {
        var current: EntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// A one-line summary, e.g. `Manager (entity 3, parent Employee): name, salary, bonus`.
    public var description: String {
        var text = "\(name) (entity \(entityID)"
        if isAbstract { text += ", abstract" }
        if let superentity { text += ", parent \(superentity.name)" }
        return text + "): " + attributes.map(\.description).joined(separator: ", ")
    }

    /// Identity: two descriptions are equal when they are the same object.
    public static func == (lhs: EntityDescription, rhs: EntityDescription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Building (ManagedObjectModel.init only)

    /// Builds the entity's attributes: the superentity's (which must be built), then `definitions`.
    func buildProperties(_ definitions: [PropertyDefinition]) throws(ModelError) {
        var attributes = superentity?.attributes ?? []
        var attributesByName = superentity?.attributesByName ?? [:]
        var persistentAttributes = superentity?.persistentAttributes ?? []
        for case .attribute(let definition) in definitions {
            guard !definition.name.isEmpty else { throw .emptyAttributeName(entity: name) }
            if let existing = attributesByName[definition.name] {
                if existing.entity === self { throw .duplicateAttribute(entity: name, attribute: definition.name) }
                throw .redeclaredAttribute(
                    entity: name, attribute: definition.name, inheritedFrom: existing.entity.name)
            }
            let attribute = try AttributeDescription(
                definition: definition, entity: self, index: attributes.count,
                storageIndex: definition.isTransient ? nil : persistentAttributes.count)
            attributes.append(attribute)
            attributesByName[attribute.name] = attribute
            if !attribute.isTransient { persistentAttributes.append(attribute) }
        }
        self.attributes = attributes
        self.attributesByName = attributesByName
        self.persistentAttributes = persistentAttributes
        self.properties = attributes
        self.propertiesByName = attributesByName
    }

    /// Records a direct subentity; called in name order.
    func addSubentity(_ entity: EntityDescription) {
        subentityReferences.append(UnownedEntity(entity: entity))
    }

    /// Computes ``versionHash`` from the entity's (built) attributes.
    func computeVersionHash() {
        var hasher = StableHasher()
        hasher.combine("strata.entity.v1")
        hasher.combine(name)
        if let superentity {
            hasher.combine(UInt8(1))
            hasher.combine(superentity.name)
        } else {
            hasher.combine(UInt8(0))
        }
        hasher.combine(UInt8(isAbstract ? 1 : 0))
        hasher.combine(UInt32(persistentAttributes.count))
        for attribute in persistentAttributes {
            hasher.combine(attribute.name)
            hasher.combine(attribute.type.rawValue)
            hasher.combine(UInt8(attribute.isOptional ? 1 : 0))
            if let transformer = attribute.valueTransformerName {
                hasher.combine(UInt8(1))
                hasher.combine(transformer)
            } else {
                hasher.combine(UInt8(0))
            }
        }
        versionHashValue = hasher.value
        versionHash = hasher.hexDigest
    }
}

/// An unowned reference, so that a parent does not keep its subentities (which keep it) alive.
private struct UnownedEntity {
    unowned let entity: EntityDescription
}
