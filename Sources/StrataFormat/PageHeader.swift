/// The 32-byte header of every page after page 0, and the page checksum (FORMAT.md, "Page file").
public struct PageHeader: Sendable, Equatable {
    /// What the page holds.
    public var type: PageType
    /// Type-specific layout: a leaf's row-ID delta width (``LeafPage``); 0 for every other page (the index-leaf
    /// reader checks its own).
    public var flags: UInt8
    /// Type-specific count: a leaf's cells, an internal node's children, 0 for other pages. At most `UInt16.max`.
    public var itemCount: Int
    /// The page's own number; a page read at another position does not decode.
    public var pageNumber: UInt64
    /// The checkpoint that wrote the page.
    public var generation: UInt64
    /// The length in bytes of the body that follows the header; the rest of the page is zero padding.
    public var bodyLength: Int
    /// Type-specific: a tree node's level (0 for leaves), an overflow page's data length,
    /// a root-record part's `index << 16 | count`.
    public var extra: UInt32

    /// Creates a header from its fields; ``seal(_:salt:)`` writes it.
    public init(
        type: PageType, flags: UInt8 = 0, itemCount: Int, pageNumber: UInt64, generation: UInt64, bodyLength: Int,
        extra: UInt32
    ) {
        self.type = type
        self.flags = flags
        self.itemCount = itemCount
        self.pageNumber = pageNumber
        self.generation = generation
        self.bodyLength = bodyLength
        self.extra = extra
    }

    /// Writes the header into the first 32 bytes of `page` and then the checksum over the whole page.
    /// The body must already be in place and the padding zero.
    ///
    /// - Parameters:
    ///   - page: the whole page buffer; it must hold the header and ``bodyLength`` bytes (a precondition).
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public func seal(_ page: UnsafeMutableRawBufferPointer, salt: UInt64) {
        precondition(page.count >= PageFormat.headerSize + bodyLength)
        precondition(itemCount <= Int(UInt16.max))
        page.storeBytes(of: type.rawValue, toByteOffset: 4, as: UInt8.self)
        page.storeBytes(of: flags, toByteOffset: 5, as: UInt8.self)
        page.storeLE(UInt16(itemCount), at: 6)
        page.storeLE(pageNumber, at: 8)
        page.storeLE(generation, at: 16)
        page.storeLE(UInt32(bodyLength), at: 24)
        page.storeLE(extra, at: 28)
        let crc = Self.checksum(UnsafeRawBufferPointer(page), salt: salt)
        page.storeLE(CRC32C.mask(crc), at: 0)
    }

    static func checksum(_ page: UnsafeRawBufferPointer, salt: UInt64) -> UInt32 {
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: page[4...]), continuing: CRC32C.checksum(of: salt))
    }

    /// Verifies the checksum and decodes the header of a whole page read at `expectedPageNumber`.
    ///
    /// - Parameters:
    ///   - page: the whole page, page-size bytes.
    ///   - expectedPageNumber: the page number the page was read at.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    /// - Returns: the header; ``body(of:)`` then gives the body.
    ///
    /// - Throws: ``FormatError/checksumMismatch(stored:computed:)`` for damaged bytes (including a page
    ///   that belongs to another store or another position), ``FormatError/invalidField(_:)`` for an
    ///   unknown type, flags set on a page whose type has none, a wrong page number or a body longer than the page;
    ///   ``FormatError/truncated(needed:available:)`` for a buffer shorter than 64 bytes.
    public static func decode(
        _ page: UnsafeRawBufferPointer, expectedPageNumber: UInt64, salt: UInt64
    ) throws(FormatError) -> PageHeader {
        guard page.count >= PageFormat.headerSize * 2 else {
            throw .truncated(needed: PageFormat.headerSize * 2, available: page.count)
        }
        let stored = UInt32(littleEndian: page.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let computed = checksum(page, salt: salt)
        guard CRC32C.unmask(stored) == computed else {
            throw .checksumMismatch(stored: stored, computed: CRC32C.mask(computed))
        }
        return try read(page, expectedPageNumber: expectedPageNumber)
    }

    /// Decodes the header of a whole page whose checksum was verified before (a page read in place again):
    /// every field check of ``decode(_:expectedPageNumber:salt:)`` but the checksum.
    ///
    /// - Throws: as ``decode(_:expectedPageNumber:salt:)``, but never ``FormatError/checksumMismatch(stored:computed:)``.
    public static func read(
        _ page: UnsafeRawBufferPointer, expectedPageNumber: UInt64
    ) throws(FormatError) -> PageHeader {
        guard page.count >= PageFormat.headerSize * 2 else {
            throw .truncated(needed: PageFormat.headerSize * 2, available: page.count)
        }
        // Safe: every load below lies in the first 32 bytes, which the guard above found. Read in place, without a
        // reader: this runs for every level of every descent (850 instructions a W3.graph lookup through a reader).
        let rawType = page[4]
        guard let type = PageType(rawValue: rawType) else { throw .invalid("unknown page type \(rawType)") }
        let flags = page[5]
        // The leaf and index-leaf readers check the values their type allows.
        guard flags == 0 || type == .leaf || type == .indexLeaf else {
            throw .invalid("page flags 0x\(String(flags, radix: 16)) set on a \(type) page")
        }
        let itemCount = Int(UInt16(littleEndian: page.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
        let pageNumber = UInt64(littleEndian: page.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        guard pageNumber == expectedPageNumber else {
            throw .invalid("page claims number \(pageNumber), read at \(expectedPageNumber)")
        }
        let generation = UInt64(littleEndian: page.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let bodyLength = Int(UInt32(littleEndian: page.loadUnaligned(fromByteOffset: 24, as: UInt32.self)))
        guard bodyLength <= page.count &- PageFormat.headerSize else {
            throw .invalid("page body length \(bodyLength) exceeds the page")
        }
        let extra = UInt32(littleEndian: page.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
        return PageHeader(
            type: type, flags: flags, itemCount: itemCount, pageNumber: pageNumber, generation: generation,
            bodyLength: bodyLength, extra: extra)
    }

    /// The body bytes of a decoded page.
    public func body(of page: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: page[PageFormat.headerSize..<(PageFormat.headerSize + bodyLength)])
    }
}
