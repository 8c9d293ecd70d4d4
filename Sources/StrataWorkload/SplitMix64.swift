/// The pseudo-random generator of the company workload: SplitMix64 with wrapping arithmetic.
///
/// Every runner of the workload (the `strata demo`, the benchmarks, the SQLite side) draws its data from this
/// generator, so that each of them writes the same bytes. The algorithm is exactly WORKLOAD.md's:
///
/// ```
/// state += 0x9E3779B97F4A7C15; z = state
/// z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
/// z = (z ^ (z >> 27)) * 0x94D049BB133111EB
/// return z ^ (z >> 31)
/// ```
///
/// For example:
///
/// ```swift
/// var generator = SplitMix64(seed: 42)
/// let salary = generator.uniform(30_000, 200_000)
/// let fraction = generator.unit()   // in 0 ..< 1
/// ```
///
/// `SplitMix64` is a value: copying it forks the sequence, which is how ``CompanyWorkload`` hands out its
/// employees lazily from the state left after the departments.
///
/// ## Topics
///
/// ### Creating a generator
/// - ``init(seed:)``
/// - ``state``
///
/// ### Drawing values
/// - ``next()``
/// - ``uniform(_:_:)``
/// - ``unit()``
/// - ``makeName()``
public struct SplitMix64: RandomNumberGenerator, Hashable, Sendable {
    /// The generator's whole state; the next output is a function of it alone.
    public var state: UInt64

    /// Creates a generator whose first ``next()`` mixes `seed &+ 0x9E3779B97F4A7C15`.
    ///
    /// - Parameter seed: The initial state (WORKLOAD.md uses 42 for the company data, 4711 and 4712 for the
    ///   blob pools).
    @inlinable
    public init(seed: UInt64) {
        self.state = seed
    }

    /// Advances the state and returns the next 64 random bits.
    ///
    /// - Returns: The next value of the SplitMix64 sequence.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }

    /// Returns `lo + next() % (hi - lo + 1)`: a value in `lo...hi`, consuming exactly one ``next()``.
    ///
    /// This is WORKLOAD.md's `uniform(lo, hi)` (slightly biased by the modulo, on purpose: every runner must
    /// draw the same values). When `lo...hi` is the whole `UInt64` range, `hi - lo + 1` wraps to 0 and the
    /// result is `next()` itself.
    ///
    /// - Parameters:
    ///   - lo: The smallest possible result.
    ///   - hi: The largest possible result; must not be less than `lo`.
    /// - Returns: A value in `lo...hi`.
    @inlinable
    public mutating func uniform(_ lo: UInt64, _ hi: UInt64) -> UInt64 {
        precondition(lo <= hi, "uniform(\(lo), \(hi)): empty range")
        // Wrapping is safe: hi >= lo, so hi - lo does not underflow; + 1 wraps only for the full range.
        let span = hi &- lo &+ 1
        let bits = next()
        return span == 0 ? bits : lo &+ bits % span
    }

    /// Returns `Double(next() >> 11) * 2^-53`: a uniformly distributed value in `0 ..< 1` with 53 random bits.
    ///
    /// - Returns: A value `x` with `0 <= x < 1`, consuming exactly one ``next()``.
    @inlinable
    public mutating func unit() -> Double {
        Double(next() &>> 11) * 0x1p-53
    }
}
