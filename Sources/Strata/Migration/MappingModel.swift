/// How the objects of a store written with one model become objects of another (Core Data's `NSMappingModel`):
/// one ``EntityMapping`` per destination entity that receives objects, naming its source entity and, for each
/// destination property, the source property it takes its value from.
///
/// Lightweight migration infers it (``inferredMappingModel(forSourceModel:destinationModel:)``).
public struct MappingModel: Sendable, CustomStringConvertible {
    /// The mappings, by destination entity name (sorted).
    public let entityMappings: [EntityMapping]
    /// Source entities whose objects are dropped (no destination entity takes them).
    public let removedEntities: [String]

    /// One line per mapping, e.g. `Book <- Book: title <- name, pages <- pages`.
    public var description: String {
        (entityMappings.map(\.description) + removedEntities.map { "(removed) \($0)" }).joined(separator: "\n")
    }
}

/// How the objects of one source entity become objects of one destination entity (Core Data's
/// `NSEntityMapping`).
public struct EntityMapping: Sendable, CustomStringConvertible {
    /// The destination entity.
    public let destinationEntityName: String
    /// The source entity, nil when the destination entity is new (nothing to copy).
    public let sourceEntityName: String?
    /// For each persistent, non-derived attribute of the destination: the source attribute it takes its value
    /// from, or nil for its default (a new attribute).
    public let attributeSources: [(destination: String, source: String?)]
    /// For each relationship of the destination: the source relationship it takes its objects from, or nil.
    public let relationshipSources: [(destination: String, source: String?)]

    /// Whether the mapping changes nothing but copies (same names, same entity).
    public var isCopy: Bool {
        sourceEntityName == destinationEntityName
            && attributeSources.allSatisfy { $0.source == $0.destination }
            && relationshipSources.allSatisfy { $0.source == $0.destination }
    }

    /// E.g. `Book <- Book: title <- name, pages`.
    public var description: String {
        let parts = (attributeSources + relationshipSources).map { pair in
            pair.source == pair.destination ? pair.destination : "\(pair.destination) <- \(pair.source ?? "(new)")"
        }
        return "\(destinationEntityName) <- \(sourceEntityName ?? "(new)"): \(parts.joined(separator: ", "))"
    }
}
