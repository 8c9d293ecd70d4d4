import StrataFormat

/// The entries of an in-memory index leaf (or the separators of an internal node), packed: the bytes of every entry
/// back to back in one array, and where each ends in another.
///
/// An array of arrays costs an allocation per entry, a pointer to chase (a cache miss) at every comparison of a
/// search, and a retain and a release per entry whenever a transaction copies the node; recovery and durable commits
/// were dominated by those (issue 16). Packed, a node is two allocations, a search reads contiguous memory, and a copy
/// is two `memcpy`s. Inserting in the middle moves the bytes after the entry (a node holds at most a page of them) and
/// shifts the ends after it.
///
/// It is a collection of `[UInt8]` so that code off the hot paths (splits, merges, verification, tests) reads like an
/// array of entries; each element read that way is a new array. Hot paths lend the bytes in place instead:
/// ``withEntry(_:_:)``, ``withEntries(_:)``, ``length(at:)``.
struct IndexEntries: Sendable, Equatable {
    /// Every entry's bytes, in order.
    private(set) var bytes: [UInt8] = []
    /// `ends[i]` is the end of entry `i` in ``bytes``; it starts where entry `i - 1` ends (0 for the first).
    private(set) var ends: [UInt32] = []

    init() {}

    /// The entries of `array`, packed.
    init(_ array: [[UInt8]]) {
        bytes.reserveCapacity(array.reduce(0) { $0 + $1.count })
        ends.reserveCapacity(array.count)
        for entry in array { append(entry) }
    }

