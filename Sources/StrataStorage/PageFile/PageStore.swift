import StrataFormat
import StrataIO
import Synchronization

/// Reads pages of the page file: in place through the ``PageMap`` (each page verified on first touch), or, where
/// the file cannot be mapped, through positional reads verified every time. Decodes tree nodes for writers (through
/// the ``PageCache``) and follows overflow chains. Safe from any thread: the file is append-only.
final class PageStore: Sendable {
    let file: any FileHandle
    let fileName: String
    let pageSize: Int
    let salt: UInt64
    let cache: PageCache<BTreeNode>
    /// Decoded secondary-index nodes, with the same capacity as ``cache``.
    let indexCache: PageCache<IndexNode>
    /// Pages below this number exist and may be referenced: the end of the newest checkpoint.
    private let limit: Atomic<UInt64>
    /// Pages from ``pageCount`` up to this number were written by the running large transaction before its commit
    /// (``LeafSpill``): only its own tree references them, read through the file handle. 0 when there are none.
    private let pendingLimit = Atomic<UInt64>(0)
    /// The durable pages, mapped.
    private let map: PageMap

    init(file: any FileHandle, pageSize: Int, salt: UInt64, cacheCapacity: Int, durablePageCount: UInt64) {
        self.file = file
        self.fileName = file.path
        self.pageSize = pageSize
        self.salt = salt
        self.cache = PageCache(capacity: cacheCapacity)
        self.indexCache = PageCache(capacity: cacheCapacity)
        self.limit = Atomic(durablePageCount)
        self.map = PageMap(file: file, pageSize: pageSize)
        map.cover(pageCount: durablePageCount)
    }

    deinit {
        // Snapshots keep the page store alive after the store closes; the handle closes with the last of them.
        try? file.close()
    }

    /// The number of pages that references may name (page 0, the header, included).
    var pageCount: UInt64 { limit.load(ordering: .acquiring) }

    /// Extends the referenceable range after a checkpoint made new pages durable.
    func setPageCount(_ count: UInt64) {
        map.cover(pageCount: count)
        limit.store(count, ordering: .releasing)
    }

    /// Lets the running large transaction read back the pages it wrote below `end` before its commit; 0 when it ends.
    func setPendingLimit(_ end: UInt64) {
        pendingLimit.store(end, ordering: .releasing)
    }

    func offset(of page: UInt64) -> UInt64 { page &* UInt64(pageSize) }

    /// Reads and verifies one page; `body` sees its bytes and header, valid only during the call. A mapped page's
    /// checksum is verified on its first read only, unless `fully` (verification reads check every page again).
    func withPage<R>(
        _ number: UInt64, fully: Bool = false, _ body: (UnsafeRawBufferPointer, PageHeader) throws -> R
    ) throws -> R {
        try withPage(number, fully: fully) { page, header, _ in try body(page, header) }
    }

    /// ``withPage(_:fully:_:)``, also handing `body` the span the page was read through (nil: read through the file
    /// handle), whose bits remember what was checked of it.
    @inline(__always)
    private func withPage<R>(
        _ number: UInt64, fully: Bool, _ body: (UnsafeRawBufferPointer, PageHeader, PageMap.Span?) throws -> R
    ) throws -> R {
        guard number >= 1, number < pageCount || number < pendingLimit.load(ordering: .acquiring) else {
            throw StorageError.corrupt(fileName, at: 0, "reference to page \(number) outside 1..<\(pageCount)")
        }
        return try map.withSpan(for: number) { span in
            guard let span else { return try withPageFromFile(number) { try body($0, $1, nil) } }
            let page = mappedPage(number, in: span)
            return try body(page, try header(of: page, number, in: span, fully: fully), span)
        }
    }

    /// Reads page `number` with a positional read, whatever the referenceable range, and verifies it: how the newest
    /// root record is looked for among pages that no checkpoint may have made durable yet (and that the mapping must
    /// not remember as verified, since a later checkpoint may write them again).
    func withPageFromFile<R>(_ number: UInt64, _ body: (UnsafeRawBufferPointer, PageHeader) throws -> R) throws -> R {
        guard number >= 1 else { throw StorageError.corrupt(fileName, at: 0, "reference to page 0, the header") }
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { bytes.deallocate() }
        let offset = offset(of: number)
        let read: Int
        do { read = try file.read(into: bytes, at: offset) } catch { throw StorageError.io(error) }
        guard read == pageSize else {
            throw StorageError.corrupt(
                fileName, at: offset, "page \(number) is cut short (\(read) of \(pageSize) bytes)")
        }
        let page = UnsafeRawBufferPointer(bytes)
        let header: PageHeader
        do { header = try PageHeader.decode(page, expectedPageNumber: number, salt: salt) } catch {
            throw StorageError.corrupt(fileName, at: offset, "page \(number): \(error)")
        }
        return try body(page, header)
    }

