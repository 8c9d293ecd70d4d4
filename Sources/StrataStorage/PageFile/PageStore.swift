import StrataFormat
import StrataIO
import Synchronization

/// Reads pages of the page file: verifies them, decodes tree nodes (through the ``PageCache``) and
/// follows overflow chains. Safe from any thread: the file is append-only and reads are positional.
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

    init(file: any FileHandle, pageSize: Int, salt: UInt64, cacheCapacity: Int, durablePageCount: UInt64) {
        self.file = file
        self.fileName = file.path
        self.pageSize = pageSize
        self.salt = salt
        self.cache = PageCache(capacity: cacheCapacity)
        self.indexCache = PageCache(capacity: cacheCapacity)
        self.limit = Atomic(durablePageCount)
    }

    deinit {
        // Snapshots keep the page store alive after the store closes; the handle closes with the last of them.
        try? file.close()
    }

    /// The number of pages that references may name (page 0, the header, included).
    var pageCount: UInt64 { limit.load(ordering: .acquiring) }

    /// Extends the referenceable range after a checkpoint made new pages durable.
    func setPageCount(_ count: UInt64) { limit.store(count, ordering: .releasing) }

    func offset(of page: UInt64) -> UInt64 { page &* UInt64(pageSize) }

    /// Reads and verifies one page; `body` sees its bytes and header.
    func withPage<R>(_ number: UInt64, _ body: (UnsafeRawBufferPointer, PageHeader) throws -> R) throws -> R {
        guard number >= 1, number < pageCount else {
            throw StorageError.corrupt(fileName, at: 0, "reference to page \(number) outside 1..<\(pageCount)")
        }
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

    /// The tree node stored at page `number`.
    func node(at number: UInt64) throws -> BTreeNode {
        if let cached = cache.node(at: number) { return cached }
        let node = try withPage(number) { page, header throws -> BTreeNode in
            do {
                switch header.type {
                case .leaf:
                    let (keys, values) = try LeafPage.decode(page, header: header)
                    guard !keys.isEmpty else { throw FormatError.invalidField("empty leaf") }
                    return BTreeNode(
                        level: 0, keys: keys, values: values, children: [], owner: 0, bodySize: header.bodyLength)
                case .internal:
                    let (level, keys, children) = try InternalPage.decode(page, header: header)
                    return BTreeNode(
                        level: level, keys: keys, values: [], children: children.map { .page($0) }, owner: 0,
                        bodySize: header.bodyLength)
                default:
                    throw FormatError.invalidField("page \(number) is a \(header.type) page, not a tree node")
                }
            } catch let error as FormatError {
                throw StorageError.corrupt(fileName, at: offset(of: number), error)
            }
        }
        cache.insert(node, at: number)
        return node
    }

    /// The index-tree node stored at page `number`.
    func indexNode(at number: UInt64) throws -> IndexNode {
        if let cached = indexCache.node(at: number) { return cached }
        let node = try withPage(number) { page, header throws -> IndexNode in
            do {
                return try Self.decodeIndexNode(page, header: header)
            } catch let error as FormatError {
                throw StorageError.corrupt(fileName, at: offset(of: number), error)
            }
        }
        indexCache.insert(node, at: number)
        return node
    }

    /// Decodes a verified page as an index-tree node.
    static func decodeIndexNode(_ page: UnsafeRawBufferPointer, header: PageHeader) throws(FormatError) -> IndexNode {
        switch header.type {
        case .indexLeaf:
            let entries = try IndexLeafPage.decode(page, header: header)
            return IndexNode(level: 0, keys: entries, children: [], owner: 0, bodySize: header.bodyLength)
        case .indexInternal:
            let (level, keys, children) = try IndexInternalPage.decode(page, header: header)
            return IndexNode(
                level: level, keys: keys, children: children.map { .page($0) }, owner: 0, bodySize: header.bodyLength)
        default:
            throw .invalidField("page \(header.pageNumber) is a \(header.type) page, not an index node")
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
