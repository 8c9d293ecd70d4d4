/// A B+tree leaf page: rows in increasing row-ID order (FORMAT.md, "Leaf page"), laid out to be searched where
/// it lies and to spend about two bytes a row besides the values.
///
/// ```
/// body := firstRowID:u64 rowIDs valueEnd:u16[itemCount] overflowBits:u8[⌈itemCount / 8⌉] data
/// rowIDs := (nothing) | delta:uW[itemCount] | bitmapLength:u16 bitmap[bitmapLength]
/// ```
/// The header's `flags` name the row IDs' form, always the narrowest for the leaf (``LeafRowIDs``): 0 for a dense
/// leaf (row i is `firstRowID + i`, nothing stored), 1, 2, 4 or 8 for the width of the row IDs' offsets from the
/// first, ``bitmapFlags`` for a bitmap with bit `rowID − firstRowID` set for each row present. Value i spans
/// `valueEnd[i − 1] ..< valueEnd[i]` of the data area (`valueEnd[−1] = 0`); bit i of the overflow bits (bit i % 8
/// of byte i / 8) marks a value that is an overflow reference, 12 bytes `firstOverflowPage:u64 totalLength:u32`.
/// `extra` is the level, 0.
public enum LeafPage {
    /// The bytes of an overflow reference in the data area: first page and total length.
    @usableFromInline static let overflowReferenceSize = 12
    /// The first row ID before the row IDs' form.
    @usableFromInline static let firstRowIDSize = 8
    /// Bytes of one value end.
    @usableFromInline static let valueEndSize = 2
    /// The header's flags of a leaf whose row IDs are a bitmap.
    public static let bitmapFlags: UInt8 = 0x80
    /// Bytes of a bitmap's length, before the bitmap.
    static let bitmapLengthSize = 2
    /// The longest bitmap, in bytes (its length is a u16).
    static let maximumBitmapLength = 0xFFFF

    /// The body a leaf takes: `count` rows from `first` to `last` whose cells (values plus value ends,
    /// ``LeafValue/cellSize(maximumInline:)``) add up to `cellBytes`.
    @inline(__always)
    public static func bodySize(count: Int, first: UInt64, last: UInt64, cellBytes: Int) -> Int {
        guard count > 0 else { return firstRowIDSize }
        return firstRowIDSize &+ LeafRowIDs(count: count, first: first, last: last).size(count: count)
            &+ (count &+ 7) / 8 &+ cellBytes
    }

    /// Where in its page the value of row `rowID` most likely starts, when all the parent knows of the leaf is that its
    /// rows lie in `first..<end`: the offset for a leaf holding all of them, dense, its data filling the page. A guess
    /// to hint a cache line before the leaf is read, never an offset to read from; nil when `rowID` is outside the
    /// range or the range holds more rows than any leaf does.
    @inlinable
    public static func likelyValueOffset(of rowID: UInt64, first: UInt64, end: UInt64, pageSize: Int) -> Int? {
        guard rowID >= first, rowID < end, end &- first < UInt64(truncatingIfNeeded: pageSize) >> 1 else { return nil }
        let count = Int(truncatingIfNeeded: end &- first)
        let dataStart = PageFormat.headerSize &+ firstRowIDSize &+ count &* valueEndSize &+ (count &+ 7) >> 3
        guard dataStart < pageSize else { return nil }
        return dataStart &+ Int(truncatingIfNeeded: rowID &- first) &* (pageSize &- dataStart) / count
    }

