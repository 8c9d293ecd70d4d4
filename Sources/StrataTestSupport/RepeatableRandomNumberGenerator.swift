/// A seeded random number generator whose sequence is the same on every platform and run, so that a
/// failing random test replays from its seed (swift-collections' `RepeatableRandomNumberGenerator`).
///
/// The algorithm is SplitMix64 (Steele, Lea and Flood, 2014), the same mixing as `StrataWorkload`'s
/// generator; it is repeated here because test support must not depend on the workload module.
///
/// For example:
///
///     var random = RepeatableRandomNumberGenerator(seed: 42)
///     let size = Int.random(in: 0...100, using: &random)
public struct RepeatableRandomNumberGenerator: RandomNumberGenerator, Sendable {
    /// The generator's whole state.
    public private(set) var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            var word = next()
            for _ in 0..<min(8, count - result.count) {
                result.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return result
    }

    /// A new generator seeded from this one (to give a sub-task its own repeatable sequence).
    public mutating func fork() -> RepeatableRandomNumberGenerator {
        RepeatableRandomNumberGenerator(seed: next())
    }
}