    /// The mapped pages, for hints that some of their bytes are about to be read; nil when the file is not mapped
    /// (reads go through the file handle).
    func hints() -> PageHints? {
        map.mappedPages().flatMap { PageHints(pages: $0.bytes, count: $0.pageCount, pageSize: pageSize) }
    }

    @inline(__always)
    private func mappedPage(_ number: UInt64, in span: PageMap.Span) -> UnsafeRawBufferPointer {
        // Safe: the span serves only pages below its region's page count, which lie inside the mapping.
        let start = Int(number) &* pageSize
        return UnsafeRawBufferPointer(rebasing: span.bytes[start..<(start &+ pageSize)])
    }

    /// The header of a mapped page: checksum verified on first touch only.
    @inline(__always)
    private func header(
        of page: UnsafeRawBufferPointer, _ number: UInt64, in span: PageMap.Span, fully: Bool
    ) throws -> PageHeader {
        do {
            if !fully, span.isVerified(number) { return try PageHeader.read(page, expectedPageNumber: number) }
            let header = try PageHeader.decode(page, expectedPageNumber: number, salt: salt)
            span.markVerified(number)
            return header
        } catch {
            throw StorageError.corrupt(fileName, at: offset(of: number), "page \(number): \(error)")
        }
    }

    /// Calls `body` with the tree page `number` read where it lies: a node of a row tree or of an index tree, of
    /// `level` when the caller knows it, its structure validated on first touch. The view is valid only during
    /// the call.
    @inline(__always)
    func withNodePage<R>(_ number: UInt64, level: Int?, _ body: (NodePageView) throws -> R) throws -> R {
        try withPage(number, fully: false) { page, header, span in
            let isLeaf = header.type == .leaf || header.type == .indexLeaf
            if let level, Int(header.extra) != level || isLeaf != (level == 0) {
                throw StorageError.corrupt(
                    fileName, at: offset(of: number),
                    "tree node at page \(number) has level \(header.extra), its parent expects \(level)")
            }
            if span?.isValidatedNode(number) != true {
                do {
                    switch header.type {
                    case .leaf:
                        try LeafPage.validate(page, header: header)
                        guard header.itemCount > 0 else { throw FormatError.invalidField("empty leaf") }
                    case .internal: try InternalPage.validate(page, header: header)
                    case .indexLeaf: try IndexLeafPage.validate(page, header: header)
                    case .indexInternal: try IndexInternalPage.validate(page, header: header)
                    default:
                        throw FormatError.invalidField("page \(number) is a \(header.type) page, not a tree node")
                    }
                } catch let error as FormatError {
                    throw StorageError.corrupt(fileName, at: offset(of: number), error)
                }
                span?.markValidatedNode(number)
            }
            switch header.type {
            case .leaf: return try body(.leaf(LeafPageView(validatedPage: page, header: header)))
            case .internal: return try body(.internal(InternalPageView(validatedPage: page, header: header)))
            case .indexLeaf: return try body(.indexLeaf(IndexLeafPageView(validatedPage: page, header: header)))
            default: return try body(.indexInternal(IndexInternalPageView(validatedPage: page, header: header)))
            }
        }
    }

    /// ``withNodePage(_:level:_:)`` for a row tree: an index page there is corruption.
    @inline(__always)
    func withTreePage<R>(_ number: UInt64, level: Int?, _ body: (TreePageView) throws -> R) throws -> R {
        try withNodePage(number, level: level) { view in
            switch view {
            case .leaf(let leaf): return try body(.leaf(leaf))
            case .internal(let node): return try body(.internal(node))
            case .indexLeaf, .indexInternal:
                throw StorageError.corrupt(
                    fileName, at: offset(of: number), "page \(number) is an index page in a row tree")
            }
        }
    }

