/// A B+tree leaf page: rows in increasing row-ID order (FORMAT.md, "Leaf page").
///
/// ```
/// body := cell[itemCount]
/// cell := rowID:u64 kind:u8 length:u32 ( kind 0: value[length] | kind 1: firstOverflowPage:u64 )
/// ```
/// `extra` is the node level, 0.
public enum LeafPage {
    static let inlineKind: UInt8 = 0
    static let overflowKind: UInt8 = 1

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
        var offset = PageFormat.headerSize
        for index in keys.indices {
            page.storeLE(keys[index], at: offset)
            switch values[index] {
            case .bytes(let bytes):
                precondition(bytes.count <= maximumInline, "long values must be moved to overflow pages first")
                page.storeBytes(of: inlineKind, toByteOffset: offset + 8, as: UInt8.self)
                page.storeLE(UInt32(bytes.count), at: offset + 9)
                bytes.withUnsafeBytes { source in
                    if !source.isEmpty {
                        UnsafeMutableRawBufferPointer(rebasing: page[(offset + 13)..<(offset + 13 + bytes.count)])
                            .copyMemory(from: source)
                    }
                }
                offset += PageFormat.leafCellHeaderSize + bytes.count
            case .overflow(let firstPage, let length):
                page.storeBytes(of: overflowKind, toByteOffset: offset + 8, as: UInt8.self)
                page.storeLE(UInt32(length), at: offset + 9)
                page.storeLE(firstPage, at: offset + 13)
                offset += PageFormat.overflowCellSize
            }
        }
        precondition(offset <= page.count, "leaf does not fit its page")
        PageHeader(
            type: .leaf, itemCount: keys.count, pageNumber: pageNumber, generation: generation,
            bodyLength: offset - PageFormat.headerSize, extra: 0
        ).seal(page, salt: salt)
    }

    /// Decodes the cells of a verified leaf page.
    ///
    /// - Parameters:
    ///   - page: the whole page, already verified by ``PageHeader/decode(_:expectedPageNumber:salt:)``.
    ///   - header: its decoded header.
    /// - Returns: the row IDs in increasing order and their values, inline or as overflow-chain references.
    ///
    /// - Throws: ``FormatError`` if cells overrun the body, row IDs are not strictly increasing,
    ///   a kind is unknown, an inline value is longer than the inline limit, or an overflow chain
    ///   does not start at an earlier page.
    public static func decode(
        _ page: UnsafeRawBufferPointer, header: PageHeader
    ) throws(FormatError) -> (keys: [UInt64], values: [LeafValue]) {
        guard header.type == .leaf, header.extra == 0 else { throw .invalid("not a leaf page") }
        let maximumInline = PageFormat.maximumInlineValue(pageSize: page.count)
        var reader = ByteReader(header.body(of: page))
        var keys: [UInt64] = []
        var values: [LeafValue] = []
        // itemCount is bounded by the body size: each cell takes at least 13 bytes.
        guard header.itemCount <= header.bodyLength / PageFormat.leafCellHeaderSize else {
            throw .invalid("leaf item count \(header.itemCount) cannot fit its body")
        }
        keys.reserveCapacity(header.itemCount)
        values.reserveCapacity(header.itemCount)
        for _ in 0..<header.itemCount {
            let key = try reader.readUInt64LE()
            if let last = keys.last, key <= last { throw .invalid("leaf keys out of order (\(last) then \(key))") }
            let kind = try reader.readUInt8()
            let length = Int(try reader.readUInt32LE())
            switch kind {
            case inlineKind:
                guard length <= maximumInline else {
                    throw .invalid("inline value of \(length) bytes exceeds \(maximumInline)")
                }
                values.append(.bytes(try reader.readBytes(length)))
            case overflowKind:
                let first = try reader.readUInt64LE()
                guard first < header.pageNumber, first >= 1 else {
                    throw .invalid("overflow chain at page \(first) does not precede its leaf \(header.pageNumber)")
                }
                guard length > maximumInline, length <= WALFormat.maximumValueSize else {
                    throw .invalid("overflow value length \(length) out of range")
                }
                values.append(.overflow(firstPage: first, length: length))
            default:
                throw .invalid("unknown leaf cell kind \(kind)")
            }
            keys.append(key)
        }
        guard reader.remaining == 0 else { throw .invalid("\(reader.remaining) stray bytes after the last leaf cell") }
        return (keys, values)
    }
}
