import StrataFormat

/// Checks a store from its root down, reading every page from disk (never from the cache).
///
/// 1. The log: every record up to the end of the file verifies and is in LSN order, with nothing after.
/// 2. For every table: its tree — each page's checksum, type, number and level; keys in order and within
///    the range the parent gives; no empty node and no internal node with fewer than two children; no page
///    reachable twice (which also rules out cycles); every overflow chain whole and of the right length;
///    in-memory nodes sized within a page. Row counts and row-ID allocators agree with the rows found.
/// 3. For every secondary index (``verifyIndexes(_:)``): its tree's invariants as for tables (entries
///    instead of rows), and that it agrees with its table both ways.
/// 4. Page accounting: pages referenced against pages in the file.
/// 5. A summary per table and index: pages of each kind, height, leaf bytes (fill), nodes only in memory.
///
/// The blobs (``BlobVerifier``) and the log (``LogVerifier``) have verifiers of their own. Whether rows
/// decode against a schema, and relationships between rows, are the object graph's to check: the engine
/// stores bytes.
struct StoreVerifier {
    let pages: PageStore
    let limits: BTreeLimits
    var report = VerificationReport()
    private var visited = Set<UInt64>()
    /// Told of every row found, if set.
    var progress: ProgressThrottle?
    /// The summary of the table being verified.
    private var summary: VerificationReport.TableSummary?

    init(pages: PageStore) {
        self.pages = pages
        self.limits = BTreeLimits(pageSize: pages.pageSize)
    }

    mutating func problem(_ message: String, page: UInt64? = nil) {
        report.problems.append(
            VerificationReport.Problem(
                file: pages.fileName, offset: page.map { pages.offset(of: $0) }, message: message))
    }

    /// Marks a page as reachable; false (and a problem) when it already was.
    mutating func visit(_ page: UInt64, _ what: String) -> Bool {
        guard visited.insert(page).inserted else {
            problem("\(what): page \(page) is reachable twice", page: page)
            return false
        }
        return true
    }

    mutating func verifyTables(_ state: StoreState, rootRecordPages: UInt64) {
        for table in state.tables.values.sorted(by: { $0.id < $1.id }) { verifyTable(table) { _, _ in } }
        verifyIndexes(state)
        countPages(of: state, rootRecordPages: rootRecordPages)
    }

    /// Step 2 for one table; `eachRow` is lent each row found, in the order of the walk (increasing row IDs when the
    /// tree is whole), as its leaf is read: compaction copies the rows it verifies.
    mutating func verifyTable(_ table: TableState, eachRow: (UInt64, LeafCell) -> Void) {
        var rows: UInt64 = 0
        var maximumKey: UInt64 = 0
        var rootPage: UInt64?
        if case .page(let page) = table.root { rootPage = page }
        summary = VerificationReport.TableSummary(
            name: table.name, tableID: table.id.rawValue, isEngineTable: table.isEngineTable,
            rowCount: table.rowCount,
            nextRowID: table.nextRowID, height: 0, rootPage: rootPage)
        if let root = table.root {
            verify(
                root, level: nil, lower: 0, upper: nil, table: table.name, rows: &rows, maximumKey: &maximumKey,
                eachRow: eachRow)
        }
        if let summary { report.tables.append(summary) }
        summary = nil
        if rows != table.rowCount {
            problem("table '\(table.name)' says it has \(table.rowCount) rows; its tree has \(rows)")
        }
        if rows > 0, maximumKey >= table.nextRowID {
            problem("table '\(table.name)' holds row \(maximumKey) but would allocate \(table.nextRowID) next")
        }
        report.rowCount += rows
    }

    /// Step 4, after every tree of `state` was walked.
    mutating func countPages(of state: StoreState, rootRecordPages: UInt64) {
        report.tableCount = state.tables.count
        report.pageFilePages = pages.pageCount
        report.rootRecordPages = rootRecordPages
        let referenced = UInt64(visited.count) + rootRecordPages + 1
        report.unreferencedPages = report.pageFilePages >= referenced ? report.pageFilePages - referenced : 0
    }

