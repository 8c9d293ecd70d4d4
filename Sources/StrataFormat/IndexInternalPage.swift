/// A secondary-index internal page: child pointers separated by byte-string keys (FORMAT.md, "Index
/// internal page").
///
/// ```
/// body := firstChild:u64 (length:u16 separator[length] child:u64)[itemCount − 1]
/// ```
/// `itemCount` is the number of children (at least 2); `extra` is the level (1 above the leaves, ...).
/// Child i (i ≥ 1) holds exactly the entries `e` with `separator[i] <= e < separator[i+1]` (bytewise);
/// separators strictly increase, are 1 ... maximumIndexEntry bytes long, and need not be entries (a leaf
/// split stores the shortest byte string that divides the two leaves). Every child page number is smaller
/// than the page's own.
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
        var offset = PageFormat.headerSize
        page.storeLE(children[0], at: offset)
        offset += 8
        for index in 1..<children.count {
            let key = keys[index]
            precondition(!key.isEmpty && key.count <= maximum, "separator length")
            precondition(offset + PageFormat.indexInternalEntryOverhead + key.count <= page.count, "node overflows")
            page.storeLE(UInt16(key.count), at: offset)
            offset += PageFormat.indexLengthSize
            key.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: page[offset..<(offset + key.count)]).copyMemory(from: $0)
            }
            offset += key.count
            page.storeLE(children[index], at: offset)
            offset += 8
        }
        PageHeader(
            type: .indexInternal, itemCount: children.count, pageNumber: pageNumber, generation: generation,
            bodyLength: offset - PageFormat.headerSize, extra: UInt32(level)
        ).seal(page, salt: salt)
    }

    /// Decodes a verified index internal page. `keys[0]` is returned empty.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the node's level, separators and child page numbers, one separator per child.
    /// - Throws: ``FormatError`` for fewer than two children, a separator length outside 1 ... maximumIndexEntry,
    ///   separators not strictly increasing, a child not before the page, a level outside
    ///   `1..<maximumTreeHeight`, or bytes after the last child.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (level: Int, keys: [[UInt8]], children: [UInt64]) {
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
        var reader = ByteReader(header.body(of: page))
        var keys: [[UInt8]] = [[]]
        var children: [UInt64] = [try reader.readUInt64LE()]
        keys.reserveCapacity(count)
        children.reserveCapacity(count)
        for index in 1..<count {
            let length = Int(try reader.readUInt16LE())
            guard length >= 1, length <= maximum else {
                throw .invalid("separator of \(length) bytes outside 1...\(maximum)")
            }
            let key = try reader.readBytes(length)
            if index > 1, IndexKey.compare(keys[index - 1], key) >= 0 {
                throw .invalid("index separators out of order")
            }
            keys.append(key)
            children.append(try reader.readUInt64LE())
        }
        guard reader.remaining == 0 else {
            throw .invalid("\(reader.remaining) stray bytes after the last index child")
        }
        for child in children where child == 0 || child >= header.pageNumber {
            throw .invalid("child page \(child) does not precede its parent \(header.pageNumber)")
        }
        return (level, keys, children)
    }
}
