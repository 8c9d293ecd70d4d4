import Foundation

/// A Swift type that a ``Managed`` property can have: it converts to and from ``AttributeValue``.
public protocol AttributeConvertible {
    /// The value, or nil when `attributeValue` does not hold one of this type.
    init?(attributeValue: AttributeValue?)
    /// The value to store (nil for an absent optional).
    var attributeValue: AttributeValue? { get }
}

extension Int64: AttributeConvertible {
    /// The value of an ``AttributeValue/integer(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/integer(_:)``; never nil.
    public var attributeValue: AttributeValue? { .integer(self) }
}

extension Int: AttributeConvertible {
    /// The value of an ``AttributeValue/integer(_:)``; nil for any other case or for no value. An integer
    /// outside `Int`'s range (possible only on 32-bit platforms) traps.
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue else { return nil }
        self = Int(value)
    }
    /// The value as ``AttributeValue/integer(_:)``, widened to `Int64`; never nil.
    public var attributeValue: AttributeValue? { .integer(Int64(self)) }
}

extension Int32: AttributeConvertible {
    /// The value of an ``AttributeValue/integer(_:)`` that fits in `Int32`; nil for a wider integer, any other
    /// case or no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue, let narrow = Int32(exactly: value) else { return nil }
        self = narrow
    }
    /// The value as ``AttributeValue/integer(_:)``, widened to `Int64`; never nil.
    public var attributeValue: AttributeValue? { .integer(Int64(self)) }
}

extension Int16: AttributeConvertible {
    /// The value of an ``AttributeValue/integer(_:)`` that fits in `Int16`; nil for a wider integer, any other
    /// case or no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue, let narrow = Int16(exactly: value) else { return nil }
        self = narrow
    }
    /// The value as ``AttributeValue/integer(_:)``, widened to `Int64`; never nil.
    public var attributeValue: AttributeValue? { .integer(Int64(self)) }
}

extension Double: AttributeConvertible {
    /// The value of a ``AttributeValue/double(_:)``; nil for any other case (a `.float` is not converted) or for no
    /// value.
    public init?(attributeValue: AttributeValue?) {
        guard case .double(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/double(_:)``; never nil.
    public var attributeValue: AttributeValue? { .double(self) }
}

extension Float: AttributeConvertible {
    /// The value of a ``AttributeValue/float(_:)``; nil for any other case (a `.double` is not converted) or for no
    /// value.
    public init?(attributeValue: AttributeValue?) {
        guard case .float(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/float(_:)``; never nil.
    public var attributeValue: AttributeValue? { .float(self) }
}

extension Decimal: AttributeConvertible {
    /// The value of a ``AttributeValue/decimal(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .decimal(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/decimal(_:)``; never nil.
    public var attributeValue: AttributeValue? { .decimal(self) }
}

extension Bool: AttributeConvertible {
    /// The value of a ``AttributeValue/boolean(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .boolean(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/boolean(_:)``; never nil.
    public var attributeValue: AttributeValue? { .boolean(self) }
}

extension String: AttributeConvertible {
    /// The value of a ``AttributeValue/string(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .string(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/string(_:)``; never nil.
    public var attributeValue: AttributeValue? { .string(self) }
}

extension Date: AttributeConvertible {
    /// The value of a ``AttributeValue/date(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .date(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/date(_:)``; never nil.
    public var attributeValue: AttributeValue? { .date(self) }
}

extension Data: AttributeConvertible {
    /// The value of a ``AttributeValue/data(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .data(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/data(_:)``; never nil.
    public var attributeValue: AttributeValue? { .data(self) }
}

extension UUID: AttributeConvertible {
    /// The value of a ``AttributeValue/uuid(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .uuid(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/uuid(_:)``; never nil.
    public var attributeValue: AttributeValue? { .uuid(self) }
}

extension URL: AttributeConvertible {
    /// The value of a ``AttributeValue/uri(_:)``; nil for any other case or for no value.
    public init?(attributeValue: AttributeValue?) {
        guard case .uri(let value) = attributeValue else { return nil }
        self = value
    }
    /// The value as ``AttributeValue/uri(_:)``; never nil.
    public var attributeValue: AttributeValue? { .uri(self) }
}

extension Optional: AttributeConvertible where Wrapped: AttributeConvertible {
    /// `.none` for no value, the wrapped value when `Wrapped` converts it, or nil (conversion failure)
    /// for a value of another type.
    public init?(attributeValue: AttributeValue?) {
        guard let attributeValue else {
            self = .none
            return
        }
        guard let value = Wrapped(attributeValue: attributeValue) else { return nil }
        self = .some(value)
    }
    /// The wrapped value's attribute value, or nil (no value) for `.none`.
    public var attributeValue: AttributeValue? { self?.attributeValue }
}
