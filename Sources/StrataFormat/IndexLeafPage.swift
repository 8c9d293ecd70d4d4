/// A secondary-index leaf page: index entries in strictly increasing byte order (FORMAT.md, "Index leaf page"), laid
/// out to be searched where it lies.
///
/// ```
/// body := offset:u16[itemCount] entryBytes          entry i = body[offset[i] ..< offset[i + 1]]
/// ```
/// The last entry ends the body. Each entry is an encoded key ++ rowID (u64 big-endian), 9 ... maximumIndexEntry
/// bytes. `extra` is 0 (the level). An index leaf is never empty.
public enum IndexLeafPage {
    /// The body size of a leaf holding entries of these lengths.
    public static func bodySize(entryLengths: some Sequence<Int>) -> Int {
        entryLengths.reduce(0) { $0 + PageFormat.indexLengthSize + $1 }
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
        precondition(!entries.isEmpty)
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        let body = PageFormat.headerSize
        var data = body + PageFormat.indexLengthSize * entries.count
        precondition(data <= page.count, "index leaf overflows")
        for (index, entry) in entries.enumerated() {
            precondition(entry.count > IndexKey.rowIDSize && entry.count <= maximum, "index entry length")
            precondition(data + entry.count <= page.count, "index leaf overflows")
            page.storeLE(UInt16(data - body), at: body + PageFormat.indexLengthSize * index)
            entry.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: page[data..<(data + entry.count)]).copyMemory(from: $0)
            }
            data += entry.count
        }
        PageHeader(
            type: .indexLeaf, itemCount: entries.count, pageNumber: pageNumber, generation: generation,
            bodyLength: data - body, extra: 0
        ).seal(page, salt: salt)
    }

    /// Checks every reader rule of a verified index leaf without allocating: after it, an ``IndexLeafPageView``
    /// of the page needs no further checks.
    ///
    /// - Throws: ``FormatError`` for an empty leaf, offsets that do not start right after the offset array and
    ///   increase to the body's end, an entry length outside 9 ... maximumIndexEntry, or entries out of order.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .indexLeaf, header.extra == 0 else { throw .invalid("not an index leaf page") }
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        // Each entry takes at least 11 bytes.
        guard header.itemCount >= 1, header.itemCount <= header.bodyLength / (PageFormat.indexLengthSize + 9) else {
            throw .invalid("index leaf item count \(header.itemCount) cannot fit its body")
        }
        let view = IndexLeafPageView(unvalidatedPage: page, header: header)
        guard view.start(of: 0) == PageFormat.indexLengthSize * header.itemCount else {
            throw .invalid("the first index entry does not follow the offsets")
        }
        for index in 0..<header.itemCount {
            let length = view.start(of: index + 1) - view.start(of: index)
            guard length > IndexKey.rowIDSize, length <= maximum else {
                throw .invalid("index entry of \(length) bytes outside 9...\(maximum)")
            }
            if index > 0, IndexKey.compare(view.entry(at: index - 1), view.entry(at: index)) >= 0 {
                throw .invalid("index leaf entries out of order")
            }
        }
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
        return (0..<view.count).map { Array(view.entry(at: $0)) }
    }
}

/// An index leaf read where it lies: binary search over its entries, each lent as bytes of the page.
///
/// Make one only from a page that passed ``IndexLeafPage/validate(_:header:)``.
public struct IndexLeafPageView {
    private let body: UnsafeRawBufferPointer
    /// The number of entries.
    public let count: Int

    /// A view of a page that passed ``IndexLeafPage/validate(_:header:)``.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        self.init(unvalidatedPage: page, header: header)
    }

    @inline(__always)
    init(unvalidatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        body = header.body(of: page)
        count = header.itemCount
    }

    /// Where entry `index` starts in the body; `count` gives the body's end. Clamped to the body, so that even an
    /// unvalidated page is never read outside it (validation then rejects the lengths this yields).
    @inline(__always)
    func start(of index: Int) -> Int {
        guard index < count else { return body.count }
        let offset = Int(UInt16(littleEndian: body.loadUnaligned(fromByteOffset: index &* 2, as: UInt16.self)))
        return min(offset, body.count)
    }

    /// The bytes of entry `index` (`0 ..< count`): encoded key ++ row ID.
    @inline(__always)
    public func entry(at index: Int) -> UnsafeRawBufferPointer {
        let start = start(of: index)
        return UnsafeRawBufferPointer(rebasing: body[start..<max(start, self.start(of: index &+ 1))])
    }

    /// The position of the first entry not below `key`, and whether it equals `key`.
    @inline(__always)
    public func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        var low = 0
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if IndexKey.compare(entry(at: middle), key) < 0 { low = middle &+ 1 } else { high = middle }
        }
        return (low, low < count && IndexKey.compare(entry(at: low), key) == 0)
    }
}
