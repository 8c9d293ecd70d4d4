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
/// - ``uniquenessConstraints``
/// - ``indexes``
/// - ``fetchedProperties``
/// - ``fetchedPropertiesByName``
///
/// ### Metadata
/// - ``userInfo``
/// - ``renamingIdentifier``
/// - ``versionHashModifier``
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
    /// ``rootIdentifier`` of an entity with a superentity; nil for a root.
    private let superRootIdentifier: ObjectIdentifier?
    /// Free-form key-value pairs for the application.
    public let userInfo: [String: String]
    /// The entity's name in an earlier model version.
    public let renamingIdentifier: String?
    /// The string mixed into the entity's version hash, if any.
    public let versionHashModifier: String?

    private var subentityReferences: [UnownedEntity] = []

    // The properties marked `@exclusivity(unchecked)` are set while the model is built (ManagedObjectModel's
    // initializer, before the entity is shared) and only read after, on the path of every fault, fetch and save: the
    // attribute spares each read the runtime's dynamic exclusivity check (`swift_beginAccess` and its bookkeeping,
    // about 77 instructions; under callgrind such checks were about a tenth of w4c-graph's instructions, several a
    // fired fault on these properties). Nothing writes them once the model is built, so no two accesses overlap.
    /// The entity's attributes followed by its relationships (each inherited first).
    @exclusivity(unchecked) public private(set) var properties: [any PropertyDescription] = []
    /// ``properties`` by name.
    @exclusivity(unchecked) public private(set) var propertiesByName: [String: any PropertyDescription] = [:]
    /// The entity's attributes: inherited ones first (the superentity's ``attributes``), then its own
    /// in declaration order.
    @exclusivity(unchecked) public private(set) var attributes: [AttributeDescription] = []
    /// ``attributes`` by name.
    @exclusivity(unchecked) public private(set) var attributesByName: [String: AttributeDescription] = [:]
    /// The non-transient attributes, in row order: element i has ``AttributeDescription/storageIndex`` i.
    @exclusivity(unchecked) public private(set) var persistentAttributes: [AttributeDescription] = []
    /// The entity's relationships: inherited ones first, then its own in declaration order.
    @exclusivity(unchecked) public private(set) var relationships: [RelationshipDescription] = []
    /// ``relationships`` by name.
    @exclusivity(unchecked) public private(set) var relationshipsByName: [String: RelationshipDescription] = [:]
    /// The to-one relationships, inherited first: element i has ``RelationshipDescription/toOneIndex`` i.
    @exclusivity(unchecked) public private(set) var toOneRelationships: [RelationshipDescription] = []
    /// The uniqueness constraints the entity's objects obey: its superentity's first, then its own.
    public private(set) var uniquenessConstraints: [UniquenessConstraint] = []
    /// The fetch indexes covering the entity's objects: its superentity's first, then its own. Not part of the
    /// version hash.
    public private(set) var indexes: [FetchIndexDescription] = []
    /// The fetched properties, inherited first. They are not among ``properties`` (they are neither stored
    /// nor attributes or relationships).
    public private(set) var fetchedProperties: [FetchedPropertyDescription] = []
    /// ``fetchedProperties`` by name.
    public private(set) var fetchedPropertiesByName: [String: FetchedPropertyDescription] = [:]
    /// The derived attributes (inherited first), computed at each save.
    public private(set) var derivedAttributes: [AttributeDescription] = []
    /// Every attribute's default value, by index: what a new object or a fault reads (one shared buffer).
    @exclusivity(unchecked) private(set) var defaultValues: [AttributeValue?] = []
    /// A relationship value per relationship, each empty (no to-one, no members): what a new object's state copies
    /// into its relationship slots (``ObjectState``).
    @exclusivity(unchecked) private(set) var emptyRelationshipValues: [RelationshipValue?] = []
    /// Whether a store that keeps rows as row records hands this entity's rows over as their bytes
    /// (``StoredRow``), each field decoded when an object reads it: true when no persistent attribute's value can
    /// fail to decode once its row's fields were checked (a transformable value runs its transformer, a URI is
    /// parsed), so that a decoded value never throws.
    @exclusivity(unchecked) private(set) var keepsRowsAsRecords = false
    /// The persistent attributes of binary data: the one kind whose values a store keeps outside a row record.
    @exclusivity(unchecked) private(set) var binaryAttributes: [AttributeDescription] = []
    /// The storage indexes of the persistent attributes that allow external storage: the one kind of value a store
    /// may keep as a blob, so the one that can make writing a row more than encoding it.
    @exclusivity(unchecked) private(set) var externalStorageIndexes: [Int] = []
    /// The indexes (``AttributeDescription/index``) of the persistent attributes: what an object loaded from a row
    /// record has not decoded yet.
    @exclusivity(unchecked) private(set) var persistentAttributeIndexes = PropertyIndexSet()
    /// ``persistentAttributeIndexes``' indexes below 64, as bits, and whether it has any of 64 or more: what a fault
    /// that fires reads of it, without a copy of the set (a retain and a release of its part of 64 or more).
    @exclusivity(unchecked) private(set) var persistentAttributeBits: UInt64 = 0
    @exclusivity(unchecked) private(set) var hasHighPersistentAttributeIndexes = false
    /// Which property each managed property wrapper (``ManagedAttribute``, ``ManagedRelationship``) of the entity's
    /// classes stands for.
    let propertyBindings = PropertyBindings()
    /// The class of the entity's objects, as ``EntityClassRegistry`` last resolved it.
    let classBinding = EntityClassBinding()
    /// What each field of the entity's rows holds, in field order: level by level from the root, each
    /// level's persistent attributes and then two fields per to-one.
    @exclusivity(unchecked) public private(set) var storedFields: [StoredField] = []
    /// A hash of what the entity's rows depend on, as 32 lowercase hexadecimal digits: the name, the
    /// superentity's name, the abstract flag and each persistent attribute's name, type, optionality and
    /// transformer name, in row order, then each relationship's name, destination, inverse and kind, then the
    /// entity's own uniqueness constraints (when it declares any). Validation rules, defaults, indexes, external storage and
    /// transient attributes are not part of it (as in Core Data). See ``ManagedObjectModel/versionHash``.
    public private(set) var versionHash: String = ""
    /// The hash as a number (what the model's hash combines).
    private(set) var versionHashValue: UInt128 = 0

    init(
        name: String, isAbstract: Bool, managedObjectClassName: String?, entityID: UInt16,
        superentity: EntityDescription?, metadata: some ModelElementMetadata
    ) {
        self.userInfo = metadata.userInfo
        self.renamingIdentifier = metadata.renamingIdentifier
        self.versionHashModifier = metadata.versionHashModifier
        self.name = name
        self.isAbstract = isAbstract
        self.managedObjectClassName = managedObjectClassName
        self.entityID = entityID
        self.superentity = superentity
        self.superRootIdentifier = superentity?.rootIdentifier
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

    /// The identity of ``rootEntity``, found without a reference: what object IDs, the context's registry and the row
    /// cache hash and compare, several times a fault (finding the root entity retained and released it each time).
    var rootIdentifier: ObjectIdentifier { superRootIdentifier ?? ObjectIdentifier(self) }

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

    /// Builds the entity's properties: the superentity's (which must be built), then `definitions`.
    /// Relationships are linked to their destinations later, by ``link(in:)``.
    func buildProperties(_ definitions: [PropertyDefinition]) throws(ModelError) {
        var attributes = superentity?.attributes ?? []
        var attributesByName = superentity?.attributesByName ?? [:]
        var persistentAttributes = superentity?.persistentAttributes ?? []
        var relationships = superentity?.relationships ?? []
        var relationshipsByName = superentity?.relationshipsByName ?? [:]
        var toOneRelationships = superentity?.toOneRelationships ?? []
        var storedFields = superentity?.storedFields ?? []
        var fetchedProperties = superentity?.fetchedProperties ?? []
        var fetchedPropertiesByName = superentity?.fetchedPropertiesByName ?? [:]
        func checkName(_ name: String) throws(ModelError) {
            guard !name.isEmpty else { throw .emptyAttributeName(entity: self.name) }
            let existing: (any PropertyDescription)? = attributesByName[name] ?? relationshipsByName[name]
            if let existing {
                if existing.entity === self { throw .duplicateAttribute(entity: self.name, attribute: name) }
                throw .redeclaredAttribute(entity: self.name, attribute: name, inheritedFrom: existing.entity.name)
            }
            if let fetched = fetchedPropertiesByName[name] {
                if fetched.entity === self { throw .duplicateAttribute(entity: self.name, attribute: name) }
                throw .redeclaredAttribute(entity: self.name, attribute: name, inheritedFrom: fetched.entity.name)
            }
        }
        // This level's fields: its persistent attributes, then two per to-one (row ID, entity ID).
        for case .attribute(let definition) in definitions {
            try checkName(definition.name)
            let attribute = try AttributeDescription(
                definition: definition, entity: self, index: attributes.count,
                storageIndex: definition.isTransient ? nil : persistentAttributes.count,
                fieldIndex: definition.isTransient ? nil : storedFields.count)
            attributes.append(attribute)
            attributesByName[attribute.name] = attribute
            if let storageIndex = attribute.storageIndex {
                persistentAttributes.append(attribute)
                storedFields.append(.attribute(storageIndex))
            }
        }
        for case .relationship(let definition) in definitions {
            try checkName(definition.name)
            if definition.isToMany {
                guard definition.minCount >= 0, definition.maxCount.map({ $0 >= max(1, definition.minCount) }) ?? true
                else { throw .invalidCount(entity: name, relationship: definition.name) }
            }
            let toOneIndex = definition.isToMany ? nil : toOneRelationships.count
            let relationship = RelationshipDescription(
                definition: definition, entity: self, index: relationships.count, toOneIndex: toOneIndex,
                fieldIndex: toOneIndex == nil ? nil : storedFields.count)
            relationships.append(relationship)
            relationshipsByName[relationship.name] = relationship
            if let toOneIndex {
                toOneRelationships.append(relationship)
                storedFields += [.reference(toOneIndex), .referenceEntity(toOneIndex)]
            }
        }
        for case .fetchedProperty(let definition) in definitions {
            try checkName(definition.name)
            let fetched = try FetchedPropertyDescription(definition: definition, entity: self)
            fetchedProperties.append(fetched)
            fetchedPropertiesByName[fetched.name] = fetched
        }
        self.fetchedProperties = fetchedProperties
        self.fetchedPropertiesByName = fetchedPropertiesByName
        self.derivedAttributes = attributes.filter(\.isDerived)
        self.defaultValues = attributes.map(\.defaultValue)
        self.keepsRowsAsRecords = !persistentAttributes.contains { $0.type == .transformable || $0.type == .uri }
        self.persistentAttributeIndexes = PropertyIndexSet(persistentAttributes.map(\.index))
        self.persistentAttributeBits = persistentAttributeIndexes.bits
        self.hasHighPersistentAttributeIndexes = !persistentAttributeIndexes.highIndexes.isEmpty
        self.binaryAttributes = persistentAttributes.filter { $0.type == .binaryData }
        self.externalStorageIndexes = persistentAttributes.indices.filter {
            persistentAttributes[$0].allowsExternalBinaryDataStorage
        }
        self.emptyRelationshipValues = relationships.map { $0.isToMany ? .toMany(RelatedObjects()) : .toOne(nil) }
        self.attributes = attributes
        self.attributesByName = attributesByName
        self.persistentAttributes = persistentAttributes
        self.relationships = relationships
        self.relationshipsByName = relationshipsByName
        self.toOneRelationships = toOneRelationships
        self.storedFields = storedFields
        self.properties = attributes + relationships
        var propertiesByName: [String: any PropertyDescription] = attributesByName
        for relationship in relationships { propertiesByName[relationship.name] = relationship }
        self.propertiesByName = propertiesByName
    }

    /// Builds the uniqueness constraints: the superentity's (which must be built), then `definitions`, each a
    /// non-empty list of distinct persistent attributes of the entity.
    func buildUniquenessConstraints(_ definitions: [[String]]) throws(ModelError) {
        var constraints = superentity?.uniquenessConstraints ?? []
        for names in definitions {
            func invalid(_ reason: String) -> ModelError {
                .invalidUniquenessConstraint(entity: name, attributes: names, reason: reason)
            }
            guard !names.isEmpty else { throw invalid("names no attribute") }
            guard Set(names).count == names.count else { throw invalid("names an attribute twice") }
            var attributes: [AttributeDescription] = []
            for attributeName in names {
                guard let attribute = attributesByName[attributeName] else {
                    throw invalid("names \(attributeName), which is not an attribute of \(name)")
                }
                guard attribute.storageIndex != nil else { throw invalid("names transient attribute \(attributeName)") }
                attributes.append(attribute)
            }
            constraints.append(UniquenessConstraint(entity: self, attributes: attributes))
        }
        uniquenessConstraints = constraints
    }

    /// Builds the fetch indexes: the superentity's (which must be built), then `definitions`, each naming
    /// one to 16 distinct persistent attributes or to-one relationships of the entity.
    func buildIndexes(_ definitions: [FetchIndex]) throws(ModelError) {
        var indexes = superentity?.indexes ?? []
        for definition in definitions {
            func invalid(_ reason: String) -> ModelError {
                .invalidFetchIndex(entity: name, index: definition.name, reason: reason)
            }
            guard !definition.name.isEmpty else { throw invalid("has an empty name") }
            guard !indexes.contains(where: { $0.name == definition.name }) else { throw invalid("is declared twice") }
            guard (1...16).contains(definition.elements.count) else { throw invalid("has no element or more than 16") }
            let names = definition.elements.map(\.property)
            guard Set(names).count == names.count else { throw invalid("names a property twice") }
            var elements: [FetchIndexDescription.Element] = []
            for element in definition.elements {
                let field: Int
                var attribute: AttributeDescription?
                if let found = attributesByName[element.property] {
                    guard let index = found.fieldIndex else {
                        throw invalid("names transient attribute \(element.property)")
                    }
                    (field, attribute) = (index, found)
                } else if let relationship = relationshipsByName[element.property] {
                    guard let index = relationship.fieldIndex else {
                        throw invalid("names to-many relationship \(element.property)")
                    }
                    field = index
                } else {
                    throw invalid("names \(element.property), which is not a property of \(name)")
                }
                elements.append(
                    FetchIndexDescription.Element(
                        propertyName: element.property, attribute: attribute, isAscending: element.isAscending,
                        collationType: element.collationType, fieldIndex: field))
            }
            indexes.append(FetchIndexDescription(name: definition.name, entity: self, elements: elements))
        }
        self.indexes = indexes
    }

    /// Checks the entity's own derived attributes once every relationship is linked: each key path walks
    /// to-ones to an attribute of a compatible type, each aggregate reads a to-many (and a numeric attribute
    /// of its destination), `now()` fills a date.
    func checkDerivations() throws(ModelError) {
        for attribute in derivedAttributes where attribute.entity === self {
            let derivation = attribute.derivation!
            func invalid(_ reason: String) -> ModelError {
                .invalidDerivation(
                    entity: name, attribute: attribute.name, expression: derivation.description, reason: reason)
            }
            let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float]
            switch derivation {
            case .now:
                guard attribute.type == .date else { throw invalid("now() gives a Date") }
            case .keyPath(let path):
                var current: EntityDescription = self
                for step in path.dropLast() {
                    guard let relationship = current.relationshipsByName[step], !relationship.isToMany else {
                        throw invalid("\(step) is not a to-one relationship of \(current.name)")
                    }
                    current = relationship.destinationEntity
                }
                guard let source = current.attributesByName[path.last!], source !== attribute else {
                    throw invalid("\(path.last!) is not another attribute of \(current.name)")
                }
                let sameKind =
                    source.type == attribute.type
                    || (source.type.integerRange != nil && attribute.type.integerRange != nil)
                guard sameKind else { throw invalid("\(path.last!) is a \(source.type), not a \(attribute.type)") }
            case .aggregate(let function, let relationshipName, let attributeName):
                guard let relationship = relationshipsByName[relationshipName], relationship.isToMany else {
                    throw invalid("\(relationshipName) is not a to-many relationship of \(name)")
                }
                guard numeric.contains(attribute.type) else { throw invalid("an aggregate gives a number") }
                if function == .count {
                    guard attribute.type.integerRange != nil else { throw invalid("@count gives an integer") }
                } else {
                    let destination = relationship.destinationEntity
                    guard let attributeName, let source = destination.attributesByName[attributeName],
                        numeric.contains(source.type)
                    else {
                        throw invalid("\(attributeName ?? "") is not a numeric attribute of \(destination.name)")
                    }
                }
            }
        }
    }

    /// Links the entity's own relationships to their destinations and inverses, once every entity is built;
    /// returns the warnings found (relationships without inverse).
    func link(in entities: [String: EntityDescription]) throws(ModelError) -> [ModelWarning] {
        var warnings: [ModelWarning] = []
        for relationship in relationships where relationship.entity === self {
            guard let destination = entities[relationship.destinationName] else {
                throw .unknownDestination(
                    entity: name, relationship: relationship.name, destination: relationship.destinationName)
            }
            var inverse: RelationshipDescription?
            if let inverseName = relationship.inverseName {
                guard let found = destination.relationshipsByName[inverseName] else {
                    throw .unknownInverse(entity: name, relationship: relationship.name, inverse: inverseName)
                }
                guard let backDestination = entities[found.destinationName], isKind(of: backDestination) else {
                    throw .inverseMismatch(
                        entity: name, relationship: relationship.name, inverse: inverseName,
                        reason: "\(destination.name).\(inverseName) leads to \(found.destinationName), not \(name)")
                }
                if let back = found.inverseName, back != relationship.name {
                    throw .inverseMismatch(
                        entity: name, relationship: relationship.name, inverse: inverseName,
                        reason: "\(destination.name).\(inverseName) names \(back) as its inverse")
                }
                inverse = found
            } else {
                warnings.append(.missingInverse(entity: name, relationship: relationship.name))
            }
            relationship.link(destination: destination, inverse: inverse)
        }
        return warnings
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
        // Entities without relationships hash as they did before relationships existed (stores keep opening).
        if !relationships.isEmpty { hasher.combine(UInt32(relationships.count)) }
        for relationship in relationships {
            hasher.combine(relationship.name)
            hasher.combine(relationship.destinationName)
            hasher.combine(relationship.inverseName ?? "")
            hasher.combine(UInt8((relationship.isToMany ? 1 : 0) | (relationship.isOrdered ? 2 : 0)))
        }
        // As in Core Data, constraints are part of the hash; entities without any hash as before they existed.
        let own = uniquenessConstraints.filter { $0.entity === self }
        if !own.isEmpty {
            hasher.combine("uniquenessConstraints")
            hasher.combine(UInt32(own.count))
            for constraint in own {
                hasher.combine(UInt32(constraint.attributes.count))
                for attribute in constraint.attributes { hasher.combine(attribute.name) }
            }
        }
        // Version hash modifiers, when any is set (entities without one hash as before they existed).
        let modified: [(String, String)] =
            properties.compactMap { property in
                guard property.entity === self else { return nil }
                let modifier =
                    (property as? AttributeDescription)?.versionHashModifier
                    ?? (property as? RelationshipDescription)?.versionHashModifier
                return modifier.map { (property.name, $0) }
            } + (versionHashModifier.map { [("", $0)] } ?? [])
        if !modified.isEmpty {
            hasher.combine("versionHashModifiers")
            hasher.combine(UInt32(modified.count))
            for (property, modifier) in modified {
                hasher.combine(property)
                hasher.combine(modifier)
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

/// What one field of an entity's rows holds (see ``EntityDescription/storedFields``).
public enum StoredField: Sendable, Hashable {
    /// The value of the persistent attribute with this ``AttributeDescription/storageIndex``.
    case attribute(Int)
    /// The related row ID of the to-one with this ``RelationshipDescription/toOneIndex`` (null when nil).
    case reference(Int)
    /// The related object's entity ID of that to-one (null when nil or when the destination has no
    /// subentities).
    case referenceEntity(Int)
}
