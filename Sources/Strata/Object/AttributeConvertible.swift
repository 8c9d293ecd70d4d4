import Foundation

/// A Swift type that a ``Managed`` property can have: it converts to and from ``AttributeValue``.
public protocol AttributeConvertible {
    /// The value, or nil when `attributeValue` does not hold one of this type.
    init?(attributeValue: AttributeValue?)
    /// The value to store (nil for an absent optional).
    var attributeValue: AttributeValue? { get }
}

extension Int64: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .integer(self) }
}

extension Int: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue else { return nil }
        self = Int(value)
    }
    public var attributeValue: AttributeValue? { .integer(Int64(self)) }
}

extension Int32: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue, let narrow = Int32(exactly: value) else { return nil }
        self = narrow
    }
    public var attributeValue: AttributeValue? { .integer(Int64(self)) }
}

extension Int16: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .integer(let value) = attributeValue, let narrow = Int16(exactly: value) else { return nil }
        self = narrow
    }
    public var attributeValue: AttributeValue? { .integer(Int64(self)) }
}

extension Double: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .double(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .double(self) }
}

extension Float: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .float(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .float(self) }
}

extension Decimal: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .decimal(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .decimal(self) }
}

extension Bool: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .boolean(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .boolean(self) }
}

extension String: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .string(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .string(self) }
}

extension Date: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .date(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .date(self) }
}

extension Data: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .data(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .data(self) }
}

extension UUID: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .uuid(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .uuid(self) }
}

extension URL: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard case .uri(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue? { .uri(self) }
}

extension Optional: AttributeConvertible where Wrapped: AttributeConvertible {
    public init?(attributeValue: AttributeValue?) {
        guard let attributeValue else {
            self = .none
            return
        }
        guard let value = Wrapped(attributeValue: attributeValue) else { return nil }
        self = .some(value)
    }
    public var attributeValue: AttributeValue? { self?.attributeValue }
}
