/// A constraint on an attribute's values, checked by ``AttributeDescription/validate(_:objectDescription:)``
/// (Core Data's validation predicates: the model editor's minimum, maximum and regular expression).
///
/// Rules apply to values, never to nil: an optional attribute that is nil passes every rule, a
/// mandatory one fails with ``ValidationError/missingMandatoryValue(object:key:)`` first. Rules are
/// not part of the model's version hash: changing them needs no migration.
///
/// For example:
///
///     Attribute("name", .string, optional: false)
///         .validated(.length(min: 1, max: 100), .regularExpression("[A-Za-z ]+"))
///     Attribute("salary", .integer64).validated(.range(min: .integer(0), max: nil))
///
/// ## Topics
///
/// ### Rules
/// - ``range(min:max:)``
/// - ``length(min:max:)``
/// - ``regularExpression(_:)``
public enum ValidationRule: Sendable, Hashable, CustomStringConvertible {
    /// The value must lie within `min ... max` (either bound may be nil). For numbers and dates.
    ///
    /// A bound must suit the attribute's type: an ``AttributeValue/integer(_:)`` for the integer
    /// types; a decimal or integer for ``AttributeType/decimal``; a double, float or integer for
    /// ``AttributeType/double`` and ``AttributeType/float`` (compared as `Double`); a date for
    /// ``AttributeType/date``. NaN lies within no range.
    case range(min: AttributeValue?, max: AttributeValue?)

    /// The value's length must lie within `min ... max` (either bound may be nil). For strings, the
    /// length is the number of `Character`s (Swift's `String.count`, extended grapheme clusters;
    /// Core Data counts UTF-16 code units); for binary data, the number of bytes.
    case length(min: Int?, max: Int?)

    /// The whole string must match the pattern (like `SELF MATCHES pattern` in a Core Data predicate:
    /// anchored at both ends). The syntax is ICU's, as `NSRegularExpression` reads it. The pattern is
    /// compiled once, when the model is built; a pattern that does not compile is a
    /// ``ModelError/invalidRegularExpression(entity:attribute:pattern:)``.
    case regularExpression(String)

    /// The rule in a short readable form, e.g. `length(1...100)`.
    public var description: String {
        switch self {
        case .range(let min, let max):
            "range(\(min.map(String.init(describing:)) ?? "-")...\(max.map(String.init(describing:)) ?? "-"))"
        case .length(let min, let max): "length(\(min.map(String.init) ?? "-")...\(max.map(String.init) ?? "-"))"
        case .regularExpression(let pattern): "regularExpression(\(pattern.debugDescription))"
        }
    }

    /// Whether the rule can constrain values of `type`.
    func applies(to type: AttributeType) -> Bool {
        switch self {
        case .range(let min, let max):
            type.supportsRangeRule && [min, max].allSatisfy { $0.map(type.acceptsRangeLimit) ?? true }
        case .length: type.supportsLengthRule
        case .regularExpression: type.supportsPatternRule
        }
    }
}