    /// The level of the row-tree node at page `number`, from its header (a checkpoint that keeps a page needs no more
    /// of it).
    func treeLevel(at number: UInt64) throws -> Int {
        if let cached = cache.node(at: number) { return cached.level }
        return try nodeLevel(at: number, leafType: .leaf, internalType: .internal)
    }

    /// The level of the index-tree node at page `number`, from its header.
    func indexLevel(at number: UInt64) throws -> Int {
        if let cached = indexCache.node(at: number) { return cached.level }
        return try nodeLevel(at: number, leafType: .indexLeaf, internalType: .indexInternal)
    }

    /// The level a tree page's checksummed header gives, the page of one of the two types: its body is not read. A
    /// checkpoint that keeps a page learns no more of it than its level, and validating the body of every index leaf
    /// kept under a changed parent (40,000 instructions each) was a quarter of W8's checkpoint at N = 1,000,000.
    private func nodeLevel(at number: UInt64, leafType: PageType, internalType: PageType) throws -> Int {
        try withPage(number) { _, header in
            let isLeaf = header.type == leafType && header.extra == 0
            guard isLeaf || (header.type == internalType && header.extra > 0) else {
                throw StorageError.corrupt(
                    fileName, at: offset(of: number),
                    "page \(number) is a \(header.type) page of level \(header.extra), not a tree node here")
            }
            return Int(header.extra)
        }
    }

    /// ``withNodePage(_:level:_:)`` for an index tree: a row-tree page there is corruption.
    @inline(__always)
    func withIndexPage<R>(_ number: UInt64, level: Int?, _ body: (IndexPageView) throws -> R) throws -> R {
        try withNodePage(number, level: level) { view in
            switch view {
            case .indexLeaf(let leaf): return try body(.leaf(leaf))
            case .indexInternal(let node): return try body(.internal(node))
            case .leaf, .internal:
                throw StorageError.corrupt(
                    fileName, at: offset(of: number), "page \(number) is a row-tree page in an index")
            }
        }
    }

    /// The tree node stored at page `number`.
    func node(at number: UInt64) throws -> BTreeNode {
        if let cached = cache.node(at: number) { return cached }
        let node = try decodeNode(at: number, owner: 0)
        cache.insert(node, at: number)
        return node
    }

    /// The tree node at page `number` as the write transaction tagged `owner` may change it: the cached node copied,
    /// else the page decoded straight into a node of the transaction's own, not cached. (Cached, then copied, each leaf
    /// a delete or update changed first cost a cache insertion and, at its first change, a copy of its three arrays:
    /// 3,000 instructions a leaf in W8.)
    func ownedNode(at number: UInt64, owner: UInt64) throws -> BTreeNode {
        if let cached = cache.node(at: number) { return cached.copy(owner: owner) }
        return try decodeNode(at: number, owner: owner)
    }

    /// Reads and decodes the tree node at page `number`, tagged `owner`.
    private func decodeNode(at number: UInt64, owner: UInt64) throws -> BTreeNode {
        try withPage(number) { page, header throws -> BTreeNode in
            do {
                switch header.type {
                case .leaf:
                    let (keys, values) = try LeafPage.decode(page, header: header)
                    guard let first = keys.first, let last = keys.last else {
                        throw FormatError.invalidField("empty leaf")
                    }
                    // A leaf node counts its cells; the row IDs' share of the body is what their spread costs.
                    let rowIDBytes = LeafPage.bodySize(count: keys.count, first: first, last: last, cellBytes: 0)
                    return BTreeNode(
                        level: 0, keys: keys, values: values, children: [], owner: owner,
                        bodySize: header.bodyLength - rowIDBytes)
                case .internal:
                    let (level, keys, children) = try InternalPage.decode(page, header: header)
                    return BTreeNode(
                        level: level, keys: keys, values: [], children: children.map { .page($0) }, owner: owner,
                        bodySize: header.bodyLength)
                default:
                    throw FormatError.invalidField("page \(number) is a \(header.type) page, not a tree node")
                }
            } catch let error as FormatError {
                throw StorageError.corrupt(fileName, at: offset(of: number), error)
            }
        }
    }

    /// The index-tree node stored at page `number`.
    func indexNode(at number: UInt64) throws -> IndexNode {
        if let cached = indexCache.node(at: number) { return cached }
        let node = try decodeIndexNode(at: number, owner: 0)
        indexCache.insert(node, at: number)
        return node
    }

