/// The identity of an object a predicate is evaluated on, as a value: what `SELF` is compared by.
///
/// Any `Hashable & Sendable` value can serve (the object graph uses its object IDs). Two identities are equal when
/// their base values are of the same type and equal.
///
/// For example:
/// ```swift
/// let ids: [ObjectIdentity] = [ObjectIdentity(17), ObjectIdentity(42)]
/// let predicate = try ObjectPredicate(format: "SELF IN %@", ids)
/// ```
public struct ObjectIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The value that identifies the object.
    public let base: any Hashable & Sendable

    /// Wraps a value that identifies an object.
    ///
    /// - Parameter base: any hashable, sendable value; identities built from equal values are equal.
    public init(_ base: some Hashable & Sendable) {
        self.base = base
    }

    /// Whether both identities wrap equal values of the same type.
    public static func == (lhs: ObjectIdentity, rhs: ObjectIdentity) -> Bool {
        AnyHashable(lhs.base) == AnyHashable(rhs.base)
    }

    /// Hashes the wrapped value.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(AnyHashable(base))
    }

    /// The wrapped value's description.
    public var description: String { "\(base)" }
}
