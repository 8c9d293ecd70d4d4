import StrataFormat
import StrataIO

/// Appends pages to a page file: tree, overflow and root-record pages numbered in the order they are
/// allocated, gathered in a buffer and written in large sequential writes, each started on its way to the disk at
/// once. Nothing is synced here.
///
/// Checkpoints append after the newest root record (``CheckpointWriter``); compaction writes a whole new
/// file, page 0 first.
struct PageAppender {
    let file: any FileHandle
    let pageSize: Int
    let salt: UInt64
    let generation: UInt64
    private var buffer: [UInt8]
    private var bufferedPages = 0
    private var bufferFirstPage: UInt64
    private let bufferCapacity: Int
    /// The page number the next allocated page gets.
    private(set) var nextPage: UInt64
    private(set) var overflowPages = 0
    private(set) var treePages = 0
    private(set) var rootRecordPages = 0

    /// An appender whose first page gets number `startPage`.
    /// - Parameter bufferPages: pages gathered before each write (tests use small values to get more writes).
    init(file: any FileHandle, pageSize: Int, salt: UInt64, generation: UInt64, startPage: UInt64, bufferPages: Int) {
        precondition(bufferPages >= 1)
        self.file = file
        self.pageSize = pageSize
        self.salt = salt
        self.generation = generation
        self.bufferCapacity = bufferPages
        self.buffer = [UInt8](repeating: 0, count: pageSize * bufferPages)
        self.bufferFirstPage = startPage
        self.nextPage = startPage
    }

    /// An appender for a new page file: writes `firstPage` (the store header page) as page 0.
    init(file: any FileHandle, firstPage: [UInt8], salt: UInt64, generation: UInt64, bufferPages: Int) throws {
        self.init(
            file: file, pageSize: firstPage.count, salt: salt, generation: generation, startPage: 1,
            bufferPages: bufferPages)
        do { try file.write(firstPage, at: 0) } catch { throw StorageError.io(error) }
    }

    /// Pages allocated so far.
    var pagesWritten: Int { treePages + overflowPages + rootRecordPages }

    /// Bytes the file will hold once flushed.
    var fileBytes: UInt64 { nextPage * UInt64(pageSize) }

    /// Gives `encode` a zeroed page to fill and seal; returns its page number.
    mutating func allocate(
        _ encode: (UnsafeMutableRawBufferPointer, _ number: UInt64, _ generation: UInt64) -> Void
    ) throws -> UInt64 {
        if bufferedPages == bufferCapacity { try flush() }
        let number = nextPage
        let start = bufferedPages * pageSize
        let generation = generation
        let pageSize = pageSize
        buffer.withUnsafeMutableBytes { all in
            let page = UnsafeMutableRawBufferPointer(rebasing: all[start..<(start + pageSize)])
            page.initializeMemory(as: UInt8.self, repeating: 0)
            encode(page, number, generation)
        }
        bufferedPages += 1
        nextPage += 1
        return number
    }

    /// Writes a leaf (every `.bytes` value short enough to be inline); returns its page.
    mutating func writeLeaf(keys: [UInt64], values: LeafValues) throws -> UInt64 {
        let salt = salt
        treePages += 1
        return try allocate { page, number, generation in
            LeafPage.encode(
                keys: keys, values: values, into: page, pageNumber: number, generation: generation, salt: salt)
        }
    }

    /// Writes an internal node whose children are all written; returns its page.
    mutating func writeInternal(level: Int, keys: [UInt64], children: [UInt64]) throws -> UInt64 {
        let salt = salt
        treePages += 1
        return try allocate { page, number, generation in
            InternalPage.encode(
                level: level, keys: keys, children: children, into: page, pageNumber: number, generation: generation,
                salt: salt)
        }
    }

    /// Writes an index leaf (entries strictly increasing, fitting one page); returns its page. The entries are
    /// encoded where they lie (an array per entry cost compaction's index copy half its time).
    mutating func writeIndexLeaf(entries: IndexEntries) throws -> UInt64 {
        let salt = salt
        treePages += 1
        return try allocate { page, number, generation in
            entries.withEntries { lent in
                IndexLeafPage.encode(
                    count: lent.count, entry: { lent[$0] }, into: page, pageNumber: number, generation: generation,
                    salt: salt)
            }
        }
    }

    /// Writes an index leaf; returns its page.
    mutating func writeIndexLeaf(entries: [[UInt8]]) throws -> UInt64 {
        let salt = salt
        treePages += 1
        return try allocate { page, number, generation in
            IndexLeafPage.encode(entries: entries, into: page, pageNumber: number, generation: generation, salt: salt)
        }
    }

    /// Writes an index internal node whose children are all written; returns its page.
    mutating func writeIndexInternal(level: Int, keys: IndexEntries, children: [UInt64]) throws -> UInt64 {
        try writeIndexInternal(level: level, keys: Array(keys), children: children)
    }

    /// Writes an index internal node whose children are all written; returns its page.
    mutating func writeIndexInternal(level: Int, keys: [[UInt8]], children: [UInt64]) throws -> UInt64 {
        let salt = salt
        treePages += 1
        return try allocate { page, number, generation in
            IndexInternalPage.encode(
                level: level, keys: keys, children: children, into: page, pageNumber: number, generation: generation,
                salt: salt)
        }
    }

    /// Writes a long value as an overflow chain, last chunk first; returns the chain's first (highest) page.
    mutating func writeOverflow(_ bytes: [UInt8]) throws -> UInt64 {
        let capacity = PageFormat.overflowCapacity(pageSize: pageSize)
        let chunks = (bytes.count + capacity - 1) / capacity
        var next = PageFormat.noPage
        let salt = salt
        for chunk in (0..<chunks).reversed() {
            let start = chunk * capacity
            let end = min(bytes.count, start + capacity)
            let following = next
            overflowPages += 1
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

    /// Appends a root record's pages; returns its first page.
    mutating func writeRootRecord(_ record: RootRecord) throws -> UInt64 {
        let payload = record.encodedPayload()
        let count = RootRecord.pageCount(payloadLength: payload.count, pageSize: pageSize)
        guard count <= PageFormat.maximumRootRecordPages else {
            throw StorageError.invalidArgument("the catalog needs \(count) pages, more than a root record may have")
        }
        let salt = salt
        var first = PageFormat.noPage
        for index in 0..<count {
            rootRecordPages += 1
            let number = try allocate { page, number, generation in
                RootRecord.encodePart(
                    payload, index: index, count: count, into: page, pageNumber: number, generation: generation,
                    salt: salt)
            }
            if index == 0 { first = number }
        }
        return first
    }

    /// Writes the buffered pages to the file (not synced).
    mutating func flush() throws {
        guard bufferedPages > 0 else { return }
        let offset = UInt64(pageSize) &* bufferFirstPage
        let count = bufferedPages * pageSize
        let file = file
        let failure = buffer.withUnsafeBytes { all -> IOError? in
            do throws(IOError) {
                try file.write(UnsafeRawBufferPointer(rebasing: all[0..<count]), at: offset)
                return nil
            } catch { return error }
        }
        if let failure { throw StorageError.io(failure) }
        // The disk writes these pages while the next ones are encoded; the checkpoint's sync then waits for little
        // (a 43 MB checkpoint's sync waited 21 ms, and 0.5 ms with this).
        file.startWriteback(at: offset, count: count)
        bufferFirstPage = nextPage
        bufferedPages = 0
    }
}
