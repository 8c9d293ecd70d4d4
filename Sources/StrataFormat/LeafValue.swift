/// A row value as a B+tree leaf holds it: the bytes themselves, or the start of an overflow chain.
public enum LeafValue: Sendable, Equatable {
    /// A value stored inline in the leaf cell.
    case bytes([UInt8])
    /// A value stored in a chain of overflow pages starting at `firstPage`, `length` bytes in all.
    case overflow(firstPage: UInt64, length: Int)

    /// A copy of a value read where it lies.
    public init(_ cell: LeafCell) {
        switch cell {
        case .inline(let bytes): self = .bytes(Array(bytes))
        case .overflow(let first, let length): self = .overflow(firstPage: first, length: length)
        }
    }

    /// Calls `body` with the value as a ``LeafCell`` (its bytes lent for the call).
    @inline(__always)
    public func withCell<R>(_ body: (LeafCell) throws -> R) rethrows -> R {
        switch self {
        case .bytes(let bytes): return try bytes.withUnsafeBytes { try body(.inline($0)) }
        case .overflow(let first, let length): return try body(.overflow(firstPage: first, length: length))
        }
    }

    /// The value's length in bytes.
    public var length: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .overflow(_, let length): length
        }
    }

    /// The bytes this value takes in a leaf page besides its row ID (its value end and its bytes, or the
    /// overflow reference it becomes when longer than `maximumInline`).
    @inline(__always)
    public func cellSize(maximumInline: Int) -> Int {
        switch self {
        case .bytes(let bytes):
            bytes.count > maximumInline ? PageFormat.overflowCellSize : PageFormat.leafCellHeaderSize + bytes.count
        case .overflow: PageFormat.overflowCellSize
        }
    }
}
