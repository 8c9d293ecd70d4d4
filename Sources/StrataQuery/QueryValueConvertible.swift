import Foundation

/// A Swift value that converts to a ``QueryValue``: what format-string arguments, builder operands and
/// substitution values are.
///
/// Conform your own identifier types so that they can be arguments (`SELF IN %@`):
///
/// ```swift
/// extension EmployeeID: QueryValueConvertible {
///     var queryValue: QueryValue { .identity(ObjectIdentity(self)) }
/// }
/// ```
public protocol QueryValueConvertible {
    /// The value as a ``QueryValue``.
    var queryValue: QueryValue { get }
}

extension QueryValue: QueryValueConvertible {
    /// The value itself.
    public var queryValue: QueryValue { self }
}

extension ObjectIdentity: QueryValueConvertible {
    /// ``QueryValue/identity(_:)``.
    public var queryValue: QueryValue { .identity(self) }
}

extension Bool: QueryValueConvertible {
    /// ``QueryValue/bool(_:)``.
    public var queryValue: QueryValue { .bool(self) }
}

extension String: QueryValueConvertible {
    /// ``QueryValue/string(_:)``.
    public var queryValue: QueryValue { .string(self) }
}

extension Substring: QueryValueConvertible {
    /// ``QueryValue/string(_:)``.
    public var queryValue: QueryValue { .string(String(self)) }
}

extension Int: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension Int8: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension Int16: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension Int32: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension Int64: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(self) }
}

extension UInt8: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension UInt16: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension UInt32: QueryValueConvertible {
    /// ``QueryValue/int(_:)``.
    public var queryValue: QueryValue { .int(Int64(self)) }
}

extension UInt64: QueryValueConvertible {
    /// ``QueryValue/int(_:)``, or ``QueryValue/double(_:)`` above `Int64.max`.
    public var queryValue: QueryValue { Int64(exactly: self).map(QueryValue.int) ?? .double(Double(self)) }
}

extension UInt: QueryValueConvertible {
    /// ``QueryValue/int(_:)``, or ``QueryValue/double(_:)`` above `Int64.max`.
    public var queryValue: QueryValue { UInt64(self).queryValue }
}

extension Double: QueryValueConvertible {
    /// ``QueryValue/double(_:)``.
    public var queryValue: QueryValue { .double(self) }
}

extension Float: QueryValueConvertible {
    /// ``QueryValue/double(_:)``.
    public var queryValue: QueryValue { .double(Double(self)) }
}

extension Decimal: QueryValueConvertible {
    /// ``QueryValue/decimal(_:)``.
    public var queryValue: QueryValue { .decimal(self) }
}

extension Date: QueryValueConvertible {
    /// ``QueryValue/date(_:)``.
    public var queryValue: QueryValue { .date(self) }
}

extension Data: QueryValueConvertible {
    /// ``QueryValue/data(_:)``.
    public var queryValue: QueryValue { .data(self) }
}

extension UUID: QueryValueConvertible {
    /// ``QueryValue/uuid(_:)``.
    public var queryValue: QueryValue { .uuid(self) }
}

extension URL: QueryValueConvertible {
    /// ``QueryValue/url(_:)``.
    public var queryValue: QueryValue { .url(self) }
}

extension Optional: QueryValueConvertible where Wrapped: QueryValueConvertible {
    /// The wrapped value's, or ``QueryValue/null``.
    public var queryValue: QueryValue { self?.queryValue ?? .null }
}

extension Array: QueryValueConvertible where Element: QueryValueConvertible {
    /// ``QueryValue/array(_:)`` of the elements' values.
    public var queryValue: QueryValue { .array(map(\.queryValue)) }
}

extension Set: QueryValueConvertible where Element: QueryValueConvertible {
    /// ``QueryValue/array(_:)`` of the elements' values, in the set's iteration order.
    public var queryValue: QueryValue { .array(map(\.queryValue)) }
}

extension Dictionary: QueryValueConvertible where Key == String, Value: QueryValueConvertible {
    /// ``QueryValue/dictionary(_:)`` of the values.
    public var queryValue: QueryValue { .dictionary(mapValues(\.queryValue)) }
}
