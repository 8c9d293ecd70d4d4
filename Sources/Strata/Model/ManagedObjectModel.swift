/// The entities of an object graph (Core Data's `NSManagedObjectModel`): built once from definitions,
/// checked as a whole, then immutable and shared by every thread.
///
/// For example:
///
///     let model = try ManagedObjectModel {
///         Entity("Department") {
///             Attribute("name", .string, optional: false)
///             Attribute("budget", .double, default: .double(0))
///         }
///         Entity("Employee", className: "Employee") {
///             Attribute("name", .string, optional: false).validated(.length(min: 1, max: 100))
///             Attribute("salary", .integer64, default: .integer(0)).validated(.range(min: .integer(0), max: nil))
///             Attribute("photo", .binaryData).allowsExternalStorage()
///             Attribute("fullName", .string).transient()
///         }
///         Entity("Manager", parent: "Employee") {
///             Attribute("bonus", .double)
///         }
///     }
///     model.entity(named: "Manager")?.superentity?.name   // "Employee"
///     model.versionHash                                    // 32 hexadecimal digits
///
/// ## Topics
///
/// ### Building a model
/// - ``init(_:)``
/// - ``init(entities:)``
/// - ``ModelError``
///
/// ### Entities
/// - ``entities``
/// - ``entitiesByName``
/// - ``entity(named:)``
/// - ``entity(withID:)``
///
/// ### Versioning
/// - ``versionHash``
/// - ``entityVersionHashesByName``
public final class ManagedObjectModel: Sendable, CustomStringConvertible {
    /// Every entity, sorted by name (by the UTF-8 bytes of the names); entity i has
    /// ``EntityDescription/entityID`` i + 1.
    public let entities: [EntityDescription]
    /// ``entities`` by name.
    public let entitiesByName: [String: EntityDescription]
    /// A hash of every entity's ``EntityDescription/versionHash``, as 32 lowercase hexadecimal digits:
    /// two models with the same hash store rows the same way. It is FNV-1a 128 (`StableHasher`) over
    /// `"strata.model.v1"`, the entity count and, for each entity in name order, its name and its
    /// 16-byte hash (most significant byte first); strings are fed as a u32 byte count and UTF-8.
    public let versionHash: String
    /// What the model allows but is usually a mistake, e.g. relationships without an inverse.
    public let warnings: [ModelWarning]
    /// Each entity's ``EntityDescription/versionHash`` by entity name: what a store records to tell
    /// which entities changed (Core Data's `entityVersionHashesByName`).
    public let entityVersionHashesByName: [String: String]

    /// Builds a model from the entities the closure declares.
    ///
    /// - Parameter entities: a closure that declares ``Entity`` values (in any order).
    /// - Throws: a ``ModelError`` for the first problem found; see ``init(entities:)``.
    public convenience init(@EntityBuilder _ entities: () -> [Entity]) throws(ModelError) {
        try self.init(entities: entities())
    }

