/// The definition of an entity in the model DSL: what ``EntityDescription`` is built from.
///
/// For example:
///
///     Entity("Person", abstract: true) {
///         Attribute("name", .string, optional: false)
///     }
///     Entity("Employee", parent: "Person", className: "Employee", uniquenessConstraints: [["email"]]) {
///         Attribute("email", .string)
///         Attribute("salary", .integer64, default: .integer(0))
///     }
///
/// ## Topics
///
/// ### Creating an entity
/// - ``init(_:parent:abstract:className:uniquenessConstraints:indexes:properties:)``
///
/// ### Reading the definition
/// - ``name``
/// - ``parentName``
/// - ``isAbstract``
/// - ``managedObjectClassName``
/// - ``properties``
/// - ``attributes``
/// - ``uniquenessConstraints``
/// - ``indexes``
/// - ``fetchedProperties``
public struct Entity: Sendable, Hashable, ModelElementMetadata {
    /// The entity's name, unique in the model.
    public var name: String
    /// The name of the entity it inherits from, if any.
    public var parentName: String?
    /// Whether the entity has no instances of its own (only its subentities do).
    public var isAbstract: Bool
    /// The name under which the object graph finds the entity's managed object class.
    public var managedObjectClassName: String?
    /// The entity's own properties (not the inherited ones), in declaration order.
    public var properties: [PropertyDefinition]
    /// The entity's own uniqueness constraints (its subentities inherit them): each one names one or more
    /// persistent attributes whose values together must be unique among the objects of the entity and its
    /// subentities (see ``UniquenessConstraint``).
    public var uniquenessConstraints: [[String]]
    /// The entity's own fetch indexes (its subentities inherit them).
    public var indexes: [FetchIndex]
    /// Free-form key-value pairs for the application.
    public var userInfo: [String: String] = [:]
    /// The entity's name in an earlier model version.
    public var renamingIdentifier: String?
    /// A string mixed into the entity's version hash.
    public var versionHashModifier: String?

    /// Defines an entity.
    ///
    /// - Parameters:
    ///   - name: the entity's name, unique in the model.
    ///   - parent: the name of the entity it inherits from (its superentity), if any.
    ///   - abstract: whether the entity has no instances of its own (default false).
    ///   - className: the name under which the object graph finds its managed object class; nil for
    ///     plain managed objects.
    ///   - uniquenessConstraints: the entity's own uniqueness constraints, each a list of persistent attribute
    ///     names (own or inherited), e.g. `[["email"], ["firstName", "lastName"]]`.
    ///   - indexes: the entity's own fetch indexes.
    ///   - properties: the entity's own properties, in order.
    public init(
        _ name: String, parent: String? = nil, abstract: Bool = false, className: String? = nil,
        uniquenessConstraints: [[String]] = [], indexes: [FetchIndex] = [],
        @PropertyBuilder properties: () -> [PropertyDefinition] = { [] }
    ) {
        self.indexes = indexes
        self.name = name
        self.parentName = parent
        self.isAbstract = abstract
        self.managedObjectClassName = className
        self.uniquenessConstraints = uniquenessConstraints
        self.properties = properties()
    }

    /// The entity's own attribute definitions, in declaration order.
    public var attributes: [Attribute] {
        properties.compactMap { property in
            if case .attribute(let attribute) = property { return attribute }
            return nil
        }
    }

    /// The entity's own relationship definitions, in declaration order.
    public var relationships: [Relationship] {
        properties.compactMap { property in
            if case .relationship(let relationship) = property { return relationship }
            return nil
        }
    }

    /// The entity's own fetched property definitions, in declaration order.
    public var fetchedProperties: [FetchedProperty] {
        properties.compactMap { property in
            if case .fetchedProperty(let fetched) = property { return fetched }
            return nil
        }
    }
}
