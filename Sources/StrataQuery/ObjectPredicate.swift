/// A predicate over objects: `NSPredicate`'s counterpart, parsed from a format string or built in Swift,
/// evaluated in memory on anything ``PredicateEvaluable``.
///
/// For example:
/// ```swift
/// let parsed = try ObjectPredicate(format: "age > %d AND name BEGINSWITH[c] %@", 30, "a")
/// let built: ObjectPredicate =
///     ObjectExpression.keyPath("age") > 30 && ObjectExpression.keyPath("name").beginsWith("a", options: .caseInsensitive)
/// parsed == built                                              // true
/// try parsed.evaluate(with: ["age": .int(31), "name": .string("Ada")])   // true
/// print(parsed)                                                // age > 30 AND name BEGINSWITH[c] "a"
/// ```
///
/// The cases are the syntax tree. Parsing flattens chains of one operator (`a AND b AND c` is one ``and(_:)``
/// of three), keeps parenthesized groups as written and turns `NONE` into `NOT ANY`; ``description`` writes a
/// format string that parses back to an equal predicate whenever every constant has a literal form (see
/// ``QueryValue/predicateFormat``) and every ``and(_:)``/``or(_:)`` has at least two subpredicates (as the
/// parser and the `&&`/`||` operators make them).
///
/// ## Topics
/// ### Making predicates
/// - ``init(format:_:)``
/// - ``init(format:arguments:)``
/// - ``true``
/// - ``false``
/// ### Evaluating
/// - ``evaluate(with:variables:)``
/// - ``withSubstitutionVariables(_:)``
public indirect enum ObjectPredicate: Hashable, Sendable {
    /// `TRUEPREDICATE` (true) or `FALSEPREDICATE` (false).
    case constant(Bool)
    /// A comparison of two operands.
    case comparison(PredicateComparison)
    /// `AND`/`&&`: holds when every subpredicate holds (evaluated left to right, stopping at the first false).
    case and([ObjectPredicate])
    /// `OR`/`||`: holds when some subpredicate holds (evaluated left to right, stopping at the first true).
    case or([ObjectPredicate])
    /// `NOT`/`!`.
    case not(ObjectPredicate)

    /// `TRUEPREDICATE`.
    public static let `true` = ObjectPredicate.constant(true)
    /// `FALSEPREDICATE`.
    public static let `false` = ObjectPredicate.constant(false)
}
