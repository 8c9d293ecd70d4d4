/// Reads a fuzz input as a stream of small values, like LLVM's `FuzzedDataProvider`: every read succeeds,
/// past the end it yields zeros (or fewer bytes), so a harness never has to guard its own parsing.
public struct FuzzInput {
    /// The whole input.
    public let bytes: [UInt8]
    /// The offset of the next byte read.
    public private(set) var index = 0

    /// An input over a copy of `data`.
    public init(_ data: UnsafeRawBufferPointer) { bytes = Array(data) }

    /// An input over `bytes`.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Bytes not read yet.
    public var remaining: Int { bytes.count - index }

    /// Whether every byte was read.
    public var isEmpty: Bool { index >= bytes.count }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// The next 2 bytes, little-endian (zeros past the end).
    public mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// The next 4 bytes, little-endian (zeros past the end).
    public mutating func uint32() -> UInt32 { UInt32(uint16()) | UInt32(uint16()) << 16 }

    /// The next 8 bytes, little-endian (zeros past the end).
    public mutating func uint64() -> UInt64 { UInt64(uint32()) | UInt64(uint32()) << 32 }

    /// A value in `0..<bound` from one byte (bound ≤ 256) or two.
    public mutating func int(below bound: Int) -> Int {
        precondition(bound > 0)
        return bound <= 256 ? Int(byte()) % bound : Int(uint16()) % bound
    }

    /// Whether the next byte is odd.
    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// Up to `count` next bytes (fewer at the end).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, index + max(0, count))
        defer { index = end }
        return Array(bytes[index..<end])
    }

    /// Every byte not read yet.
    public mutating func rest() -> [UInt8] { bytes(remaining) }
}

/// A small deterministic generator (SplitMix64) for the bulk bytes of values, so that inputs stay short.
public struct FuzzRandom {
    private var state: UInt64

    /// A generator seeded with `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` bytes: random, or (when `compressible`) a short repeating pattern that LZ4 shrinks.
    public mutating func bytes(_ count: Int, compressible: Bool = false) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        if compressible {
            let period = Int(next() % 7) + 1
            let base = UInt8(truncatingIfNeeded: next())
            for index in 0..<count { result[index] = base &+ UInt8(index % period) }
        } else {
            var index = 0
            while index < count {
                var word = next()
                for _ in 0..<8 where index < count {
                    result[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return result
    }
}
