import StrataQuery

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
/// ### Configurations and templates
/// - ``init(entities:configurations:fetchRequestTemplates:versionIdentifiers:)``
/// - ``configurations``
/// - ``entities(forConfigurationName:)``
/// - ``fetchRequestTemplatesByName``
/// - ``fetchRequestFromTemplate(named:substitutionVariables:)``
///
/// ### Versioning
/// - ``versionHash``
/// - ``entityVersionHashesByName``
/// - ``versionIdentifiers``
///
/// ### Model files
/// - ``init(contentsOf:)``
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
    /// The names of the model's configurations, sorted: named subsets of its entities (Core Data's
    /// `configurations`). Every model also has the default configuration, which holds every entity.
    public let configurations: [String]
    /// The fetch request templates by name.
    public let fetchRequestTemplatesByName: [String: FetchRequestTemplate]
    /// Labels the application gives this version of the model (Core Data's `versionIdentifiers`, the model
    /// file's `userDefinedModelVersionIdentifier`); not part of the version hash.
    public let versionIdentifiers: Set<String>
    /// Whether any entity has a derived attribute: saves of models without one skip computing them.
    let hasDerivedAttributes: Bool
    private let configurationMembers: [String: [EntityDescription]]
    private let templatePredicates: [String: ObjectPredicate]

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
    public convenience init(entities definitions: [Entity]) throws(ModelError) {
        try self.init(entities: definitions, configurations: [:])
    }

    /// Builds a model from entity definitions, named configurations and fetch request templates.
    ///
    /// - Parameters:
    ///   - definitions: the entities, in any order.
    ///   - configurations: each configuration's name and the names of its entities.
    ///   - fetchRequestTemplates: named fetch requests (their predicates may use `$variables`).
    ///   - versionIdentifiers: the application's labels for this model version.
    /// - Throws: what ``init(entities:)`` throws, ``ModelError/invalidConfiguration(_:reason:)`` and
    ///   ``ModelError/invalidFetchRequestTemplate(_:reason:)``.
    public convenience init(
        entities definitions: [Entity], configurations: [String: [String]],
        fetchRequestTemplates: [FetchRequestTemplate] = [], versionIdentifiers: Set<String> = []
    ) throws(ModelError) {
        try self.init(
            entities: definitions, configurations: configurations, fetchRequestTemplates: fetchRequestTemplates,
            versionIdentifiers: versionIdentifiers, fileWarnings: [])
    }

    /// The designated initializer; `fileWarnings` are what a model file's loader found (`ModelFileLoader`).
    init(
        entities definitions: [Entity], configurations: [String: [String]],
        fetchRequestTemplates: [FetchRequestTemplate], versionIdentifiers: Set<String>,
        fileWarnings: [ModelWarning]
    ) throws(ModelError) {
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
                superentity: parent, metadata: definition)
            try entity.buildProperties(definition.properties)
            try entity.buildUniquenessConstraints(definition.uniquenessConstraints)
            try entity.buildIndexes(definition.indexes)
            parent?.addSubentity(entity)
            built[definition.name] = entity
        }

        var warnings: [ModelWarning] = []
        for (_, definition) in buildOrder { warnings += try built[definition.name]!.link(in: built) }
        for (_, definition) in buildOrder {
            let entity = built[definition.name]!
            try entity.checkDerivations()
            for fetched in entity.fetchedProperties
            where fetched.entity === entity && built[fetched.destinationName] == nil {
                throw .invalidFetchedProperty(
                    entity: entity.name, property: fetched.name,
                    reason: "its destination \(fetched.destinationName) is not defined")
            }
        }
        for (_, definition) in buildOrder { built[definition.name]!.computeVersionHash() }

        var members: [String: [EntityDescription]] = [:]
        for (configuration, names) in configurations {
            guard !configuration.isEmpty else {
                throw .invalidConfiguration(configuration, reason: "has an empty name")
            }
            members[configuration] = try names.sorted(by: Self.precedes).map { name throws(ModelError) in
                guard let entity = built[name] else {
                    throw .invalidConfiguration(configuration, reason: "names \(name), which is not defined")
                }
                return entity
            }
        }
        var templates: [String: FetchRequestTemplate] = [:]
        var predicates: [String: ObjectPredicate] = [:]
        for template in fetchRequestTemplates {
            func invalid(_ reason: String) -> ModelError { .invalidFetchRequestTemplate(template.name, reason: reason) }
            guard !template.name.isEmpty else { throw invalid("has an empty name") }
            guard templates.updateValue(template, forKey: template.name) == nil else {
                throw invalid("is defined twice")
            }
            guard built[template.entityName] != nil else {
                throw invalid("fetches \(template.entityName), which is not defined")
            }
            if let format = template.predicateFormat {
                do { predicates[template.name] = try ObjectPredicate(format: format) } catch {
                    throw invalid("its predicate does not parse: \(error)")
                }
            }
        }
        self.configurationMembers = members
        self.configurations = members.keys.sorted(by: Self.precedes)
        self.fetchRequestTemplatesByName = templates
        self.templatePredicates = predicates
        self.versionIdentifiers = versionIdentifiers

        let entities = sorted.map { built[$0.name]! }
        self.hasDerivedAttributes = entities.contains { !$0.derivedAttributes.isEmpty }
        self.entities = entities
        self.warnings = fileWarnings + warnings
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

    /// The entities of a configuration, sorted by name; every entity for nil (the default configuration).
    ///
    /// - Parameter name: a name from ``configurations``, or nil.
    /// - Returns: the entities, or nil when the model has no configuration of that name.
    public func entities(forConfigurationName name: String?) -> [EntityDescription]? {
        guard let name else { return entities }
        return configurationMembers[name]
    }

    /// A fetch request made from a template, its `$variables` bound (Core Data's
    /// `fetchRequestFromTemplate(withName:substitutionVariables:)`).
    ///
    /// - Parameters:
    ///   - name: the template's name.
    ///   - substitutionVariables: values for the predicate's variables, by name without the `$`.
    /// - Returns: a new request, or nil when the model has no template of that name.
    public func fetchRequestFromTemplate(
        named name: String, substitutionVariables: [String: QueryValue] = [:]
    ) -> FetchRequest<ManagedObject>? {
        guard let template = fetchRequestTemplatesByName[name] else { return nil }
        return FetchRequest<ManagedObject>(
            entityName: template.entityName,
            predicate: templatePredicates[name]?.withSubstitutionVariables(substitutionVariables))
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
