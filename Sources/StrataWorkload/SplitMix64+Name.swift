extension SplitMix64 {
    /// The lengths ``makeName()`` draws from, in bytes (all names are ASCII letters): `12...20`.
    public static let nameLengths: ClosedRange<Int> = 12...20

    /// Makes a workload name: WORKLOAD.md's `makeName`.
    ///
    /// The length is `uniform(12, 20)`, then each letter is `uniform(0, 25)` over `a...z`, and the first letter
    /// is upper-case; so a name is 12 to 20 ASCII letters, such as `"Bkquuxmrgvcyv"`. It consumes
    /// `1 + length` values of the generator.
    ///
    /// - Returns: A new name.
    public mutating func makeName() -> String {
        let length = Int(uniform(UInt64(Self.nameLengths.lowerBound), UInt64(Self.nameLengths.upperBound)))
        return String(unsafeUninitializedCapacity: length) { buffer in
            for index in 0..<length {
                // uniform(0, 25) < 26, so the sum stays within UInt8 and within "a"..."z".
                let letter = UInt8(truncatingIfNeeded: uniform(0, 25)) &+ UInt8(ascii: "a")
                buffer[index] = index == 0 ? letter &- 0x20 : letter  // 0x20: ASCII lower to upper case.
            }
            return length
        }
    }
}
