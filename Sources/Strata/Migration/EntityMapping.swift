/// How the objects of one source entity become objects of one destination entity (Core Data's
/// `NSEntityMapping`): where each destination attribute's value comes from, which source relationship each
/// destination relationship takes its objects from (mapped through the destination objects every mapping
/// made), and an optional ``EntityMigrationPolicy``.
public struct EntityMapping: Sendable, CustomStringConvertible {
    /// Where a destination attribute's value comes from (Core Data's `NSPropertyMapping` value expression).
    public enum AttributeValueSource: Sendable {
        /// The value of a source attribute (converted when the type widened).
        case source(String)
        /// The destination attribute's default value (a new attribute).
        case defaultValue
        /// A value computed from the source object (as `value(forKey:)` would take it), or nil.
        case computed(@Sendable (ManagedObject) throws -> Any?)
    }

    /// The destination entity.
    public let destinationEntityName: String
    /// The source entity, nil when the destination entity is new (nothing to copy).
    public let sourceEntityName: String?
    /// For each destination attribute the mapping sets, in order: where its value comes from.
    public let attributeMappings: [(destination: String, value: AttributeValueSource)]
    /// For each destination relationship: the source relationship it takes its objects from, or nil.
    public let relationshipMappings: [(destination: String, source: String?)]
    /// The hooks run for each object, if any.
    public let policy: (any EntityMigrationPolicy)?

    /// A custom entity mapping.
    ///
    /// - Parameters:
    ///   - source: the source entity whose objects (not its subentities') become destination objects.
    ///   - destination: the destination entity.
    ///   - attributes: destination attribute name -> its value; attributes not named keep their default.
    ///   - relationships: destination relationship name -> source relationship name.
    ///   - policy: hooks per object.
    public init(
        source: String, destination: String, attributes: [String: AttributeValueSource] = [:],
        relationships: [String: String] = [:], policy: (any EntityMigrationPolicy)? = nil
    ) {
        self.sourceEntityName = source
        self.destinationEntityName = destination
        self.attributeMappings = attributes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        self.relationshipMappings = relationships.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        self.policy = policy
    }

    init(
        destination: String, source: String?, attributes: [(String, AttributeValueSource)],
        relationships: [(String, String?)]
    ) {
        destinationEntityName = destination
        sourceEntityName = source
        attributeMappings = attributes
        relationshipMappings = relationships
        policy = nil
    }

    /// Whether the mapping only copies (same names, same entity, no computed value, no policy).
    public var isCopy: Bool {
        sourceEntityName == destinationEntityName && policy == nil
            && attributeMappings.allSatisfy {
                if case .source(let key) = $0.value { key == $0.destination } else { false }
            }
            && relationshipMappings.allSatisfy { $0.source == $0.destination }
    }

    /// E.g. `Book <- Book: title <- name, pages, summary <- (new), blurb <- (computed)`.
    public var description: String {
        let attributes = attributeMappings.map { pair in
            switch pair.value {
            case .source(let key): key == pair.destination ? key : "\(pair.destination) <- \(key)"
            case .defaultValue: "\(pair.destination) <- (new)"
            case .computed: "\(pair.destination) <- (computed)"
            }
        }
        let relationships = relationshipMappings.map { pair in
            pair.source == pair.destination ? pair.destination : "\(pair.destination) <- \(pair.source ?? "(new)")"
        }
        let policy = policy.map { " [policy \(type(of: $0))]" } ?? ""
        return "\(destinationEntityName) <- \(sourceEntityName ?? "(new)"): "
            + (attributes + relationships).joined(separator: ", ") + policy
    }
}

/// Hooks a custom ``EntityMapping`` runs for each of its objects (Core Data's `NSEntityMigrationPolicy`).
///
/// Both have default implementations that do nothing.
public protocol EntityMigrationPolicy: Sendable {
    /// Called after `destination` was made from `source` and its attributes set, before it is saved: adjust it,
    /// or return false to drop it (it is deleted and other objects' relationships skip it).
    func createDestinationInstance(forSource source: ManagedObject, destination: ManagedObject) throws -> Bool
    /// Called after `destination`'s relationships were set from `source`'s.
    func createRelationships(forDestination destination: ManagedObject, source: ManagedObject) throws
}

extension EntityMigrationPolicy {
    /// Keeps every object as it is.
    public func createDestinationInstance(forSource source: ManagedObject, destination: ManagedObject) throws -> Bool {
        true
    }
    /// Does nothing.
    public func createRelationships(forDestination destination: ManagedObject, source: ManagedObject) throws {}
}
