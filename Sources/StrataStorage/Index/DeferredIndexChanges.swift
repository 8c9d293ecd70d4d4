import StrataFormat

/// The index entries a write transaction added and removed but has not yet put into its index trees.
///
/// A put into an indexed table changes one entry per index, at a place in the index unrelated to the row's (a
/// department index sees the rows of a bulk load in random key order): inserted one at a time, each costs a descent
/// to a random leaf. Kept here instead, they are applied together, sorted (neighbours share leaves), when the
/// transaction commits or first reads an index; into an empty index they are built bottom up, with no descent at
/// all. The entry counts stay exact all along (``StoreState/putIndexed(_:row:value:tree:owner:deferring:)`` counts
/// each change as it notes it).
///
/// The entries of an index lie back to back in one byte array; each change is a fixed-size item whose first sixteen
/// entry bytes, as two big-endian integers, decide most comparisons of the sort without reading the entries.
struct DeferredIndexChanges {
    private struct Change {
        /// The entry's first sixteen bytes (zero-padded), big-endian: compared first.
        let high: UInt64
        let low: UInt64
        let start: Int
        let length: Int
        /// The change's place in the transaction, times two, plus one for an insertion: a row's entry removed and
        /// added back keeps its order.
        let order: UInt64

        var isInsertion: Bool { order & 1 == 1 }
    }

    /// One index's changes.
    private struct Changes {
        var bytes: [UInt8] = []
        var changes: [Change] = []

        mutating func append(_ entry: [UInt8], order: UInt64) {
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { words in
                entry.withUnsafeBytes { words.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(16))) }
            }
            changes.append(
                Change(
                    high: UInt64(bigEndian: words.0), low: UInt64(bigEndian: words.1), start: bytes.count,
                    length: entry.count, order: order))
            bytes.append(contentsOf: entry)
        }
    }

    /// Each changed index with its changes: a transaction changes few indexes, so a list searched from its end (the
    /// index changed last) costs less per change than hashing.
    private var indexes: [(id: IndexID, changes: Changes)] = []
    private var sequence: UInt64 = 0

    var isEmpty: Bool { indexes.isEmpty }

    /// Notes that `index` loses `old` and gains `new` (either may be nil).
    mutating func note(_ index: IndexID, old: [UInt8]?, new: [UInt8]?) {
        let position =
            indexes.lastIndex { $0.id == index }
            ?? {
                indexes.append((index, Changes()))
                return indexes.count - 1
            }()
        if let old { indexes[position].changes.append(old, order: sequence << 1) }
        if let new { indexes[position].changes.append(new, order: (sequence + 1) << 1 | 1) }
        sequence += 2
    }

    /// Puts every noted change into the index trees of `state`.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when an entry to remove is not in the index or an
    ///   entry to add already is (the index disagrees with its table); ``StorageError/io(_:)`` for a page that cannot
    ///   be read.
    mutating func apply(to state: inout StoreState, tree: IndexTree, owner: UInt64) throws {
        let pending = indexes
        indexes = []
        for (id, noted) in pending {
            guard var index = state.indexes[id] else { continue }
            let file = tree.pages.fileName
            try noted.bytes.withUnsafeBytes { bytes in
                func entry(_ change: Change) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[change.start..<(change.start + change.length)])
                }
                func same(_ a: Change, _ b: Change) -> Bool {
                    a.high == b.high && a.low == b.low && a.length == b.length
                        && (a.length <= 16 || IndexKey.compare(entry(a), entry(b)) == 0)
                }
                let sorted = noted.changes.sorted { a, b in
                    if a.high != b.high { return a.high < b.high }
                    if a.low != b.low { return a.low < b.low }
                    if a.length != b.length || a.length > 16 {
                        let order = IndexKey.compare(entry(a), entry(b))
                        if order != 0 { return order < 0 }
                    }
                    return a.order < b.order
                }
                if index.root == nil {
                    // Into an empty index: the entries present at the end, built bottom up.
                    var entries = IndexEntries()
                    entries.reserveCapacity(entries: sorted.count, bytes: noted.bytes.count)
                    var position = 0
                    while position < sorted.count {
                        var present = false
                        let first = sorted[position]
                        while position < sorted.count, same(sorted[position], first) {
                            guard sorted[position].isInsertion != present else {
                                throw Self.disagreement(index, file: file, extra: present)
                            }
                            present.toggle()
                            position += 1
                        }
                        if present { entries.append(entry(first)) }
                    }
                    index.root = tree.build(entries, owner: owner)
                    return
                }
                for change in sorted {
                    let bytes = Array(entry(change))
                    if change.isInsertion {
                        let (root, inserted) = try tree.insert(index.root, bytes, owner: owner)
                        guard inserted else { throw Self.disagreement(index, file: file, extra: true) }
                        index.root = root
                    } else {
                        let (root, removed) = try tree.remove(index.root, bytes, owner: owner)
                        guard removed else { throw Self.disagreement(index, file: file, extra: false) }
                        index.root = root
                    }
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
