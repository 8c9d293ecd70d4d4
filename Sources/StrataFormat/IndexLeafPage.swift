/// A secondary-index leaf page: index entries in strictly increasing byte order (FORMAT.md, "Index leaf page"), laid
/// out to be searched where it lies, with the bytes every entry shares stored once.
///
/// ```
/// body := prefixLength:u16 prefix[prefixLength] offset:u16[itemCount] suffixBytes
/// entry i = prefix ++ body[offset[i] ..< offset[i + 1]]          (offset[itemCount] = bodyLength)
/// ```
/// The prefix is exactly the longest common prefix of the first and the last entry (so of all of them). Each entry
/// is an encoded key ++ rowID (u64 big-endian), 9 ... maximumIndexEntry bytes. `extra` is 0 (the level) and
/// `flags` 0. An index leaf is never empty.
public enum IndexLeafPage {
    /// Bytes of the prefix length and of one suffix offset.
    static let lengthSize = PageFormat.indexLengthSize

    /// The body a leaf takes: `count` entries from `first` to `last` whose cells (each entry's bytes plus its
    /// offset, `2 + length`) add up to `cellBytes`. The entries share the prefix of `first` and `last`, stored once.
    @inline(__always)
    public static func bodySize(count: Int, first: [UInt8], last: [UInt8], cellBytes: Int) -> Int {
        let prefixLength = commonPrefixLength(first, last)
        return lengthSize &+ prefixLength &+ cellBytes &- count &* prefixLength
    }

    /// ``bodySize(count:first:last:cellBytes:)`` of entries lent where they lie.
    @inline(__always)
    public static func bodySize(
        count: Int, first: UnsafeRawBufferPointer, last: UnsafeRawBufferPointer, cellBytes: Int
    ) -> Int {
        let limit = min(first.count, last.count)
        var prefixLength = 0
        while prefixLength < limit, first[prefixLength] == last[prefixLength] { prefixLength &+= 1 }
        return lengthSize &+ prefixLength &+ cellBytes &- count &* prefixLength
    }

    /// The body size of a leaf holding `entries`, strictly increasing.
    public static func bodySize(entries: some BidirectionalCollection<[UInt8]>) -> Int {
        guard let first = entries.first, let last = entries.last else { return lengthSize }
        return bodySize(
            count: entries.count, first: first, last: last,
            cellBytes: entries.reduce(0) { $0 + lengthSize + $1.count })
    }

    /// The number of leading bytes `a` and `b` share.
    @inline(__always)
    public static func commonPrefixLength(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let limit = min(a.count, b.count)
        var length = 0
        while length < limit, a[length] == b[length] { length &+= 1 }
        return length
    }

