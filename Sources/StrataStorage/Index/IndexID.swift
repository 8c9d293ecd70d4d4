/// A secondary index's stable identity inside one store. IDs are never reused, even after an index is dropped.
public struct IndexID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The ID as stored in the log and the root record; allocated from 1.
    public let rawValue: UInt32
    /// Wraps a raw index ID, e.g. one read from the log or printed by a tool.
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    /// Orders IDs by their raw value, which is also their order of creation.
    public static func < (lhs: IndexID, rhs: IndexID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The ID in a short readable form, e.g. `index#3`.
    public var description: String { "index#\(rawValue)" }
    /// The hash of the raw value in one step, as the standard library hashes a `UInt32` key; what `hash(into:)`
    /// gives too. The synthesized form feeds a whole `Hasher` (about 130 instructions), and every write looks its
    /// table and indexes up by ID.
    public func _rawHashValue(seed: Int) -> Int { rawValue._rawHashValue(seed: seed) }
}
