import StrataFormat
import StrataIO

/// Appends a checkpoint's pages to the page file: every in-memory tree node (children before parents,
/// so every reference points to a smaller page number), the overflow chains of long values, and at the
/// end the root record.
///
/// Pages are gathered in a buffer and written in large sequential writes. Nothing written here is
/// referenced until the root record is durable, so a failure at any point loses nothing: the next
/// checkpoint simply writes over the unreferenced tail.
struct CheckpointWriter {
    private let pages: PageStore
    private let limits: BTreeLimits
    private let generation: UInt64
    private let pageSize: Int
    private var buffer: [UInt8]
    private var bufferedPages = 0
    private var bufferFirstPage: UInt64
    /// The page number the next allocated page gets.
    private(set) var nextPage: UInt64
    private(set) var pagesWritten = 0
    private static let bufferPages = 256

    init(pages: PageStore, startPage: UInt64, generation: UInt64) {
        self.pages = pages
        self.limits = BTreeLimits(pageSize: pages.pageSize)
        self.generation = generation
        self.pageSize = pages.pageSize
        self.buffer = [UInt8](repeating: 0, count: pages.pageSize * Self.bufferPages)
        self.bufferFirstPage = startPage
        self.nextPage = startPage
    }

    /// Writes every in-memory node of a tree and returns its root page and height.
    mutating func writeTree(_ root: NodeRef?) throws -> (page: UInt64, height: Int) {
        guard let root else { return (PageFormat.noPage, 0) }
        let (page, level) = try write(root)
        return (page, level + 1)
    }

    private mutating func write(_ ref: NodeRef) throws -> (page: UInt64, level: Int) {
        let node: BTreeNode
        switch ref {
        case .page(let number):
            return (number, try pages.node(at: number).level)
        case .node(let inMemory):
            node = inMemory
        }
        let salt = pages.salt
        if node.isLeaf {
            var values = node.values
            for index in values.indices {
                if case .bytes(let bytes) = values[index], bytes.count > limits.maximumInline {
                    values[index] = .overflow(firstPage: try writeOverflow(bytes), length: bytes.count)
                }
            }
            let number = try allocate { page, number, generation in
                LeafPage.encode(
                    keys: node.keys, values: values, into: page, pageNumber: number, generation: generation, salt: salt)
            }
            pages.cache.insert(
                BTreeNode(level: 0, keys: node.keys, values: values, children: [], owner: 0, bodySize: node.bodySize),
                at: number)
            return (number, 0)
        }
        var childPages: [UInt64] = []
        childPages.reserveCapacity(node.count)
        for child in node.children {
            let (page, level) = try write(child)
            guard level == node.level - 1 else {
                throw StorageError.corrupt(
                    pages.fileName, at: pages.offset(of: page), "child level \(level) under level \(node.level)")
            }
            childPages.append(page)
        }
        let number = try allocate { page, number, generation in
            InternalPage.encode(
                level: node.level, keys: node.keys, children: childPages, into: page, pageNumber: number,
                generation: generation, salt: salt)
        }
        pages.cache.insert(
            BTreeNode(
                level: node.level, keys: node.keys, values: [], children: childPages.map { .page($0) }, owner: 0,
                bodySize: node.bodySize),
            at: number)
        return (number, node.level)
    }

    /// Writes a long value as a chain, last chunk first; returns the chain's first (highest) page.
    private mutating func writeOverflow(_ bytes: [UInt8]) throws -> UInt64 {
        let capacity = PageFormat.overflowCapacity(pageSize: pageSize)
        let chunks = (bytes.count + capacity - 1) / capacity
        var next = PageFormat.noPage
        let salt = pages.salt
        for chunk in (0..<chunks).reversed() {
            let start = chunk * capacity
            let end = min(bytes.count, start + capacity)
            let following = next
            next = try allocate { page, number, generation in
                bytes.withUnsafeBytes { all in
                    OverflowPage.encode(
                        data: UnsafeRawBufferPointer(rebasing: all[start..<end]), next: following, into: page,
                        pageNumber: number, generation: generation, salt: salt)
                }
            }
        }
        return next
    }

    /// Appends the root record's pages; returns its first page.
    mutating func writeRootRecord(_ record: RootRecord) throws -> UInt64 {
        let payload = record.encodedPayload()
        let count = RootRecord.pageCount(payloadLength: payload.count, pageSize: pageSize)
        guard count <= PageFormat.maximumRootRecordPages else {
            throw StorageError.invalidArgument("the catalog needs \(count) pages, more than a root record may have")
        }
        let salt = pages.salt
        var first = PageFormat.noPage
        for index in 0..<count {
            let number = try allocate { page, number, generation in
                RootRecord.encodePart(
                    payload, index: index, count: count, into: page, pageNumber: number, generation: generation,
                    salt: salt)
            }
            if index == 0 { first = number }
        }
        return first
    }

    /// Gives `encode` a zeroed page in the buffer to fill and seal; returns its page number.
    private mutating func allocate(
        _ encode: (UnsafeMutableRawBufferPointer, UInt64, UInt64) -> Void
    ) throws -> UInt64 {
        if bufferedPages == Self.bufferPages { try flush() }
        let number = nextPage
        let start = bufferedPages * pageSize
        let generation = generation
        buffer.withUnsafeMutableBytes { all in
            let page = UnsafeMutableRawBufferPointer(rebasing: all[start..<(start + pageSize)])
            page.initializeMemory(as: UInt8.self, repeating: 0)
            encode(page, number, generation)
        }
        bufferedPages += 1
        nextPage += 1
        pagesWritten += 1
        return number
    }

    /// Writes the buffered pages to the file (not synced).
    mutating func flush() throws {
        guard bufferedPages > 0 else { return }
        let offset = pages.offset(of: bufferFirstPage)
        let count = bufferedPages * pageSize
        let file = pages.file
        let failure = buffer.withUnsafeBytes { all -> IOError? in
            do throws(IOError) {
                try file.write(UnsafeRawBufferPointer(rebasing: all[0..<count]), at: offset)
                return nil
            } catch { return error }
        }
        if let failure { throw StorageError.io(failure) }
        bufferFirstPage = nextPage
        bufferedPages = 0
    }
}
