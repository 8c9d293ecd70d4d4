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
    ///    table's rows gives against the entries found, as multisets. Both sides fold into an
    ///    ``EntryMultisetDigest`` in one pass each (no entry kept); only when the digests differ are the entries
    ///    gathered, sorted and merged to name the differences: every row's entry must be there, and every entry
    ///    must name a row that gives exactly that entry (it exists, passes the entity filter, has that key).
    ///
    /// Every problem names the index and carries ``VerificationReport/Remedy/indexRebuild``: an index is
    /// derived from its table, so rebuilding it loses nothing.
    mutating func verifyIndexes(_ state: StoreState) {
        for index in state.indexes.values.sorted(by: { $0.id < $1.id }) {
            verifyIndex(index, of: state, expected: nil) { _ in }
        }
    }

    /// Checks one index of `state` (steps 1 to 3 above). `expected` holds what its table's rows give when the caller
    /// folded them on a walk of its own (compaction, as it copies the rows); nil: they are folded here, on one more
    /// walk of the table. `eachEntry` is lent each entry of the tree, in order, as its leaf is read (compaction copies
    /// the index it verifies).
    mutating func verifyIndex(
        _ index: IndexState, of state: StoreState, expected made: ExpectedIndexEntries?,
        eachEntry: (UnsafeRawBufferPointer) -> Void
    ) {
        let rows = BTree(pages: pages)
        let definition = index.definition
        var summary = VerificationReport.IndexSummary(
            name: definition.name, indexID: index.id.rawValue,
            table: state.tables[definition.table]?.name ?? definition.table.description, fields: definition.fields,
            entityIDs: definition.entityIDs?.sorted(), entryCount: index.entryCount)
        var walk = IndexWalk(index: index, summary: summary)
        if case .page(let page) = index.root { walk.summary.rootPage = page }
        if let root = index.root {
            walk.verify(root, level: nil, lower: nil, upper: nil, into: &self, eachEntry: eachEntry)
        }
        summary = walk.summary
        report.indexes.append(summary)
        if walk.damaged {
            indexProblem(index, "the tree does not read whole: its agreement with the table is not checked")
            return
        }
        if UInt64(walk.digest.count) != index.entryCount {
            indexProblem(index, "says it has \(index.entryCount) entries; its tree has \(walk.digest.count)")
        }
        guard let table = state.tables[definition.table] else {
            indexProblem(index, "its table \(definition.table) does not exist")
            return
        }
        var expected = made ?? ExpectedIndexEntries(definition)
        if made == nil {
            do {
                // Rows are read where they lie, each entry made in one reused buffer.
                try rows.forEachCell(table.root, from: 0, through: .max, reverse: false) { row, cell in
                    try pages.withBytes(of: cell) { expected.add(row: row, $0) }
                    return true
                }
            } catch {
                indexProblem(index, "its table's rows cannot be read (\(error)): agreement not checked")
                return
            }
        }
        if expected.unindexable > 0 {
            // A rebuild reads the same rows and fails on the same ones: no remedy (salvage, or fix the rows).
            indexProblem(
                index, "\(expected.unindexable) rows of table '\(table.name)' are not row records it can index",
                remedy: nil)
        }
        guard expected.digest != walk.digest else { return }
        do {
            try compare(index, expected: gatherExpected(index, table: table, rows: rows), found: gatherFound(index))
        } catch {
            indexProblem(index, "disagrees with its table, and reading them again failed (\(error))")
        }
    }

    /// The entries a rebuild of `index` from its table's rows gives, sorted (rows it cannot index skipped: they
    /// are reported already).
    private func gatherExpected(_ index: IndexState, table: TableState, rows: BTree) throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        try rows.forEach(table.root, from: 0, through: .max, reverse: false) { row, value in
            if let entry = try? StoreState.entry(
                of: index.definition, row: row, value: value, pages: pages, limit: .max)
            {
                entries.append(entry)
            }
            return true
        }
        entries.sort { IndexKey.compare($0, $1) < 0 }
        return entries
    }

    /// The entries of `index`'s tree, in order (the tree read whole before this is called).
    private func gatherFound(_ index: IndexState) throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        try IndexTree(pages: pages).forEach(index.root, from: nil, below: nil, reverse: false) {
            entries.append(Array($0))
            return true
        }
        return entries
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
    /// The entries found, folded as they are met.
    var digest = EntryMultisetDigest()
    /// Whether a page could not be read or a node was malformed (the entries are then incomplete).
    var damaged = false

    init(index: IndexState, summary: VerificationReport.IndexSummary) {
        self.index = index
        self.summary = summary
    }

    /// Verifies the subtree at `ref`, whose entries must lie in `lower..<upper` (nil: unbounded).
    mutating func verify(
        _ ref: IndexNodeRef, level expected: Int?, lower: [UInt8]?, upper: [UInt8]?, into verifier: inout StoreVerifier,
        eachEntry: (UnsafeRawBufferPointer) -> Void
    ) {
        let pages = verifier.pages
        let node: IndexNode
        var pageNumber: UInt64?
        switch ref {
        case .node(let inMemory):
            node = inMemory
            let size = IndexNode.bodySize(level: node.level, keys: node.keys[...])
            if size != node.bodySize || node.encodedSize > PageFormat.bodyCapacity(pageSize: pages.pageSize) {
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
                // A leaf is checked where it lies (the bulk of an index), its entries folded into a local digest
                // (the closure captures no copy of the walk); an internal node is decoded.
                var leafDigest = EntryMultisetDigest()
                var leafBytes = 0
                let parts = index.definition.fields.count
                let decoded = try pages.withPage(number, fully: true) { page, header -> IndexNode? in
                    guard header.type == .indexLeaf else { return try PageStore.decodeIndexNode(page, header: header) }
                    try IndexLeafPage.validate(page, header: header)
                    if let expected, expected != 0 {
                        throw FormatError.invalidField("node at level 0 where \(expected) was due")
                    }
                    try Self.verifyLeaf(
                        IndexLeafPageView(validatedPage: page, header: header), parts: parts, lower: lower,
                        upper: upper, into: &leafDigest, eachEntry: eachEntry)
                    leafBytes = header.bodyLength
                    return nil
                }
                guard let decoded else {
                    digest.add(leafDigest)
                    verifier.report.treePages += 1
                    summary.leafPages += 1
                    summary.leafBytes += UInt64(leafBytes)
                    if expected == nil { summary.height = 1 }
                    return
                }
                node = decoded
            } catch {
                fail("\(error)", page: number, &verifier)
                return
            }
            verifier.report.treePages += 1
            if node.isLeaf {
                summary.leafPages += 1
                summary.leafBytes += UInt64(node.encodedSize)
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
                guard entry.withUnsafeBytes({ hasKeyOfItsParts($0) }) else {
                    fail(
                        "entry \(position) is not a key of \(index.definition.fields.count) parts and a row ID",
                        page: pageNumber, &verifier)
                    return
                }
                entry.withUnsafeBytes {
                    digest.add($0)
                    eachEntry($0)
                }
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
                node.children[position], level: node.level - 1, lower: childLower, upper: childUpper, into: &verifier,
                eachEntry: eachEntry)
        }
    }

    /// Whether `entry` is a key of the index's number of parts (each part canonical) and a row ID.
    private func hasKeyOfItsParts(_ entry: UnsafeRawBufferPointer) -> Bool {
        Self.isEntry(entry, parts: index.definition.fields.count)
    }

    /// Whether `entry` is a key of `parts` parts (each canonical) and a row ID.
    private static func isEntry(_ entry: UnsafeRawBufferPointer, parts: Int) -> Bool {
        guard entry.count > IndexKey.rowIDSize else { return false }
        let key = UnsafeRawBufferPointer(rebasing: entry.dropLast(IndexKey.rowIDSize))
        return (try? IndexKey.partCount(key)) == parts
    }

    /// Checks a validated leaf read where it lies (its entries increase: validation saw to that): every entry within
    /// its parent's range and a key of `parts` parts, each folded into `digest` and lent to `eachEntry`.
    private static func verifyLeaf(
        _ leaf: IndexLeafPageView, parts: Int, lower: [UInt8]?, upper: [UInt8]?, into digest: inout EntryMultisetDigest,
        eachEntry: (UnsafeRawBufferPointer) -> Void
    ) throws(FormatError) {
        var problem: String?
        var position = 0
        _ = leaf.forEachEntry(in: 0..<leaf.count, reverse: false) { entry in
            // Only the first entry can fall below the range and the last above it: validation ordered them.
            let aboveLower =
                position > 0 || lower.map { $0.withUnsafeBytes { IndexKey.compare(entry, $0) >= 0 } } ?? true
            let belowUpper =
                position < leaf.count - 1
                || upper.map { $0.withUnsafeBytes { IndexKey.compare(entry, $0) < 0 } } ?? true
            guard aboveLower && belowUpper else {
                problem = "entry \(position) out of order or outside its parent's range"
                return false
            }
            guard isEntry(entry, parts: parts) else {
                problem = "entry \(position) is not a key of \(parts) parts and a row ID"
                return false
            }
            digest.add(entry)
            eachEntry(entry)
            position += 1
            return true
        }
        if let problem { throw .invalidField(problem) }
    }

    private mutating func fail(_ message: String, page: UInt64?, _ verifier: inout StoreVerifier) {
        damaged = true
        verifier.indexProblem(index, message, page: page)
    }
}

