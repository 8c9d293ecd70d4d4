import Foundation

/// An attribute's value as the object graph keeps it: one case per storable kind, so that rows are
/// encoded and compared without boxing.
///
/// Values reach users as ordinary Swift values (`Int64`, `String`, `Date`, ...) through
/// ``ManagedObject/value(forKey:)`` and typed accessors; ``AttributeValue`` is the bridge.
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
    /// A value of an ``AttributeType/integer16``, ``AttributeType/integer32`` or ``AttributeType/integer64``
    /// attribute; the narrower types limit its range.
    case integer(Int64)
    /// A value of a ``AttributeType/double`` attribute.
    case double(Double)
    /// A value of a ``AttributeType/float`` attribute.
    case float(Float)
    /// A value of a ``AttributeType/decimal`` attribute, at full precision.
    case decimal(Decimal)
    /// A value of a ``AttributeType/boolean`` attribute.
    case boolean(Bool)
    /// A value of a ``AttributeType/string`` attribute.
    case string(String)
    /// A value of a ``AttributeType/date`` attribute.
    case date(Date)
    /// A value of a ``AttributeType/binaryData`` attribute.
    case data(Data)
    /// A value of a ``AttributeType/uuid`` attribute.
    case uuid(UUID)
    /// A value of a ``AttributeType/uri`` attribute.
    case uri(URL)
    /// A value of a transformable or undefined (transient) attribute, kept as the Swift value itself.
    ///
    /// Indirect: the existential is five words, which would make every value (and every row and object's array
    /// of them) twice as large as the largest other case.
    indirect case object(AnyHashableSendable)

    /// The value in a short readable form: strings quoted, data as its byte count (`<12 bytes>`), UUIDs and
    /// URLs as strings.
    public var description: String {
        switch self {
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .float(let value): "\(value)"
        case .decimal(let value): "\(value)"
        case .boolean(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .date(let value): "\(value)"
        case .data(let value): "<\(value.count) bytes>"
        case .uuid(let value): value.uuidString
        case .uri(let value): value.absoluteString
        case .object(let value): "\(value.value)"
        }
    }

    /// The plain Swift value, as `value(forKey:)` returns it.
    public var anyValue: Any {
        switch self {
        case .integer(let value): value
        case .double(let value): value
        case .float(let value): value
        case .decimal(let value): value
        case .boolean(let value): value
        case .string(let value): value
        case .date(let value): value
        case .data(let value): value
        case .uuid(let value): value
        case .uri(let value): value
        case .object(let value): value.value
        }
    }
}

/// A hashable, sendable box for values of transformable and undefined attributes.
public struct AnyHashableSendable: Hashable, Sendable {
    /// The boxed value. For a value boxed from `Any` by key-value coding this is an internal box; use
    /// ``value`` to get the value itself.
    public let base: any Hashable & Sendable

    /// Boxes a value that is already `Hashable` and `Sendable`.
    public init(_ base: any Hashable & Sendable) { self.base = base }

    /// Boxes a value whose type the compiler cannot see as `Sendable` (key-value coding takes `Any`).
    /// The caller promises the value is immutable or otherwise safe to share, as a transformable
    /// attribute's value must be.
    init(unchecked base: AnyHashable) {
        if let sendable = base.base as? UncheckedSendableBox {
            self.base = sendable
        } else {
            self.base = UncheckedSendableBox(value: base)
        }
    }

    /// The boxed value itself (unwrapping an unchecked box).
    public var value: Any { (base as? UncheckedSendableBox)?.value.base ?? base }

    private var unboxed: AnyHashable { (base as? UncheckedSendableBox)?.value ?? AnyHashable(base) }
    /// Two boxes are equal when their values are, as `AnyHashable` compares them.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.unboxed == rhs.unboxed }
    /// Hashes the boxed value, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { unboxed.hash(into: &hasher) }
}

/// Holds a value key-value coding received as `Any`; see ``AnyHashableSendable/init(unchecked:)``.
struct UncheckedSendableBox: Hashable, @unchecked Sendable {
    let value: AnyHashable
}
