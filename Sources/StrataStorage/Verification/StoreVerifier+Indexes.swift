import StrataFormat

extension StoreVerifier {
    /// Checks every secondary index of `state`:
    ///
    /// 1. Its tree, from the root down, every page read from disk: checksum, type (index leaf or index
    ///    internal), number and level; entries strictly increasing and within the range the parent's
    ///    separators give; separators in order; no empty leaf, no internal node with fewer than two
    ///    children; no page reachable twice (across every tree); every entry decodes to a key of as many
    ///    parts as the index has fields, followed by a row ID. In-memory nodes are sized within a page.
    /// 2. Its entry count against the entries found.
    /// 3. Agreement with its table both ways, when the tree read whole: the entries a rebuild from the
    ///    table's rows gives, sorted, merged against the entries found: every row's entry is there, and every
    ///    entry names a row that gives exactly that entry (it exists, passes the entity filter, has that key).
    ///
    /// Every problem names the index and carries ``VerificationReport/Remedy/indexRebuild``: an index is
    /// derived from its table, so rebuilding it loses nothing.
    mutating func verifyIndexes(_ state: StoreState) {
        let rows = BTree(pages: pages)
        for index in state.indexes.values.sorted(by: { $0.id < $1.id }) {
            let definition = index.definition
            var summary = VerificationReport.IndexSummary(
                name: definition.name, indexID: index.id.rawValue,
                table: state.tables[definition.table]?.name ?? definition.table.description, fields: definition.fields,
                entityIDs: definition.entityIDs?.sorted(), entryCount: index.entryCount)
            var walk = IndexWalk(index: index, summary: summary)
            if case .page(let page) = index.root { walk.summary.rootPage = page }
            if let root = index.root { walk.verify(root, level: nil, lower: nil, upper: nil, into: &self) }
            summary = walk.summary
            report.indexes.append(summary)
            if walk.damaged {
                indexProblem(index, "the tree does not read whole: its agreement with the table is not checked")
                continue
            }
            if UInt64(walk.entries.count) != index.entryCount {
                indexProblem(index, "says it has \(index.entryCount) entries; its tree has \(walk.entries.count)")
            }
            guard let table = state.tables[definition.table] else {
                indexProblem(index, "its table \(definition.table) does not exist")
                continue
            }
            var expected: [[UInt8]] = []
            var unindexable = 0
            do {
                try rows.forEach(table.root, from: 0, through: .max, reverse: false) { row, value in
                    do {
                        let entry = try StoreState.entry(
                            of: index, row: row, value: value, pages: pages, limit: .max)
                        if let entry { expected.append(entry) }
                    } catch StorageError.invalidArgument {
                        unindexable += 1
                    }
                    return true
                }
            } catch {
                indexProblem(index, "its table's rows cannot be read (\(error)): agreement not checked")
                continue
            }
            if unindexable > 0 {
                // A rebuild reads the same rows and fails on the same ones: no remedy (salvage, or fix the rows).
                indexProblem(
                    index, "\(unindexable) rows of table '\(table.name)' are not row records it can index",
                    remedy: nil)
            }
            expected.sort { IndexKey.compare($0, $1) < 0 }
            compare(index, expected: expected, found: walk.entries)
        }
    }

    /// Merges the entries a rebuild gives against those found; reports the first few differences each way.
    private mutating func compare(_ index: IndexState, expected: [[UInt8]], found: [[UInt8]]) {
        var missing: [[UInt8]] = []
        var extra: [[UInt8]] = []
        var i = 0
        var j = 0
        while i < expected.count || j < found.count {
            let order =
                i == expected.count ? 1 : (j == found.count ? -1 : IndexKey.compare(expected[i], found[j]))
            if order == 0 {
                i += 1
                j += 1
            } else if order < 0 {
                missing.append(expected[i])
                i += 1
            } else {
                extra.append(found[j])
                j += 1
            }
        }
        let shown = 5
        for entry in missing.prefix(shown) {
            indexProblem(index, "lacks the entry of row \(IndexKey.rowID(ofEntry: entry)) (\(Self.describe(entry)))")
        }
        for entry in extra.prefix(shown) {
            indexProblem(
                index,
                "holds an entry for row \(IndexKey.rowID(ofEntry: entry)) (\(Self.describe(entry))) that its table does not give"
            )
        }
        if missing.count + extra.count > 2 * shown {
            indexProblem(
                index, "disagrees with its table: \(missing.count) entries missing, \(extra.count) entries too many")
        }
    }

