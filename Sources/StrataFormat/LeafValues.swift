/// A leaf's values in memory, packed the way a leaf page packs them (FORMAT.md §4.2): one byte array holding the
/// values back to back (an overflow reference as its 12 bytes), plus where each ends.
///
/// A leaf decoded from a page is two copies of the page's arrays rather than one allocation per row, a copy for a
/// write transaction is two buffer copies, and freeing a leaf frees two buffers. A value may be longer than the
/// page's inline limit here: the checkpoint moves such values to overflow chains as it writes the leaf.
///
/// A removal moves the shorter side of the bytes over the hole: the values after it back, or those before it forward,
/// leaving unused bytes at the front (`leading`). Each removal in a cold leaf moved half its bytes before; W8's
/// deletes spent 15% of their time in that move (perf at N = 1,000,000).
public struct LeafValues: Sendable {
    /// The values' bytes, back to back from `leading` on.
    private var bytes: [UInt8]
    /// Value i ends at `ends[i] >> 1` of `bytes`; bit 0 marks an overflow reference.
    private var ends: [Int]
    /// Where the first value starts in `bytes`: the bytes before it are unused (left by removals near the front).
    private var leading: Int

    /// No values.
    public init() {
        bytes = []
        ends = []
        leading = 0
    }

    /// The values of `values`, in order.
    public init<S: Sequence>(_ values: S) where S.Element == LeafValue {
        self.init()
        for value in values { append(value) }
    }

    /// A leaf page's values: its data area as it lies and its value ends (a page verified by
    /// ``LeafPage/validate(_:header:)``).
    init(_ view: LeafPageView) {
        let count = view.count
        let data = view.data
        bytes = Array(data)
        leading = 0
        // Most leaves hold no overflow reference: their ends are widened in a loop the compiler vectorises, and only
        // a leaf with one reads its bits (a leaf's first decode in W7 and W8 spent about 2,200 instructions here).
        let allInline = !view.hasOverflowBit
        ends = [Int](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count { buffer[index] = view.valueEnd(at: index) &<< 1 }
            if !allInline {
                for index in 0..<count where view.isOverflow(index) { buffer[index] |= 1 }
            }
            initialized = count
        }
    }

    public var count: Int { ends.count }
    public var isEmpty: Bool { ends.isEmpty }

    @inline(__always)
    private func start(_ index: Int) -> Int { index == 0 ? leading : ends[index &- 1] >> 1 }

    @inline(__always)
    private func end(_ index: Int) -> Int { ends[index] >> 1 }

    /// Whether value `index` is an overflow reference.
    @inline(__always)
    public func isOverflow(_ index: Int) -> Bool { ends[index] & 1 != 0 }

    /// The length of value `index` (an overflow reference's total length).
    @inline(__always)
    public func length(_ index: Int) -> Int {
        guard !isOverflow(index) else {
            return withCell(index) { cell in
                if case .overflow(_, let length) = cell { return length }
                return 0
            }
        }
        return end(index) &- start(index)
    }

    /// The bytes value `index` takes in a leaf page besides its row ID (see ``LeafValue/cellSize(maximumInline:)``).
    @inline(__always)
    public func cellSize(_ index: Int, maximumInline: Int) -> Int {
        let length = end(index) &- start(index)
        return isOverflow(index) || length > maximumInline
            ? PageFormat.overflowCellSize : PageFormat.leafCellHeaderSize &+ length
    }

    /// The sum of ``cellSize(_:maximumInline:)`` over `range`.
    public func cellBytes(_ range: Range<Int>, maximumInline: Int) -> Int {
        var total = 0
        for index in range { total &+= cellSize(index, maximumInline: maximumInline) }
        return total
    }

