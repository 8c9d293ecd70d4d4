/// How the objects of a store written with one model become objects of another (Core Data's `NSMappingModel`):
/// one ``EntityMapping`` per destination entity that receives objects, naming its source entity and, for each
/// destination property, where its value comes from.
///
/// Lightweight migration infers it (``inferredMappingModel(forSourceModel:destinationModel:)``); a custom
/// migration builds one (``init(from:to:entityMappings:)``) with values computed by closures and an
/// ``EntityMigrationPolicy`` per entity mapping, and hands it to ``MigrationOptions/mappingModels``.
///
/// For example, splitting `name` into two attributes:
///
///     let split = try MappingModel(from: v1, to: v2, entityMappings: [
///         EntityMapping(source: "Person", destination: "Person", attributes: [
///             "givenName": .computed { try ($0.value(forKey: "name") as? String)?.split(separator: " ").first.map(String.init) },
///             "familyName": .computed { try ($0.value(forKey: "name") as? String)?.split(separator: " ").last.map(String.init) },
///         ], relationships: ["team": "team"]),
///     ])
public struct MappingModel: Sendable, CustomStringConvertible {
    /// The mappings, by destination entity name (sorted).
    public let entityMappings: [EntityMapping]
    /// Source entities whose objects are dropped (no entity mapping reads them).
    public let removedEntities: [String]
    /// The version hash of the model the mapping reads.
    public let sourceVersionHash: String
    /// The version hash of the model the mapping writes.
    public let destinationVersionHash: String
    /// The models themselves (a migration step opens stores with them).
    package let sourceModel: ManagedObjectModel
    package let destinationModel: ManagedObjectModel

    init(entityMappings: [EntityMapping], source: ManagedObjectModel, destination: ManagedObjectModel) {
        sourceModel = source
        destinationModel = destination
        self.entityMappings = entityMappings.sorted { $0.destinationEntityName < $1.destinationEntityName }
        let read = Set(entityMappings.compactMap(\.sourceEntityName))
        removedEntities = source.entities.filter { !$0.isAbstract && !read.contains($0.name) }.map(\.name)
        sourceVersionHash = source.versionHash
        destinationVersionHash = destination.versionHash
    }

    /// A custom mapping: `entityMappings` as given, each checked against the two models (every entity and
    /// property it names exists, and every required destination attribute without a default is mapped).
    ///
    /// - Throws: ``MigrationError/cannotInferMapping(entity:property:reason:)`` naming what does not exist or is
    ///   not filled.
    public init(
        from source: ManagedObjectModel, to destination: ManagedObjectModel, entityMappings: [EntityMapping]
    ) throws(MigrationError) {
        for mapping in entityMappings {
            func fail(_ property: String?, _ reason: String) -> MigrationError {
                .cannotInferMapping(entity: mapping.destinationEntityName, property: property, reason: reason)
            }
            guard let entity = destination.entity(named: mapping.destinationEntityName), !entity.isAbstract else {
                throw fail(nil, "not a concrete entity of the destination model")
            }
            guard let sourceName = mapping.sourceEntityName, let from = source.entity(named: sourceName) else {
                throw fail(
                    nil, "its source \(mapping.sourceEntityName ?? "(none)") is not an entity of the source model")
            }
            for (name, value) in mapping.attributeMappings {
                guard entity.attributesByName[name]?.storageIndex != nil else {
                    throw fail(name, "not a persistent attribute of the destination")
                }
                if case .source(let key) = value, from.attributesByName[key] == nil {
                    throw fail(name, "\(key) is not an attribute of \(from.name)")
                }
            }
            for attribute in entity.persistentAttributes
            where !attribute.isOptional && attribute.defaultValue == nil && !attribute.isDerived {
                guard mapping.attributeMappings.contains(where: { $0.destination == attribute.name }) else {
                    throw fail(attribute.name, "a required attribute without default is not mapped")
                }
            }
            for (name, key) in mapping.relationshipMappings {
                guard entity.relationshipsByName[name] != nil else {
                    throw fail(name, "not a relationship of the destination")
                }
                if let key, from.relationshipsByName[key] == nil {
                    throw fail(name, "\(key) is not a relationship of \(from.name)")
                }
            }
        }
        self.init(entityMappings: entityMappings, source: source, destination: destination)
    }

    /// One line per mapping, e.g. `Book <- Book: title <- name, pages`.
    public var description: String {
        (entityMappings.map(\.description) + removedEntities.map { "(removed) \($0)" }).joined(separator: "\n")
    }
}
