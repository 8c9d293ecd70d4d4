import Foundation

/// Knobs that a developer sets in the environment to replay or widen the random tests.
///
/// - `STRATA_TEST_SEED`: run each seeded test with this one seed only (decimal or `0x` hex), to replay
///   the failure a test printed.
/// - `STRATA_TEST_ITERATIONS`: how many seeds each seeded test runs (its own default otherwise).
public enum TestEnvironment {
    /// The seed from `STRATA_TEST_SEED`, if set and valid.
    public static var seedOverride: UInt64? {
        guard let text = ProcessInfo.processInfo.environment["STRATA_TEST_SEED"] else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed)
    }

    /// The iteration count from `STRATA_TEST_ITERATIONS`, if set and positive.
    public static var iterationsOverride: Int? {
        guard let text = ProcessInfo.processInfo.environment["STRATA_TEST_ITERATIONS"],
            let count = Int(text.trimmingCharacters(in: .whitespaces)), count > 0
        else { return nil }
        return count
    }

    /// The seeds a seeded test runs: the override alone, or `count` (or `STRATA_TEST_ITERATIONS`)
    /// seeds derived from `base`, so that different tests use different seeds.
    public static func seeds(base: UInt64, count: Int) -> [UInt64] {
        if let seed = seedOverride { return [seed] }
        var generator = RepeatableRandomNumberGenerator(seed: base)
        return (0..<(iterationsOverride ?? count)).map { _ in generator.next() }
    }

    /// Runs `body` once per seed of ``seeds(base:count:)``; when it throws, prints how to replay the
    /// seed before rethrowing.
    ///
    /// - Parameters:
    ///   - base: the seed that derives this test's seeds.
    ///   - count: how many seeds to run unless the environment says otherwise.
    ///   - test: the name printed with a failing seed (the calling function by default).
    ///   - body: the test, given one seed.
    /// - Throws: the first error `body` throws; later seeds do not run.
    public static func forEachSeed(
        base: UInt64,
        count: Int,
        _ test: String = #function,
        _ body: (UInt64) throws -> Void
    ) rethrows {
        for seed in seeds(base: base, count: count) {
            do { try body(seed) } catch {
                print("\(test) failed with seed \(seed): replay with STRATA_TEST_SEED=\(seed) (\(error))")
                throw error
            }
        }
    }
}
