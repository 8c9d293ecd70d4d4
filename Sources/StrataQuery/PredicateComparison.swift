/// A comparison of two operands: the leaf of a predicate (`NSComparisonPredicate`).
///
/// For example, `ANY employees.name BEGINSWITH[c] "a"` is
/// `PredicateComparison(.keyPath("employees.name"), .beginsWith, .constant(.string("a")), modifier: .any,
/// options: .caseInsensitive)`.
///
/// ## Topics
/// ### Parts
/// - ``left``
/// - ``operator``
/// - ``right``
/// - ``modifier``
/// - ``options``
/// - ``Operator``
/// - ``Modifier``
public struct PredicateComparison: Hashable, Sendable {
    /// The comparison operators.
    public enum Operator: Hashable, Sendable, CaseIterable {
        /// `<`
        case lessThan
        /// `<=` or `=<`
        case lessThanOrEqual
        /// `>`
        case greaterThan
        /// `>=` or `=>`
        case greaterThanOrEqual
        /// `==` or `=`
        case equal
        /// `!=` or `<>`
        case notEqual
        /// `MATCHES`: the left string matches the right regular expression (ICU syntax) as a whole.
        case matches
        /// `LIKE`: the left string matches the right pattern, where `*` is any run of characters, `?` any one
        /// character and a backslash makes the next character literal.
        case like
        /// `BEGINSWITH`
        case beginsWith
        /// `ENDSWITH`
        case endsWith
        /// `IN`: the left value is an element of the right collection, or a substring of the right string.
        case `in`
        /// `CONTAINS`: the left collection has the right value as an element, or the left string has it as a
        /// substring.
        case contains
        /// `BETWEEN`: the right operand is a two-element collection `{low, high}`; holds when
        /// `low <= left <= high`.
        case between

        /// The operator as written in a format string (`==`, `BEGINSWITH`, …).
        public var symbol: String {
            switch self {
            case .lessThan: "<"
            case .lessThanOrEqual: "<="
            case .greaterThan: ">"
            case .greaterThanOrEqual: ">="
            case .equal: "=="
            case .notEqual: "!="
            case .matches: "MATCHES"
            case .like: "LIKE"
            case .beginsWith: "BEGINSWITH"
            case .endsWith: "ENDSWITH"
            case .in: "IN"
            case .contains: "CONTAINS"
            case .between: "BETWEEN"
            }
        }
    }

    /// How the left operand is used when it is a collection.
    public enum Modifier: Hashable, Sendable {
        /// The operands are compared as they are.
        case direct
        /// `ANY`/`SOME`: holds when the comparison holds for at least one element of the left collection.
        case any
        /// `ALL`: holds when the comparison holds for every element of the left collection (true when empty).
        case all
    }

    /// The left operand.
    public var left: ObjectExpression
    /// The operator.
    public var `operator`: Operator
    /// The right operand.
    public var right: ObjectExpression
    /// Whether the left operand is iterated (`ANY`, `ALL`; `NONE` is `NOT ANY`).
    public var modifier: Modifier
    /// How strings compare (`[c]`, `[d]`, `[n]`).
    public var options: ComparisonOptions

    /// A comparison.
    ///
    /// - Parameters:
    ///   - left: the left operand.
    ///   - operator: the operator.
    ///   - right: the right operand.
    ///   - modifier: ``Modifier/direct`` (default), ``Modifier/any`` or ``Modifier/all``.
    ///   - options: how strings compare (default: exactly).
    public init(
        _ left: ObjectExpression, _ operator: Operator, _ right: ObjectExpression, modifier: Modifier = .direct,
        options: ComparisonOptions = []
    ) {
        self.left = left
        self.operator = `operator`
        self.right = right
        self.modifier = modifier
        self.options = options
    }
}
