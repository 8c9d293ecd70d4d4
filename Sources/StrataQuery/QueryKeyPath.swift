/// A key path as a predicate holds it: split into components once, when the predicate is made, so that
/// evaluation never parses strings.
///
/// Components are keys (`department`, `name`) and collection operators (`@count`, `@sum`, …). A key path walks
/// through to-one relationships key by key; through a to-many relationship it yields the collection of the
/// remaining path's values (flattened); a collection operator reduces the collection before it, applying the
/// rest of the path to each element first (`employees.@sum.salary`).
///
/// For example:
/// ```swift
/// let path: QueryKeyPath = "department.employees.@count"
/// path.components   // [.key("department"), .key("employees"), .collectionOperator(.count)]
/// ```
public struct QueryKeyPath: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// One step of a key path.
    public enum Component: Hashable, Sendable {
        /// A key: an attribute or relationship name.
        case key(String)
        /// A collection operator (`@count`, `@sum`, …).
        case collectionOperator(CollectionOperator)
    }

    /// The steps, at least one.
    public var components: [Component]

    /// A key path from its components.
    ///
    /// - Parameter components: the steps; must not be empty.
    public init(components: [Component]) {
        precondition(!components.isEmpty, "a key path has at least one component")
        self.components = components
    }

    /// A key path from its dotted form: `"a.b"`, `"items.@count"`, `"items.@sum.price"`.
    ///
    /// A component that starts with `@` and names a ``CollectionOperator`` is that operator; every other
    /// component is a key, whatever its characters (as with `%K`).
    ///
    /// - Parameter string: the dotted key path.
    public init(_ string: String) {
        let parts = string.split(separator: ".", omittingEmptySubsequences: false)
        components = parts.map { part in
            if part.first == "@", let op = CollectionOperator(rawValue: String(part.dropFirst())) {
                return .collectionOperator(op)
            }
            return .key(String(part))
        }
    }

    /// A key path from its dotted form, written as a string literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The key path if it is a single key (an attribute of the evaluated object), otherwise nil.
    ///
    /// A store uses this to find comparisons it can answer with an index.
    public var singleKey: String? {
        if components.count == 1, case .key(let key) = components[0] { return key }
        return nil
    }

    /// The value of the path from `object`: the one walk of key paths, shared by predicates, sort keys and key-value
    /// coding (`value(forKeyPath:)`). A key steps into an object (nil from nil) or over a collection's elements
    /// (flattening nested collections); a collection operator combines a collection.
    ///
    /// - Parameter object: where the path starts.
    /// - Returns: a value, an object or a collection.
    /// - Throws: ``PredicateEvaluationError``: an unknown key, a key of a value that is not an object, an operator on
    ///   something that is not a collection or on values it cannot combine, or what the object throws.
    public func value(in object: some PredicateEvaluable) throws(PredicateEvaluationError) -> EvaluatedValue {
        try ObjectExpression.walk(.object(object), components[...])
    }

    /// The dotted form, with keys that are reserved words or not identifiers escaped with `#` where the format
    /// language allows it (`#in`).
    public var description: String {
        components.map { component in
            switch component {
            case .key(let key): PredicateLexer.escapedKey(key)
            case .collectionOperator(let op): "@" + op.rawValue
            }
        }.joined(separator: ".")
    }
}

/// A collection operator in a key path: `@count`, `@sum`, `@avg`, `@min`, `@max`, `@distinctUnionOfObjects`,
/// `@unionOfObjects`.
public enum CollectionOperator: String, Hashable, Sendable, CaseIterable {
    /// The number of elements (an integer).
    case count
    /// The sum of the numeric elements (an integer while every element is one and the sum fits, else a double;
    /// nil elements are skipped; 0 for an empty collection).
    case sum
    /// The mean of the numeric elements (nil elements skipped): a double, or a decimal when the elements are
    /// integers and decimals with at least one decimal; nil for an empty collection.
    case avg
    /// The least element (nil elements skipped); nil for an empty collection.
    case min
    /// The greatest element (nil elements skipped); nil for an empty collection.
    case max
    /// The elements without duplicates, in first-seen order (nil elements dropped).
    case distinctUnionOfObjects
    /// The elements, nil elements dropped.
    case unionOfObjects
}
