/// A blob's identity in its store: the small handle a row keeps instead of the blob's bytes.
/// Allocated in increasing order from 1; the bytes live in a blob segment.
public struct BlobID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The ID as stored in the row that references the blob and as the key of the blob catalog.
    public let rawValue: UInt64
    /// Wraps a raw blob ID, e.g. one read from a row.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders IDs by their raw value, which is also their order of allocation.
    public static func < (lhs: BlobID, rhs: BlobID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The ID in a short readable form, e.g. `blob#5`.
    public var description: String { "blob#\(rawValue)" }
}
