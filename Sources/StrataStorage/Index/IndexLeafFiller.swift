import StrataFormat

/// Fills index leaves with entries given in strictly increasing order, each as far as a page holds it (the prefix its
/// first and last entries share stored once, §4.6), and hands back each leaf as it closes, with the separator that
/// divides it from the leaf before: the one leaf-filling loop of every bottom-up index build (``PackedIndexEntries``,
/// and a large transaction's ``IndexLoadRuns``, which writes each leaf to the page file as it closes).
struct IndexLeafFiller {
    typealias Leaf = (separator: [UInt8], node: IndexNode)

    private let capacity: Int
    private let owner: UInt64
    private var leaf = IndexEntries()
    private var cellBytes = 0
    /// The first entry of the open leaf.
    private var first: [UInt8] = []
    private var lastOfPreviousLeaf: [UInt8]? = nil

    /// - Parameters:
    ///   - capacity: the body bytes a leaf page holds (``IndexTree/capacity``).
    ///   - owner: the tag of the write transaction the leaves belong to.
    init(capacity: Int, owner: UInt64) {
        self.capacity = capacity
        self.owner = owner
    }

    /// Appends the next entry; returns the leaf this closed, if it did not fit in the open one.
    @inline(__always)
    mutating func add(_ entry: UnsafeRawBufferPointer) -> Leaf? {
        let cell = PageFormat.indexLengthSize + entry.count
        var closed: Leaf? = nil
        if leaf.count > 0 {
            let prefix = first.withUnsafeBytes { Self.commonPrefixLength($0, entry) }
            let size = PageFormat.indexLengthSize + prefix + cellBytes + cell - (leaf.count + 1) * prefix
            if size > capacity { closed = close() }
        }
        if leaf.count == 0 { first = Array(entry) }
        leaf.append(entry)
        cellBytes += cell
        return closed
    }

    /// Closes the open leaf, if it holds an entry.
    mutating func finish() -> Leaf? {
        leaf.count > 0 ? close() : nil
    }

    private mutating func close() -> Leaf {
        let separator = lastOfPreviousLeaf.map { IndexKey.shortestSeparator(after: $0, upTo: first) } ?? []
        lastOfPreviousLeaf = leaf.withEntry(leaf.count - 1) { Array($0) }
        let node = IndexNode(level: 0, keys: leaf, children: [], owner: owner, bodySize: cellBytes)
        leaf = IndexEntries()
        cellBytes = 0
        return (separator, node)
    }

    @inline(__always)
    private static func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let limit = min(a.count, b.count)
        var length = 0
        while length < limit, a[length] == b[length] { length &+= 1 }
        return length
    }
}
