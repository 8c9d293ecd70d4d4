extension ObjectPredicate: CustomStringConvertible {
    /// The predicate as a format string that parses back to an equal predicate (see the type's documentation
    /// for the conditions).
    ///
    /// Compound subpredicates are parenthesized (`a AND (b OR c)`), keys that are keywords escaped (`#in`),
    /// strings double-quoted, options written after the operator (`BEGINSWITH[cd]`).
    public var description: String {
        switch self {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison): return comparison.description
        case .and(let terms): return Self.join(terms, with: " AND ", empty: "TRUEPREDICATE")
        case .or(let terms): return Self.join(terms, with: " OR ", empty: "FALSEPREDICATE")
        case .not(let inner):
            switch inner {
            case .and, .or: return "NOT (\(inner))"
            default: return "NOT \(inner)"
            }
        }
    }

    private static func join(_ terms: [ObjectPredicate], with separator: String, empty: String) -> String {
        if terms.isEmpty { return empty }
        return terms.map { term in
            switch term {
            case .and, .or: "(\(term))"
            default: term.description
            }
        }.joined(separator: separator)
    }
}

extension PredicateComparison: CustomStringConvertible {
    /// The comparison as written in a format string: `ANY employees.salary > 1000`.
    public var description: String {
        let prefix =
            switch modifier {
            case .direct: ""
            case .any: "ANY "
            case .all: "ALL "
            }
        return "\(prefix)\(left) \(`operator`.symbol)\(options) \(right)"
    }
}

extension ObjectExpression: CustomStringConvertible {
    /// The expression as written in a format string: `name`, `$e.salary`, `{1, $x}`, `SUBQUERY(…)`.
    public var description: String {
        switch self {
        case .constant(let value): value.predicateFormat
        case .evaluatedObject: "SELF"
        case .variable(let name): "$" + name
        case .keyPath(let path, of: .evaluatedObject): path.description
        case .keyPath(let path, let base): "\(base).\(path)"
        case .aggregate(let elements): "{" + elements.map(\.description).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate):
            "SUBQUERY(\(collection), $\(variable), \(predicate))"
        }
    }
}
