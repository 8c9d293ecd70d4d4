extension PredicateComparison {
    /// A comparison of one attribute of the evaluated object with a constant, the shape a store can answer with
    /// an index: `age > 30`, `30 < age` (turned around to `age > 30`), `name BEGINSWITH[c] "a"`, `id IN {1, 2}`.
    public struct KeyComparison: Hashable, Sendable {
        /// The attribute's name.
        public var key: String
        /// The operator, with the attribute on its left.
        public var `operator`: Operator
        /// The constant.
        public var value: QueryValue
        /// How strings compare.
        public var options: ComparisonOptions

        /// An attribute-versus-constant comparison.
        ///
        /// - Parameters:
        ///   - key: the attribute's name.
        ///   - operator: the operator, with the attribute on its left.
        ///   - value: the constant.
        ///   - options: how strings compare.
        public init(key: String, operator: Operator, value: QueryValue, options: ComparisonOptions) {
            self.key = key
            self.operator = `operator`
            self.value = value
            self.options = options
        }
    }

    /// The comparison as an attribute-versus-constant comparison, or nil when it is not one (a key path of
    /// several steps, a variable, an `ANY`/`ALL` modifier, two key paths).
    ///
    /// For example, `try ObjectPredicate(format: "5 <= age")` holds the comparison whose `keyComparison` is
    /// `KeyComparison(key: "age", operator: .greaterThanOrEqual, value: .int(5), options: [])`.
    public var keyComparison: KeyComparison? {
        guard modifier == .direct else { return nil }
        if case .keyPath(let path, .evaluatedObject) = left, let key = path.singleKey, case .constant(let value) = right
        {
            return KeyComparison(key: key, operator: `operator`, value: value, options: options)
        }
        guard case .keyPath(let path, .evaluatedObject) = right, let key = path.singleKey,
            case .constant(let value) = left
        else { return nil }
        let turned: Operator
        switch `operator` {
        case .equal, .notEqual: turned = `operator`
        case .lessThan: turned = .greaterThan
        case .lessThanOrEqual: turned = .greaterThanOrEqual
        case .greaterThan: turned = .lessThan
        case .greaterThanOrEqual: turned = .lessThanOrEqual
        // `"x" IN tags` is `tags CONTAINS "x"`, and the reverse.
        case .in: turned = .contains
        case .contains: turned = .in
        case .matches, .like, .beginsWith, .endsWith, .between: return nil
        }
        return KeyComparison(key: key, operator: turned, value: value, options: options)
    }
}
