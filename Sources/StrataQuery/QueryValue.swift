import Foundation

/// A value in a predicate: a constant, an argument, or what a key path evaluates to.
///
/// Values compare with `NSPredicate`'s semantics (``QueryValue/predicateEquals(_:options:)``,
/// ``QueryValue/predicateCompare(_:options:)``): numbers compare across ``int(_:)``, ``double(_:)``,
/// ``decimal(_:)`` and ``bool(_:)``; ``null`` equals only ``null`` and is neither less nor greater than anything.
/// The synthesized `==` is structural (`.int(1) != .double(1)`): it is what makes two predicates equal, not
/// what a predicate's `==` means.
///
/// For example:
/// ```swift
/// let value: QueryValue = .int(3)
/// value.predicateEquals(.double(3))   // true
/// value == .double(3)                 // false: structural
/// ```
///
/// ## Topics
/// ### Scalars
/// - ``null``
/// - ``bool(_:)``
/// - ``int(_:)``
/// - ``double(_:)``
/// - ``decimal(_:)``
/// - ``string(_:)``
/// - ``date(_:)``
/// - ``data(_:)``
/// - ``uuid(_:)``
/// - ``url(_:)``
/// ### Collections, records and objects
/// - ``array(_:)``
/// - ``dictionary(_:)``
/// - ``identity(_:)``
public enum QueryValue: Hashable, Sendable {
    /// No value: `nil`/`NULL` in a format string, an attribute that is not set, a to-one relationship to nothing.
    case null
    /// A Boolean: `TRUE`/`YES`, `FALSE`/`NO`. Compares with numbers as 1 and 0.
    case bool(Bool)
    /// An integer.
    case int(Int64)
    /// A floating-point number.
    case double(Double)
    /// A decimal number, compared exactly with integers and other decimals.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A point in time.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case url(URL)
    /// A collection (an aggregate `{a, b}`, an array or set argument, a to-many relationship's identities, the
    /// values of a key path through a to-many relationship). Order matters only to structural equality.
    case array([QueryValue])
    /// A record of named values; key paths walk into it as into an object (dictionary results, nested test data).
    case dictionary([String: QueryValue])
    /// The identity of an object (`SELF`, an object ID passed as an argument).
    case identity(ObjectIdentity)
}

// MARK: - Format

extension QueryValue: CustomStringConvertible {
    /// The value as it is written in a format string (``predicateFormat``).
    public var description: String { predicateFormat }

    /// The value written as a format-string literal that parses back to an equal value.
    ///
    /// Scalars without a literal syntax are written as casts (`CAST(726.5, "NSDate")`, `CAST("…", "NSUUID")`,
    /// `CAST("…", "NSURL")`, `CAST("<base64>", "NSData")`, `CAST("1.5", "NSDecimalNumber")`), infinities as
    /// `1e999`/`-1e999`. Identities and dictionaries have no literal form: they are written between angle brackets
    /// and do not parse back; neither does NaN.
    public var predicateFormat: String {
        switch self {
        case .null: "nil"
        case .bool(let value): value ? "TRUE" : "FALSE"
        case .int(let value): String(value)
        case .double(let value): Self.format(value)
        case .decimal(let value): "CAST(\(Self.quote(value.description)), \"NSDecimalNumber\")"
        case .string(let value): Self.quote(value)
        case .date(let value): "CAST(\(Self.format(value.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let value): "CAST(\(Self.quote(value.base64EncodedString())), \"NSData\")"
        case .uuid(let value): "CAST(\(Self.quote(value.uuidString)), \"NSUUID\")"
        case .url(let value): "CAST(\(Self.quote(value.absoluteString)), \"NSURL\")"
        case .array(let values): "{" + values.map(\.predicateFormat).joined(separator: ", ") + "}"
        case .dictionary(let values):
            "<dictionary {"
                + values.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value.predicateFormat)" }
                .joined(separator: ", ") + "}>"
        case .identity(let identity): "<identity \(identity)>"
        }
    }

    static func format(_ value: Double) -> String {
        if value.isInfinite { return value < 0 ? "-1e999" : "1e999" }
        return value.description
    }

    /// A double-quoted string literal: backslash, double quote and control characters escaped, `%` doubled.
    static func quote(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "%": result += "%%"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

// MARK: - Literals

extension QueryValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// ``string(_:)``.
    public init(stringLiteral value: String) {
        self = .string(value)
    }

    /// ``int(_:)``.
    public init(integerLiteral value: Int64) {
        self = .int(value)
    }

    /// ``double(_:)``.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }

    /// ``bool(_:)``.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }

    /// ``array(_:)``.
    public init(arrayLiteral elements: QueryValue...) {
        self = .array(elements)
    }

    /// ``dictionary(_:)``; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, QueryValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}
