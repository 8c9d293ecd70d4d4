/// FNV-1a with a 128-bit state (Fowler, Noll and Vo): a simple, fully specified hash whose value is
/// the same on every machine and in every run, unlike Swift's `Hasher`, which is seeded per process.
/// Model version hashes are computed with it, so that a store can tell whether it was written with
/// the same model.
///
/// `offset basis = 0x6c62272e07bb014262b821756295c58d`, `prime = 2^88 + 2^8 + 0x3b`; for each byte,
/// `hash = (hash XOR byte) × prime mod 2^128`. Test vectors: `""` → the offset basis,
/// `"a"` → `d228cb696f1a8caf78912b704e4a8964`.
///
/// Values are fed as bytes: integers little-endian, strings as a u32 byte count then UTF-8, so that
/// no two sequences of values feed the same bytes. FNV is not a cryptographic hash: it detects
/// accidental change, not forgery.
struct StableHasher {
    static let offsetBasis: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
    static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013b

    /// The hash of everything combined so far.
    private(set) var value: UInt128 = StableHasher.offsetBasis

    /// Feeds one byte.
    mutating func combine(byte: UInt8) {
        value = (value ^ UInt128(byte)) &* Self.prime
    }

    /// Feeds bytes as they are.
    mutating func combine(bytes: some Sequence<UInt8>) {
        for byte in bytes { combine(byte: byte) }
    }

    /// Feeds an integer's bytes, little-endian.
    mutating func combine<T: FixedWidthInteger>(_ integer: T) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) {
            combine(byte: UInt8(truncatingIfNeeded: integer >> shift))
        }
    }

    /// Feeds a 128-bit value's bytes, most significant first (the order of its hexadecimal digits).
    mutating func combine(bigEndian value: UInt128) {
        for shift in stride(from: 120, through: 0, by: -8) { combine(byte: UInt8(truncatingIfNeeded: value >> shift)) }
    }

    /// Feeds a string: its UTF-8 byte count (u32) then its UTF-8 bytes.
    mutating func combine(_ string: String) {
        combine(UInt32(string.utf8.count))
        combine(bytes: string.utf8)
    }

    /// The hash as 32 lowercase hexadecimal digits, most significant first.
    var hexDigest: String { Self.hex(value) }

    /// `value` as 32 lowercase hexadecimal digits, most significant first.
    static func hex(_ value: UInt128) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }
}
