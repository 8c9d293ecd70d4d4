/// Where to cut a run of leaf cells so that each part fits a page: one mechanism for the row tree and the index
/// tree. A leaf's size is not the sum of its cells in either: row IDs cost 0 to 8 bytes each depending on how far
/// they spread (FORMAT.md §4.2), and index entries share a prefix that shrinks as they spread (§4.6). So a leaf
/// that overflows by one cell may need more than two leaves, and callers pass what a part costs as `fits`.
enum NodePartition {
    /// The start index of each part, the first being 0: `preferred` when both sides of it fit (a split point the
    /// tree chose, such as the end of a run), else two halves even in cell bytes when both fit (so that later
    /// inserts find room on both sides), else as few greedily packed parts as fit.
    ///
    /// - Parameters:
    ///   - count: cells in the run, at least 2 when it does not fit one leaf.
    ///   - preferred: a cut in `1 ..< count` to take when it works.
    ///   - cellSize: the bytes cell i adds to a leaf besides what its part shares.
    ///   - cellBytes: the sum of every cell's size.
    ///   - fits: whether cells `start ..< end`, whose sizes add up to `cells`, fit one leaf. Adding a cell to a
    ///     part never makes it fit when it did not, and a single cell always fits.
    static func cuts(
        count: Int, preferred: Int? = nil, cellSize: (Int) -> Int, cellBytes: Int,
        fits: (_ start: Int, _ end: Int, _ cells: Int) -> Bool
    ) -> [Int] {
        func cells(_ range: Range<Int>) -> Int { range.reduce(0) { $0 + cellSize($1) } }
        if let preferred, preferred > 0, preferred < count {
            let left = cells(0..<preferred)
            if fits(0, preferred, left), fits(preferred, count, cellBytes - left) { return [0, preferred] }
        }
        let half = cellBytes / 2
        var leftCells = 0
        var split = 0
        while split < count - 1 {
            let cell = cellSize(split)
            if leftCells + cell > half, split > 0 { break }
            leftCells += cell
            split += 1
        }
        if split > 0, fits(0, split, leftCells), fits(split, count, cellBytes - leftCells) { return [0, split] }
        var cuts = [0]
        var start = 0
        var partCells = 0
        for index in 0..<count {
            let cell = cellSize(index)
            if index > start, !fits(start, index + 1, partCells + cell) {
                cuts.append(index)
                start = index
                partCells = 0
            }
            partCells += cell
        }
        return cuts
    }
}
