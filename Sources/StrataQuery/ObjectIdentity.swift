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

    /// Whether both identities wrap equal values of the same type. (Not through `AnyHashable`, which boxes each
    /// side on the heap: grouping a dictionary fetch by a to-one compares and hashes an identity per row.)
    public static func == (lhs: ObjectIdentity, rhs: ObjectIdentity) -> Bool {
        func equals<Base: Hashable>(_ base: Base, _ other: any Hashable & Sendable) -> Bool {
            guard let other = other as? Base else { return false }
            return base == other
        }
        return type(of: lhs.base) == type(of: rhs.base) && equals(lhs.base, rhs.base)
    }

    /// Hashes the wrapped value (its type is part of equality, not of the hash).
    public func hash(into hasher: inout Hasher) {
        base.hash(into: &hasher)
    }

    /// The wrapped value's description.
    public var description: String { "\(base)" }
}
