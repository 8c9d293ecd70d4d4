/// Reads little-endian fields from untrusted bytes, never past its end.
///
/// Every `read…` advances ``readerIndex``; every failure is ``FormatError/truncated(needed:available:)``.
/// The reader borrows its buffer: it must not outlive the `withUnsafeBytes` call that made it.
public struct ByteReader {
    /// The borrowed bytes being read; the reader never reads outside them.
    public let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte a `read…` call consumes, from 0 to `bytes.count`.
    public private(set) var readerIndex: Int

    /// Creates a reader over `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: the bytes to read, which must stay valid while the reader is used.
    ///   - readerIndex: where reading starts; outside `0...bytes.count` is a precondition failure.
    public init(_ bytes: UnsafeRawBufferPointer, readerIndex: Int = 0) {
        precondition(readerIndex >= 0 && readerIndex <= bytes.count)
        self.bytes = bytes
        self.readerIndex = readerIndex
    }

    /// Bytes left to read.
    @inline(__always)
    public var remaining: Int {
        // Safe: readerIndex never exceeds bytes.count (checked on every advance).
        bytes.count &- readerIndex
    }

    @inline(__always)
    mutating func claim(_ count: Int) throws(FormatError) -> Int {
        guard count >= 0, count <= remaining else {
            throw .truncated(needed: count, available: remaining)
        }
        let start = readerIndex
        // Safe: count <= remaining, so the sum is at most bytes.count.
        readerIndex = start &+ count
        return start
    }

    /// Reads one byte and advances past it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when no byte remains.
    public mutating func readUInt8() throws(FormatError) -> UInt8 {
        let at = try claim(1)
        return bytes[at]
    }

    /// Reads a little-endian `UInt16` and advances past it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when fewer than 2 bytes remain.
    public mutating func readUInt16LE() throws(FormatError) -> UInt16 {
        let at = try claim(2)
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self))
    }

    /// Reads a little-endian `UInt32` and advances past it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when fewer than 4 bytes remain.
    public mutating func readUInt32LE() throws(FormatError) -> UInt32 {
        let at = try claim(4)
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self))
    }

    /// Reads a little-endian `UInt64` and advances past it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when fewer than 8 bytes remain.
    public mutating func readUInt64LE() throws(FormatError) -> UInt64 {
        let at = try claim(8)
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// Reads `count` bytes into a new array. `count` must already be bounded by the caller's format limit;
    /// it is checked against what remains before anything is allocated.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when `count` is negative or more than remain.
    public mutating func readBytes(_ count: Int) throws(FormatError) -> [UInt8] {
        let at = try claim(count)
        return Array(UnsafeRawBufferPointer(rebasing: bytes[at..<(at &+ count)]))
    }

    /// Returns a view of the next `count` bytes and advances past them.
    ///
    /// The view borrows the reader's buffer and is valid only as long as it is.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when `count` is negative or more than remain.
    public mutating func readSlice(_ count: Int) throws(FormatError) -> UnsafeRawBufferPointer {
        let at = try claim(count)
        return UnsafeRawBufferPointer(rebasing: bytes[at..<(at &+ count)])
    }

    /// Skips `count` bytes.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when `count` is negative or more than remain.
    public mutating func skip(_ count: Int) throws(FormatError) {
        _ = try claim(count)
    }

    /// Reads a UTF-8 string of `count` bytes, rejecting invalid UTF-8.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when fewer than `count` bytes remain;
    ///   ``FormatError/invalidField(_:)`` when the bytes are not valid UTF-8.
    public mutating func readUTF8(_ count: Int) throws(FormatError) -> String {
        let slice = try readSlice(count)
        // ASCII is valid UTF-8 as it is: made without the generic validation (`String._validate`, unspecialized,
        // with generic metadata made per string: 1,000 instructions for a 15-letter name of a fetched row).
        if Self.isASCII(slice) { return String(decoding: slice, as: UTF8.self) }
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw .invalidField("string is not valid UTF-8")
        }
        return string
    }

    /// Whether every byte is below 0x80, tested eight at a time.
    package static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var high: UInt64 = 0
        // `index + 8 <= count` with both non-negative and `count` a buffer's size: no overflow.
        while index &+ 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index &+= 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Reads a little-endian UInt32 at an absolute offset without moving the reader.
    ///
    /// - Parameter offset: a byte offset from the start of ``bytes`` (not from ``readerIndex``).
    /// - Throws: ``FormatError/truncated(needed:available:)`` when the 4 bytes do not lie within ``bytes``.
    public func getUInt32LE(at offset: Int) throws(FormatError) -> UInt32 {
        guard offset >= 0, offset <= bytes.count &- 4 else {
            throw .truncated(needed: 4, available: max(0, bytes.count &- offset))
        }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
