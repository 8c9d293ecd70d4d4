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

    /// Decodes a verified internal page. `keys[0]` is returned as 0.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the node's level, separators and child page numbers, one separator per child.
    ///
    /// - Throws: ``FormatError`` for fewer than two children, a body of the wrong size, separators
    ///   not strictly increasing, a child not before the page, or a level outside `1..<maximumTreeHeight`.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (level: Int, keys: [UInt64], children: [UInt64]) {
        guard header.type == .internal else { throw .invalid("not an internal page") }
        let level = Int(header.extra)
        guard level >= 1, level < PageFormat.maximumTreeHeight else {
            throw .invalid("internal level \(level) out of range")
        }
        let count = header.itemCount
        guard count >= 2, header.bodyLength == bodySize(childCount: count) else {
            throw .invalid("internal page with \(count) children has a body of \(header.bodyLength) bytes")
        }
        var reader = ByteReader(header.body(of: page))
        var keys = [UInt64](repeating: 0, count: count)
        var children = [UInt64](repeating: 0, count: count)
        children[0] = try reader.readUInt64LE()
        for index in 1..<count {
            keys[index] = try reader.readUInt64LE()
            children[index] = try reader.readUInt64LE()
            if index > 1, keys[index] <= keys[index - 1] {
                throw .invalid("separators out of order (\(keys[index - 1]) then \(keys[index]))")
            }
        }
        for child in children where child == 0 || child >= header.pageNumber {
            throw .invalid("child page \(child) does not precede its parent \(header.pageNumber)")
        }
        return (level, keys, children)
    }
}
