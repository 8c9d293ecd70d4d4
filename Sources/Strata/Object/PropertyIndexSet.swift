/// A set of property indexes of one entity (attributes or relationships): which ones an object changed.
///
/// The first 64 indexes are bits of one word, so recording a change allocates nothing and hashes nothing (a
/// `Set<Int>` per object allocated and grew its storage on the first few changes of every new object); larger
/// entities keep the rest in a set. Iterates in ascending order.
struct PropertyIndexSet: Sequence, Equatable, ExpressibleByArrayLiteral {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    init() {}

    init(arrayLiteral elements: Int...) { self.init(elements) }

    init(_ elements: some Sequence<Int>) {
        for element in elements { insert(element) }
    }

    /// The set of the indexes below 64 whose bits `bits` has, and of `high` (each 64 or more): what ``bits`` and
    /// ``highIndexes`` give back. A holder of many sets keeps the word and only the rare rest apart
    /// (``ObjectState``).
    init(bits: UInt64, high: Set<Int>) {
        low = bits
        self.high = high
    }

    /// The set of the indexes below 64 whose bits `bits` has.
    init(bits: UInt64) { low = bits }

    /// The indexes below 64, one bit each.
    var bits: UInt64 { low }

    /// The indexes of 64 or more.
    var highIndexes: Set<Int> { high }

    var isEmpty: Bool { low == 0 && high.isEmpty }

    var count: Int { low.nonzeroBitCount + high.count }

    func contains(_ index: Int) -> Bool {
        index < 64 ? low & (1 << UInt64(index)) != 0 : high.contains(index)
    }

    mutating func insert(_ index: Int) {
        precondition(index >= 0, "a property index is never negative")
        if index < 64 { low |= 1 << UInt64(index) } else { high.insert(index) }
    }

    /// The indexes of the set that `other` does not hold.
    func subtracting(_ other: PropertyIndexSet) -> PropertyIndexSet {
        var result = PropertyIndexSet()
        result.low = low & ~other.low
        if !high.isEmpty { result.high = high.subtracting(other.high) }
        return result
    }

    mutating func remove(_ index: Int) {
        if index < 64 { low &= ~(1 << UInt64(index)) } else { high.remove(index) }
    }

    func makeIterator() -> Iterator { Iterator(low: low, high: high.sorted()) }

    struct Iterator: IteratorProtocol {
        var low: UInt64
        var high: [Int]
        var highPosition = 0

        init(low: UInt64, high: [Int]) {
            self.low = low
            self.high = high
        }

        mutating func next() -> Int? {
            if low != 0 {
                let index = low.trailingZeroBitCount
                low &= low - 1
                return index
            }
            guard highPosition < high.count else { return nil }
            defer { highPosition += 1 }
            return high[highPosition]
        }
    }
}
