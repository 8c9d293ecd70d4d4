/// An operand of a comparison: `NSExpression`'s counterpart.
///
/// The cases are the syntax tree a parsed format string yields; a store can translate the simple ones
/// (``keyPath(_:of:)`` on ``evaluatedObject`` compared with a ``constant(_:)``) into index lookups.
///
/// For example, `ANY employees.salary > 1000` has the left operand
/// `.keyPath("employees.salary", of: .evaluatedObject)` and the right operand `.constant(.int(1000))`.
///
/// ## Topics
/// ### Operands
/// - ``constant(_:)``
/// - ``evaluatedObject``
/// - ``variable(_:)``
/// - ``keyPath(_:of:)``
/// - ``aggregate(_:)``
/// - ``subquery(collection:variable:predicate:)``
/// ### Building
/// - ``keyPath(_:)``
public indirect enum ObjectExpression: Hashable, Sendable {
    /// A value: a literal or an argument (`%@`, `%d`, …).
    case constant(QueryValue)
    /// `SELF`: the object the predicate is evaluated on (compared by its identity, or the element in a
    /// subquery or collection).
    case evaluatedObject
    /// `$name`: a variable, bound by ``ObjectPredicate/withSubstitutionVariables(_:)``, by the `variables`
    /// of an evaluation, or by a subquery.
    case variable(String)
    /// A key path applied to an operand: `name` and `SELF.name` are `.keyPath("name", of: .evaluatedObject)`,
    /// `$e.salary` is `.keyPath("salary", of: .variable("e"))`, `SUBQUERY(…).@count` applies `@count` to a
    /// subquery.
    case keyPath(QueryKeyPath, of: ObjectExpression)
    /// `{a, b, …}` with at least one element that is not a constant (the parser turns an aggregate of constants
    /// into an array ``constant(_:)``).
    case aggregate([ObjectExpression])
    /// `SUBQUERY(collection, $variable, predicate)`: the elements of the collection for which the predicate
    /// holds, with `$variable` bound to each.
    case subquery(collection: ObjectExpression, variable: String, predicate: ObjectPredicate)

    /// A key path on the evaluated object, from its dotted form (`"department.name"`, `"items.@count"`).
    ///
    /// - Parameter path: the dotted key path; see ``QueryKeyPath/init(_:)``.
    /// - Returns: `.keyPath(QueryKeyPath(path), of: .evaluatedObject)`.
    public static func keyPath(_ path: String) -> ObjectExpression {
        .keyPath(QueryKeyPath(path), of: .evaluatedObject)
    }

    /// A constant from any convertible Swift value.
    ///
    /// - Parameter value: the value (`3`, `"a"`, `[1, 2]`, a `Date`, …).
    /// - Returns: `.constant(value.queryValue)`.
    public static func value(_ value: some QueryValueConvertible) -> ObjectExpression {
        .constant(value.queryValue)
    }
}
