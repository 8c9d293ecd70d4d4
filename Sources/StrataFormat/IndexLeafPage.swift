/// A secondary-index leaf page: index entries in strictly increasing byte order (FORMAT.md, "Index leaf page").
///
/// ```
/// body  := entry[itemCount]
/// entry := length:u16 bytes[length]        bytes = encoded key ++ rowID (u64 big-endian), 9 ... maximumIndexEntry
/// ```
/// `extra` is 0 (the level). An index leaf is never empty.
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
        var offset = PageFormat.headerSize
        for entry in entries {
            precondition(entry.count > IndexKey.rowIDSize && entry.count <= maximum, "index entry length")
            precondition(offset + PageFormat.indexLengthSize + entry.count <= page.count, "index leaf overflows")
            page.storeLE(UInt16(entry.count), at: offset)
            offset += PageFormat.indexLengthSize
            entry.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: page[offset..<(offset + entry.count)]).copyMemory(from: $0)
            }
            offset += entry.count
        }
        PageHeader(
            type: .indexLeaf, itemCount: entries.count, pageNumber: pageNumber, generation: generation,
            bodyLength: offset - PageFormat.headerSize, extra: 0
        ).seal(page, salt: salt)
    }

    /// Decodes the entries of a verified index leaf page.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the entries in increasing order.
    /// - Throws: ``FormatError`` when the page is not an index leaf, is empty, an entry overruns the body or
    ///   has a length outside 9 ... maximumIndexEntry, entries are not strictly increasing, or bytes follow
    ///   the last entry. Entries are not decoded as keys here (``IndexKey/decodeEntry(_:)`` does that).
    public static func decode(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) -> [[UInt8]] {
        guard header.type == .indexLeaf, header.extra == 0 else { throw .invalid("not an index leaf page") }
        let maximum = PageFormat.maximumIndexEntry(pageSize: page.count)
        // Each entry takes at least 11 bytes: bound the count before reserving.
        guard header.itemCount >= 1, header.itemCount <= header.bodyLength / (PageFormat.indexLengthSize + 9) else {
            throw .invalid("index leaf item count \(header.itemCount) cannot fit its body")
        }
        var reader = ByteReader(header.body(of: page))
        var entries: [[UInt8]] = []
        entries.reserveCapacity(header.itemCount)
        for _ in 0..<header.itemCount {
            let length = Int(try reader.readUInt16LE())
            guard length > IndexKey.rowIDSize, length <= maximum else {
                throw .invalid("index entry of \(length) bytes outside 9...\(maximum)")
            }
            let entry = try reader.readBytes(length)
            if let last = entries.last, IndexKey.compare(last, entry) >= 0 {
                throw .invalid("index leaf entries out of order")
            }
            entries.append(entry)
        }
        guard reader.remaining == 0 else {
            throw .invalid("\(reader.remaining) stray bytes after the last index entry")
        }
        return entries
    }
}