    /// The entries of an index leaf page read where it lies, each put together from the prefix they share and its own
    /// suffix straight into the packed bytes (two generic appends an entry cost W8's decoding of an index leaf 260,000
    /// instructions).
    init(_ leaf: IndexLeafPageView) {
        let prefix = leaf.prefix
        let count = leaf.count
        var total = 0
        for index in 0..<count { total &+= prefix.count &+ leaf.suffix(at: index).count }
        var ends = [UInt32](repeating: 0, count: count)
        bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let all = UnsafeMutableRawBufferPointer(buffer)
            var at = 0
            ends.withUnsafeMutableBufferPointer { ends in
                for index in 0..<count {
                    let suffix = leaf.suffix(at: index)
                    // Safe: `total` counted every prefix and suffix copied here.
                    UnsafeMutableRawBufferPointer(rebasing: all[at..<(at &+ prefix.count)]).copyMemory(from: prefix)
                    at &+= prefix.count
                    UnsafeMutableRawBufferPointer(rebasing: all[at..<(at &+ suffix.count)]).copyMemory(from: suffix)
                    at &+= suffix.count
                    ends[index] = UInt32(at)
                }
            }
            initialized = at
        }
        self.ends = ends
    }

    /// Where entry `i` starts in ``bytes`` (`i` may be ``count``: the end of the last entry).
    @inline(__always)
    private func start(_ i: Int) -> Int { i == 0 ? 0 : Int(ends[i &- 1]) }

    /// The number of bytes of entry `i`.
    @inline(__always)
    func length(at i: Int) -> Int { Int(ends[i]) &- start(i) }

    /// The bytes of all entries in `range`, without their lengths.
    func byteCount(of range: Range<Int>) -> Int {
        range.isEmpty ? 0 : Int(ends[range.upperBound - 1]) - start(range.lowerBound)
    }

    /// Calls `body` with the bytes of entry `i`, where they lie (valid only during the call).
    @inline(__always)
    func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let from = start(i)
        let to = Int(ends[i])
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[from..<to])) }
    }

    /// Calls `body` with every entry lent in place (``Lent``), for searches that compare many of them.
    @inline(__always)
    func withEntries<R>(_ body: (Lent) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { bytes in
            try ends.withUnsafeBufferPointer { ends in try body(Lent(bytes: bytes, ends: ends)) }
        }
    }

    /// The entries of a node, lent where they lie.
    struct Lent {
        let bytes: UnsafeRawBufferPointer
        let ends: UnsafeBufferPointer<UInt32>

        var count: Int { ends.count }

        /// Entry `i`.
        @inline(__always)
        subscript(i: Int) -> UnsafeRawBufferPointer {
            let from = i == 0 ? 0 : Int(ends[i &- 1])
            return UnsafeRawBufferPointer(rebasing: bytes[from..<Int(ends[i])])
        }
    }

    /// A copy of the entries in `range`.
    func entries(in range: Range<Int>) -> IndexEntries {
        var copy = IndexEntries()
        guard !range.isEmpty else { return copy }
        let from = start(range.lowerBound)
        copy.bytes = Array(bytes[from..<Int(ends[range.upperBound - 1])])
        copy.ends = ends[range].map { $0 - UInt32(from) }
        return copy
    }

    /// Appends an entry.
    mutating func append(_ entry: [UInt8]) {
        bytes.append(contentsOf: entry)
        ends.append(UInt32(bytes.count))
    }

    /// Appends an entry lent where it lies (a bottom-up build from packed entries: no array per entry).
    mutating func append(_ entry: UnsafeRawBufferPointer) {
        // As typed bytes, the append is one copy (a raw buffer's went byte by byte).
        bytes.append(contentsOf: entry.assumingMemoryBound(to: UInt8.self))
        ends.append(UInt32(bytes.count))
    }

    /// Makes room for `count` entries of `byteCount` bytes in all.
    mutating func reserveCapacity(entries count: Int, bytes byteCount: Int) {
        bytes.reserveCapacity(byteCount)
        ends.reserveCapacity(count)
    }

    /// Appends the entries of `other`.
    mutating func append(contentsOf other: IndexEntries) {
        let base = UInt32(bytes.count)
        bytes.append(contentsOf: other.bytes)
        ends.append(contentsOf: other.ends.lazy.map { $0 + base })
    }

    /// Inserts an entry before entry `i` (`i` may be ``count``).
    mutating func insert(_ entry: [UInt8], at i: Int) {
        let from = start(i)
        bytes.insert(contentsOf: entry, at: from)
        ends.insert(UInt32(from + entry.count), at: i)
        shiftEnds(after: i, by: entry.count)
    }

    /// Removes entry `i` and returns it.
    @discardableResult
    mutating func remove(at i: Int) -> [UInt8] {
        let removed = self[i]
        removeEntry(at: i)
        return removed
    }

    /// Removes entry `i`: its bytes leave, the ends after it move back (no array made, unlike ``remove(at:)``).
    mutating func removeEntry(at i: Int) {
        let from = start(i)
        let length = Int(ends[i]) &- from
        bytes.removeSubrange(from..<(from &+ length))
        ends.remove(at: i)
        shiftEnds(after: i &- 1, by: -length)
    }

    /// Removes the entries in `range`: their bytes leave in one move, and the ends after them move back once.
    mutating func removeEntries(in range: Range<Int>) {
        guard !range.isEmpty else { return }
        let from = start(range.lowerBound)
        let length = Int(ends[range.upperBound &- 1]) &- from
        bytes.removeSubrange(from..<(from &+ length))
        ends.removeSubrange(range)
        shiftEnds(after: range.lowerBound &- 1, by: -length)
    }

    /// Adds `delta` to the ends of the entries after entry `i`.
    @inline(__always)
    private mutating func shiftEnds(after i: Int, by delta: Int) {
        guard delta != 0, i + 1 < ends.count else { return }
        // Wrapping arithmetic on the UInt32s themselves (a negative delta wraps to the same result): a conversion
        // through Int checked every end for range, and that kept the loop from being vectorised (1,200 instructions
        // a mid-leaf insert of a single-row commit's index entry).
        let step = UInt32(truncatingIfNeeded: delta)
        ends.withUnsafeMutableBufferPointer { ends in
            for position in (i + 1)..<ends.count { ends[position] &+= step }
        }
    }
}

extension IndexEntries: RandomAccessCollection, RangeReplaceableCollection {
    var startIndex: Int { 0 }
    var endIndex: Int { ends.count }

    /// Entry `position`, as a new array (hot paths use ``withEntry(_:_:)``); setting it replaces the entry.
    subscript(position: Int) -> [UInt8] {
        get { Array(bytes[start(position)..<Int(ends[position])]) }
        set { replaceSubrange(position..<(position + 1), with: CollectionOfOne(newValue)) }
    }

    mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == [UInt8] {
        let from = start(subrange.lowerBound)
        let to = subrange.isEmpty ? from : Int(ends[subrange.upperBound - 1])
        var newBytes: [UInt8] = []
        var newEnds: [UInt32] = []
        newEnds.reserveCapacity(newElements.count)
        for entry in newElements {
            newBytes.append(contentsOf: entry)
            newEnds.append(UInt32(from + newBytes.count))
        }
        bytes.replaceSubrange(from..<to, with: newBytes)
        ends.replaceSubrange(subrange, with: newEnds)
        shiftEnds(after: subrange.lowerBound + newEnds.count - 1, by: newBytes.count - (to - from))
    }
}
