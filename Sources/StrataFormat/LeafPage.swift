/// A B+tree leaf page: rows in increasing row-ID order (FORMAT.md, "Leaf page"), laid out to be searched where
/// it lies.
///
/// ```
/// body := rowID:u64[itemCount] slot[itemCount] data
/// slot := offset:u16 word:u16          word := kind:1 (high bit) length:15
/// ```
/// The row IDs form one sorted array (a binary search reads nothing else); value i is `length` bytes at `offset`
/// from the body's start. Values follow the slots in row order, back to back, and end the body. Kind 1 marks
/// an overflow reference: its 12 bytes are `firstOverflowPage:u64 totalLength:u32`. `extra` is the level, 0.
public enum LeafPage {
    /// The high bit of a slot's word: the value is an overflow reference.
    static let overflowFlag: UInt16 = 0x8000
    /// The bytes of an overflow reference in the data area: first page and total length.
    static let overflowReferenceSize = 12

    /// Encodes a leaf into `page` (pageSize bytes, zeroed) and seals it.
    /// Every `.bytes` value must fit inline (callers move long values to overflow chains first).
    ///
    /// - Parameters:
    ///   - keys: the row IDs, strictly increasing.
    ///   - values: one value per key; the cells must fit the page (a precondition).
    ///   - page: the whole page buffer (page-size bytes, zeroed).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        keys: [UInt64], values: [LeafValue], into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        precondition(keys.count == values.count)
        let maximumInline = PageFormat.maximumInlineValue(pageSize: page.count)
        let count = keys.count
        let body = PageFormat.headerSize
        let slots = body + 8 * count
        var data = slots + 4 * count
        precondition(data <= page.count, "leaf does not fit its page")
        for index in 0..<count {
            page.storeLE(keys[index], at: body + 8 * index)
            let start = data - body
            switch values[index] {
            case .bytes(let bytes):
                precondition(bytes.count <= maximumInline, "long values must be moved to overflow pages first")
                precondition(data + bytes.count <= page.count, "leaf does not fit its page")
                bytes.withUnsafeBytes { source in
                    if !source.isEmpty {
                        UnsafeMutableRawBufferPointer(rebasing: page[data..<(data + bytes.count)]).copyMemory(
                            from: source)
                    }
                }
                page.storeLE(UInt16(start), at: slots + 4 * index)
                page.storeLE(UInt16(bytes.count), at: slots + 4 * index + 2)
                data += bytes.count
            case .overflow(let firstPage, let length):
                precondition(data + overflowReferenceSize <= page.count, "leaf does not fit its page")
                page.storeLE(firstPage, at: data)
                page.storeLE(UInt32(length), at: data + 8)
                page.storeLE(UInt16(start), at: slots + 4 * index)
                page.storeLE(overflowFlag | UInt16(overflowReferenceSize), at: slots + 4 * index + 2)
                data += overflowReferenceSize
            }
        }
        PageHeader(
            type: .leaf, itemCount: count, pageNumber: pageNumber, generation: generation,
            bodyLength: data - body, extra: 0
        ).seal(page, salt: salt)
    }

    /// Checks every reader rule of a verified leaf page without allocating: after it, a ``LeafPageView`` of the
    /// page needs no further checks.
    ///
    /// - Throws: ``FormatError`` if the slots or values overrun the body, values do not follow each other back to
    ///   back and fill the body, row IDs are not strictly increasing, an inline value is longer than the inline
    ///   limit, or an overflow reference is malformed or does not point to an earlier page.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .leaf, header.extra == 0 else { throw .invalid("not a leaf page") }
        let maximumInline = PageFormat.maximumInlineValue(pageSize: page.count)
        let body = header.body(of: page)
        let count = header.itemCount
        // Each cell takes at least its key and slot.
        guard count <= body.count / PageFormat.leafCellHeaderSize else {
            throw .invalid("leaf item count \(count) cannot fit its body")
        }
        let view = LeafPageView(unvalidatedBody: body, count: count)
        var expectedStart = PageFormat.leafCellHeaderSize * count
        var previous: UInt64 = 0
        for index in 0..<count {
            let key = view.key(at: index)
            if index > 0, key <= previous { throw .invalid("leaf keys out of order (\(previous) then \(key))") }
            previous = key
            let (start, word) = view.slot(at: index)
            guard start == expectedStart else {
                throw .invalid("leaf value \(index) starts at \(start), expected \(expectedStart)")
            }
            let length = Int(word & ~overflowFlag)
            guard length <= body.count - start else { throw .invalid("leaf value \(index) overruns the body") }
            if word & overflowFlag == 0 {
                guard length <= maximumInline else {
                    throw .invalid("inline value of \(length) bytes exceeds \(maximumInline)")
                }
            } else {
                guard length == overflowReferenceSize else {
                    throw .invalid("overflow reference of \(length) bytes, expected \(overflowReferenceSize)")
                }
                let first = UInt64(littleEndian: body.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                let total = Int(UInt32(littleEndian: body.loadUnaligned(fromByteOffset: start + 8, as: UInt32.self)))
                guard first < header.pageNumber, first >= 1 else {
                    throw .invalid("overflow chain at page \(first) does not precede its leaf \(header.pageNumber)")
                }
                guard total > maximumInline, total <= WALFormat.maximumValueSize else {
                    throw .invalid("overflow value length \(total) out of range")
                }
            }
            expectedStart = start + length
        }
        guard expectedStart == body.count else {
            throw .invalid("\(body.count - expectedStart) stray bytes after the last leaf value")
        }
    }

    /// Decodes the cells of a verified leaf page into arrays (for writers, which change leaves, and for tools).
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the row IDs in increasing order and their values, inline or as overflow-chain references.
    /// - Throws: ``FormatError`` as ``validate(_:header:)``.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (keys: [UInt64], values: [LeafValue]) {
        try validate(page, header: header)
        let view = LeafPageView(validatedPage: page, header: header)
        var keys: [UInt64] = []
        var values: [LeafValue] = []
        keys.reserveCapacity(view.count)
        values.reserveCapacity(view.count)
        for index in 0..<view.count {
            keys.append(view.key(at: index))
            switch view.cell(at: index) {
            case .inline(let bytes): values.append(.bytes(Array(bytes)))
            case .overflow(let first, let length): values.append(.overflow(firstPage: first, length: length))
            }
        }
        return (keys, values)
    }
}