    /// The index-tree node at page `number` as the write transaction tagged `owner` may change it, as
    /// ``ownedNode(at:owner:)`` makes a row-tree node.
    func ownedIndexNode(at number: UInt64, owner: UInt64) throws -> IndexNode {
        if let cached = indexCache.node(at: number) { return cached.copy(owner: owner) }
        return try decodeIndexNode(at: number, owner: owner)
    }

    /// Reads and decodes the index-tree node at page `number`, tagged `owner`.
    private func decodeIndexNode(at number: UInt64, owner: UInt64) throws -> IndexNode {
        try withPage(number) { page, header throws -> IndexNode in
            do {
                return try Self.decodeIndexNode(page, header: header, owner: owner)
            } catch let error as FormatError {
                throw StorageError.corrupt(fileName, at: offset(of: number), error)
            }
        }
    }

    /// Decodes a verified page as an index-tree node.
    static func decodeIndexNode(
        _ page: UnsafeRawBufferPointer, header: PageHeader, owner: UInt64 = 0
    ) throws(FormatError) -> IndexNode {
        switch header.type {
        case .indexLeaf:
            // Each entry is put together from the shared prefix and its suffix straight into the packed entries:
            // no array per entry (W8's callgrind: decoding index leaves was 30% of a cascade delete).
            try IndexLeafPage.validate(page, header: header)
            let entries = IndexEntries(IndexLeafPageView(validatedPage: page, header: header))
            return IndexNode(
                level: 0, keys: entries, children: [], owner: owner,
                bodySize: IndexNode.leafBodySize(entries, 0..<entries.count))
        case .indexInternal:
            let (level, keys, children) = try IndexInternalPage.decode(page, header: header)
            return IndexNode(
                level: level, keys: keys, children: children.map { .page($0) }, owner: owner,
                bodySize: header.bodyLength)
        default:
            throw .invalidField("page \(header.pageNumber) is a \(header.type) page, not an index node")
        }
    }

    /// Calls `body` with the bytes of a value where it lies, gathering an overflow chain first.
    @inline(__always)
    func withBytes<R>(of cell: LeafCell, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        switch cell {
        case .inline(let bytes): return try body(bytes)
        case .overflow(let first, let length):
            return try readOverflow(first: first, length: length).withUnsafeBytes(body)
        }
    }

    /// The bytes of a value: inline, or gathered from its overflow chain.
    func bytes(of value: LeafValue) throws -> [UInt8] {
        switch value {
        case .bytes(let bytes): return bytes
        case .overflow(let first, let length): return try readOverflow(first: first, length: length)
        }
    }

    /// Gathers `length` bytes from the overflow chain starting at `first`.
    func readOverflow(first: UInt64, length: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(length)  // length was bounded by the leaf decoder (at most a maximum value)
        var next = first
        while result.count < length {
            guard next != PageFormat.noPage else {
                throw StorageError.corrupt(
                    fileName, at: offset(of: first), "overflow chain ends after \(result.count) of \(length) bytes")
            }
            let current = next
            next = try withPage(current) { page, header throws -> UInt64 in
                do {
                    let (following, data) = try OverflowPage.decode(page, header: header)
                    guard data.count <= length - result.count else {
                        throw FormatError.invalidField("overflow chain longer than its value (\(length) bytes)")
                    }
                    result.append(contentsOf: data)
                    return following
                } catch let error as FormatError {
                    throw StorageError.corrupt(fileName, at: offset(of: current), error)
                }
            }
        }
        guard next == PageFormat.noPage else {
            throw StorageError.corrupt(
                fileName, at: offset(of: first), "overflow chain continues past its value's length")
        }
        return result
    }
}

/// A node page read in place, of either kind of tree.
enum NodePageView {
    case leaf(LeafPageView)
    case `internal`(InternalPageView)
    case indexLeaf(IndexLeafPageView)
    case indexInternal(IndexInternalPageView)
}

/// A row-tree page read in place.
enum TreePageView {
    case leaf(LeafPageView)
    case `internal`(InternalPageView)
}

/// An index-tree page read in place.
enum IndexPageView {
    case leaf(IndexLeafPageView)
    case `internal`(IndexInternalPageView)
}
