/// A page of a long value's overflow chain (FORMAT.md, "Overflow page").
///
/// ```
/// body := next:u64 data[bodyLength - 8]
/// ```
/// `next` is the following page of the chain, always a smaller page number, or `noPage` at the end;
/// `extra` repeats the data length. A chain is written last chunk first, so its first page is its highest.
public enum OverflowPage {
    /// Encodes one page of an overflow chain into `page` and seals it.
    ///
    /// - Parameters:
    ///   - data: the chunk this page holds: 1 to ``PageFormat/overflowCapacity(pageSize:)`` bytes.
    ///   - next: the chain's following page, which must have a smaller page number, or
    ///     ``PageFormat/noPage`` for the last page.
    ///   - page: the whole page buffer (page-size bytes, zeroed).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encode(
        data: UnsafeRawBufferPointer, next: UInt64, into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        precondition(data.count >= 1 && data.count <= PageFormat.overflowCapacity(pageSize: page.count))
        precondition(next == PageFormat.noPage || next < pageNumber)
        page.storeLE(next, at: PageFormat.headerSize)
        if !data.isEmpty {
            let start = PageFormat.headerSize + 8
            UnsafeMutableRawBufferPointer(rebasing: page[start..<(start + data.count)]).copyMemory(from: data)
        }
        PageHeader(
            type: .overflow, itemCount: 0, pageNumber: pageNumber, generation: generation,
            bodyLength: 8 + data.count, extra: UInt32(data.count)
        ).seal(page, salt: salt)
    }

    /// Decodes a verified overflow page into its next pointer and its data.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the next page of the chain (or ``PageFormat/noPage``) and a view of the data in `page`.
    /// - Throws: ``FormatError/invalidField(_:)`` when the page is not an overflow page, holds no data or a
    ///   length that disagrees with its body, or points at a next page that is not before it.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (next: UInt64, data: UnsafeRawBufferPointer) {
        guard header.type == .overflow else { throw .invalid("not an overflow page") }
        guard header.bodyLength >= 8, header.bodyLength - 8 == Int(header.extra), header.bodyLength > 8 else {
            throw .invalid("overflow page data length \(header.extra) does not match its body")
        }
        var reader = ByteReader(header.body(of: page))
        let next = try reader.readUInt64LE()
        guard next == PageFormat.noPage || (next >= 1 && next < header.pageNumber) else {
            throw .invalid("overflow next page \(next) does not precede page \(header.pageNumber)")
        }
        return (next, try reader.readSlice(reader.remaining))
    }
}