/// A leaf page read where it lies: binary search over its row IDs and values lent as bytes of the page.
///
/// Make one only from a page that passed ``LeafPage/validate(_:header:)``; the view then reads without checks of
/// its own beyond staying inside the body.
public struct LeafPageView {
    private let body: UnsafeRawBufferPointer
    /// The number of rows in the leaf.
    public let count: Int

    /// A view of a page that passed ``LeafPage/validate(_:header:)``.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        self.init(unvalidatedBody: header.body(of: page), count: header.itemCount)
    }

    @inline(__always)
    init(unvalidatedBody body: UnsafeRawBufferPointer, count: Int) {
        self.body = body
        self.count = count
    }

    /// The row ID of cell `index` (`0 ..< count`).
    @inline(__always)
    public func key(at index: Int) -> UInt64 {
        UInt64(littleEndian: body.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self))
    }

    @inline(__always)
    func slot(at index: Int) -> (start: Int, word: UInt16) {
        let at = count &* 8 &+ index &* 4
        let start = UInt16(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt16.self))
        let word = UInt16(littleEndian: body.loadUnaligned(fromByteOffset: at &+ 2, as: UInt16.self))
        return (Int(start), word)
    }

    /// The position of `key`: `(index, found)`, where index is the insertion point when not found.
    ///
    /// Row IDs are usually dense within a leaf (allocated in order, deleted rarely), so the first probe is where
    /// the key would be if they were: one key read instead of a binary search's six on a 4 KiB leaf.
    @inline(__always)
    public func search(_ key: UInt64) -> (index: Int, found: Bool) {
        guard count > 0 else { return (0, false) }
        let first = self.key(at: 0)
        if key >= first, key &- first < UInt64(count) {
            let guess = Int(key &- first)
            if self.key(at: guess) == key { return (guess, true) }
        }
        var low = 0
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if self.key(at: middle) < key { low = middle &+ 1 } else { high = middle }
        }
        return (low, low < count && self.key(at: low) == key)
    }

    /// The value of cell `index`: bytes of the page (valid while the page is), or an overflow reference.
    @inline(__always)
    public func cell(at index: Int) -> LeafCell {
        let (start, word) = slot(at: index)
        let length = Int(word & ~LeafPage.overflowFlag)
        // A validated page keeps every value inside the body; clamping keeps a misuse inside it too.
        let end = min(start &+ length, body.count)
        let bytes = UnsafeRawBufferPointer(rebasing: body[min(start, end)..<end])
        guard word & LeafPage.overflowFlag != 0, bytes.count == LeafPage.overflowReferenceSize else {
            return .inline(bytes)
        }
        let first = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let total = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        return .overflow(firstPage: first, length: Int(total))
    }
}

/// A leaf's value where it lies: its bytes, or the start of its overflow chain.
public enum LeafCell {
    /// The value's bytes inside the page.
    case inline(UnsafeRawBufferPointer)
    /// A value in a chain of overflow pages starting at `firstPage`, `length` bytes in all.
    case overflow(firstPage: UInt64, length: Int)
}