    /// Encodes a leaf into `page` (pageSize bytes, zeroed) and seals it.
    ///
    /// - Parameters:
    ///   - entries: at least one, strictly increasing, each 9 ... ``PageFormat/maximumIndexEntry(pageSize:)``
    ///     bytes; they must fit the page (preconditions).
    ///   - page: the whole page buffer (page-size bytes, zeroed).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        entries: [[UInt8]], into page: UnsafeMutableRawBufferPointer, pageNumber: UInt64, generation: UInt64,
        salt: UInt64
    ) {
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for entry in entries {
            bytes.append(contentsOf: entry)
            ends.append(bytes.count)
        }
        bytes.withUnsafeBytes { all in
            encode(
                count: entries.count,
                entry: { UnsafeRawBufferPointer(rebasing: all[($0 == 0 ? 0 : ends[$0 - 1])..<ends[$0]]) },
                into: page, pageNumber: pageNumber, generation: generation, salt: salt)
        }
    }

    /// Encodes a leaf of `count` entries lent by `entry` (entries packed back to back, as a writer holds them: no
    /// array per entry) into `page` (pageSize bytes, zeroed) and seals it.
    ///
    /// - Parameters:
    ///   - count: at least one.
    ///   - entry: entry `i`'s bytes, valid for the whole call: strictly increasing, each 9 ...
    ///     ``PageFormat/maximumIndexEntry(pageSize:)`` bytes; they must fit the page (preconditions).
    ///   - page: the whole page buffer (page-size bytes, zeroed).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        count: Int, entry: (Int) -> UnsafeRawBufferPointer, into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        precondition(count > 0)
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        let first = entry(0)
        let prefixLength = commonPrefixLength(first, entry(count - 1))
        let body = PageFormat.headerSize
        let offsets = body + lengthSize + prefixLength
        var data = offsets + lengthSize * count
        precondition(data <= page.count, "index leaf overflows")
        page.storeLE(UInt16(prefixLength), at: body)
        UnsafeMutableRawBufferPointer(rebasing: page[(body + lengthSize)..<offsets]).copyMemory(
            from: UnsafeRawBufferPointer(rebasing: first[..<prefixLength]))
        for index in 0..<count {
            let bytes = entry(index)
            precondition(bytes.count > IndexKey.rowIDSize && bytes.count <= maximum, "index entry length")
            let suffix = bytes.count - prefixLength
            precondition(data + suffix <= page.count, "index leaf overflows")
            page.storeLE(UInt16(data - body), at: offsets + lengthSize * index)
            UnsafeMutableRawBufferPointer(rebasing: page[data..<(data + suffix)]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: bytes[prefixLength...]))
            data += suffix
        }
        PageHeader(
            type: .indexLeaf, itemCount: count, pageNumber: pageNumber, generation: generation,
            bodyLength: data - body, extra: 0
        ).seal(page, salt: salt)
    }

    /// The number of leading bytes `a` and `b` share, compared eight at a time (a bulk load asks it of every entry).
    @inline(__always)
    public static func commonPrefixLength(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let limit = min(a.count, b.count)
        var length = 0
        // Safe: each load reads length ..< length + 8, within both buffers.
        while length &+ 8 <= limit {
            let difference =
                a.loadUnaligned(fromByteOffset: length, as: UInt64.self)
                ^ b.loadUnaligned(fromByteOffset: length, as: UInt64.self)
            if difference != 0 { return length &+ UInt64(littleEndian: difference).trailingZeroBitCount / 8 }
            length &+= 8
        }
        while length < limit, a[length] == b[length] { length &+= 1 }
        return length
    }

    /// Checks every reader rule of a verified index leaf without allocating: after it, an ``IndexLeafPageView``
    /// of the page needs no further checks.
    ///
    /// - Throws: ``FormatError`` for an empty leaf, flags set, a prefix or offsets that overrun the body, offsets
    ///   that do not start right after the offset array and increase to the body's end, an entry length outside
    ///   9 ... maximumIndexEntry, entries out of order, or a prefix that is not exactly what the first and the
    ///   last entry share.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .indexLeaf, header.extra == 0, header.flags == 0 else {
            throw .invalid("not an index leaf page")
        }
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        let body = header.body(of: page)
        let count = header.itemCount
        guard count >= 1, body.count >= lengthSize else {
            throw .invalid("index leaf item count \(count) cannot fit its body")
        }
        let prefixLength = Int(UInt16(littleEndian: body.loadUnaligned(as: UInt16.self)))
        guard prefixLength <= maximum, lengthSize + prefixLength + lengthSize * count <= body.count else {
            throw .invalid("index leaf prefix of \(prefixLength) bytes and \(count) offsets overrun its body")
        }
        let view = IndexLeafPageView(unvalidatedBody: body, count: count, prefixLength: prefixLength)
        guard view.storedOffset(0) == view.suffixesOffset else {
            throw .invalid("the first index entry does not follow the offsets")
        }
        for index in 0..<count {
            // Reads clamp offsets to the body; a stored one beyond it is damage, not an entry ending the body.
            guard view.storedOffset(index) <= body.count else {
                throw .invalid("index entry \(index) starts past the body")
            }
            let suffix = view.start(of: index + 1) - view.start(of: index)
            guard suffix >= 0, prefixLength + suffix > IndexKey.rowIDSize, prefixLength + suffix <= maximum else {
                throw .invalid("index entry of \(prefixLength)+\(suffix) bytes outside 9...\(maximum)")
            }
            if index > 0, IndexKey.compare(view.suffix(at: index - 1), view.suffix(at: index)) >= 0 {
                throw .invalid("index leaf entries out of order")
            }
        }
        // The prefix is all the first and last entries share: their suffixes differ in their first byte (or one
        // is empty, when a single entry is the whole prefix).
        let first = view.suffix(at: 0)
        let last = view.suffix(at: count - 1)
        if count > 1, !first.isEmpty, first[0] == last[0] {
            throw .invalid("index leaf prefix of \(prefixLength) bytes is shorter than its entries share")
        }
        if count == 1, !first.isEmpty { throw .invalid("a one-entry index leaf's prefix is not the whole entry") }
    }

    /// Decodes a verified index leaf page into its entries (for writers, which change leaves, and for tools).
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the entries in increasing order.
    /// - Throws: ``FormatError`` as ``validate(_:header:)``.
    public static func decode(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) -> [[UInt8]] {
        try validate(page, header: header)
        let view = IndexLeafPageView(validatedPage: page, header: header)
        return (0..<view.count).map { view.entry(at: $0) }
    }
}