    /// Whether an inline value is longer than `maximumInline` (one the checkpoint moves to an overflow chain), read
    /// from the value ends alone.
    public func hasInlineValue(longerThan maximumInline: Int) -> Bool {
        // The longest inline value, without an early exit: a loop the compiler vectorises (the checkpoint asks this of
        // every leaf it writes, and leaves with a long value are rare).
        ends.withUnsafeBufferPointer { buffer in
            guard let ends = buffer.baseAddress else { return false }
            var previous = leading
            var longest = 0
            for index in 0..<buffer.count {
                let stored = ends[index]
                // All ones for an inline value, zero for an overflow reference.
                let inline = (stored & 1) &- 1
                longest = Swift.max(longest, (stored &>> 1 &- previous) & inline)
                previous = stored &>> 1
            }
            return longest > maximumInline
        }
    }

    /// Calls `body` with value `index` where it lies (its bytes lent for the call).
    ///
    /// The overflow reference is decoded outside the closure that lends the bytes: built inside it, next to a
    /// throwing `body`, Swift 6.3 at -Onone miscompiles the closure (a misaligned stack and a crash when `body`
    /// throws).
    @inline(__always)
    public func withCell<R>(_ index: Int, _ body: (LeafCell) throws -> R) rethrows -> R {
        if isOverflow(index) { return try body(overflowReference(index)) }
        let range = start(index)..<end(index)
        return try bytes.withUnsafeBytes { try body(.inline(UnsafeRawBufferPointer(rebasing: $0[range]))) }
    }

