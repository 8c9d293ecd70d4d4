/// A B+tree leaf page: rows in increasing row-ID order (FORMAT.md, "Leaf page"), laid out to be searched where
/// it lies and to spend about two bytes a row besides the values.
///
/// ```
/// body := firstRowID:u64 delta:uW[itemCount] valueEnd:u16[itemCount] overflowBits:u8[⌈itemCount / 8⌉] data
/// ```
/// `W`, the header's `flags`, is 0 for a dense leaf (row i is `firstRowID + i`, no deltas stored) or the width
/// (1, 2, 4 or 8) of the row IDs' offsets from the first; it is always the narrowest that holds the leaf. Value i
/// spans `valueEnd[i − 1] ..< valueEnd[i]` of the data area (`valueEnd[−1] = 0`); bit i of the overflow bits
/// (bit i % 8 of byte i / 8) marks a value that is an overflow reference, 12 bytes `firstOverflowPage:u64
/// totalLength:u32`. `extra` is the level, 0.
public enum LeafPage {
    /// The bytes of an overflow reference in the data area: first page and total length.
    static let overflowReferenceSize = 12
    /// The first row ID before the deltas.
    static let firstRowIDSize = 8
    /// Bytes of one value end.
    static let valueEndSize = 2

    /// The width of the row-ID deltas of a leaf of `count` rows from `first` to `last`: 0 when they are dense,
    /// else the narrowest of 1, 2, 4 and 8 bytes that holds `last − first`.
    @inline(__always)
    public static func deltaWidth(count: Int, first: UInt64, last: UInt64) -> Int {
        guard count > 1 else { return 0 }
        let span = last &- first
        if span == UInt64(count &- 1) { return 0 }
        return span <= 0xFF ? 1 : span <= 0xFFFF ? 2 : span <= 0xFFFF_FFFF ? 4 : 8
    }

    /// The body a leaf takes: `count` rows from `first` to `last` whose cells (values plus value ends,
    /// ``LeafValue/cellSize(maximumInline:)``) add up to `cellBytes`.
    @inline(__always)
    public static func bodySize(count: Int, first: UInt64, last: UInt64, cellBytes: Int) -> Int {
        guard count > 0 else { return firstRowIDSize }
        return firstRowIDSize &+ deltaWidth(count: count, first: first, last: last) &* count &+ (count &+ 7) / 8
            &+ cellBytes
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
        let width = deltaWidth(count: count, first: first, last: keys.last ?? 0)
        let body = PageFormat.headerSize
        let ends = body + firstRowIDSize + width * count
        let bits = ends + valueEndSize * count
        let dataStart = bits + (count + 7) / 8
        precondition(dataStart <= page.count, "leaf does not fit its page")
        page.storeLE(first, at: body)
        for index in 0..<count {
            let delta = keys[index] &- first
            let at = body + firstRowIDSize + width * index
            switch width {
            case 0: break
            case 1: page[at] = UInt8(delta)
            case 2: page.storeLE(UInt16(delta), at: at)
            case 4: page.storeLE(UInt32(delta), at: at)
            default: page.storeLE(delta, at: at)
            }
        }
        // The values lie in memory as they lie in the page: one copy, then their ends and overflow bits.
        let dataLength = values.withPageLayout { data, layout in
            precondition(dataStart + data.count <= page.count, "leaf does not fit its page")
            if !data.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: page[dataStart..<(dataStart + data.count)]).copyMemory(
                    from: data)
            }
            var start = 0
            for index in 0..<count {
                let (end, overflow) = layout(index)
                if overflow {
                    page[bits + index / 8] |= 1 << (index % 8)
                } else {
                    precondition(end - start <= maximumInline, "long values must be moved to overflow pages first")
                }
                page.storeLE(UInt16(end), at: ends + valueEndSize * index)
                start = end
            }
            return data.count
        }
        PageHeader(
            type: .leaf, flags: UInt8(width), itemCount: count, pageNumber: pageNumber, generation: generation,
            bodyLength: dataStart + dataLength - body, extra: 0
        ).seal(page, salt: salt)
    }

    /// Checks every reader rule of a verified leaf page without allocating: after it, a ``LeafPageView`` of the
    /// page needs no further checks.
    ///
    /// - Throws: ``FormatError`` if the delta width is not the narrowest, the arrays or values overrun the body,
    ///   values do not follow each other back to back and fill the body, row IDs are not strictly increasing,
    ///   an inline value is longer than the inline limit, an overflow bit is set past the last row, or an overflow
    ///   reference is malformed or does not point to an earlier page.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .leaf, header.extra == 0 else { throw .invalid("not a leaf page") }
        let width = Int(header.flags)
        guard width == 0 || width == 1 || width == 2 || width == 4 || width == 8 else {
            throw .invalid("leaf row-ID deltas of \(width) bytes")
        }
        let maximumInline = PageFormat.maximumInlineValue(pageSize: page.count)
        let body = header.body(of: page)
        let count = header.itemCount
        // Each row takes at least its value end and an eighth of a byte; the first row ID comes first.
        guard body.count >= firstRowIDSize,
            count <= body.count, firstRowIDSize + (width + valueEndSize) * count + (count + 7) / 8 <= body.count
        else { throw .invalid("leaf item count \(count) cannot fit its body") }
        let view = LeafPageView(unvalidatedBody: body, count: count, width: width)
        // An empty leaf is all zero but its first row ID's 8 bytes, so that it too has one encoding.
        guard count > 0 || (width == 0 && view.key(at: 0) == 0) else {
            throw .invalid("an empty leaf with row-ID deltas of \(width) bytes or a first row ID")
        }
        if count > 0 {
            let first = view.key(at: 0)
            guard width == 0 || view.delta(at: 0) == 0 else { throw .invalid("leaf's first row-ID delta is not 0") }
            var previous = first
            for index in 1..<max(count, 1) {
                let delta = width == 0 ? UInt64(index) : view.delta(at: index)
                // Deltas strictly increase, so keys do and none wraps past 2^64.
                guard delta > previous &- first, first <= UInt64.max &- delta else {
                    throw .invalid("leaf keys out of order at row \(index)")
                }
                previous = first &+ delta
            }
            guard width == deltaWidth(count: count, first: first, last: previous) else {
                throw .invalid("leaf row-ID deltas of \(width) bytes are not the narrowest for its rows")
            }
        }
        // Unused overflow bits after the last row are zero, so that the layout is canonical.
        if count % 8 != 0, view.overflowByte(at: count / 8) >> (count % 8) != 0 {
            throw .invalid("leaf overflow bits set past its last row")
        }
        var expectedStart = 0
        let dataLength = body.count - view.dataOffset
        for index in 0..<count {
            let end = view.valueEnd(at: index)
            guard end >= expectedStart, end <= dataLength else {
                throw .invalid("leaf value \(index) spans \(expectedStart)..<\(end) of \(dataLength) data bytes")
            }
            let length = end - expectedStart
            if !view.isOverflow(index) {
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
            for index in 0..<view.count { buffer[index] = view.key(at: index) }
            initialized = view.count
        }
        return (keys, LeafValues(view))
    }
}