    /// Builds a model from entity definitions: links each entity to its parent, numbers entities,
    /// lays out their rows and computes version hashes.
    ///
    /// - Parameter definitions: the entities, in any order.
    /// - Throws: ``ModelError/emptyEntityName``, ``ModelError/duplicateEntity(_:)``,
    ///   ``ModelError/unknownParent(entity:parent:)``, ``ModelError/inheritanceCycle(_:)``,
    ///   ``ModelError/tooManyEntities(_:)``, and the attribute errors (``ModelError/emptyAttributeName(entity:)``,
    ///   ``ModelError/duplicateAttribute(entity:attribute:)``,
    ///   ``ModelError/redeclaredAttribute(entity:attribute:inheritedFrom:)``,
    ///   ``ModelError/undefinedTypeOnPersistentAttribute(entity:attribute:)``,
    ///   ``ModelError/defaultValueTypeMismatch(entity:attribute:expected:)``,
    ///   ``ModelError/missingValueTransformerName(entity:attribute:)``,
    ///   ``ModelError/optionNotApplicable(entity:attribute:option:)``,
    ///   ``ModelError/ruleNotApplicable(entity:attribute:rule:)``,
    ///   ``ModelError/invalidRegularExpression(entity:attribute:pattern:)``),
    ///   ``ModelError/invalidUniquenessConstraint(entity:attributes:reason:)``.
    public init(entities definitions: [Entity]) throws(ModelError) {
        guard definitions.count <= Int(UInt16.max) else { throw .tooManyEntities(definitions.count) }
        var definitionsByName: [String: Entity] = [:]
        for definition in definitions {
            guard !definition.name.isEmpty else { throw .emptyEntityName }
            guard definitionsByName.updateValue(definition, forKey: definition.name) == nil else {
                throw .duplicateEntity(definition.name)
            }
        }
        for definition in definitions {
            if let parent = definition.parentName, definitionsByName[parent] == nil {
                throw .unknownParent(entity: definition.name, parent: parent)
            }
        }
        let depths = try Self.inheritanceDepths(definitionsByName)

        let sorted = definitions.sorted { Self.precedes($0.name, $1.name) }
        var entityIDs: [String: UInt16] = [:]
        for (position, definition) in sorted.enumerated() { entityIDs[definition.name] = UInt16(position + 1) }

        // Parents before children; siblings (and everything at one depth) by name, so that each
        // entity's subentities are added in name order.
        var built: [String: EntityDescription] = [:]
        let buildOrder = sorted.enumerated().sorted { lhs, rhs in
            let (left, right) = (depths[lhs.element.name]!, depths[rhs.element.name]!)
            return left != right ? left < right : lhs.offset < rhs.offset
        }
        for (_, definition) in buildOrder {
            let parent = definition.parentName.map { built[$0]! }
            let entity = EntityDescription(
                name: definition.name, isAbstract: definition.isAbstract,
                managedObjectClassName: definition.managedObjectClassName, entityID: entityIDs[definition.name]!,
                superentity: parent)
            try entity.buildProperties(definition.properties)
            try entity.buildUniquenessConstraints(definition.uniquenessConstraints)
            parent?.addSubentity(entity)
            built[definition.name] = entity
        }

        var warnings: [ModelWarning] = []
        for (_, definition) in buildOrder { warnings += try built[definition.name]!.link(in: built) }
        for (_, definition) in buildOrder { built[definition.name]!.computeVersionHash() }

        let entities = sorted.map { built[$0.name]! }
        self.entities = entities
        self.warnings = warnings
        self.entitiesByName = built
        var hashes: [String: String] = [:]
        var hasher = StableHasher()
        hasher.combine("strata.model.v1")
        hasher.combine(UInt32(entities.count))
        for entity in entities {
            hashes[entity.name] = entity.versionHash
            hasher.combine(entity.name)
            hasher.combine(bigEndian: entity.versionHashValue)
        }
        self.entityVersionHashesByName = hashes
        self.versionHash = hasher.hexDigest
    }

    /// The entity named `name`, or nil.
    ///
    /// - Parameter name: an entity name.
    /// - Returns: the entity, or nil when the model has none of that name.
    public func entity(named name: String) -> EntityDescription? { entitiesByName[name] }

    /// The entity numbered `entityID` (as rows record it), or nil.
    ///
    /// - Parameter entityID: an ``EntityDescription/entityID``.
    /// - Returns: the entity, or nil when no entity has that number.
    public func entity(withID entityID: UInt16) -> EntityDescription? {
        let position = Int(entityID) - 1
        return entities.indices.contains(position) ? entities[position] : nil
    }

    /// One line per entity.
    public var description: String {
        entities.map(\.description).joined(separator: "\n")
    }

    /// Whether `lhs` sorts before `rhs`: by UTF-8 bytes, which is the same on every platform.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Each entity's number of ancestors; throws when parents form a cycle.
    private static func inheritanceDepths(_ definitions: [String: Entity]) throws(ModelError) -> [String: Int] {
        var depths: [String: Int] = [:]
        for name in definitions.keys.sorted(by: precedes) {
            var chain: [String] = []
            var current: String? = name
            while let entity = current, depths[entity] == nil {
                if let start = chain.firstIndex(of: entity) {
                    let cycle = Array(chain[start...])
                    let first = cycle.indices.min { precedes(cycle[$0], cycle[$1]) }!
                    throw .inheritanceCycle(Array(cycle[first...] + cycle[..<first]))
                }
                chain.append(entity)
                current = definitions[entity]!.parentName
            }
            // `current` is nil (a root's parent) or an entity whose depth is known.
            var depth = current.map { depths[$0]! + 1 } ?? 0
            for entity in chain.reversed() {
                depths[entity] = depth
                depth += 1
            }
        }
        return depths
    }
}
