import StrataFormat

/// The index entries a write transaction added and removed but has not yet put into its index trees.
///
/// A put into an indexed table changes one entry per index, at a place in the index unrelated to the row's (a
/// department index sees the rows of a bulk load in random key order): inserted one at a time, each costs a descent
/// to a random leaf. Kept here instead (packed, ``PackedIndexEntries``), they are applied together, sorted (neighbours
/// share leaves), when the transaction commits or first reads an index; into an empty index they are built bottom up,
/// with no descent at all. The entry counts stay exact all along (``StoreState`` counts each change as it notes it).
struct DeferredIndexChanges {
    /// One index's changes: each entry tagged 1 when added, 0 when removed, in the transaction's order.
    private struct Changes {
        var entries = PackedIndexEntries()
        /// Whether only entries were added, of rows in increasing order (a load): equal keys then need no sorting.
        var rowsIncrease = true
        var lastRow: UInt64 = 0
        /// A large transaction's load into an empty index: the entries written as sorted runs so far, added before
        /// those in ``entries``.
        var runs = IndexLoadRuns()

        mutating func append(_ entry: [UInt8], isInsertion: Bool) {
            let row = entry.withUnsafeBytes {
                UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: entry.count - IndexKey.rowIDSize, as: UInt64.self))
            }
            if !isInsertion || (entries.count > 0 && row <= lastRow) { rowsIncrease = false }
            lastRow = row
            entries.append(entry, tag: isInsertion ? 1 : 0)
        }
    }

    /// Each changed index with its changes: a transaction changes few indexes, so a list searched from its end (the
    /// index changed last) costs less per change than hashing.
    private var indexes: [(id: IndexID, changes: Changes)] = []

    var isEmpty: Bool { indexes.isEmpty }

    /// Notes that `index` loses `old` and gains `new` (either may be nil).
    mutating func note(_ index: IndexID, old: [UInt8]?, new: [UInt8]?) {
        let position =
            indexes.lastIndex { $0.id == index }
            ?? {
                indexes.append((index, Changes()))
                return indexes.count - 1
            }()
        if let old { indexes[position].changes.append(old, isInsertion: false) }
        if let new { indexes[position].changes.append(new, isInsertion: true) }
    }

    /// Writes the changes of every load into an empty index noted since the last spill as a sorted run (a large
    /// transaction past its memory bound, ``IndexLoadRuns``); other changes stay in memory.
    ///
    /// - Throws: ``StorageError/io(_:)``; then the transaction cannot commit.
    mutating func spillLoads(of state: StoreState, tree: IndexTree, into spill: inout LeafSpill) throws {
        for position in indexes.indices {
            let noted = indexes[position].changes
            guard noted.rowsIncrease, noted.entries.count > 0, let index = state.indexes[indexes[position].id],
                index.root == nil
            else { continue }
            try indexes[position].changes.runs.write(noted.entries, tree: tree, spill: &spill)
            indexes[position].changes.entries = PackedIndexEntries()
        }
    }

    /// Puts every noted change into the index trees of `state`; with `writingLeaves` (a large transaction), a load
    /// into an empty index writes its leaves to the page file as its build closes them.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when an entry to remove is not in the index or an
    ///   entry to add already is (the index disagrees with its table); ``StorageError/io(_:)`` for a page that cannot
    ///   be read.
    mutating func apply(
        to state: inout StoreState, tree: IndexTree, owner: UInt64, spill: inout LeafSpill, writingLeaves: Bool
    ) throws {
        let pending = indexes
        indexes = []
        func place(_ leaf: IndexNode) throws -> IndexNodeRef {
            writingLeaves ? .page(try spill.writeIndexLeaf(leaf)) : .node(leaf)
        }
        for (id, var noted) in pending {
            guard var index = state.indexes[id] else { continue }
            let file = tree.pages.fileName
            if !noted.runs.isEmpty {
                // The start of a load into an empty index, written as runs: with the rest of the load as one more run,
                // merged; else merged first, the other changes then put into the result as into any index.
                if noted.rowsIncrease {
                    try noted.runs.write(noted.entries, tree: tree, spill: &spill)
                    noted.entries = PackedIndexEntries()
                }
                index.root = try noted.runs.build(tree: tree, owner: owner, spill: &spill)
            }
            let entries = noted.entries
            if index.root == nil, noted.rowsIncrease {
                // A load into an empty index: only additions, of distinct rows, so every entry is distinct and present.
                index.root = try entries.buildLoad(tree: tree, owner: owner, place: place)
                if writingLeaves { try spill.publish() }
                state.indexes[id] = index
                continue
            }
            let sorted = entries.sorted(inRowOrder: noted.rowsIncrease)
            if index.root == nil {
                // Into an empty index: the entries present at the end (each group of equal entries in the
                // transaction's order), built bottom up.
                var present: [PackedIndexEntries.SortKey] = []
                present.reserveCapacity(sorted.count)
                var position = 0
                while position < sorted.count {
                    var isPresent = false
                    let first = sorted[position]
                    while position < sorted.count, entries.same(sorted[position], first) {
                        guard (entries.tag(of: sorted[position]) == 1) != isPresent else {
                            throw Self.disagreement(index, file: file, extra: isPresent)
                        }
                        isPresent.toggle()
                        position += 1
                    }
                    if isPresent { present.append(first) }
                }
                index.root = try entries.build(present, tree: tree, owner: owner, place: place)
                if writingLeaves { try spill.publish() }
            } else {
                // Insertions one by one; each run of removals (distinct entries, in order) a leaf at a time.
                var position = 0
                var run: [[UInt8]] = []
                while position < sorted.count {
                    let key = sorted[position]
                    if entries.tag(of: key) == 1 {
                        let (root, inserted) = try tree.insert(index.root, entries.entry(key), owner: owner)
                        guard inserted else { throw Self.disagreement(index, file: file, extra: true) }
                        index.root = root
                        position += 1
                        continue
                    }
                    run.removeAll(keepingCapacity: true)
                    while position < sorted.count, entries.tag(of: sorted[position]) == 0,
                        run.isEmpty || !entries.same(sorted[position], sorted[position - 1])
                    {
                        run.append(entries.entry(sorted[position]))
                        position += 1
                    }
                    let (root, removed) = try tree.remove(index.root, sorted: run, owner: owner)
                    guard removed == run.count else { throw Self.disagreement(index, file: file, extra: false) }
                    index.root = root
                }
            }
            state.indexes[id] = index
        }
    }

    private static func disagreement(_ index: IndexState, file: String, extra: Bool) -> StorageError {
        StorageError.corrupt(
            file, at: 0,
            extra
                ? "index '\(index.definition.name)' holds an entry for a row it lacks"
                : "index '\(index.definition.name)' lacks the entry of a row it indexes")
    }
}