/// A leaf page read where it lies: row IDs found by position (dense leaves) or binary search over the deltas,
/// values lent as bytes of the page.
///
/// Make one only from a page that passed ``LeafPage/validate(_:header:)``; the view then reads without checks of
/// its own beyond staying inside the body.
public struct LeafPageView {
    private let body: UnsafeRawBufferPointer
    /// The number of rows in the leaf.
    public let count: Int
    /// Bytes of one row-ID delta: 0 (dense), 1, 2, 4 or 8.
    private let width: Int
    /// The first row's ID.
    private let first: UInt64
    /// Where the value ends, the overflow bits and the values start, in bytes from the body's start.
    private let endsOffset: Int
    private let bitsOffset: Int
    let dataOffset: Int

    /// A view of a page that passed ``LeafPage/validate(_:header:)``.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        self.init(unvalidatedBody: header.body(of: page), count: header.itemCount, width: Int(header.flags))
    }

    /// A view whose arrays the caller has checked to fit the body (``LeafPage/validate(_:header:)`` does).
    @inline(__always)
    init(unvalidatedBody body: UnsafeRawBufferPointer, count: Int, width: Int) {
        self.body = body
        self.count = count
        self.width = width
        first = UInt64(littleEndian: body.loadUnaligned(as: UInt64.self))
        endsOffset = LeafPage.firstRowIDSize &+ width &* count
        bitsOffset = endsOffset &+ LeafPage.valueEndSize &* count
        dataOffset = bitsOffset &+ (count &+ 7) >> 3
    }

    /// Row `index`'s offset from the first row ID (`width` > 0).
    @inline(__always)
    func delta(at index: Int) -> UInt64 {
        let at = LeafPage.firstRowIDSize &+ index &* width
        switch width {
        case 1: return UInt64(body[at])
        case 2: return UInt64(UInt16(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
        case 4: return UInt64(UInt32(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        default: return UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
    }

    /// The row ID of cell `index` (`0 ..< count`).
    @inline(__always)
    public func key(at index: Int) -> UInt64 {
        width == 0 ? first &+ UInt64(index) : first &+ delta(at: index)
    }

    @inline(__always)
    func valueEnd(at index: Int) -> Int {
        Int(
            UInt16(
                littleEndian: body.loadUnaligned(
                    fromByteOffset: endsOffset &+ LeafPage.valueEndSize &* index, as: UInt16.self)))
    }

    @inline(__always)
    func overflowByte(at index: Int) -> UInt8 { body[bitsOffset &+ index] }

    /// The data area: every value back to back.
    var data: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: body[dataOffset...]) }

    @inline(__always)
    func isOverflow(_ index: Int) -> Bool { overflowByte(at: index >> 3) >> (index & 7) & 1 != 0 }

    /// The position of `key`: `(index, found)`, where index is the insertion point when not found.
    ///
    /// A dense leaf answers by subtraction. Otherwise row IDs are usually nearly dense (allocated in order,
    /// deleted rarely), so the first probe is where the key would be if they were: one read instead of a binary
    /// search's six on a 4 KiB leaf.
    @inline(__always)
    public func search(_ key: UInt64) -> (index: Int, found: Bool) {
        guard count > 0, key >= first else { return (0, false) }
        let offset = key &- first
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
    @inline(__always)
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
