extension ObjectPredicate {
    /// The predicate with its `$variables` replaced by constants (`NSPredicate`'s
    /// `withSubstitutionVariables`). Variables not in `variables`, and those a subquery binds, stay.
    ///
    /// For example:
    /// ```swift
    /// let template = try ObjectPredicate(format: "age > $minimum")
    /// let predicate = template.withSubstitutionVariables(["minimum": .int(30)])   // age > 30
    /// ```
    ///
    /// - Parameter variables: values by variable name (without the `$`).
    /// - Returns: the predicate with the variables substituted.
    public func withSubstitutionVariables(_ variables: [String: QueryValue]) -> ObjectPredicate {
        substituting(variables, bound: [])
    }

    func substituting(_ variables: [String: QueryValue], bound: Set<String>) -> ObjectPredicate {
        switch self {
        case .constant: return self
        case .comparison(var comparison):
            comparison.left = comparison.left.substituting(variables, bound: bound)
            comparison.right = comparison.right.substituting(variables, bound: bound)
            return .comparison(comparison)
        case .and(let terms): return .and(terms.map { $0.substituting(variables, bound: bound) })
        case .or(let terms): return .or(terms.map { $0.substituting(variables, bound: bound) })
        case .not(let inner): return .not(inner.substituting(variables, bound: bound))
        }
    }
}

extension ObjectExpression {
    /// The expression with its free `$variables` replaced by constants from `variables`.
    ///
    /// - Parameter variables: values by variable name.
    /// - Returns: the expression with the variables substituted.
    public func withSubstitutionVariables(_ variables: [String: QueryValue]) -> ObjectExpression {
        substituting(variables, bound: [])
    }

    func substituting(_ variables: [String: QueryValue], bound: Set<String>) -> ObjectExpression {
        switch self {
        case .constant, .evaluatedObject: self
        case .variable(let name): bound.contains(name) ? self : variables[name].map { .constant($0) } ?? self
        case .keyPath(let path, let base): .keyPath(path, of: base.substituting(variables, bound: bound))
        case .aggregate(let elements): .aggregate(folding: elements.map { $0.substituting(variables, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            .subquery(
                collection: collection.substituting(variables, bound: bound), variable: variable,
                predicate: predicate.substituting(variables, bound: bound.union([variable])))
        }
    }
}

extension ObjectExpression {
    /// An aggregate, or an array constant when every element is a constant (the form the parser gives
    /// `{1, 2}`, so that substituted predicates print and parse back alike).
    static func aggregate(folding elements: [ObjectExpression]) -> ObjectExpression {
        var values: [QueryValue] = []
        for element in elements {
            guard case .constant(let value) = element else { return .aggregate(elements) }
            values.append(value)
        }
        return .constant(.array(values))
    }
}