    static func describe(_ entry: [UInt8]) -> String {
        guard let (key, _) = try? IndexKey.decodeEntry(entry) else { return "\(entry.count) bytes" }
        return "key " + key.map(\.description).joined(separator: ", ")
    }

    mutating func indexProblem(
        _ index: IndexState, _ message: String, page: UInt64? = nil,
        remedy: VerificationReport.Remedy? = .indexRebuild
    ) {
        report.problems.append(
            VerificationReport.Problem(
                file: pages.fileName, offset: page.map { pages.offset(of: $0) },
                message: "index '\(index.definition.name)': \(message)", remedy: remedy,
                index: index.definition.name))
    }
}

/// The structural walk of one index tree, gathering its entries in order.
private struct IndexWalk {
    let index: IndexState
    var summary: VerificationReport.IndexSummary
    var entries: [[UInt8]] = []
    /// Whether a page could not be read or a node was malformed (the entries are then incomplete).
    var damaged = false

    init(index: IndexState, summary: VerificationReport.IndexSummary) {
        self.index = index
        self.summary = summary
    }

    /// Verifies the subtree at `ref`, whose entries must lie in `lower..<upper` (nil: unbounded).
    mutating func verify(
        _ ref: IndexNodeRef, level expected: Int?, lower: [UInt8]?, upper: [UInt8]?, into verifier: inout StoreVerifier
    ) {
        let pages = verifier.pages
        let node: IndexNode
        var pageNumber: UInt64?
        switch ref {
        case .node(let inMemory):
            node = inMemory
            let size = IndexNode.bodySize(level: node.level, keys: node.keys[...])
            if size != node.bodySize || size > PageFormat.bodyCapacity(pageSize: pages.pageSize) {
                fail("in-memory node of \(size) bytes recorded as \(node.bodySize)", page: nil, &verifier)
                return
            }
            summary.unwrittenNodes += 1
        case .page(let number):
            pageNumber = number
            guard verifier.visit(number, "index '\(index.definition.name)'") else {
                damaged = true
                return
            }
            do {
                node = try pages.withPage(number) { page, header in
                    try PageStore.decodeIndexNode(page, header: header)
                }
            } catch {
                fail("\(error)", page: number, &verifier)
                return
            }
            verifier.report.treePages += 1
            if node.isLeaf {
                summary.leafPages += 1
                summary.leafBytes += UInt64(node.bodySize)
            } else {
                summary.internalPages += 1
            }
        }
        if let expected, node.level != expected {
            fail("node at level \(node.level) where \(expected) was due", page: pageNumber, &verifier)
            return
        }
        if expected == nil { summary.height = node.level + 1 }
        if node.count == 0 || (!node.isLeaf && node.count < 2) {
            fail(node.isLeaf ? "empty leaf" : "internal node with \(node.count) children", page: pageNumber, &verifier)
            return
        }
        let parts = index.definition.fields.count
        if node.isLeaf {
            for (position, entry) in node.keys.enumerated() {
                let inRange =
                    (lower.map { IndexKey.compare(entry, $0) >= 0 } ?? true)
                    && (upper.map { IndexKey.compare(entry, $0) < 0 } ?? true)
                    && (position == 0 || IndexKey.compare(node.keys[position - 1], entry) < 0)
                guard inRange else {
                    fail("entry \(position) out of order or outside its parent's range", page: pageNumber, &verifier)
                    return
                }
                guard let (key, _) = try? IndexKey.decodeEntry(entry), key.count == parts else {
                    fail("entry \(position) is not a key of \(parts) parts and a row ID", page: pageNumber, &verifier)
                    return
                }
                entries.append(entry)
            }
            return
        }
        for position in node.children.indices {
            if position > 0 {
                let separator = node.keys[position]
                let inRange =
                    (lower.map { IndexKey.compare(separator, $0) > 0 } ?? true)
                    && (upper.map { IndexKey.compare(separator, $0) < 0 } ?? true)
                    && (position == 1 || IndexKey.compare(node.keys[position - 1], separator) < 0)
                guard inRange else {
                    fail(
                        "separator \(position) out of order or outside its parent's range", page: pageNumber, &verifier)
                    return
                }
            }
            let childLower = position == 0 ? lower : node.keys[position]
            let childUpper = position + 1 < node.count ? node.keys[position + 1] : upper
            verify(
                node.children[position], level: node.level - 1, lower: childLower, upper: childUpper, into: &verifier)
        }
    }

    private mutating func fail(_ message: String, page: UInt64?, _ verifier: inout StoreVerifier) {
        damaged = true
        verifier.indexProblem(index, message, page: page)
    }
}
