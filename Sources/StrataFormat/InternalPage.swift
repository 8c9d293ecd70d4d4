/// A B+tree internal page: child pointers separated by row-ID keys (FORMAT.md, "Internal page").
///
/// ```
/// body := firstChild:u64 (separator:u64 child:u64)[itemCount - 1]
/// ```
/// `itemCount` is the number of children (at least 2); `extra` is the level (1 above the leaves, ...).
/// Child i (i >= 1) holds exactly the rows with separator[i] <= rowID < separator[i+1]; every child
/// page number is smaller than the page's own.
public enum InternalPage {
    /// The body size of an internal node with `childCount` children.
    public static func bodySize(childCount: Int) -> Int {
        PageFormat.internalFirstChildSize + PageFormat.internalEntrySize * (childCount - 1)
    }

    /// Encodes an internal node; `keys[0]` is not stored (child 0 takes every key below `keys[1]`).
    ///
    /// - Parameters:
    ///   - level: the node's level, at least 1 (1: its children are leaves).
    ///   - keys: one separator per child, increasing; `keys[0]` is ignored.
    ///   - children: the child page numbers, at least 2, each smaller than `pageNumber`.
    ///   - page: the whole page buffer (page-size bytes, zeroed); the node must fit it (a precondition).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        level: Int, keys: [UInt64], children: [UInt64], into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        precondition(keys.count == children.count && children.count >= 2 && level >= 1)
        var offset = PageFormat.headerSize
        page.storeLE(children[0], at: offset)
        offset += 8
        for index in 1..<children.count {
            page.storeLE(keys[index], at: offset)
            page.storeLE(children[index], at: offset + 8)
            offset += 16
        }
        precondition(offset <= page.count, "internal node does not fit its page")
        PageHeader(
            type: .internal, itemCount: children.count, pageNumber: pageNumber, generation: generation,
            bodyLength: offset - PageFormat.headerSize, extra: UInt32(level)
        ).seal(page, salt: salt)
    }

    /// Checks every reader rule of a verified internal page without allocating: after it, an
    /// ``InternalPageView`` of the page needs no further checks.
    ///
    /// - Throws: ``FormatError`` for fewer than two children, a body of the wrong size, separators
    ///   not strictly increasing, a child not before the page, or a level outside `1..<maximumTreeHeight`.
    public static func validate(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) {
        guard header.type == .internal else { throw .invalid("not an internal page") }
        let level = Int(header.extra)
        guard level >= 1, level < PageFormat.maximumTreeHeight else {
            throw .invalid("internal level \(level) out of range")
        }
        let count = header.itemCount
        guard count >= 2, header.bodyLength == bodySize(childCount: count) else {
            throw .invalid("internal page with \(count) children has a body of \(header.bodyLength) bytes")
        }
        let view = InternalPageView(validatedPage: page, header: header)
        for index in 0..<count {
            let child = view.child(at: index)
            guard child != 0, child < header.pageNumber else {
                throw .invalid("child page \(child) does not precede its parent \(header.pageNumber)")
            }
            if index > 1, view.separator(at: index) <= view.separator(at: index - 1) {
                throw .invalid(
                    "separators out of order (\(view.separator(at: index - 1)) then \(view.separator(at: index)))")
            }
        }
    }

    /// Decodes a verified internal page. `keys[0]` is returned as 0.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the node's level, separators and child page numbers, one separator per child.
    /// - Throws: ``FormatError`` as ``validate(_:header:)``.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (level: Int, keys: [UInt64], children: [UInt64]) {
        try validate(page, header: header)
        let view = InternalPageView(validatedPage: page, header: header)
        var keys = [UInt64](repeating: 0, count: view.count)
        var children = [UInt64](repeating: 0, count: view.count)
        for index in 0..<view.count {
            if index > 0 { keys[index] = view.separator(at: index) }
            children[index] = view.child(at: index)
        }
        return (view.level, keys, children)
    }
}

/// An internal page read where it lies: binary search over its separators.
///
/// Make one only from a page that passed ``InternalPage/validate(_:header:)`` (its body length then matches its
/// child count, so every read below stays inside it).
public struct InternalPageView {
    private let body: UnsafeRawBufferPointer
    /// The number of children, at least 2.
    public let count: Int
    /// The node's level (1: its children are leaves).
    public let level: Int

    /// A view of a page whose header says it is an internal page with a body of its children's size.
    @inline(__always)
    public init(validatedPage page: UnsafeRawBufferPointer, header: PageHeader) {
        self.body = header.body(of: page)
        self.count = header.itemCount
        self.level = Int(header.extra)
    }

    /// The page number of child `index` (`0 ..< count`).
    @inline(__always)
    public func child(at index: Int) -> UInt64 {
        let at = index == 0 ? 0 : PageFormat.internalFirstChildSize &+ (index &- 1) &* PageFormat.internalEntrySize &+ 8
        return UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The smallest row ID of child `index` (`1 ..< count`).
    @inline(__always)
    public func separator(at index: Int) -> UInt64 {
        let at = PageFormat.internalFirstChildSize &+ (index &- 1) &* PageFormat.internalEntrySize
        return UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }

    /// The index of the child whose key range holds `key`: the last i in 1..<count with separator(i) <= key, else 0.
    ///
    /// Separators of a row tree are usually evenly spaced (leaves of dense row IDs, filled alike), so the first
    /// probe interpolates between the first and last separator and is checked against its neighbour; a miss
    /// falls back to the binary search.
    @inline(__always)
    public func childIndex(for key: UInt64) -> Int {
        if count > 2 {
            let first = separator(at: 1)
            let last = separator(at: count &- 1)
            if key >= first, key < last, last > first {
                let span = last &- first
                // (key - first) / span < 1, times count - 2 intervals: fits in a Double without loss that matters.
                let guess = 1 &+ Int(Double(key &- first) / Double(span) * Double(count &- 2))
                if guess < count &- 1, separator(at: guess) <= key, key < separator(at: guess &+ 1) { return guess }
            }
        }
        var low = 1
        var high = count
        while low < high {
            let middle = (low &+ high) >> 1
            if separator(at: middle) <= key { low = middle &+ 1 } else { high = middle }
        }
        return low &- 1
    }
}
