import StrataQuery

/// A fetched property of a built model (Core Data's `NSFetchedPropertyDescription`): its destination and its
/// parsed predicate. See ``FetchedProperty``.
public final class FetchedPropertyDescription: Sendable, Hashable, CustomStringConvertible {
    /// The property's name.
    public let name: String
    /// The entity that declares it (subentities inherit it). Unowned: keep the model alive.
    public unowned let entity: EntityDescription
    /// The name of the entity whose objects it fetches.
    public let destinationName: String
    /// The predicate, with `$FETCH_SOURCE` (and `$FETCHED_PROPERTY`) unbound; nil for every object.
    public let predicate: ObjectPredicate?
    /// Free-form key-value pairs for the application.
    public let userInfo: [String: String]
    /// The property's name in an earlier model version.
    public let renamingIdentifier: String?

    init(definition: FetchedProperty, entity: EntityDescription) throws(ModelError) {
        if let format = definition.predicateFormat {
            do {
                predicate = try ObjectPredicate(format: format)
            } catch {
                throw .invalidFetchedProperty(
                    entity: entity.name, property: definition.name, reason: "its predicate does not parse: \(error)")
            }
        } else {
            predicate = nil
        }
        name = definition.name
        self.entity = entity
        destinationName = definition.destinationName
        userInfo = definition.userInfo
        renamingIdentifier = definition.renamingIdentifier
    }

    /// E.g. `wellPaid: fetched Employee where salary > 100000`.
    public var description: String {
        "\(name): fetched \(destinationName)" + (predicate.map { " where \($0)" } ?? "")
    }

    /// Identity.
    public static func == (lhs: FetchedPropertyDescription, rhs: FetchedPropertyDescription) -> Bool { lhs === rhs }
    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
