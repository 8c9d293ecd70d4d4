/// A table's stable identity inside one store. IDs are never reused, even after a table is dropped.
public struct TableID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (lhs: TableID, rhs: TableID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "table#\(rawValue)" }
}

/// A row's identity inside its table: allocated in increasing order from 1, never reused.
public struct RowID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: RowID, rhs: RowID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "row#\(rawValue)" }
}
