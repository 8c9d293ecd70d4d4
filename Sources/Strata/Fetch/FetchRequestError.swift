/// Why a fetch request cannot be run as it is configured (Core Data raises exceptions for these).
public enum FetchRequestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// ``FetchRequest/propertiesToGroupBy``, ``FetchRequest/havingPredicate``, an expression or
    /// ``FetchRequest/returnsDistinctResults`` with a result type other than dictionaries (the option named).
    case requiresDictionaryResults(option: String)
    /// ``FetchRequest/havingPredicate`` without ``FetchRequest/propertiesToGroupBy``.
    case havingRequiresGroupBy
    /// A property of grouped results that is neither grouped by nor an aggregate.
    case propertyNotGrouped(String)
    /// A key path that names no property of the entity (or goes on from an attribute).
    case unknownKeyPath(String, entity: String)
    /// A key path through a to-many where one value per row is needed (grouping, sorting dictionaries).
    case toManyKeyPath(String)
    /// A batch request names a property the entity does not have, or gives it a value of the wrong type.
    case invalidValue(key: String, entity: String, reason: String)

    /// A sentence describing the problem.
    public var description: String {
        switch self {
        case .requiresDictionaryResults(let option): "\(option) needs the dictionary result type"
        case .havingRequiresGroupBy: "a having predicate needs properties to group by"
        case .propertyNotGrouped(let name): "\(name) is neither grouped by nor an aggregate"
        case .unknownKeyPath(let path, let entity): "\(entity) has no key path \(path)"
        case .toManyKeyPath(let path): "\(path) goes through a to-many relationship"
        case .invalidValue(let key, let entity, let reason): "\(entity).\(key): \(reason)"
        }
    }
}