    /// Verifies the subtree at `ref`, whose keys must lie in `lower..<upper` (`upper` nil: unbounded).
    private mutating func verify(
        _ ref: NodeRef, level expected: Int?, lower: UInt64, upper: UInt64?, table: String, rows: inout UInt64,
        maximumKey: inout UInt64, eachRow: (UInt64, LeafCell) -> Void
    ) {
        let node: NodeShape
        var pageNumber: UInt64?
        switch ref {
        case .node(let inMemory):
            node = NodeShape(inMemory)
            let size =
                inMemory.isLeaf
                ? inMemory.values.reduce(0) { $0 + limits.cellSize($1) }
                : BTreeLimits.internalBodySize(childCount: inMemory.count)
            if size != node.bodySize || limits.encodedSize(inMemory) > limits.capacity {
                problem(
                    "table '\(table)': in-memory node of \(size) bytes recorded as \(node.bodySize) (capacity \(limits.capacity))"
                )
            }
            if inMemory.isLeaf {
                for index in inMemory.keys.indices {
                    inMemory.values.withCell(index) { eachRow(inMemory.keys[index], $0) }
                }
            }
        case .page(let number):
            pageNumber = number
            guard visited.insert(number).inserted else {
                problem("table '\(table)': page \(number) is reachable twice", page: number)
                return
            }
            do { node = try readNode(number, eachRow: eachRow) } catch {
                problem("table '\(table)': \(error)", page: number)
                return
            }
            report.treePages += 1
        }
        if let expected, node.level != expected {
            problem("table '\(table)': node at level \(node.level) where \(expected) was due", page: pageNumber)
            return
        }
        if expected == nil { summary?.height = node.level + 1 }
        switch (pageNumber, node.isLeaf) {
        case (nil, _): summary?.unwrittenNodes += 1
        case (.some, true):
            summary?.leafPages += 1
            summary?.leafBytes += UInt64(node.bodySize)
        case (.some, false): summary?.internalPages += 1
        }
        if node.count == 0 || (!node.isLeaf && node.count < 2) {
            problem(
                "table '\(table)': \(node.isLeaf ? "empty leaf" : "internal node with \(node.count) children")",
                page: pageNumber)
        }
        if node.isLeaf {
            for (index, key) in node.keys.enumerated() {
                if key < lower || (upper.map { key >= $0 } ?? false) || (index > 0 && key <= node.keys[index - 1]) {
                    problem(
                        "table '\(table)': row \(key) out of order or outside \(lower)..<\(upper.map(String.init) ?? "end")",
                        page: pageNumber)
                }
                maximumKey = max(maximumKey, key)
            }
            for overflow in node.overflows {
                verifyOverflow(first: overflow.first, length: overflow.length, table: table, row: overflow.row)
            }
            rows += UInt64(node.count)
            progress?.advance(by: UInt64(node.count))
            return
        }
        for index in node.children.indices {
            let childLower = index == 0 ? lower : node.keys[index]
            let childUpper = index + 1 < node.count ? node.keys[index + 1] : upper
            if index > 0,
                node.keys[index] < lower || (upper.map { node.keys[index] >= $0 } ?? false)
                    || (index > 1 && node.keys[index] <= node.keys[index - 1])
            {
                problem("table '\(table)': separator \(node.keys[index]) out of order or range", page: pageNumber)
                continue
            }
            verify(
                node.children[index], level: node.level - 1, lower: childLower, upper: childUpper, table: table,
                rows: &rows, maximumKey: &maximumKey, eachRow: eachRow)
        }
    }

    /// Reads a tree page, checksum included whatever was checked before, into the shape the checks need: keys,
    /// children and overflow references, no copy of any value. A leaf's rows are lent to `eachRow` once the page
    /// validates.
    private func readNode(_ number: UInt64, eachRow: (UInt64, LeafCell) -> Void) throws -> NodeShape {
        try pages.withPage(number, fully: true) { page, header in
            switch header.type {
            case .leaf:
                try LeafPage.validate(page, header: header)
                let leaf = LeafPageView(validatedPage: page, header: header)
                var node = NodeShape(level: 0, bodySize: header.bodyLength)
                let bitmapKeys = leaf.bitmapKeys
                node.keys.reserveCapacity(leaf.count)
                for index in 0..<leaf.count {
                    let key = bitmapKeys?[index] ?? leaf.key(at: index)
                    node.keys.append(key)
                    let cell = leaf.cell(at: index)
                    if case .overflow(let first, let length) = cell { node.overflows.append((key, first, length)) }
                    eachRow(key, cell)
                }
                return node
            case .internal:
                let (level, keys, children) = try InternalPage.decode(page, header: header)
                var node = NodeShape(level: level, bodySize: header.bodyLength)
                node.keys = keys
                node.children = children.map { .page($0) }
                return node
            default:
                throw FormatError.invalidField("a \(header.type) page where a tree node was due")
            }
        }
    }

    private mutating func verifyOverflow(first: UInt64, length: Int, table: String, row: UInt64) {
        var next = first
        var total = 0
        while next != PageFormat.noPage {
            let current = next
            guard visited.insert(current).inserted else {
                problem("table '\(table)' row \(row): overflow page \(current) is reachable twice", page: current)
                return
            }
            do {
                next = try pages.withPage(current, fully: true) { page, header in
                    let (following, data) = try OverflowPage.decode(page, header: header)
                    total += data.count
                    return following
                }
            } catch {
                problem("table '\(table)' row \(row): \(error)", page: current)
                return
            }
            report.overflowPages += 1
            summary?.overflowPages += 1
        }
        if total != length {
            problem(
                "table '\(table)' row \(row): overflow chain holds \(total) bytes, the leaf says \(length)", page: first
            )
        }
    }
}

/// What the verifier checks of a row-tree node, from a page or from memory.
private struct NodeShape {
    var level: Int
    var keys: [UInt64] = []
    var children: [NodeRef] = []
    /// The rows whose values are overflow chains, with each chain's first page and length.
    var overflows: [(row: UInt64, first: UInt64, length: Int)] = []
    var bodySize: Int

    init(level: Int, bodySize: Int) {
        self.level = level
        self.bodySize = bodySize
    }

    init(_ node: BTreeNode) {
        level = node.level
        keys = node.keys
        children = node.children
        bodySize = node.bodySize
        for (index, value) in node.values.enumerated() {
            if case .overflow(let first, let length) = value { overflows.append((node.keys[index], first, length)) }
        }
    }

    var isLeaf: Bool { level == 0 }
    var count: Int { keys.count }
}
