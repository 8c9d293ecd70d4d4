import StrataQuery

/// A property of dictionary results (``FetchRequest/propertiesToFetch``): a key path, or an expression
/// with a name of its own.
///
/// For example, each department and its average salary:
/// ```swift
/// request.propertiesToFetch = ["department", .expression(ExpressionDescription(name: "average", .average("salary")))]
/// request.propertiesToGroupBy = ["department"]
/// ```
public enum FetchProperty: Hashable, Sendable, ExpressibleByStringLiteral {
    /// The value at a key path (an attribute, or a to-one's object ID as ``QueryValue/identity(_:)``),
    /// under the key path's dotted form.
    case keyPath(QueryKeyPath)
    /// An expression's value under the description's name.
    case expression(ExpressionDescription)

    /// A key path from its dotted form.
    public init(stringLiteral value: String) {
        self = .keyPath(QueryKeyPath(value))
    }

    /// The key of the property's value in each dictionary.
    public var name: String {
        switch self {
        case .keyPath(let path): path.description
        case .expression(let description): description.name
        }
    }
}

/// A named expression among the properties of dictionary results (`NSExpressionDescription`).
public struct ExpressionDescription: Hashable, Sendable {
    /// The key of the expression's value in each dictionary.
    public var name: String
    /// What to compute.
    public var expression: FetchExpression
    /// The type the value is converted to (nil: as computed): integers are truncated toward zero, numbers
    /// become doubles or decimals.
    public var resultType: AttributeType?

    /// Describes an expression.
    ///
    /// - Parameters:
    ///   - name: the key of its value in each dictionary.
    ///   - expression: what to compute.
    ///   - resultType: the type to convert the value to, or nil.
    public init(name: String, _ expression: FetchExpression, resultType: AttributeType? = nil) {
        self.name = name
        self.expression = expression
        self.resultType = resultType
    }
}

/// An expression over the rows of a dictionary fetch (or of each group): `NSExpression`'s functions that
/// Core Data's SQLite store supports for fetches. Nil values are skipped, as SQL aggregates skip NULL.
public enum FetchExpression: Hashable, Sendable {
    /// The value at a key path (of each row; with grouping, of a group's first row).
    case keyPath(QueryKeyPath)
    /// The number of rows (nil) or of non-nil values at a key path (`count:`).
    case count(QueryKeyPath?)
    /// The sum of the values (`sum:`): 0 for no values.
    case sum(QueryKeyPath)
    /// The mean of the values (`average:`): nil for no values.
    case average(QueryKeyPath)
    /// The least value (`min:`).
    case min(QueryKeyPath)
    /// The greatest value (`max:`).
    case max(QueryKeyPath)

    /// The key path the expression reads, if any.
    var keyPath: QueryKeyPath? {
        switch self {
        case .keyPath(let path), .sum(let path), .average(let path), .min(let path), .max(let path): path
        case .count(let path): path
        }
    }

    /// Whether the expression summarizes several rows.
    var isAggregate: Bool {
        if case .keyPath = self { return false }
        return true
    }
}
