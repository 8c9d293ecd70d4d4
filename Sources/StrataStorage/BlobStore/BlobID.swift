/// A blob's identity in its store: the small handle a row keeps instead of the blob's bytes.
/// Allocated in increasing order from 1; the bytes live in a blob segment.
public struct BlobID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: BlobID, rhs: BlobID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "blob#\(rawValue)" }
}
