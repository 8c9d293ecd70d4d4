/// Layout constants of the page file (FORMAT.md, "Page file"), shared by its writer and reader.
///
/// Every page after page 0 starts with a 32-byte header:
/// ```
/// page   := checksum:u32 type:u8 flags:u8 itemCount:u16 pageNumber:u64 generation:u64 bodyLength:u32 extra:u32 body padding
/// ```
/// The checksum is the masked CRC-32C of the store's checksum salt (u64 LE) followed by the page's bytes
/// 4..<pageSize, padding included. Padding is zero.
public enum PageFormat {
    /// The size in bytes of the header that opens every page after page 0.
    public static let headerSize = 32
    /// No page: an empty tree's root, the end of an overflow chain.
    public static let noPage = UInt64.max
    /// The tallest tree a reader follows; deeper trees are corrupt (a 4 KiB-page tree of 2^64 rows is 9 levels).
    public static let maximumTreeHeight = 32
    /// What a leaf row costs besides its value and its row ID (which costs 0 to 8 bytes, §4.2): its value end.
    public static let leafCellHeaderSize = 2
    /// A row whose value lives in an overflow chain: its value end, then firstPage:u64 totalLength:u32.
    public static let overflowCellSize = leafCellHeaderSize + 12
    /// A long value's worst-case cost in a leaf beside its bytes (an 8-byte row ID, a value end, an overflow bit
    /// rounded up): what the inline limit is derived from.
    static let leafRowAllowance = 12
    /// Internal node: the first child, then (separator key, child) pairs.
    public static let internalFirstChildSize = 8
    /// Internal node entry: separator:u64 child:u64.
    public static let internalEntrySize = 16
    /// Overflow page body: next:u64 then data.
    public static let overflowNextSize = 8
    /// Root records longer than this many pages are rejected.
    public static let maximumRootRecordPages = 4096
    /// Index pages: the length (u16) before each entry or separator.
    public static let indexLengthSize = 2
    /// Index internal page: a separator's length and child pointer, around its bytes.
    public static let indexInternalEntryOverhead = indexLengthSize + 8

    /// Bytes available for a page's body.
    public static func bodyCapacity(pageSize: Int) -> Int { pageSize - headerSize }

    /// Values up to this length live inside their leaf; longer ones go to an overflow chain.
    public static func maximumInlineValue(pageSize: Int) -> Int {
        bodyCapacity(pageSize: pageSize) / 4 - leafRowAllowance
    }

    /// The longest index entry (encoded key and row ID) or separator: a quarter of a page body less one
    /// internal entry's overhead, so that an index node that overflows by one entry splits into two that fit,
    /// each of at least two entries (1,006 bytes at 4 KiB, 110 at 512).
    public static func maximumIndexEntry(pageSize: Int) -> Int {
        bodyCapacity(pageSize: pageSize) / 4 - indexInternalEntryOverhead
    }

    /// Data bytes one overflow page holds.
    public static func overflowCapacity(pageSize: Int) -> Int {
        bodyCapacity(pageSize: pageSize) - overflowNextSize
    }
}

/// What a page holds (the `type` byte of its header).
public enum PageType: UInt8, Sendable {
    /// A B+tree leaf: row cells (``LeafPage``).
    case leaf = 1
    /// A B+tree internal node: separators and child pointers (``InternalPage``).
    case `internal` = 2
    /// A page of a long value's overflow chain (``OverflowPage``).
    case overflow = 3
    /// A part of a root record (``RootRecord``).
    case rootRecord = 4
    /// A secondary-index leaf: entries (``IndexLeafPage``).
    case indexLeaf = 5
    /// A secondary-index internal node: separators and child pointers (``IndexInternalPage``).
    case indexInternal = 6
}
