import Foundation

/// How a derived attribute's value is computed (Core Data's `NSDerivedAttributeDescription` and its
/// `derivationExpression`): parsed when the model is built, computed by every save that changes an input.
///
/// The expressions Strata reads are those Core Data's model editor offers for derived attributes and that a
/// store can keep exact:
///
/// | expression | value |
/// | --- | --- |
/// | `now()` | the save's date (a ``AttributeType/date`` attribute) |
/// | `name`, `department.name` | an attribute of the object or of an object reached through to-ones |
/// | `employees.@count` | the number of objects of a to-many (an integer attribute) |
/// | `employees.salary.@sum` (`@min`, `@max`, `@avg`) | an aggregate of a numeric attribute over a to-many |
///
/// Anything else (functions such as `uppercase:(name)`, arithmetic, string concatenation) is a
/// ``ModelError/invalidDerivation(entity:attribute:expression:reason:)``, never a silently different value.
public enum Derivation: Sendable, Hashable, CustomStringConvertible {
    /// The date of the save.
    case now
    /// The value at the end of a key path: zero or more to-one relationships, then an attribute.
    case keyPath([String])
    /// An aggregate over the objects of a to-many relationship: their count, or a function of an attribute.
    case aggregate(AggregateFunction, relationship: String, attribute: String?)

    /// The collection operators a derivation may end with.
    public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
        /// `@count`: how many objects (no attribute).
        case count
        /// `@sum` of the attribute's non-nil values (0 for none).
        case sum
        /// `@min` of the non-nil values (nil for none).
        case min
        /// `@max` of the non-nil values (nil for none).
        case max
        /// `@avg` of the non-nil values (nil for none).
        case average = "avg"
    }

    /// Parses a derivation expression as Core Data's model file writes it.
    ///
    /// - Parameter expression: e.g. `employees.@count`.
    /// - Returns: the derivation, or nil when the expression is not one Strata supports.
    public init?(expression: String) {
        let text = expression.trimmingCharacters(in: .whitespaces)
        if text == "now()" {
            self = .now
            return
        }
        var components = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.isEmpty, components.count <= 16 else { return nil }
        if let last = components.last, last.hasPrefix("@") {
            guard let function = AggregateFunction(rawValue: String(last.dropFirst())) else { return nil }
            components.removeLast()
            guard components.allSatisfy(Self.isIdentifier) else { return nil }
            switch (function, components.count) {
            case (.count, 1): self = .aggregate(.count, relationship: components[0], attribute: nil)
            case (.count, _): return nil
            case (_, 2): self = .aggregate(function, relationship: components[0], attribute: components[1])
            default: return nil
            }
            return
        }
        guard components.allSatisfy(Self.isIdentifier) else { return nil }
        self = .keyPath(components)
    }

    /// The expression as a model file writes it.
    public var description: String {
        switch self {
        case .now: "now()"
        case .keyPath(let path): path.joined(separator: ".")
        case .aggregate(let function, let relationship, let attribute):
            ([relationship] + (attribute.map { [$0] } ?? []) + ["@" + function.rawValue]).joined(separator: ".")
        }
    }

    /// A property name: a letter or underscore, then letters, digits and underscores.
    private static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else {
            return false
        }
        return text.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
