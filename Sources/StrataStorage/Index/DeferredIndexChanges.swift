import StrataFormat

/// The index entries a write transaction added and removed but has not yet put into its index trees.
///
/// A put into an indexed table changes one entry per index, at a place in the index unrelated to the row's (a
/// department index sees the rows of a bulk load in random key order): inserted one at a time, each costs a descent
/// to a random leaf. Kept here instead (packed, ``PackedIndexEntries``), they are applied together, sorted (neighbours
/// share leaves), when the transaction commits or first reads an index; into an empty index they are built bottom up,
/// with no descent at all. Each index's entry count is counted here as changes are noted and added to the index's
/// when they are applied (``entryDelta(of:)``: what the transaction sees in between).
///
/// A put or delete notes its entries as it makes them, where the tree's descent finds the old row
/// (``notePut(row:old:new:of:pages:limit:)``, ``noteDelete(row:old:of:pages:)``, from ``RowIndexing``): straight into
/// the packed entries, no array per entry.
struct DeferredIndexChanges {
    /// One index's changes: each entry tagged 1 when added, 0 when removed, in the transaction's order.
    private struct Changes {
        /// The index's definition, which makes its entries.
        let definition: IndexDefinition
        var entries = PackedIndexEntries()
        /// Whether only entries were added, of rows in increasing order (a load): equal keys then need no sorting.
        var rowsIncrease = true
        var lastRow: UInt64 = 0
        /// The entries added less those removed.
        var entryDelta = 0
        /// A large transaction's load into an empty index: the entries written as sorted runs so far, added before
        /// those in ``entries``.
        var runs = IndexLoadRuns()

        /// Counts an entry just appended.
        mutating func counted(row: UInt64, isInsertion: Bool) {
            if !isInsertion || (entries.count > 1 && row <= lastRow) { rowsIncrease = false }
            lastRow = row
            entryDelta += isInsertion ? 1 : -1
        }

        /// Appends the entries of a row put: `old`'s removed, `new`'s added, or neither when they are equal. On a
        /// throw, nothing.
        ///
        /// - Throws: ``StorageError/invalidArgument(_:)`` for a new row the index cannot take;
        ///   ``StorageError/corruption(file:offset:reason:)`` for a stored row that no longer decodes.
        mutating func notePut(
            row: UInt64, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer, pages: PageStore, limit: Int
        ) throws {
            let removes = try old.map { try appendRemoval(row: row, old: $0, pages: pages) } ?? false
            let adds: Bool
            do {
                adds = try entries.append(of: definition, row: row, bytes: new, tag: 1, limit: limit, pages: pages)
            } catch {
                entries.removeLast(removes ? 1 : 0)
                throw error
            }
            if removes, adds, entries.lastTwoAreEqual {
                entries.removeLast(2)
                return
            }
            if removes { counted(row: row, isInsertion: false) }
            if adds { counted(row: row, isInsertion: true) }
        }

        /// Appends the entry of a deleted row, `old`, removed. On a throw, nothing.
        ///
        /// - Throws: ``StorageError/corruption(file:offset:reason:)`` for a stored row that no longer decodes.
        mutating func noteDelete(row: UInt64, old: UnsafeRawBufferPointer, pages: PageStore) throws {
            if try appendRemoval(row: row, old: old, pages: pages) { counted(row: row, isInsertion: false) }
        }

        /// Appends the entry of `old`, a stored row, tagged removed (uncounted); returns whether the index has one.
        private mutating func appendRemoval(row: UInt64, old: UnsafeRawBufferPointer, pages: PageStore) throws -> Bool {
            do {
                return try entries.append(of: definition, row: row, bytes: old, tag: 0, limit: .max, pages: pages)
            } catch StorageError.invalidArgument(let reason) {
                // A row that was indexed once and no longer decodes.
                throw StorageError.corrupt(pages.fileName, at: 0, "a stored row no longer decodes: \(reason)")
            }
        }
    }

    /// Where an index's changes stood before a put or delete, to take back what it noted: when a later index refuses
    /// the put's row, or when the delete's tree fails after its visit.
    private struct Mark {
        let position: Int
        let count: Int
        let rowsIncrease: Bool
        let lastRow: UInt64
        let entryDelta: Int

        init(_ changes: Changes, at position: Int) {
            self.position = position
            count = changes.entries.count
            rowsIncrease = changes.rowsIncrease
            lastRow = changes.lastRow
            entryDelta = changes.entryDelta
        }
    }

    /// Each changed index with its changes: a transaction changes few indexes, so a list searched from its end (the
    /// index changed last) costs less per change than hashing.
    private var indexes: [(id: IndexID, changes: Changes)] = []

    /// The marks of the put or delete noted last (kept for its capacity: no allocation per put).
    private var marks: [Mark] = []

    var isEmpty: Bool { indexes.isEmpty }

    /// The memory the noted entries take (``PackedIndexEntries/memoryBytes``): a large transaction counts their
    /// growth toward its memory bound with its rows' (``LeafSpill``), since a load's notes are as large as its rows.
    var memoryBytes: Int { indexes.reduce(0) { $0 &+ $1.changes.entries.memoryBytes } }

    /// The entries the noted changes add to `index`, less those they remove.
    func entryDelta(of index: IndexID) -> Int {
        indexes.last { $0.id == index }?.changes.entryDelta ?? 0
    }

