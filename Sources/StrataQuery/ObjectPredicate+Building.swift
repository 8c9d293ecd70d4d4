// Operators that build predicates in Swift:
//
//     let predicate = ObjectExpression.keyPath("age") > 30
//         && ObjectExpression.keyPath("name").beginsWith("a", options: .caseInsensitive)

extension ObjectExpression {
    /// A comparison of this expression with another.
    ///
    /// - Parameters:
    ///   - operator: the operator.
    ///   - other: the right operand.
    ///   - options: how strings compare.
    /// - Returns: the comparison predicate.
    public func compare(
        _ operator: PredicateComparison.Operator, _ other: ObjectExpression, options: ComparisonOptions = []
    ) -> ObjectPredicate {
        .comparison(PredicateComparison(self, `operator`, other, options: options))
    }

    /// `self == value`.
    public static func == (lhs: ObjectExpression, rhs: some QueryValueConvertible) -> ObjectPredicate {
        lhs.compare(.equal, .constant(rhs.queryValue))
    }

    /// `self != value`.
    public static func != (lhs: ObjectExpression, rhs: some QueryValueConvertible) -> ObjectPredicate {
        lhs.compare(.notEqual, .constant(rhs.queryValue))
    }

    /// `self < value`.
    public static func < (lhs: ObjectExpression, rhs: some QueryValueConvertible) -> ObjectPredicate {
        lhs.compare(.lessThan, .constant(rhs.queryValue))
    }

    /// `self <= value`.
    public static func <= (lhs: ObjectExpression, rhs: some QueryValueConvertible) -> ObjectPredicate {
        lhs.compare(.lessThanOrEqual, .constant(rhs.queryValue))
    }

    /// `self > value`.
    public static func > (lhs: ObjectExpression, rhs: some QueryValueConvertible) -> ObjectPredicate {
        lhs.compare(.greaterThan, .constant(rhs.queryValue))
    }

    /// `self >= value`.
    public static func >= (lhs: ObjectExpression, rhs: some QueryValueConvertible) -> ObjectPredicate {
        lhs.compare(.greaterThanOrEqual, .constant(rhs.queryValue))
    }

    /// `self BEGINSWITH prefix`.
    public func beginsWith(_ prefix: String, options: ComparisonOptions = []) -> ObjectPredicate {
        compare(.beginsWith, .constant(.string(prefix)), options: options)
    }

    /// `self ENDSWITH suffix`.
    public func endsWith(_ suffix: String, options: ComparisonOptions = []) -> ObjectPredicate {
        compare(.endsWith, .constant(.string(suffix)), options: options)
    }

    /// `self CONTAINS value`: a substring of a string, or an element of a collection.
    public func contains(_ value: some QueryValueConvertible, options: ComparisonOptions = []) -> ObjectPredicate {
        compare(.contains, .constant(value.queryValue), options: options)
    }

    /// `self LIKE pattern` (`*` any run, `?` one character).
    public func like(_ pattern: String, options: ComparisonOptions = []) -> ObjectPredicate {
        compare(.like, .constant(.string(pattern)), options: options)
    }

    /// `self MATCHES regex` (the whole string).
    public func matches(_ regularExpression: String, options: ComparisonOptions = []) -> ObjectPredicate {
        compare(.matches, .constant(.string(regularExpression)), options: options)
    }

    /// `self IN collection` (or a substring of a string).
    public func isIn(_ collection: some QueryValueConvertible, options: ComparisonOptions = []) -> ObjectPredicate {
        compare(.in, .constant(collection.queryValue), options: options)
    }

    /// `self BETWEEN {low, high}` (inclusive).
    public func between(_ low: some QueryValueConvertible, _ high: some QueryValueConvertible) -> ObjectPredicate {
        compare(.between, .constant(.array([low.queryValue, high.queryValue])))
    }

    /// `self == nil`.
    public var isNil: ObjectPredicate { compare(.equal, .constant(.null)) }
}

extension ObjectPredicate {
    /// `AND`, flattening: `a && b && c` is one ``and(_:)`` of three, as the parser makes it.
    public static func && (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        .and(lhs.terms(ofAnd: true) + rhs.terms(ofAnd: true))
    }

    /// `OR`, flattening like ``&&(_:_:)``.
    public static func || (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        .or(lhs.terms(ofAnd: false) + rhs.terms(ofAnd: false))
    }

    /// `NOT`.
    public static prefix func ! (operand: ObjectPredicate) -> ObjectPredicate {
        .not(operand)
    }

    private func terms(ofAnd: Bool) -> [ObjectPredicate] {
        switch (self, ofAnd) {
        case (.and(let terms), true), (.or(let terms), false): terms
        default: [self]
        }
    }

    /// `ANY …`: the comparisons of `predicate` hold for some element of their left operand.
    ///
    /// For example: `.any(ObjectExpression.keyPath("employees.salary") > 1000)`.
    ///
    /// - Parameter predicate: a comparison (or a compound, whose comparisons all get the modifier).
    /// - Returns: the predicate with its comparisons' modifier set to ``PredicateComparison/Modifier/any``.
    public static func any(_ predicate: ObjectPredicate) -> ObjectPredicate {
        predicate.settingModifier(.any)
    }

    /// `ALL …`: the comparisons of `predicate` hold for every element of their left operand.
    ///
    /// - Parameter predicate: a comparison (or a compound, whose comparisons all get the modifier).
    /// - Returns: the predicate with its comparisons' modifier set to ``PredicateComparison/Modifier/all``.
    public static func all(_ predicate: ObjectPredicate) -> ObjectPredicate {
        predicate.settingModifier(.all)
    }

    /// `NONE …`, that is `NOT ANY …`.
    ///
    /// - Parameter predicate: a comparison (or a compound, whose comparisons all get the modifier).
    /// - Returns: `.not(.any(predicate))`.
    public static func none(_ predicate: ObjectPredicate) -> ObjectPredicate {
        .not(predicate.settingModifier(.any))
    }

    private func settingModifier(_ modifier: PredicateComparison.Modifier) -> ObjectPredicate {
        switch self {
        case .constant: return self
        case .comparison(var comparison):
            comparison.modifier = modifier
            return .comparison(comparison)
        case .and(let terms): return .and(terms.map { $0.settingModifier(modifier) })
        case .or(let terms): return .or(terms.map { $0.settingModifier(modifier) })
        case .not(let inner): return .not(inner.settingModifier(modifier))
        }
    }
}
