/// Something a predicate can be evaluated on: how the object graph (or anything else) plugs into
/// ``ObjectPredicate/evaluate(with:variables:)`` and ``SortKey``, without this module knowing it.
///
/// A conformer answers one key at a time. Attributes return ``EvaluatedValue/value(_:)``; a to-one
/// relationship returns ``EvaluatedValue/object(_:)`` (or `.value(.null)` when it is empty), a to-many
/// relationship ``EvaluatedValue/collection(_:)`` of objects. Key paths, `ANY`/`ALL`, collection operators and
/// subqueries are walked by the evaluator.
///
/// For example:
/// ```swift
/// final class Employee: PredicateEvaluable {
///     var id: Int; var name: String; var manager: Employee?; var reports: [Employee] = []
///     func predicateValue(forKey key: String) throws -> EvaluatedValue {
///         switch key {
///         case "name": .value(.string(name))
///         case "manager": manager.map { .object($0) } ?? .value(.null)
///         case "reports": .collection(reports.map { .object($0) })
///         default: throw PredicateEvaluationError.unknownKey(key, in: "Employee")
///         }
///     }
///     var predicateIdentity: QueryValue { .identity(ObjectIdentity(id)) }
/// }
/// ```
///
/// `[String: QueryValue]` dictionaries are evaluable: a missing key is nil, as in a dictionary fetch result,
/// and ``QueryValue/dictionary(_:)`` values nest.
public protocol PredicateEvaluable {
    /// The value of one key (an attribute or a relationship).
    ///
    /// - Parameter key: one component of a key path.
    /// - Returns: the value, object or collection.
    /// - Throws: ``PredicateEvaluationError/unknownKey(_:in:)`` for a key the object does not have; any other
    ///   error (a fault that cannot be fulfilled) reaches the caller of the evaluation as
    ///   ``PredicateEvaluationError/evaluable(key:underlying:)``.
    func predicateValue(forKey key: String) throws -> EvaluatedValue

    /// What `SELF` compares by: usually ``QueryValue/identity(_:)`` of the object's ID, so that
    /// `SELF IN %@` and `SELF == %@` work with IDs.
    var predicateIdentity: QueryValue { get }
}

/// What a key evaluates to: a value, a related object or a collection.
///
/// Objects are compared by their ``PredicateEvaluable/predicateIdentity`` and collections element by element.
/// Not `Sendable`: it holds the objects themselves.
public enum EvaluatedValue {
    /// A plain value (``QueryValue/null`` for nil).
    case value(QueryValue)
    /// An object (a to-one relationship's destination, `SELF`, a subquery's element): key paths walk into it.
    case object(any PredicateEvaluable)
    /// A collection (a to-many relationship): key paths map over it, `ANY`/`ALL`/`NONE` iterate it.
    case collection([EvaluatedValue])

    /// A collection of objects.
    ///
    /// - Parameter objects: the objects, e.g. a to-many relationship's destinations.
    /// - Returns: `.collection` of `.object`s.
    public static func objects(_ objects: [some PredicateEvaluable]) -> EvaluatedValue {
        .collection(objects.map { .object($0) })
    }

    /// The value with objects replaced by their identities: what comparisons see.
    public var resolved: QueryValue {
        switch self {
        case .value(let value): value
        case .object(let object): object.predicateIdentity
        case .collection(let elements): .array(elements.map(\.resolved))
        }
    }
}

@available(*, unavailable)
extension EvaluatedValue: Sendable {}

extension Dictionary: PredicateEvaluable where Key == String, Value == QueryValue {
    /// The value for `key`, nil when the dictionary has none.
    public func predicateValue(forKey key: String) throws -> EvaluatedValue {
        .value(self[key] ?? .null)
    }

    /// ``QueryValue/dictionary(_:)`` of the dictionary.
    public var predicateIdentity: QueryValue { .dictionary(self) }
}
