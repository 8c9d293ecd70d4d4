/// Positions for the members of an ordered relationship, chosen so that reordering rewrites few links.
///
/// Each link stores a signed 64-bit position; members sort by it. Given the positions stored now and the
/// new order, the members whose stored positions already increase along the longest possible run keep
/// them (a longest increasing subsequence), and only the others get new positions, spread evenly in the
/// gap between their kept neighbours. Inserting one member in the middle of 10,000 therefore writes one
/// link. Only when a gap is too narrow are all members renumbered (`spacing` apart).
struct OrderedPositions {
    /// The distance between the positions of members appended at the end or numbered afresh.
    static let spacing: Int64 = 1 << 20

    /// The new position of every member that needs one, in the new order.
    ///
    /// - Parameters:
    ///   - order: every member, in the new order; each appears once.
    ///   - stored: the positions stored now, for members that have a link already.
    /// - Returns: `(index in order, position)` for each member whose position must be written.
    static func assign<Member: Hashable>(order: [Member], stored: [Member: Int64]) -> [(index: Int, position: Int64)] {
        let keep = longestIncreasingRun(order.map { stored[$0] })
        var result: [(index: Int, position: Int64)] = []
        var index = 0
        while index < order.count {
            if keep.contains(index) {
                index += 1
                continue
            }
            // A run of members between two kept ones (or an end).
            var end = index
            while end < order.count && !keep.contains(end) { end += 1 }
            let count = Int64(end - index)
            let lower = index > 0 ? stored[order[index - 1]] : nil
            let upper = end < order.count ? stored[order[end]] : nil
            guard let positions = spread(count, above: lower, below: upper) else {
                return renumbered(order.count)
            }
            for (offset, position) in positions.enumerated() { result.append((index + offset, position)) }
            index = end
        }
        return result
    }

    /// Every member numbered afresh: 0, spacing, 2 * spacing, …
    private static func renumbered(_ count: Int) -> [(index: Int, position: Int64)] {
        (0..<count).map { ($0, Int64($0) * spacing) }
    }

    /// `count` increasing positions strictly between `lower` and `upper` (either may be open), or nil when
    /// they do not fit.
    private static func spread(_ count: Int64, above lower: Int64?, below upper: Int64?) -> [Int64]? {
        switch (lower, upper) {
        case (nil, nil):
            return (0..<count).map { $0 * spacing }
        case (let lower?, nil):
            guard lower <= Int64.max - (count + 1) * spacing else { return nil }
            return (1...count).map { lower + $0 * spacing }
        case (nil, let upper?):
            guard upper >= Int64.min + (count + 1) * spacing else { return nil }
            return (1...count).map { upper - (count + 1 - $0) * spacing }
        case (let lower?, let upper?):
            let (width, overflow) = upper.subtractingReportingOverflow(lower)
            guard !overflow, width > count else { return nil }
            let step = width / (count + 1)
            return (1...count).map { lower + $0 * step }
        }
    }

    /// The indexes of a longest strictly increasing subsequence of the non-nil values (patience sorting,
    /// O(n log n)).
    static func longestIncreasingRun(_ values: [Int64?]) -> Set<Int> {
        var tails: [Int] = []  // tails[k]: index of the smallest last value of an increasing run of length k+1
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            guard let value else { continue }
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]]! < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result = Set<Int>()
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}
