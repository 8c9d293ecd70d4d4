import Foundation
import StrataQuery

// Values as Core Data hands them out. Core Data gives key-value coding, `committedValues(forKeys:)`,
// `changedValues()` and dictionary fetches `NSNumber` for every integer, floating-point and Boolean attribute,
// and ported code casts them as it likes: `as? Int`, `as? Int16`, `as? Double`, `as? Bool`. A Swift `Int64`
// in an `Any` casts only to `Int64`, so these APIs give `NSNumber`, which Foundation bridges to every numeric
// type that holds the value exactly (on Linux as on Apple platforms): `as? Int16` of 100,000 is nil, as
// `as? Float` of 0.1 (a Double) is.

extension AttributeValue {
    /// The value as key-value coding gives it (Core Data's object value): an `NSNumber` for integer,
    /// floating-point and Boolean attributes, so that `as? Int`, `as? Int16`, `as? Double`, `as? Bool` and
    /// the other numeric casts work as they do on Core Data's values; ``anyValue`` for every other type
    /// (`String`, `Date`, `Decimal`, `Data`, `UUID`, `URL`, a transformable's value).
    ///
    /// For example:
    /// ```swift
    /// let salary = try employee.value(forKey: "salary") as? Int     // an integer64 attribute
    /// let level = try employee.value(forKey: "salary") as? Int16    // nil when the value does not fit
    /// ```
    public var objectValue: Any {
        switch self {
        case .integer(let value): NSNumber(value: value)
        case .double(let value): NSNumber(value: value)
        case .float(let value): NSNumber(value: value)
        case .boolean(let value): NSNumber(value: value)
        default: anyValue
        }
    }
}

extension QueryValue {
    /// A dictionary fetch's value as Core Data gives it: `NSNumber` for numbers and Booleans, the
    /// ``ManagedObjectID`` for a to-one's identity, arrays and dictionaries element by element.
    var objectValue: Any? {
        switch self {
        case .null: nil
        case .bool(let value): NSNumber(value: value)
        case .int(let value): NSNumber(value: value)
        case .double(let value): NSNumber(value: value)
        case .decimal(let value): value
        case .string(let value): value
        case .date(let value): value
        case .data(let value): value
        case .uuid(let value): value
        case .url(let value): value
        case .array(let values): values.map(\.objectValue)
        case .dictionary(let values): values.mapValues(\.objectValue)
        case .identity(let identity): identity.base
        }
    }
}
