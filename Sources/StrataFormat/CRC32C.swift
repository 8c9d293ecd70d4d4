import CCRC32C

/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected as 0x82F63B78): the one checksum of every
/// Strata file (header, WAL records, pages). Table-driven, eight bytes per step ("slicing-by-8").
///
/// On CPUs with CRC instructions (x86-64 SSE 4.2) the work goes to them through `CCRC32C`, about ten times
/// faster than the tables; both paths give the same value for every input (tested).
///
/// Stored checksums are *masked* (``mask(_:)``), as LevelDB does, because computing the CRC of
/// bytes that themselves contain CRCs is prone to accidental matches.
public enum CRC32C {
    /// The CRC-32C of `bytes`, continuing from `crc` (the value a previous call returned).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard hardwareAvailable, let base = bytes.baseAddress else { return tableChecksum(bytes, continuing: crc) }
        return ~ccrc32c_hardware_update(~crc, base, bytes.count)
    }

    /// Whether ``checksum(_:continuing:)`` uses the CPU's CRC instructions (decided once per process).
    public static let hardwareAvailable = ccrc32c_hardware_available() != 0

    /// The table-driven CRC-32C: the reference the hardware path is tested against, and the path on other CPUs.
    public static func tableChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var state = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            // Safe: every load below stays within [0, count) because the loop runs while 8 bytes remain.
            while count &- index >= 8 {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let low = UInt32(truncatingIfNeeded: word) ^ state
                let high = UInt32(truncatingIfNeeded: word >> 32)
                state =
                    table[7 &* 256 &+ Int(low & 0xFF)]
                    ^ table[6 &* 256 &+ Int((low >> 8) & 0xFF)]
                    ^ table[5 &* 256 &+ Int((low >> 16) & 0xFF)]
                    ^ table[4 &* 256 &+ Int(low >> 24)]
                    ^ table[3 &* 256 &+ Int(high & 0xFF)]
                    ^ table[2 &* 256 &+ Int((high >> 8) & 0xFF)]
                    ^ table[1 &* 256 &+ Int((high >> 16) & 0xFF)]
                    ^ table[Int(high >> 24)]
                index &+= 8
            }
            while index < count {
                state = table[Int((state ^ UInt32(bytes[index])) & 0xFF)] ^ (state >> 8)
                index &+= 1
            }
        }
        return ~state
    }

    /// The CRC-32C of an array of bytes.
    public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    /// The CRC-32C of the little-endian bytes of an integer (used to seed a checksum with context).
    public static func checksum<T: FixedWidthInteger>(of value: T, continuing crc: UInt32 = 0) -> UInt32 {
        withUnsafeBytes(of: value.littleEndian) { checksum($0, continuing: crc) }
    }

    private static let maskDelta: UInt32 = 0xA282_EAD8

    /// The stored form of a checksum: rotated right by 15 bits plus a constant.
    public static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ maskDelta
    }

    /// The checksum a stored (masked) value stands for.
    public static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- maskDelta
        return (rotated >> 17) | (rotated << 15)
    }

    /// 8 tables of 256 entries: table k gives the CRC of a byte followed by k zero bytes.
    private static let tables: [UInt32] = {
        let polynomial: UInt32 = 0x82F6_3B78
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()
}