/// An index leaf read where it lies: binary search over its entries' suffixes once the prefix they share is
/// compared, and entries lent as the prefix and each suffix put together in a buffer of the call.
///
/// Make one only from a page that passed ``IndexLeafPage/validate(_:header:)``.
public struct IndexLeafPageView {
    private let body: UnsafeRawBufferPointer
    /// The number of entries.
    public let count: Int
    /// The bytes every entry starts with.
    public let prefix: UnsafeRawBufferPointer
    /// Where the suffix offsets end and the suffixes start.
    let suffixesOffset: Int

    /// A view of a page that passed ``IndexLeafPage/validate(_:header:)``.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        let body = header.body(of: page)
        self.init(
            unvalidatedBody: body, count: header.itemCount,
            prefixLength: Int(UInt16(littleEndian: body.loadUnaligned(as: UInt16.self))))
    }

    /// A view whose prefix and offsets the caller has checked to fit the body.
    @inline(__always)
    init(unvalidatedBody body: UnsafeRawBufferPointer, count: Int, prefixLength: Int) {
        self.body = body
        self.count = count
        prefix = UnsafeRawBufferPointer(
            rebasing: body[IndexLeafPage.lengthSize..<(IndexLeafPage.lengthSize &+ prefixLength)])
        suffixesOffset = IndexLeafPage.lengthSize &+ prefixLength &+ IndexLeafPage.lengthSize &* count
    }

    /// Offset `index` as stored (`0 ..< count`, in a body whose offsets the caller checked to fit).
    @inline(__always)
    func storedOffset(_ index: Int) -> Int {
        let at = IndexLeafPage.lengthSize &+ prefix.count &+ index &* IndexLeafPage.lengthSize
        return Int(UInt16(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
    }

    /// Where suffix `index` starts in the body; `count` gives the body's end. Clamped to the body, so that even an
    /// unvalidated page is never read outside it (validation then rejects the lengths this yields).
    @inline(__always)
    func start(of index: Int) -> Int {
        guard index < count else { return body.count }
        return min(storedOffset(index), body.count)
    }

    /// The bytes of entry `index` after the prefix.
    @inline(__always)
    public func suffix(at index: Int) -> UnsafeRawBufferPointer {
        let start = start(of: index)
        return UnsafeRawBufferPointer(rebasing: body[start..<max(start, self.start(of: index &+ 1))])
    }

    /// A copy of entry `index` (`0 ..< count`): encoded key ++ row ID.
    public func entry(at index: Int) -> [UInt8] { Array(prefix) + Array(suffix(at: index)) }

    /// Calls `body` with entries `range`, in increasing order or, when `reverse`, decreasing, each put together in
    /// a buffer valid only during the call; stops when `body` returns false.
    /// - Returns: false when `body` stopped the walk.
    @inline(__always)
    public func forEachEntry(
        in range: Range<Int>, reverse: Bool, _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) rethrows -> Bool {
        guard !range.isEmpty else { return true }
        return try withUnsafeTemporaryAllocation(byteCount: self.body.count + prefix.count, alignment: 1) { scratch in
            if !prefix.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: scratch[..<prefix.count]).copyMemory(from: prefix)
            }
            for position in 0..<range.count {
                let index = reverse ? range.upperBound &- 1 &- position : range.lowerBound &+ position
                let suffix = suffix(at: index)
                let end = prefix.count &+ suffix.count
                if !suffix.isEmpty {
                    UnsafeMutableRawBufferPointer(rebasing: scratch[prefix.count..<end]).copyMemory(from: suffix)
                }
                if try !body(UnsafeRawBufferPointer(rebasing: scratch[..<end])) { return false }
            }
            return true
        }
    }

    /// The position of the first entry not below `key`, and whether it equals `key`.
    @inline(__always)
    public func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        // Against the shared prefix first: a key outside it is below or above every entry.
        let shared = min(prefix.count, key.count)
        let head = IndexKey.compare(
            UnsafeRawBufferPointer(rebasing: key[..<shared]), UnsafeRawBufferPointer(rebasing: prefix[..<shared]))
        if head < 0 || (head == 0 && key.count < prefix.count) { return (0, false) }
        if head > 0 { return (count, false) }
        let rest = UnsafeRawBufferPointer(rebasing: key[prefix.count...])
        var low = 0
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if IndexKey.compare(suffix(at: middle), rest) < 0 { low = middle &+ 1 } else { high = middle }
        }
        return (low, low < count && IndexKey.compare(suffix(at: low), rest) == 0)
    }
}
