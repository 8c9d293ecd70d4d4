import StrataFormat

/// Where to cut a run of leaf cells so that each part fits a page. A leaf's size is not the sum of its cells:
/// its row IDs cost 0 to 8 bytes each depending on how far they spread (FORMAT.md §4.2), so the split of a leaf
/// and the packing of a bulk load both ask ``LeafPage/bodySize(count:first:last:cellBytes:)``.
enum LeafPartition {
    /// The start index of each part, the first being 0: two halves even in cell bytes when both fit (what a
    /// split wants, so that later inserts find room on both sides), else as few greedily packed parts as fit.
    ///
    /// - Parameters:
    ///   - count: cells in the run, at least 2 when it does not fit one leaf.
    ///   - key: the row ID of cell i, increasing.
    ///   - cellSize: the bytes cell i takes besides its row ID (``LeafValue/cellSize(maximumInline:)``).
    ///   - cellBytes: the sum of every cell's size.
    ///   - capacity: the bytes a leaf body may take.
    static func cuts(
        count: Int, key: (Int) -> UInt64, cellSize: (Int) -> Int, cellBytes: Int, capacity: Int
    ) -> [Int] {
        func size(_ start: Int, _ end: Int, _ cells: Int) -> Int {
            LeafPage.bodySize(count: end - start, first: key(start), last: key(end - 1), cellBytes: cells)
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
        if split > 0, size(0, split, leftCells) <= capacity, size(split, count, cellBytes - leftCells) <= capacity {
            return [0, split]
        }
        // Greedy: a part grows while it fits; its size only grows with each cell (its row IDs can only spread),
        // and a single cell always fits (values longer than a quarter page live in overflow chains).
        var cuts = [0]
        var start = 0
        var cells = 0
        for index in 0..<count {
            let cell = cellSize(index)
            if index > start, size(start, index + 1, cells + cell) > capacity {
                cuts.append(index)
                start = index
                cells = 0
            }
            cells += cell
        }
        return cuts
    }
}