/// The entries a rebuild of one index from its table's rows gives, folded into a digest as the rows are met (each
/// made in one reused buffer, none kept); rows that are not row records the index can take are counted.
struct ExpectedIndexEntries {
    private let definition: IndexDefinition
    private(set) var digest = EntryMultisetDigest()
    private(set) var unindexable = 0
    private var entry: [UInt8] = []

    init(_ definition: IndexDefinition) {
        self.definition = definition
    }

    mutating func add(row: UInt64, _ bytes: UnsafeRawBufferPointer) {
        entry.removeAll(keepingCapacity: true)
        do {
            if try definition.appendEntry(forRow: row, bytes, to: &entry) { entry.withUnsafeBytes { digest.add($0) } }
        } catch {
            unindexable += 1
        }
    }
}

/// An order-independent digest of a multiset of index entries: their count and the wrapping sum of a hash of each.
/// Equal multisets always give equal digests; different ones give equal digests with a probability of about
/// 2^-64 per comparison. The hash is seeded at random once per process, so a crafted file cannot aim at a
/// collision; it is a multiply-and-mix over 8-byte words (as wyhash and MurmurHash3's finalizer do), several
/// times cheaper than SipHash on entries of 10 to 30 bytes.
struct EntryMultisetDigest: Equatable {
    private static let seed = UInt64.random(in: .min ... .max)
    private(set) var count = 0
    private var sum: UInt64 = 0

    mutating func add(_ entry: UnsafeRawBufferPointer) {
        count += 1
        sum &+= Self.hash(entry)
    }

    /// Folds in another digest's entries: the digest of the union of the two multisets.
    mutating func add(_ other: EntryMultisetDigest) {
        count += other.count
        sum &+= other.sum
    }

    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset &+ 8 <= bytes.count {
            state = mix(state ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            offset &+= 8
        }
        // The last 0 to 7 bytes, as a little-endian integer. An entry of 8 bytes or more loads its last 8 bytes at
        // once and shifts out those already mixed in (a loop a byte was 30% of the hash on entries of 10 to 30 bytes).
        let rest = bytes.count &- offset
        var tail: UInt64 = 0
        if rest > 0, bytes.count >= 8 {
            let last = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count &- 8, as: UInt64.self))
            tail = last &>> UInt64(64 &- 8 &* rest)
        } else {
            var shift: UInt64 = 0
            while offset < bytes.count {
                tail |= UInt64(bytes[offset]) &<< shift
                shift &+= 8
                offset &+= 1
            }
        }
        return mix(mix(state ^ tail))
    }

    /// MurmurHash3's 64-bit finalizer: every input bit affects every output bit.
    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }
}