    /// Encodes a leaf into `page` (pageSize bytes, zeroed) and seals it.
    /// Every inline value must fit inline (callers move long values to overflow chains first).
    ///
    /// - Parameters:
    ///   - keys: the row IDs, strictly increasing.
    ///   - values: one value per key; the leaf must fit the page (a precondition).
    ///   - page: the whole page buffer (page-size bytes, zeroed).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        keys: [UInt64], values: LeafValues, into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        precondition(keys.count == values.count)
        let maximumInline = PageFormat.maximumInlineValue(pageSize: page.count)
        let count = keys.count
        let first = keys.first ?? 0
        let rowIDs = LeafRowIDs(count: count, first: first, last: keys.last ?? 0)
        let body = PageFormat.headerSize
        let ends = body + firstRowIDSize + rowIDs.size(count: count)
        let bits = ends + valueEndSize * count
        let dataStart = bits + (count + 7) / 8
        precondition(dataStart <= page.count, "leaf does not fit its page")
        page.storeLE(first, at: body)
        let rowIDsStart = body + firstRowIDSize
        switch rowIDs {
        case .dense: break
        case .deltas(let width):
            for index in 0..<count {
                let delta = keys[index] &- first
                let at = rowIDsStart + width * index
                switch width {
                case 1: page[at] = UInt8(delta)
                case 2: page.storeLE(UInt16(delta), at: at)
                case 4: page.storeLE(UInt32(delta), at: at)
                default: page.storeLE(delta, at: at)
                }
            }
        case .bitmap(let length):
            page.storeLE(UInt16(length), at: rowIDsStart)
            let bitmap = rowIDsStart + bitmapLengthSize
            for key in keys {
                let bit = Int(key &- first)
                page[bitmap + bit >> 3] |= 1 << (bit & 7)
            }
        }
        // The values lie in memory as they lie in the page: one copy, then their ends and overflow bits.
        let dataLength = values.writePageLayout(
            into: page, data: dataStart, ends: ends, bits: bits, maximumInline: maximumInline)
        PageHeader(
            type: .leaf, flags: rowIDs.flags, itemCount: count, pageNumber: pageNumber, generation: generation,
            bodyLength: dataStart + dataLength - body, extra: 0
        ).seal(page, salt: salt)
    }

    /// Checks every reader rule of a verified leaf page without allocating: after it, a ``LeafPageView`` of the
    /// page needs no further checks.
    ///
    /// - Throws: ``FormatError`` if the row IDs' form is unknown or not the narrowest, the arrays or values overrun
    ///   the body, values do not follow each other back to back and fill the body, row IDs are not strictly
    ///   increasing, a bitmap does not start and end with a row or holds another number of rows, an inline value is
    ///   longer than the inline limit, an overflow bit is set past the last row, or an overflow reference is
    ///   malformed or does not point to an earlier page.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .leaf, header.extra == 0 else { throw .invalid("not a leaf page") }
        let flags = header.flags
        guard flags == 0 || flags == 1 || flags == 2 || flags == 4 || flags == 8 || flags == bitmapFlags else {
            throw .invalid("leaf row IDs of form \(flags)")
        }
        let maximumInline = PageFormat.maximumInlineValue(pageSize: page.count)
        let body = header.body(of: page)
        let count = header.itemCount
        let rowIDBytes: Int
        if flags == bitmapFlags {
            guard body.count >= firstRowIDSize + bitmapLengthSize else { throw .invalid("leaf bitmap past its body") }
            let length = Int(UInt16(littleEndian: body.loadUnaligned(fromByteOffset: firstRowIDSize, as: UInt16.self)))
            rowIDBytes = bitmapLengthSize + length
        } else {
            rowIDBytes = Int(flags) * count
        }
        // Each row takes at least its value end and an eighth of a byte; the first row ID comes first.
        guard body.count >= firstRowIDSize,
            count <= body.count, firstRowIDSize + rowIDBytes + valueEndSize * count + (count + 7) / 8 <= body.count
        else { throw .invalid("leaf item count \(count) cannot fit its body") }
        let view = LeafPageView(unvalidatedBody: body, count: count, flags: flags)
        // An empty leaf is all zero but its first row ID's 8 bytes, so that it too has one encoding.
        guard count > 0 || (flags == 0 && view.key(at: 0) == 0) else {
            throw .invalid("an empty leaf with row IDs of form \(flags) or a first row ID")
        }
        if count > 0 {
            let first = view.key(at: 0)
            let last = try flags == bitmapFlags ? view.validatedBitmapLast() : view.validatedDeltasLast()
            let narrowest = LeafRowIDs(count: count, first: first, last: last)
            guard narrowest.flags == flags, narrowest.size(count: count) == rowIDBytes else {
                throw .invalid("leaf row IDs of form \(flags) are not the narrowest for its rows")
            }
        }
        // Unused overflow bits after the last row are zero, so that the layout is canonical.
        if count % 8 != 0, view.overflowByte(at: count / 8) >> (count % 8) != 0 {
            throw .invalid("leaf overflow bits set past its last row")
        }
        var expectedStart = 0
        let dataLength = body.count - view.dataOffset
        // Most leaves hold no overflow reference: one look at their overflow bits spares reading one a value.
        let allInline = !view.hasOverflowBit
        for index in 0..<count {
            let end = view.valueEnd(at: index)
            guard end >= expectedStart, end <= dataLength else {
                throw .invalid("leaf value \(index) spans \(expectedStart)..<\(end) of \(dataLength) data bytes")
            }
            let length = end - expectedStart
            if allInline || !view.isOverflow(index) {
                guard length <= maximumInline else {
                    throw .invalid("inline value of \(length) bytes exceeds \(maximumInline)")
                }
            } else {
                guard length == overflowReferenceSize else {
                    throw .invalid("overflow reference of \(length) bytes, expected \(overflowReferenceSize)")
                }
                let at = view.dataOffset + expectedStart
                let firstPage = UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                let total = Int(UInt32(littleEndian: body.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self)))
                guard firstPage < header.pageNumber, firstPage >= 1 else {
                    throw .invalid(
                        "overflow chain at page \(firstPage) does not precede its leaf \(header.pageNumber)")
                }
                guard total > maximumInline, total <= WALFormat.maximumValueSize else {
                    throw .invalid("overflow value length \(total) out of range")
                }
            }
            expectedStart = end
        }
        guard expectedStart == dataLength else {
            throw .invalid("\(dataLength - expectedStart) stray bytes after the last leaf value")
        }
    }

    /// Decodes a verified leaf page into its row IDs and packed values (for writers, which change leaves, and for
    /// tools).
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the row IDs in increasing order and their values, inline or as overflow-chain references.
    /// - Throws: ``FormatError`` as ``validate(_:header:)``.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (keys: [UInt64], values: LeafValues) {
        try validate(page, header: header)
        let view = LeafPageView(validatedPage: page, header: header)
        let keys = [UInt64](unsafeUninitializedCapacity: view.count) { buffer, initialized in
            view.copyKeys(into: buffer)
            initialized = view.count
        }
        return (keys, LeafValues(view))
    }
}

