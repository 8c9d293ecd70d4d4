import StrataFormat

/// The sorted runs of a large transaction's load into an empty index, written to the page file as it goes, so that the
/// memory of the load's deferred entries is bounded by ``StoreConfiguration/largeTransactionMemoryBytes`` rather than
/// by the size of the transaction (FORMAT.md §7.2.1).
///
/// Each time the transaction spills its table leaves (``LeafSpill``), the entries it noted for such an index since the
/// last spill are sorted and written as index leaves: a run, named here by its leaf pages in key order. At commit (or
/// when the transaction first reads the index) the runs are merged and the index built from them, its leaves written as
/// the build closes them: only one leaf per run and the internal levels are in memory. Run pages are referenced by no
/// tree: garbage once the commit's root record names the built index, like a table leaf written and copied back.
struct IndexLoadRuns {
    /// The leaf pages of each run, in key order.
    private var runs: [[UInt64]] = []

    var isEmpty: Bool { runs.isEmpty }

    /// Writes `entries` as one more run: they must be a load's (every entry an addition, of rows appended in increasing
    /// order, so all distinct), and distinct from those of the runs before.
    ///
    /// - Throws: ``StorageError/io(_:)``; then the transaction cannot commit (``LeafSpill/checkUsable()``).
    mutating func write(_ entries: PackedIndexEntries, tree: IndexTree, spill: inout LeafSpill) throws {
        guard entries.count > 0 else { return }
        let leaves = try entries.fillLoad(tree: tree, owner: 0) { .page(try spill.writeIndexLeaf($0)) }
        runs.append(
            leaves.map {
                guard case .page(let number) = $0.child else { preconditionFailure("a run leaf not written") }
                return number
            })
        try spill.publish()
    }

    /// The index of every run merged, its leaves written as the build closes them.
    ///
    /// - Throws: ``StorageError/io(_:)``, or ``StorageError/corruption(file:offset:reason:)`` for a run page that does
    ///   not read back as written.
    func build(tree: IndexTree, owner: UInt64, spill: inout LeafSpill) throws -> IndexNodeRef? {
        var merge = try Merge(runs: runs, pages: tree.pages)
        var filler = IndexLeafFiller(capacity: tree.capacity, owner: owner)
        var leaves: [(separator: [UInt8], child: IndexNodeRef)] = []
        while let closed = try merge.next({ filler.add($0) }) {
            if let closed { leaves.append((closed.separator, .page(try spill.writeIndexLeaf(closed.node)))) }
        }
        if let last = filler.finish() { leaves.append((last.separator, .page(try spill.writeIndexLeaf(last.node)))) }
        try spill.publish()
        return leaves.isEmpty ? nil : tree.buildLevels(above: leaves, owner: owner)
    }
}

extension IndexLoadRuns {
    /// The entries of sorted runs in key order: one cursor per run holding its current leaf, read back from the page
    /// file, and a binary heap of the cursors by their current entries.
    struct Merge {
        private struct Cursor {
            var pages: ArraySlice<UInt64>
            var leaf: IndexEntries
            var position: Int
        }

        private let pages: PageStore
        private var cursors: [Cursor] = []
        /// Indexes into ``cursors``: a min-heap by each cursor's current entry.
        private var heap: [Int] = []

        /// - Throws: what ``next(_:)`` throws, for the first leaf of each run.
        init(runs: [[UInt64]], pages: PageStore) throws {
            self.pages = pages
            for run in runs where !run.isEmpty {
                cursors.append(Cursor(pages: run.dropFirst(), leaf: try Self.leaf(at: run[0], pages), position: 0))
                heap.append(cursors.count - 1)
                siftUp(heap.count - 1)
            }
        }

        /// Calls `body` with the least entry not yet given (lent: valid only during the call) and returns its result;
        /// nil when every entry was given.
        ///
        /// - Throws: ``StorageError/io(_:)``, or ``StorageError/corruption(file:offset:reason:)`` for a run page that
        ///   is not an index leaf holding entries.
        mutating func next<R>(_ body: (UnsafeRawBufferPointer) -> R) throws -> R? {
            guard let top = heap.first else { return nil }
            let result = cursors[top].leaf.withEntry(cursors[top].position, body)
            cursors[top].position += 1
            if cursors[top].position == cursors[top].leaf.count {
                if let page = cursors[top].pages.popFirst() {
                    cursors[top].leaf = try Self.leaf(at: page, pages)
                    cursors[top].position = 0
                } else {
                    heap[0] = heap[heap.count - 1]
                    heap.removeLast()
                }
            }
            if !heap.isEmpty { siftDown(0) }
            return result
        }

        private func less(_ a: Int, _ b: Int) -> Bool {
            cursors[a].leaf.withEntry(cursors[a].position) { x in
                cursors[b].leaf.withEntry(cursors[b].position) { y in IndexKey.compare(x, y) < 0 }
            }
        }

        private mutating func siftUp(_ start: Int) {
            var child = start
            while child > 0 {
                let parent = (child - 1) / 2
                guard less(heap[child], heap[parent]) else { return }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        private mutating func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                let right = left + 1
                let least = right < heap.count && less(heap[right], heap[left]) ? right : left
                guard less(heap[least], heap[parent]) else { return }
                heap.swapAt(least, parent)
                parent = least
            }
        }

        /// The entries of the run leaf at page `number`, read through the file handle (not cached: it is read once).
        private static func leaf(at number: UInt64, _ pages: PageStore) throws -> IndexEntries {
            try pages.withPage(number) { page, header in
                do {
                    let node = try PageStore.decodeIndexNode(page, header: header)
                    guard node.isLeaf, node.count > 0 else { throw FormatError.invalidField("not a run's leaf") }
                    return node.keys
                } catch let error as FormatError {
                    throw StorageError.corrupt(pages.fileName, at: pages.offset(of: number), error)
                }
            }
        }
    }
}
