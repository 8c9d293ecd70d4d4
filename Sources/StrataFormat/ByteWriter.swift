/// Appends little-endian fields to a growable byte array.
///
/// Encoders are trusted code: they may `precondition` on their inputs.
public struct ByteWriter: Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8]

    /// Creates an empty writer.
    ///
    /// - Parameter capacity: bytes to reserve up front (a size hint, not a limit).
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far: the offset the next write lands at.
    public var count: Int { bytes.count }

    /// Appends one byte.
    public mutating func writeUInt8(_ value: UInt8) { bytes.append(value) }

    /// Appends `value` as 2 little-endian bytes.
    public mutating func writeUInt16LE(_ value: UInt16) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` as 4 little-endian bytes.
    public mutating func writeUInt32LE(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` as 8 little-endian bytes.
    public mutating func writeUInt64LE(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a sequence of bytes as they are.
    public mutating func writeBytes(_ value: some Sequence<UInt8>) { bytes.append(contentsOf: value) }

    /// Appends the bytes of a raw buffer as they are.
    public mutating func writeBytes(_ value: UnsafeRawBufferPointer) { bytes.append(contentsOf: value) }

    /// Appends `count` zero bytes (reserved fields and padding).
    public mutating func writeZeros(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    /// Overwrites a little-endian UInt32 at `offset`, which must lie within what was written.
    public mutating func setUInt32LE(_ value: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= bytes.count)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    /// Overwrites a little-endian integer at `offset`, which must lie within what was written.
    public mutating func setLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= bytes.count)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }

    /// Drops everything written, keeping the capacity.
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Hands over the bytes and leaves the writer empty.
    public mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Stores a little-endian integer at `offset`; the caller guarantees it fits.
    @inline(__always)
    func storeLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count)
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