/// How a leaf stores its row IDs after the first (FORMAT.md §4.2): the narrowest of three forms, so that a leaf has
/// one encoding. Removing a row never makes it wider: the span of the row IDs does not grow, and a bitmap is never
/// wider than a delta a row.
public enum LeafRowIDs: Equatable, Sendable {
    /// Row i is `firstRowID + i`: nothing stored.
    case dense
    /// Each row's offset from the first, in `width` bytes (1, 2, 4 or 8).
    case deltas(width: Int)
    /// A bit for each row ID from the first to the last, set for the rows present: `length` bytes after its u16
    /// length.
    case bitmap(length: Int)

    /// The narrowest form for `count` rows from `first` to `last` (on a tie deltas, searched without counting bits).
    @inline(__always)
    public init(count: Int, first: UInt64, last: UInt64) {
        let span = last &- first
        guard count > 1, span != UInt64(count &- 1) else {
            self = .dense
            return
        }
        let width = span <= 0xFF ? 1 : span <= 0xFFFF ? 2 : span <= 0xFFFF_FFFF ? 4 : 8
        // Bits 0 ... span take span / 8 + 1 bytes.
        if span < UInt64(LeafPage.maximumBitmapLength) << 3,
            Int(span >> 3) &+ 1 &+ LeafPage.bitmapLengthSize < width &* count
        {
            self = .bitmap(length: Int(span >> 3) &+ 1)
        } else {
            self = .deltas(width: width)
        }
    }

    /// The page header's flags that name this form.
    public var flags: UInt8 {
        switch self {
        case .dense: 0
        case .deltas(let width): UInt8(width)
        case .bitmap: LeafPage.bitmapFlags
        }
    }