    /// Where the changes of `index` lie in ``indexes``, added when it has none yet.
    private mutating func position(
        of index: IndexID, definition: @autoclosure () -> IndexDefinition
    ) -> Int {
        if let position = indexes.lastIndex(where: { $0.id == index }) { return position }
        indexes.append((index, Changes(definition: definition())))
        return indexes.count - 1
    }

    /// Notes what a put of row `row` changes in each index of its table: the entry of `old` (the row stored now; nil:
    /// none) removed and that of `new` added, made where the rows lie; an index whose two entries are equal changes
    /// nothing. On a throw, nothing is noted.
    ///
    /// - Throws: ``StorageError/invalidArgument(_:)`` for a new row an index cannot take (see
    ///   ``StoreState/entry(of:row:value:pages:limit:)``); ``StorageError/corruption(file:offset:reason:)`` for a
    ///   stored row that no longer decodes.
    mutating func notePut(
        row: UInt64, old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer, of tableIndexes: [TableIndex],
        pages: PageStore, limit: Int
    ) throws {
        if tableIndexes.count == 1 {
            // One index: its own note is all or nothing.
            let position = position(of: tableIndexes[0].id, definition: tableIndexes[0].definition)
            try indexes[position].changes.notePut(row: row, old: old, new: new, pages: pages, limit: limit)
            return
        }
        marks.removeAll(keepingCapacity: true)
        for index in tableIndexes {
            let position = position(of: index.id, definition: index.definition)
            marks.append(Mark(indexes[position].changes, at: position))
            do {
                try indexes[position].changes.notePut(row: row, old: old, new: new, pages: pages, limit: limit)
            } catch {
                // Those noted before this index, taken back (this one noted nothing).
                takeBackMarked()
                throw error
            }
        }
    }

    /// Notes what a delete of row `row` removes from each index of its table: the entry of `old`, the row stored now,
    /// made where it lies. Each index is marked first, so that ``takeBackDelete()`` can take the removals back when
    /// the delete fails after its visit (the tree's rebalancing reads sibling pages). On a throw, nothing is noted.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` for a stored row that no longer decodes.
    mutating func noteDelete(
        row: UInt64, old: UnsafeRawBufferPointer, of tableIndexes: [TableIndex], pages: PageStore
    ) throws {
        marks.removeAll(keepingCapacity: true)
        for index in tableIndexes {
            let position = position(of: index.id, definition: index.definition)
            marks.append(Mark(indexes[position].changes, at: position))
            do {
                try indexes[position].changes.noteDelete(row: row, old: old, pages: pages)
            } catch {
                takeBackMarked()
                throw error
            }
        }
    }

    /// Takes back what the last ``noteDelete(row:old:of:pages:)`` noted; call it only right after one, before
    /// anything else is noted.
    mutating func takeBackDelete() { takeBackMarked() }

    /// Puts each marked index's changes back where its mark says they stood.
    private mutating func takeBackMarked() {
        for mark in marks {
            let noted = indexes[mark.position].changes.entries.count
            indexes[mark.position].changes.entries.removeLast(noted - mark.count)
            indexes[mark.position].changes.rowsIncrease = mark.rowsIncrease
            indexes[mark.position].changes.lastRow = mark.lastRow
            indexes[mark.position].changes.entryDelta = mark.entryDelta
        }
        marks.removeAll(keepingCapacity: true)
    }

    /// Writes the changes of every load into an empty index noted since the last spill as a sorted run (a large
    /// transaction past its memory bound, ``IndexLoadRuns``); other changes stay in memory.
    ///
    /// - Throws: ``StorageError/io(_:)``; then the transaction cannot commit.
    mutating func spillLoads(of state: StoreState, tree: IndexTree, into spill: inout LeafSpill) throws {
        for position in indexes.indices {
            guard indexes[position].changes.rowsIncrease, indexes[position].changes.entries.count > 0,
                let index = state.indexes[indexes[position].id], index.root == nil
            else { continue }
            do {
                let entries = indexes[position].changes.entries
                try indexes[position].changes.runs.write(entries, tree: tree, spill: &spill)
            }
            // The entries' room is kept for the next ones (the copy above gone, so emptied in place): a load noted the
            // same number of entries between spills, and grew its buffers anew by doubling after each one (3 times
            // 8, 4 and 2 MB for W1.graph's name index, with their smaller copies, in the heap under the save's peak).
            indexes[position].changes.entries.removeAllKeepingCapacity()
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
            // Wrapping: an entry to remove that was not counted is corruption, which applying the change reports.
            index.entryCount = UInt64(bitPattern: Int64(bitPattern: index.entryCount) &+ Int64(noted.entryDelta))
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
                while position < sorted.count {
                    let key = sorted[position]
                    if entries.tag(of: key) == 1 {
                        let (root, inserted) = try tree.insert(index.root, entries.entry(key), owner: owner)
                        guard inserted else { throw Self.disagreement(index, file: file, extra: true) }
                        index.root = root
                        position += 1
                        continue
                    }
                    var run = IndexEntries()
                    while position < sorted.count, entries.tag(of: sorted[position]) == 0,
                        run.isEmpty || !entries.same(sorted[position], sorted[position - 1])
                    {
                        entries.append(sorted[position], to: &run)
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
