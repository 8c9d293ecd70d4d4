/// The definition of a fetched property in the model DSL (Core Data's `NSFetchedPropertyDescription`): a
/// weak, one-way relationship defined by a fetch of `destination` objects matching a predicate, in which
/// `$FETCH_SOURCE` stands for the object the property is read on.
///
/// For example:
///
///     Entity("Department") {
///         Attribute("name", .string)
///         FetchedProperty("wellPaid", "Employee", predicate: "department == $FETCH_SOURCE AND salary > 100000")
///     }
///
/// Read it with ``ManagedObject/fetchedValues(forKey:)``. Fetched properties are not stored and not part of the
/// version hash.
public struct FetchedProperty: Sendable, Hashable, ModelElementMetadata {
    /// The property's name, unique among the entity's properties.
    public var name: String
    /// The entity whose objects it fetches.
    public var destinationName: String
    /// The predicate format string (`NSPredicate` syntax); nil fetches every object of the destination.
    public var predicateFormat: String?
    /// Free-form key-value pairs for the application.
    public var userInfo: [String: String] = [:]
    /// The property's name in an earlier model version.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash (fetched properties are otherwise not part of it).
    public var versionHashModifier: String?

    /// Defines a fetched property.
    ///
    /// - Parameters:
    ///   - name: the property's name.
    ///   - destination: the entity whose objects it fetches.
    ///   - predicate: a predicate format string, which may use `$FETCH_SOURCE`.
    public init(_ name: String, _ destination: String, predicate: String? = nil) {
        self.name = name
        self.destinationName = destination
        self.predicateFormat = predicate
    }
}
