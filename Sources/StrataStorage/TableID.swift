/// A table's stable identity inside one store. IDs are never reused, even after a table is dropped.
public struct TableID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The ID as stored in the log and the root record; allocated from 1.
    public let rawValue: UInt32
    /// Wraps a raw table ID, e.g. one read from the log or printed by a tool.
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    /// Orders IDs by their raw value, which is also their order of creation.
    public static func < (lhs: TableID, rhs: TableID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The ID in a short readable form, e.g. `table#3`.
    public var description: String { "table#\(rawValue)" }
    /// The hash of the raw value in one step, as the standard library hashes a `UInt32` key; what `hash(into:)`
    /// gives too. The synthesized form feeds a whole `Hasher` (about 130 instructions), and every write looks its
    /// table and indexes up by ID.
    public func _rawHashValue(seed: Int) -> Int { rawValue._rawHashValue(seed: seed) }
}

/// A row's identity inside its table: allocated in increasing order from 1, never reused.
public struct RowID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The row ID as stored in the log and as the key of its table's B+tree.
    public let rawValue: UInt64
    /// Wraps a raw row ID, e.g. one read from the log or printed by a tool.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders IDs by their raw value, which is also their order of allocation and of a table scan.
    public static func < (lhs: RowID, rhs: RowID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The ID in a short readable form, e.g. `row#42`.
    public var description: String { "row#\(rawValue)" }
}
