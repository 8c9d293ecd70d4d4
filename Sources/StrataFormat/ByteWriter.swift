/// Appends little-endian fields to a growable byte array.
///
/// The writer keeps its own length in a buffer it grows by doubling: a fixed-width field is one store, not a
/// generic `Array.append(contentsOf:)` (about 100 instructions for 4 to 8 bytes, paid for every field of every log
/// record and row).
///
/// Encoders are trusted code: they may `precondition` on their inputs.
public struct ByteWriter: Sendable {
    /// The buffer: its first ``count`` bytes are written, the rest is room to grow into.
    private var storage: [UInt8]
    /// The number of bytes written so far: the offset the next write lands at.
    public private(set) var count = 0

    /// Creates an empty writer.
    ///
    /// - Parameter capacity: bytes to reserve up front (a size hint, not a limit).
    public init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: max(capacity, 0))
    }

    /// Everything written so far (a copy; ``take()`` hands the bytes over without one).
    public var bytes: [UInt8] { Array(storage[..<count]) }

    /// Calls `body` with the bytes written so far, valid only during the call.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let count = count
        return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Makes room for `size` more bytes and returns where they start.
    @inline(__always)
    private mutating func reserve(_ size: Int) -> Int {
        let start = count
        let end = start + size
        if end > storage.count { grow(to: end) }
        count = end
        return start
    }

    /// Grows the buffer to at least `end` bytes, doubling so that appends stay amortized O(1).
    private mutating func grow(to end: Int) {
        // A new buffer: the bytes written copied, the rest zeroed (an append of `repeatElement` went element by
        // element through the generic path, 600 instructions for a small commit's first 64 bytes).
        let capacity = max(end, 2 * storage.count, 64)
        let written = count
        storage = storage.withUnsafeBufferPointer { old in
            [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                // Safe: capacity > written, and old holds at least `written` bytes.
                let base = buffer.baseAddress!
                if written > 0 { base.initialize(from: old.baseAddress!, count: written) }
                (base + written).initialize(repeating: 0, count: capacity - written)
                initialized = capacity
            }
        }
    }

    @inline(__always)
    private mutating func writeLE<T: FixedWidthInteger>(_ value: T) {
        let start = reserve(MemoryLayout<T>.size)
        // `reserve` made the room: the store is within the buffer.
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: start, as: T.self) }
    }

    /// Appends one byte.
    public mutating func writeUInt8(_ value: UInt8) { writeLE(value) }

    /// Appends `value` as 2 little-endian bytes.
    public mutating func writeUInt16LE(_ value: UInt16) { writeLE(value) }

    /// Appends `value` as 4 little-endian bytes.
    public mutating func writeUInt32LE(_ value: UInt32) { writeLE(value) }

    /// Appends `value` as 8 little-endian bytes.
    public mutating func writeUInt64LE(_ value: UInt64) { writeLE(value) }

    /// Appends `value` as `MemoryLayout<T>.size` big-endian bytes (keys that compare as bytes).
    public mutating func writeBigEndian<T: FixedWidthInteger>(_ value: T) {
        let start = reserve(MemoryLayout<T>.size)
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.bigEndian, toByteOffset: start, as: T.self) }
    }

    /// Appends a sequence of bytes as they are.
    public mutating func writeBytes(_ value: some Sequence<UInt8>) {
        let copied: Void? = value.withContiguousStorageIfAvailable { writeBytes(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            for byte in value { writeUInt8(byte) }
        }
    }

    /// Appends the bytes of a raw buffer as they are.
    public mutating func writeBytes(_ value: UnsafeRawBufferPointer) {
        guard !value.isEmpty else { return }
        let start = reserve(value.count)
        storage.withUnsafeMutableBytes {
            UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + value.count)]).copyMemory(from: value)
        }
    }

    /// Appends `size` bytes that `fill` writes, in one step: a record of several fields reserves its room once
    /// (a call per field cost a call and a capacity check each). `fill` must write every byte it is given.
    public mutating func write(_ size: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let start = reserve(size)
        storage.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + size)])) }
    }

    /// Appends `count` zero bytes (reserved fields and padding).
    public mutating func writeZeros(_ count: Int) {
        guard count > 0 else { return }
        let start = reserve(count)
        // The room may hold bytes written before a `removeAll()`.
        storage.withUnsafeMutableBytes {
            _ = UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + count)]).initializeMemory(
                as: UInt8.self, repeating: 0)
        }
    }

    /// Overwrites a little-endian UInt32 at `offset`, which must lie within what was written.
    public mutating func setUInt32LE(_ value: UInt32, at offset: Int) { setLE(value, at: offset) }

    /// Overwrites a little-endian integer at `offset`, which must lie within what was written.
    public mutating func setLE<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count)
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }

    /// Drops everything written, keeping the capacity.
    public mutating func removeAll() { count = 0 }

    /// Hands over the bytes and leaves the writer empty.
    public mutating func take() -> [UInt8] {
        storage.removeLast(storage.count - count)
        defer {
            storage = []
            count = 0
        }
        return storage
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
