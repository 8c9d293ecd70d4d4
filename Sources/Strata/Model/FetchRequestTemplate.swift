import StrataQuery

/// A named fetch request stored in the model (Core Data's `fetchRequestTemplates`): an entity and a
/// predicate whose `$variables` are bound when a request is made from it.
///
/// For example:
///
///     let model = try ManagedObjectModel(
///         entities: [...], fetchRequestTemplates: [FetchRequestTemplate("adults", entity: "Person", predicate: "age >= $AGE")])
///     let request = try model.fetchRequestFromTemplate(named: "adults", substitutionVariables: ["AGE": .int(18)])
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template's name, unique in the model.
    public var name: String
    /// The entity it fetches.
    public var entityName: String
    /// The predicate format string, or nil for every object.
    public var predicateFormat: String?

    /// Defines a template.
    public init(_ name: String, entity: String, predicate: String? = nil) {
        self.name = name
        self.entityName = entity
        self.predicateFormat = predicate
    }
}
