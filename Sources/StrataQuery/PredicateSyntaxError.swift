/// Why a format string did not parse: where (a character offset), what the parser expected there and what it
/// found.
///
/// For example, `try ObjectPredicate(format: "age >")` throws an error with ``offset`` 5,
/// ``expected`` `"an expression"`, ``found`` `"end of input"` and ``reason`` ``Reason/unexpectedToken``; its
/// description is `expected an expression at offset 5, found end of input`.
///
/// ## Topics
/// ### Properties
/// - ``reason``
/// - ``offset``
/// - ``expected``
/// - ``found``
/// - ``Reason``
public struct PredicateSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Reason: Hashable, Sendable {
        /// A token that cannot appear here.
        case unexpectedToken
        /// A string literal without its closing quote (``offset`` is the opening quote).
        case unterminatedString
        /// A malformed `\u` escape in a string literal.
        case invalidEscape
        /// A malformed number, or an integer literal that does not fit in 64 bits (hexadecimal, octal, binary).
        case invalidNumber
        /// A `%` specifier with no argument left (or a positional `%n$` past the last argument); `index` counts
        /// from 1.
        case missingArgument(index: Int)
        /// An argument of the wrong kind for its specifier (`%K` needs a key path string, `%d` an integer,
        /// `%f` a number); `index` counts from 1.
        case argumentTypeMismatch(index: Int)
        /// A `CAST` to a type the language does not know, or of a value that does not convert.
        case invalidCast
        /// Predicates or expressions nested deeper than ``PredicateParser/maximumDepth``.
        case nestingTooDeep(limit: Int)
    }

    /// The kind of failure.
    public var reason: Reason
    /// Where the failure is: the number of characters (`Character`s) of the format string before it.
    public var offset: Int
    /// What the parser expected at ``offset``, in words (`"an expression"`, `"')'"`).
    public var expected: String
    /// What it found there (the token, quoted, or `"end of input"`).
    public var found: String

    /// An error.
    ///
    /// - Parameters:
    ///   - reason: the kind of failure.
    ///   - offset: the character offset of the failure.
    ///   - expected: what was expected.
    ///   - found: what was found.
    public init(reason: Reason, offset: Int, expected: String, found: String) {
        self.reason = reason
        self.offset = offset
        self.expected = expected
        self.found = found
    }

    /// `expected … at offset …, found …`.
    public var description: String { "expected \(expected) at offset \(offset), found \(found)" }
}