    /// Value `index`, an overflow reference, decoded.
    private func overflowReference(_ index: Int) -> LeafCell {
        let at = start(index)
        return bytes.withUnsafeBytes { all in
            .overflow(
                firstPage: UInt64(littleEndian: all.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                length: Int(UInt32(littleEndian: all.loadUnaligned(fromByteOffset: at &+ 8, as: UInt32.self))))
        }
    }

    /// Value `index`, copied out.
    public subscript(index: Int) -> LeafValue { withCell(index) { LeafValue($0) } }

    // MARK: - Changing

    /// The bytes a value takes here, and whether it is an overflow reference.
    @inline(__always)
    private static func stored(_ value: LeafValue) -> (length: Int, overflow: Bool) {
        switch value {
        case .bytes(let bytes): (bytes.count, false)
        case .overflow: (LeafPage.overflowReferenceSize, true)
        }
    }

    /// Writes `value`'s stored bytes at `offset` of `bytes` (room already made).
    @inline(__always)
    private mutating func write(_ value: LeafValue, at offset: Int) {
        bytes.withUnsafeMutableBytes { all in
            switch value {
            case .bytes(let source):
                source.withUnsafeBytes { source in
                    guard !source.isEmpty else { return }
                    UnsafeMutableRawBufferPointer(rebasing: all[offset..<(offset &+ source.count)]).copyMemory(
                        from: source)
                }
            case .overflow(let firstPage, let length):
                all.storeBytes(of: firstPage.littleEndian, toByteOffset: offset, as: UInt64.self)
                all.storeBytes(of: UInt32(length).littleEndian, toByteOffset: offset &+ 8, as: UInt32.self)
            }
        }
    }

    /// Replaces the bytes `offset ..< offset + removing` with `inserting` new (uninitialised) bytes, moving the
    /// rest, and moves the ends from `firstEnd` on by the difference.
    private mutating func resize(at offset: Int, removing: Int, inserting: Int, firstEnd: Int) {
        let change = inserting &- removing
        guard change != 0 else { return }
        let tail = bytes.count &- (offset &+ removing)
        if change > 0 { bytes.append(contentsOf: repeatElement(0, count: change)) }
        bytes.withUnsafeMutableBytes { all in
            guard tail > 0, let base = all.baseAddress else { return }
            (base + (offset &+ inserting)).copyMemory(from: base + (offset &+ removing), byteCount: tail)
        }
        if change < 0 { bytes.removeLast(-change) }
        let shift = change << 1
        ends.withUnsafeMutableBufferPointer { ends in
            for index in firstEnd..<ends.count { ends[index] &+= shift }
        }
    }

    /// Makes room for `count` values of `byteCount` bytes in all, so that appending them allocates nothing more.
    public mutating func reserveCapacity(byteCount: Int, count: Int) {
        bytes.reserveCapacity(byteCount)
        ends.reserveCapacity(count)
    }

    /// Adds `value` after the last.
    public mutating func append(_ value: LeafValue) {
        if case .bytes(let source) = value {
            // Copied in one step (the zeros below went through a generic append: 200 instructions a value).
            bytes.append(contentsOf: source)
            ends.append(bytes.count << 1)
            return
        }
        let (length, overflow) = Self.stored(value)
        let offset = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: length))
        write(value, at: offset)
        ends.append((offset &+ length) << 1 | (overflow ? 1 : 0))
    }

    /// Adds an inline value, its bytes copied from where they lie.
    public mutating func append(inline value: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: value.assumingMemoryBound(to: UInt8.self))
        ends.append(bytes.count << 1)
    }

    /// Inserts `value` at `index`, moving the values from there on.
    public mutating func insert(_ value: LeafValue, at index: Int) {
        guard index < count else { return append(value) }
        let (length, overflow) = Self.stored(value)
        let offset = start(index)
        resize(at: offset, removing: 0, inserting: length, firstEnd: index)
        write(value, at: offset)
        ends.insert((offset &+ length) << 1 | (overflow ? 1 : 0), at: index)
    }

    /// Replaces value `index` with `value`.
    public mutating func replace(_ index: Int, with value: LeafValue) {
        let (length, overflow) = Self.stored(value)
        let offset = start(index)
        resize(at: offset, removing: end(index) &- offset, inserting: length, firstEnd: index &+ 1)
        write(value, at: offset)
        ends[index] = (offset &+ length) << 1 | (overflow ? 1 : 0)
    }

    /// Removes value `index`, moving the shorter side of the values over it.
    public mutating func remove(at index: Int) {
        let offset = start(index)
        let length = end(index) &- offset
        let tail = bytes.count &- (offset &+ length)
        let head = offset &- leading
        if head < tail {
            // The bytes before the value move forward over it, and their ends with them; `leading` grows.
            if length > 0 {
                bytes.withUnsafeMutableBytes { all in
                    guard head > 0, let base = all.baseAddress else { return }
                    (base + (leading &+ length)).copyMemory(from: base + leading, byteCount: head)
                }
                leading &+= length
                let shift = length << 1
                ends.withUnsafeMutableBufferPointer { ends in
                    for at in 0..<index { ends[at] &+= shift }
                }
            }
            ends.remove(at: index)
            // Unused bytes never outgrow the values: a leaf that loses rows at its front and gains them at its end (a
            // small queue table) would otherwise grow its buffer with every removal.
            if leading > bytes.count &- leading { dropLeading() }
            return
        }
        // The bytes after the value move back; the ends after it move down a place and by its length, in one pass
        // (a resize then `ends.remove(at:)` went over them twice).
        if length > 0 {
            bytes.withUnsafeMutableBytes { all in
                guard tail > 0, let base = all.baseAddress else { return }
                (base + offset).copyMemory(from: base + (offset &+ length), byteCount: tail)
            }
            bytes.removeLast(length)
        }
        let shift = length << 1
        ends.withUnsafeMutableBufferPointer { ends in
            var at = index
            while at &+ 1 < ends.count {
                ends[at] = ends[at &+ 1] &- shift
                at &+= 1
            }
        }
        ends.removeLast()
    }

    /// Moves the values to the buffer's start, freeing the unused bytes before them.
    private mutating func dropLeading() {
        let cut = leading
        bytes.removeSubrange(..<cut)
        leading = 0
        let shift = cut << 1
        ends.withUnsafeMutableBufferPointer { ends in
            for index in ends.indices { ends[index] &-= shift }
        }
    }

    /// The bytes the buffer holds, unused leading ones included (tests bound them).
    var storedByteCount: Int { bytes.count }

    /// Values `range`, as their own packed values.
    public func extracting(_ range: Range<Int>) -> LeafValues {
        var part = LeafValues()
        guard !range.isEmpty else { return part }
        let base = start(range.lowerBound)
        part.bytes = Array(bytes[base..<end(range.upperBound &- 1)])
        part.leading = 0
        let shift = base << 1
        part.ends = ends[range].map { $0 &- shift }
        return part
    }

    /// Keeps the first `count` values.
    public mutating func removeSuffix(from index: Int) {
        guard index < count else { return }
        bytes.removeSubrange(start(index)...)
        ends.removeSubrange(index...)
    }

    /// Removes the first `count` values.
    public mutating func removePrefix(_ count: Int) {
        guard count > 0 else { return }
        leading = start(count)
        ends.removeSubrange(..<count)
        dropLeading()
    }

    /// Removes every value.
    public mutating func removeAll(keepingCapacity: Bool = false) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
        ends.removeAll(keepingCapacity: keepingCapacity)
        leading = 0
    }

    /// Adds `other`'s values after the last.
    public mutating func append(contentsOf other: LeafValues) {
        // `other`'s unused leading bytes are not copied: its ends move by what precedes its first value here.
        let shift = (bytes.count &- other.leading) << 1
        bytes.append(contentsOf: other.bytes[other.leading...])
        ends.reserveCapacity(ends.count &+ other.count)
        for end in other.ends { ends.append(end &+ shift) }
    }

    /// Puts `other`'s values before the first.
    public mutating func prepend(contentsOf other: LeafValues) {
        var joined = other
        joined.append(contentsOf: self)
        self = joined
    }

    // MARK: - Encoding

    /// Writes the values as a leaf page lays them out (FORMAT.md §4.2): their bytes at `data`, each one's end as 2
    /// bytes at `ends` + 2 i, and the overflow bit of each at `bits` (bits the caller zeroed). Returns the bytes
    /// written at `data`. Every value must fit inline or be an overflow reference, and the page must hold them.
    ///
    /// One loop over the ends as they lie: asked value by value through a closure, the checkpoint spent about 3,700
    /// instructions a leaf here (W8's callgrind, 10,434 leaves).
    func writePageLayout(
        into page: UnsafeMutableRawBufferPointer, data: Int, ends endsAt: Int, bits: Int, maximumInline: Int
    ) -> Int {
        let count = ends.count
        let leading = leading
        let length = bytes.count &- leading
        precondition(
            endsAt >= 0 && endsAt + 2 * count <= page.count && bits >= 0 && bits + (count + 7) / 8 <= page.count
                && data >= 0 && data + length <= page.count, "leaf does not fit its page")
        bytes.withUnsafeBytes { source in
            guard length > 0 else { return }
            UnsafeMutableRawBufferPointer(rebasing: page[data..<(data + length)]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: source[leading...]))
        }
        // Ends in the page count from the first value's start.
        ends.withUnsafeBufferPointer { ends in
            let out = page.baseAddress! + endsAt
            var start = 0
            var longest = 0
            var marks = 0
            for index in 0..<count {
                let stored = ends[index]
                let end = stored &>> 1 &- leading
                // An overflow reference's 12 bytes are below every page's limit: no exception needed here.
                longest = Swift.max(longest, end &- start)
                marks |= stored
                out.storeBytes(
                    of: UInt16(truncatingIfNeeded: end).littleEndian, toByteOffset: index &<< 1, as: UInt16.self)
                start = end
            }
            precondition(longest <= maximumInline, "long values must be moved to overflow pages first")
            guard marks & 1 != 0 else { return }
            for index in 0..<count where ends[index] & 1 != 0 {
                page[bits + index / 8] |= 1 << (index % 8)
            }
        }
        return length
    }
}

extension LeafValues: Equatable {
    /// The same values (bytes and kinds) in the same order, wherever each side's first value starts.
    public static func == (lhs: LeafValues, rhs: LeafValues) -> Bool {
        guard lhs.ends.count == rhs.ends.count, lhs.bytes[lhs.leading...] == rhs.bytes[rhs.leading...] else {
            return false
        }
        let (left, right) = (lhs.leading << 1, rhs.leading << 1)
        return zip(lhs.ends, rhs.ends).allSatisfy { $0 &- left == $1 &- right }
    }
}

extension LeafValues: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
}

extension LeafValues: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: LeafValue...) { self.init(elements) }
}
