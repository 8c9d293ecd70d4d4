/// Unsigned LEB128 integers: seven bits a byte, least significant group first, the high bit set on every byte
/// but the last (FORMAT.md, "Row records"). Small numbers take one byte.
///
/// Only the canonical encoding decodes: no byte after the first may be a final `00` (a longer form of a shorter
/// number), so every number has exactly one encoding.
enum Varint {
    /// The bytes `value` takes: 1 ... 10.
    @inline(__always)
    static func size(_ value: UInt64) -> Int {
        // Safe: 64 − leadingZeroBitCount is 0 ... 64.
        max(1, (64 &- value.leadingZeroBitCount &+ 6) / 7)
    }

    /// Writes `value` at `position` (which must leave room for ``size(_:)`` bytes) and moves past it.
    @inline(__always)
    static func write(_ value: UInt64, into bytes: UnsafeMutableRawBufferPointer, at position: inout Int) {
        var rest = value
        while rest >= 0x80 {
            bytes[position] = UInt8(truncatingIfNeeded: rest) | 0x80
            position += 1
            rest >>= 7
        }
        bytes[position] = UInt8(rest)
        position += 1
    }

    /// Reads the varint at `position`, moves past it and checks it is canonical and at most `maximum`.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when the bytes end inside it;
    ///   ``FormatError/invalidField(_:)`` for a value above `maximum` (or beyond 64 bits) or a non-canonical form.
    @inline(__always)
    static func read(
        _ bytes: UnsafeRawBufferPointer, at position: inout Int, maximum: UInt64, _ what: StaticString
    ) throws(FormatError) -> UInt64 {
        guard position < bytes.count else { throw .truncated(needed: position + 1, available: bytes.count) }
        let first = bytes[position]
        position &+= 1
        if first < 0x80 {
            guard UInt64(first) <= maximum else { throw .invalid("\(what) \(first) exceeds \(maximum)") }
            return UInt64(first)
        }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while true {
            guard position < bytes.count else { throw .truncated(needed: position + 1, available: bytes.count) }
            let byte = bytes[position]
            position &+= 1
            let group = UInt64(byte & 0x7F)
            // The tenth byte holds bit 63 only, and ends the varint.
            guard shift < 63 || byte <= 1 else { throw .invalid("\(what) exceeds 64 bits") }
            value |= group << shift
            if byte < 0x80 {
                guard byte != 0 else { throw .invalid("\(what) is not in its shortest form") }
                guard value <= maximum else { throw .invalid("\(what) \(value) exceeds \(maximum)") }
                return value
            }
            shift &+= 7
        }
    }
}

/// Integers stored in as few little-endian bytes as hold them (FORMAT.md §6.1): two's complement for int64
/// fields, unsigned for references and blob references. A field's length gives the width, so no length byte is
/// spent; only the shortest width decodes, so every number has one encoding.
enum CompactInteger {
    /// Bytes of the shortest two's complement form of `value`: 1 ... 8.
    @inline(__always)
    static func signedWidth(_ value: Int64) -> Int {
        // Significant bits: those that differ from the sign, plus the sign bit.
        let magnitude = UInt64(bitPattern: value ^ (value >> 63))
        return (64 &- magnitude.leadingZeroBitCount &+ 8) / 8
    }

    /// Bytes of the shortest unsigned form of `value`: 1 ... 8.
    @inline(__always)
    static func unsignedWidth(_ value: UInt64) -> Int {
        max(1, (64 &- value.leadingZeroBitCount &+ 7) / 8)
    }

    /// Appends the low `width` bytes of `bits`, least significant first.
    @inline(__always)
    static func write(_ bits: UInt64, width: Int, into writer: inout ByteWriter) {
        var rest = bits
        for _ in 0..<width {
            writer.writeUInt8(UInt8(truncatingIfNeeded: rest))
            rest >>= 8
        }
    }

    /// The low bytes of a payload of 1 ... 8 bytes, zero-extended.
    @inline(__always)
    private static func bits(_ payload: UnsafeRawBufferPointer, field index: Int) throws(FormatError) -> UInt64 {
        let width = payload.count
        guard width >= 1, width <= 8 else {
            throw .invalid("field \(index): integer payload of \(width) bytes, expected 1 ... 8")
        }
        var bits: UInt64 = 0
        for offset in stride(from: width &- 1, through: 0, by: -1) { bits = bits << 8 | UInt64(payload[offset]) }
        return bits
    }

    /// Decodes a signed payload, refusing a width longer than the value needs.
    @inline(__always)
    static func readSigned(_ payload: UnsafeRawBufferPointer, field index: Int) throws(FormatError) -> Int64 {
        let raw = try bits(payload, field: index)
        // Safe: the width is 1 ... 8, so the shift is 0 ... 56.
        let shift = UInt64(64 &- 8 &* payload.count)
        let value = Int64(bitPattern: raw << shift) >> shift
        guard signedWidth(value) == payload.count else {
            throw .invalid("field \(index): integer \(value) in \(payload.count) bytes, not its shortest form")
        }
        return value
    }

    /// Decodes an unsigned payload, refusing a width longer than the value needs.
    @inline(__always)
    static func readUnsigned(_ payload: UnsafeRawBufferPointer, field index: Int) throws(FormatError) -> UInt64 {
        let value = try bits(payload, field: index)
        guard unsignedWidth(value) == payload.count else {
            throw .invalid("field \(index): number \(value) in \(payload.count) bytes, not its shortest form")
        }
        return value
    }
}