    /// The bytes the form takes after the first row ID, in a leaf of `count` rows.
    @inline(__always)
    public func size(count: Int) -> Int {
        switch self {
        case .dense: 0
        case .deltas(let width): width &* count
        case .bitmap(let length): LeafPage.bitmapLengthSize &+ length
        }
    }
}

/// A leaf page read where it lies: row IDs found by position (dense leaves), binary search over the deltas or
/// counting bits of the bitmap, values lent as bytes of the page.
///
/// Make one only from a page that passed ``LeafPage/validate(_:header:)``; the view then reads without checks of
/// its own beyond staying inside the body.
///
/// A walk's per-row reads (``key(at:)``, ``cell(at:)``) are inlinable, so that a scan in another module reads each
/// row without two calls (a table scan's walk was a fifth of its instructions in those calls).
public struct LeafPageView {
    @usableFromInline let body: UnsafeRawBufferPointer
    /// The number of rows in the leaf.
    public let count: Int
    /// Bytes of one row-ID delta: 1, 2, 4 or 8; 0 for a dense leaf or a bitmap.
    @usableFromInline let width: Int
    /// Bytes of the bitmap; 0 unless the row IDs are a bitmap.
    @usableFromInline let bitmapLength: Int
    /// The first row's ID.
    @usableFromInline let first: UInt64
    /// Where the value ends, the overflow bits and the values start, in bytes from the body's start.
    @usableFromInline let endsOffset: Int
    @usableFromInline let bitsOffset: Int
    @usableFromInline let dataOffset: Int

    /// Where a bitmap starts, in bytes from the body's start.
    private static let bitmapOffset = LeafPage.firstRowIDSize + LeafPage.bitmapLengthSize

