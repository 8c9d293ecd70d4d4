/// A secondary-index internal page: child pointers separated by byte-string keys (FORMAT.md, "Index
/// internal page"), laid out to be searched where it lies.
///
/// ```
/// body := child:u64[itemCount] offset:u16[itemCount − 1] separatorBytes
/// ```
/// Separator i (1 ..< itemCount) is `body[offset[i − 1] ..< offset[i]]`, the last ending the body. `itemCount` is
/// the number of children (at least 2); `extra` is the level (1 above the leaves, ...). Child i (i ≥ 1) holds
/// exactly the entries `e` with `separator[i] <= e < separator[i+1]` (bytewise); separators strictly increase,
/// are 1 ... maximumIndexEntry bytes long, and need not be entries (a leaf split stores the shortest byte string
/// that divides the two leaves). Every child page number is smaller than the page's own.
public enum IndexInternalPage {
    /// The body size of an internal node whose separators (`keys[1...]`) have these lengths.
    public static func bodySize(separatorLengths: some Sequence<Int>) -> Int {
        separatorLengths.reduce(PageFormat.internalFirstChildSize) { $0 + PageFormat.indexInternalEntryOverhead + $1 }
    }

    /// Encodes an internal node; `keys[0]` is not stored (child 0 takes every entry below `keys[1]`).
    ///
    /// - Parameters:
    ///   - level: the node's level, at least 1.
    ///   - keys: one separator per child, strictly increasing from `keys[1]`; `keys[0]` is ignored.
    ///   - children: the child page numbers, at least 2, each smaller than `pageNumber`.
    ///   - page: the whole page buffer (page-size bytes, zeroed); the node must fit it (a precondition).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        level: Int, keys: [[UInt8]], children: [UInt64], into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        precondition(keys.count == children.count && children.count >= 2 && level >= 1)
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        let count = children.count
        let body = PageFormat.headerSize
        let offsets = body + 8 * count
        var data = offsets + PageFormat.indexLengthSize * (count - 1)
        precondition(data <= page.count, "node overflows")
        for index in 0..<count { page.storeLE(children[index], at: body + 8 * index) }
        for index in 1..<count {
            let key = keys[index]
            precondition(!key.isEmpty && key.count <= maximum, "separator length")
            precondition(data + key.count <= page.count, "node overflows")
            page.storeLE(UInt16(data - body), at: offsets + PageFormat.indexLengthSize * (index - 1))
            key.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: page[data..<(data + key.count)]).copyMemory(from: $0)
            }
            data += key.count
        }
        PageHeader(
            type: .indexInternal, itemCount: count, pageNumber: pageNumber, generation: generation,
            bodyLength: data - body, extra: UInt32(level)
        ).seal(page, salt: salt)
    }

    /// Checks every reader rule of a verified index internal page without allocating: after it, an
    /// ``IndexInternalPageView`` of the page needs no further checks.
    ///
    /// - Throws: ``FormatError`` for fewer than two children, a level out of range, offsets that do not start
    ///   right after the offset array and increase to the body's end, a separator length outside
    ///   1 ... maximumIndexEntry, separators out of order, or a child that does not precede the page.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .indexInternal else { throw .invalid("not an index internal page") }
        let level = Int(header.extra)
        guard level >= 1, level < PageFormat.maximumTreeHeight else {
            throw .invalid("index internal level \(level) out of range")
        }
        let count = header.itemCount
        // Each child after the first takes at least 11 bytes.
        guard count >= 2, count - 1 <= (header.bodyLength - min(header.bodyLength, 8)) / 11 else {
            throw .invalid("index internal page with \(count) children in a body of \(header.bodyLength) bytes")
        }
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        let view = IndexInternalPageView(validatedPage: page, header: header)
        guard view.start(of: 1) == 8 * count + PageFormat.indexLengthSize * (count - 1) else {
            throw .invalid("the first separator does not follow the offsets")
        }
        for index in 1..<count {
            let length = view.start(of: index + 1) - view.start(of: index)
            guard length >= 1, length <= maximum else {
                throw .invalid("separator of \(length) bytes outside 1...\(maximum)")
            }
            if index > 1, IndexKey.compare(view.separator(at: index - 1), view.separator(at: index)) >= 0 {
                throw .invalid("index separators out of order")
            }
        }
        for index in 0..<count {
            let child = view.child(at: index)
            guard child != 0, child < header.pageNumber else {
                throw .invalid("child page \(child) does not precede its parent \(header.pageNumber)")
            }
        }
    }

    /// Decodes a verified index internal page. `keys[0]` is returned empty.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the level, one separator per child (the first empty) and the child page numbers.
    /// - Throws: ``FormatError`` as ``validate(_:header:)``.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (level: Int, keys: [[UInt8]], children: [UInt64]) {
        try validate(page, header: header)
        let view = IndexInternalPageView(validatedPage: page, header: header)
        let keys = [[]] + (1..<view.count).map { Array(view.separator(at: $0)) }
        return (view.level, keys, (0..<view.count).map { view.child(at: $0) })
    }
}

/// An index internal page read where it lies: binary search over its separators, lent as bytes of the page.
///
/// Make one only from a page that passed ``IndexInternalPage/validate(_:header:)`` (reads stay inside the body
/// even before, so validation itself uses it).
public struct IndexInternalPageView {
    private let body: UnsafeRawBufferPointer
    /// The number of children, at least 2.
    public let count: Int
    /// The node's level (1: its children are leaves).
    public let level: Int

    /// A view of a page whose header says it is an index internal page.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        body = header.body(of: page)
        count = header.itemCount
        level = Int(header.extra)
    }

    /// The page number of child `index` (`0 ..< count`).
    @inline(__always)
    public func child(at index: Int) -> UInt64 {
        UInt64(littleEndian: body.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self))
    }

    /// Where separator `index` (1 ..< count) starts in the body; `count` gives the body's end. Clamped to the body.
    @inline(__always)
    func start(of index: Int) -> Int {
        guard index < count else { return body.count }
        let at = count &* 8 &+ (index &- 1) &* PageFormat.indexLengthSize
        let offset = Int(UInt16(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
        return min(offset, body.count)
    }

    /// The separator before child `index` (`1 ..< count`).
    @inline(__always)
    public func separator(at index: Int) -> UnsafeRawBufferPointer {
        let start = start(of: index)
        return UnsafeRawBufferPointer(rebasing: body[start..<max(start, self.start(of: index &+ 1))])
    }

    /// The child whose range holds `key`: the last i in 1..<count with separator(i) <= key, else 0.
    @inline(__always)
    public func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        var low = 1
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if IndexKey.compare(separator(at: middle), key) <= 0 { low = middle &+ 1 } else { high = middle }
        }
        return low &- 1
    }

    /// The child holding the entries just below `key`: the last i in 1..<count with separator(i) < key, else 0.
    @inline(__always)
    public func childIndex(below key: UnsafeRawBufferPointer) -> Int {
        var low = 1
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if IndexKey.compare(separator(at: middle), key) < 0 { low = middle &+ 1 } else { high = middle }
        }
        return low &- 1
    }
}
