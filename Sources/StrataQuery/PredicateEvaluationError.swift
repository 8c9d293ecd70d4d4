/// Why a predicate or sort key could not be evaluated on an object.
///
/// For example, `try ObjectPredicate(format: "name BEGINSWITH 3").evaluate(with: ["name": .string("a")])`
/// throws ``invalidOperands(operator:left:right:)``: a string cannot begin with a number.
public enum PredicateEvaluationError: Error, Equatable, CustomStringConvertible {
    /// The object has no such key (thrown by ``PredicateEvaluable`` conformers); `in` names the object's kind.
    case unknownKey(String, in: String)
    /// A key path goes on from a value that is not an object, a dictionary or a collection.
    case notAnObject(key: String, value: QueryValue)
    /// A `$variable` that neither the evaluation's variables nor a subquery binds.
    case unboundVariable(String)
    /// Operands an operator cannot compare, where `NSPredicate` raises: a string operator on a non-string,
    /// `BETWEEN` without a two-element collection, `IN` on something that is neither a collection nor a string.
    case invalidOperands(operator: PredicateComparison.Operator, left: QueryValue, right: QueryValue)
    /// A collection operator applied to a value that is not a collection, or `@sum`/`@avg` of non-numbers.
    case invalidCollectionOperator(CollectionOperator, value: QueryValue)
    /// A `MATCHES` pattern that is not a valid ICU regular expression.
    case invalidRegularExpression(String)
    /// A ``PredicateEvaluable`` failed to give a key's value with an error of its own.
    case evaluable(key: String, underlying: any Error)

    /// Whether two errors are the same case with equal details (``evaluable(key:underlying:)`` errors compare by
    /// key and by their underlying errors' descriptions).
    public static func == (lhs: PredicateEvaluationError, rhs: PredicateEvaluationError) -> Bool {
        switch (lhs, rhs) {
        case (.unknownKey(let a, let b), .unknownKey(let c, let d)): a == c && b == d
        case (.notAnObject(let a, let b), .notAnObject(let c, let d)): a == c && b == d
        case (.unboundVariable(let a), .unboundVariable(let b)): a == b
        case (.invalidOperands(let a, let b, let c), .invalidOperands(let d, let e, let f)): a == d && b == e && c == f
        case (.invalidCollectionOperator(let a, let b), .invalidCollectionOperator(let c, let d)): a == c && b == d
        case (.invalidRegularExpression(let a), .invalidRegularExpression(let b)): a == b
        case (.evaluable(let a, let b), .evaluable(let c, let d)): a == c && "\(b)" == "\(d)"
        default: false
        }
    }

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .unknownKey(let key, let kind): "\(kind) has no key '\(key)'"
        case .notAnObject(let key, let value): "cannot get key '\(key)' of \(value)"
        case .unboundVariable(let name): "variable $\(name) has no value"
        case .invalidOperands(let op, let left, let right): "cannot evaluate \(left) \(op.symbol) \(right)"
        case .invalidCollectionOperator(let op, let value): "cannot apply @\(op.rawValue) to \(value)"
        case .invalidRegularExpression(let pattern): "invalid regular expression \(QueryValue.quote(pattern))"
        case .evaluable(let key, let underlying): "reading key '\(key)' failed: \(underlying)"
        }
    }
}