    /// A view of a page that passed ``LeafPage/validate(_:header:)``.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        self.init(unvalidatedBody: header.body(of: page), count: header.itemCount, flags: header.flags)
    }

    /// A view whose arrays the caller has checked to fit the body (``LeafPage/validate(_:header:)`` does).
    @inline(__always)
    init(unvalidatedBody body: UnsafeRawBufferPointer, count: Int, flags: UInt8) {
        self.body = body
        self.count = count
        first = UInt64(littleEndian: body.loadUnaligned(as: UInt64.self))
        let rowIDBytes: Int
        if flags == LeafPage.bitmapFlags {
            width = 0
            bitmapLength = Int(
                UInt16(littleEndian: body.loadUnaligned(fromByteOffset: LeafPage.firstRowIDSize, as: UInt16.self)))
            rowIDBytes = LeafPage.bitmapLengthSize &+ bitmapLength
        } else {
            width = Int(flags)
            bitmapLength = 0
            rowIDBytes = width &* count
        }
        endsOffset = LeafPage.firstRowIDSize &+ rowIDBytes
        bitsOffset = endsOffset &+ LeafPage.valueEndSize &* count
        dataOffset = bitsOffset &+ (count &+ 7) >> 3
    }

    /// Row `index`'s offset from the first row ID (`width` > 0).
    @inlinable @inline(__always)
    func delta(at index: Int) -> UInt64 {
        let at = LeafPage.firstRowIDSize &+ index &* width
        switch width {
        case 1: return UInt64(body[at])
        case 2: return UInt64(UInt16(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
        case 4: return UInt64(UInt32(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        default: return UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
    }

    /// Up to 8 bytes of the bitmap from byte `at` (a multiple of 8), bit i of the word being bit `at × 8 + i`; bytes
    /// past the bitmap read as 0.
    @inline(__always)
    private func bitmapWord(at byte: Int) -> UInt64 {
        let start = Self.bitmapOffset &+ byte
        if byte &+ 8 <= bitmapLength {
            return UInt64(littleEndian: body.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        }
        var word: UInt64 = 0
        var index = bitmapLength &- byte
        while index > 0 {
            index &-= 1
            word = word << 8 | UInt64(body[start &+ index])
        }
        return word
    }

    /// The number of rows whose bit comes before bit `offset` of the bitmap (`offset` < 8 × bitmapLength).
    @inline(__always)
    private func bitmapRank(_ offset: Int) -> Int {
        let wordStart = (offset >> 6) << 3
        var rank = 0
        var at = 0
        while at < wordStart {
            rank &+= bitmapWord(at: at).nonzeroBitCount
            at &+= 8
        }
        return rank &+ (bitmapWord(at: wordStart) & ((1 << UInt64(offset & 63)) &- 1)).nonzeroBitCount
    }

    /// The bitmap offset of row `index`: the position of its set bit (`index` < count).
    @inline(__always)
    private func bitmapSelect(_ index: Int) -> Int {
        var remaining = index
        var at = 0
        while at < bitmapLength {
            var word = bitmapWord(at: at)
            let rows = word.nonzeroBitCount
            if remaining < rows {
                while remaining > 0 {
                    word &= word &- 1
                    remaining &-= 1
                }
                return at << 3 &+ word.trailingZeroBitCount
            }
            remaining &-= rows
            at &+= 8
        }
        return bitmapLength << 3
    }

    /// The row ID of cell `index` (`0 ..< count`).
    @inlinable @inline(__always)
    public func key(at index: Int) -> UInt64 {
        if bitmapLength != 0 { return bitmapKey(at: index) }
        return width == 0 ? first &+ UInt64(index) : first &+ delta(at: index)
    }

    /// The row ID of cell `index` of a bitmap leaf (out of line: a walk reads ``bitmapKeys`` instead).
    @usableFromInline
    func bitmapKey(at index: Int) -> UInt64 { first &+ UInt64(bitmapSelect(index)) }

    /// A bitmap leaf's row IDs, copied in one pass; nil for dense row IDs and deltas, whose ``key(at:)`` is a load.
    /// A bitmap's ``key(at:)`` selects its bit from the bitmap's start on every call: a walk of every row reads these
    /// instead (through `key(at:)`, `LeafPageView.key(at:)` was a sixth of compacting a store after W8's deletes).
    public var bitmapKeys: [UInt64]? {
        guard bitmapLength != 0 else { return nil }
        return [UInt64](unsafeUninitializedCapacity: count) { buffer, initialized in
            copyKeys(into: buffer)
            initialized = count
        }
    }

    /// Writes every row ID in order into `buffer` (`count` elements), a bitmap in one pass over its words.
    func copyKeys(into buffer: UnsafeMutableBufferPointer<UInt64>) {
        guard bitmapLength != 0 else {
            for index in 0..<count { buffer[index] = key(at: index) }
            return
        }
        var index = 0
        var at = 0
        while at < bitmapLength, index < count {
            var word = bitmapWord(at: at)
            while word != 0, index < count {
                buffer[index] = first &+ UInt64(at << 3 &+ word.trailingZeroBitCount)
                word &= word &- 1
                index &+= 1
            }
            at &+= 8
        }
    }

    /// The last row ID of a leaf of deltas or dense row IDs whose arrays fit the body, after checking that the
    /// deltas start at 0 and strictly increase without wrapping past 2^64.
    func validatedDeltasLast() throws(FormatError) -> UInt64 {
        // Dense: row i is first + i, so only the last can wrap (the loop below stepped through every row to say so,
        // and fails at the same row).
        if width == 0 {
            let span = UInt64(max(count, 1) &- 1)
            guard first <= UInt64.max &- span else {
                throw .invalid("leaf keys out of order at row \(UInt64.max &- first &+ 1)")
            }
            return first &+ span
        }
        guard delta(at: 0) == 0 else { throw .invalid("leaf's first row-ID delta is not 0") }
        var previous = first
        for index in 1..<max(count, 1) {
            let delta = delta(at: index)
            // Deltas strictly increase, so keys do and none wraps past 2^64.
            guard delta > previous &- first, first <= UInt64.max &- delta else {
                throw .invalid("leaf keys out of order at row \(index)")
            }
            previous = first &+ delta
        }
        return previous
    }

    /// The last row ID of a bitmap leaf whose bitmap fits the body, after checking that the bitmap has a bit for the
    /// first row and its last byte one for the last, that it holds `count` rows, and that the last row ID does not
    /// wrap past 2^64.
    func validatedBitmapLast() throws(FormatError) -> UInt64 {
        guard bitmapLength > 0, body[Self.bitmapOffset] & 1 != 0 else {
            throw .invalid("leaf bitmap without the first row's bit")
        }
        let lastByte = body[Self.bitmapOffset &+ bitmapLength &- 1]
        guard lastByte != 0 else { throw .invalid("leaf bitmap ends with an empty byte") }
        var rows = 0
        var at = 0
        while at < bitmapLength {
            rows &+= bitmapWord(at: at).nonzeroBitCount
            at &+= 8
        }
        guard rows == count else { throw .invalid("leaf bitmap holds \(rows) rows, its header \(count)") }
        let span = UInt64((bitmapLength &- 1) << 3 &+ (7 &- lastByte.leadingZeroBitCount))
        guard first <= UInt64.max &- span else { throw .invalid("leaf bitmap wraps past the last row ID") }
        return first &+ span
    }

    @inlinable @inline(__always)
    func valueEnd(at index: Int) -> Int {
        Int(
            UInt16(
                littleEndian: body.loadUnaligned(
                    fromByteOffset: endsOffset &+ LeafPage.valueEndSize &* index, as: UInt16.self)))
    }

    @inlinable @inline(__always)
    func overflowByte(at index: Int) -> UInt8 { body[bitsOffset &+ index] }

    /// Whether any overflow bit is set (of a value, or past the last row).
    var hasOverflowBit: Bool {
        var at = bitsOffset
        // Eight bytes at a time, then the rest.
        while at &+ 8 <= dataOffset {
            if body.loadUnaligned(fromByteOffset: at, as: UInt64.self) != 0 { return true }
            at &+= 8
        }
        while at < dataOffset {
            if body[at] != 0 { return true }
            at &+= 1
        }
        return false
    }

    /// The data area: every value back to back.
    var data: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: body[dataOffset...]) }

    @inlinable @inline(__always)
    func isOverflow(_ index: Int) -> Bool { overflowByte(at: index >> 3) >> (index & 7) & 1 != 0 }

    /// The position of `key`: `(index, found)`, where index is the insertion point when not found.
    ///
    /// A dense leaf answers by subtraction, a bitmap by counting the bits before the key's. Otherwise row IDs are
    /// usually nearly dense (allocated in order, deleted rarely), so the first probe is where the key would be if
    /// they were: one read instead of a binary search's six on a 4 KiB leaf.
    @inline(__always)
    public func search(_ key: UInt64) -> (index: Int, found: Bool) {
        guard count > 0, key >= first else { return (0, false) }
        let offset = key &- first
        if bitmapLength != 0 {
            guard offset < UInt64(bitmapLength) << 3 else { return (count, false) }
            let bit = Int(offset)
            return (bitmapRank(bit), body[Self.bitmapOffset &+ bit >> 3] >> (bit & 7) & 1 != 0)
        }
        if width == 0 { return offset < UInt64(count) ? (Int(offset), true) : (count, false) }
        if offset < UInt64(count), delta(at: Int(offset)) == offset { return (Int(offset), true) }
        var low = 0
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if delta(at: middle) < offset { low = middle &+ 1 } else { high = middle }
        }
        return (low, low < count && delta(at: low) == offset)
    }

    /// The value of cell `index`: bytes of the page (valid while the page is), or an overflow reference.
    @inlinable @inline(__always)
    public func cell(at index: Int) -> LeafCell {
        let start = dataOffset &+ (index == 0 ? 0 : valueEnd(at: index &- 1))
        // A validated page keeps every value inside the body; clamping keeps a misuse inside it too.
        let end = min(dataOffset &+ valueEnd(at: index), body.count)
        let bytes = UnsafeRawBufferPointer(rebasing: body[min(start, end)..<end])
        guard isOverflow(index), bytes.count == LeafPage.overflowReferenceSize else { return .inline(bytes) }
        let firstPage = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let total = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        return .overflow(firstPage: firstPage, length: Int(total))
    }
}

/// A leaf's value where it lies: its bytes, or the start of its overflow chain.
public enum LeafCell {
    /// The value's bytes inside the page.
    case inline(UnsafeRawBufferPointer)
    /// A value in a chain of overflow pages starting at `firstPage`, `length` bytes in all.
    case overflow(firstPage: UInt64, length: Int)
}
