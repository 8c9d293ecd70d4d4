import StrataFormat
import StrataIO

/// Appends a checkpoint's pages to the page file: every in-memory tree node (children before parents,
/// so every reference points to a smaller page number), the overflow chains of long values, and at the
/// end the root record. The pages themselves go through a ``PageAppender``; this type walks the trees and
/// puts what it writes into the page cache.
///
/// Nothing written here is referenced until the root record is durable, so a failure at any point loses
/// nothing: the next checkpoint simply writes over the unreferenced tail.
struct CheckpointWriter {
    private let pages: PageStore
    private let limits: BTreeLimits
    private var appender: PageAppender
    private static let bufferPages = 256
    /// Leaves (of tables and of indexes) a large transaction wrote before its commit (``LeafSpill``): their level is
    /// known without reading them.
    private let spilledLeaves: Range<UInt64>

    init(pages: PageStore, startPage: UInt64, generation: UInt64, spilledLeaves: Range<UInt64> = 0..<0) {
        self.pages = pages
        self.limits = BTreeLimits(pageSize: pages.pageSize)
        self.spilledLeaves = spilledLeaves
        self.appender = PageAppender(
            file: pages.file, pageSize: pages.pageSize, salt: pages.salt, generation: generation,
            startPage: startPage, bufferPages: Self.bufferPages)
    }

    /// The page number the next allocated page gets.
    var nextPage: UInt64 { appender.nextPage }
    /// Pages allocated so far.
    var pagesWritten: Int { appender.pagesWritten }

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
            if spilledLeaves.contains(number) { return (number, 0) }
            return (number, try pages.treeLevel(at: number))
        case .node(let inMemory):
            node = inMemory
        }
        if node.isLeaf {
            let (number, moved) = try writeLeafPage(node)
            // The leaf goes to the page cache as it is: its owner's tag is never a later transaction's, so a later
            // transaction copies it before changing it, as it copies a frozen node (a new node per leaf cost W7's and
            // W8's checkpoint an allocation, and the freeing of the old one). A leaf whose long values moved to
            // overflow chains is cached as written.
            pages.cache.insert(
                moved.map {
                    BTreeNode(level: 0, keys: node.keys, values: $0, children: [], owner: 0, bodySize: node.bodySize)
                } ?? node, at: number)
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
        let number = try appender.writeInternal(level: node.level, keys: node.keys, children: childPages)
        pages.cache.insert(
            BTreeNode(
                level: node.level, keys: node.keys, values: [], children: childPages.map { .page($0) }, owner: 0,
                bodySize: node.bodySize),
            at: number)
        return (number, node.level)
    }

    /// Writes a leaf whose memory is to be freed (``LeafSpill``): not kept in the page cache. Returns its page.
    mutating func writeSpilledLeaf(_ node: BTreeNode) throws -> UInt64 {
        try writeLeafPage(node).page
    }

    /// Writes an index leaf whose memory is to be freed (``LeafSpill``): not kept in the page cache. Returns its page.
    mutating func writeSpilledIndexLeaf(_ node: IndexNode) throws -> UInt64 {
        try appender.writeIndexLeaf(entries: node.keys)
    }

    /// Writes a leaf, its long values as overflow chains first; returns its page and, when long values moved, the
    /// values as written.
    private mutating func writeLeafPage(_ node: BTreeNode) throws -> (page: UInt64, moved: LeafValues?) {
        // Most leaves have no long value: one pass over the value ends says so (the loop below asks each value's length
        // and kind through two calls, 2,400 instructions a leaf).
        guard node.values.hasInlineValue(longerThan: limits.maximumInline) else {
            return (try appender.writeLeaf(keys: node.keys, values: node.values), nil)
        }
        var values = node.values
        for index in values.indices where !values.isOverflow(index) && values.length(index) > limits.maximumInline {
            guard case .bytes(let bytes) = values[index] else { continue }
            values.replace(index, with: .overflow(firstPage: try appender.writeOverflow(bytes), length: bytes.count))
        }
        return (try appender.writeLeaf(keys: node.keys, values: values), values)
    }

    /// Writes every in-memory node of an index tree and returns its root page and height.
    mutating func writeIndexTree(_ root: IndexNodeRef?) throws -> (page: UInt64, height: Int) {
        guard let root else { return (PageFormat.noPage, 0) }
        let (page, level) = try writeIndex(root)
        return (page, level + 1)
    }

    private mutating func writeIndex(_ ref: IndexNodeRef) throws -> (page: UInt64, level: Int) {
        let node: IndexNode
        switch ref {
        case .page(let number):
            if spilledLeaves.contains(number) { return (number, 0) }
            return (number, try pages.indexLevel(at: number))
        case .node(let inMemory):
            node = inMemory
        }
        if node.isLeaf {
            let number = try appender.writeIndexLeaf(entries: node.keys)
            pages.indexCache.insert(
                IndexNode(level: 0, keys: node.keys, children: [], owner: 0, bodySize: node.bodySize), at: number)
            return (number, 0)
        }
        var childPages: [UInt64] = []
        childPages.reserveCapacity(node.count)
        for child in node.children {
            let (page, level) = try writeIndex(child)
            guard level == node.level - 1 else {
                throw StorageError.corrupt(
                    pages.fileName, at: pages.offset(of: page), "index child level \(level) under level \(node.level)")
            }
            childPages.append(page)
        }
        let number = try appender.writeIndexInternal(level: node.level, keys: node.keys, children: childPages)
        pages.indexCache.insert(
            IndexNode(
                level: node.level, keys: node.keys, children: childPages.map { .page($0) }, owner: 0,
                bodySize: node.bodySize),
            at: number)
        return (number, node.level)
    }

    /// Appends the root record's pages; returns its first page.
    mutating func writeRootRecord(_ record: RootRecord) throws -> UInt64 {
        try appender.writeRootRecord(record)
    }

    /// Writes the buffered pages to the file (not synced).
    mutating func flush() throws {
        try appender.flush()
    }
}
