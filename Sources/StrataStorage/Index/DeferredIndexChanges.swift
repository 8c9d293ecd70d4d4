import StrataFormat

/// The index entries a write transaction added and removed but has not yet put into its index trees.
///
/// A put into an indexed table changes one entry per index, at a place in the index unrelated to the row's (a
/// department index sees the rows of a bulk load in random key order): inserted one at a time, each costs a descent
/// to a random leaf. Kept here instead, they are applied together, sorted (neighbours share leaves), when the
/// transaction commits or first reads an index; into an empty index they are built bottom up, with no descent at
/// all. The entry counts stay exact all along (``StoreState/putIndexed(_:row:value:tree:owner:deferring:)`` counts
/// each change as it notes it).
struct DeferredIndexChanges {
    private struct Change {
        let entry: [UInt8]
        let isInsertion: Bool
        /// The change's place in the transaction: a row's entry removed and added back keeps its order.
        let sequence: Int
    }

    private var changes: [IndexID: [Change]] = [:]
    private var sequence = 0

    var isEmpty: Bool { changes.isEmpty }

    /// Notes that `index` loses `old` and gains `new` (either may be nil).
    mutating func note(_ index: IndexID, old: [UInt8]?, new: [UInt8]?) {
        if let old { append(Change(entry: old, isInsertion: false, sequence: sequence), to: index) }
        if let new { append(Change(entry: new, isInsertion: true, sequence: sequence + 1), to: index) }
        sequence += 2
    }

    private mutating func append(_ change: Change, to index: IndexID) {
        changes[index, default: []].append(change)
    }

    /// Forgets the changes of an index that is dropped.
    mutating func discard(_ index: IndexID) { changes[index] = nil }

    /// Puts every noted change into the index trees of `state`.
    ///
    /// - Throws: ``StorageError/corruption(file:offset:reason:)`` when an entry to remove is not in the index or an
    ///   entry to add already is (the index disagrees with its table); ``StorageError/io(_:)`` for a page that cannot
    ///   be read.
    mutating func apply(to state: inout StoreState, tree: IndexTree, owner: UInt64) throws {
        for (id, noted) in changes {
            guard var index = state.indexes[id] else { continue }
            let sorted = noted.sorted {
                let order = IndexKey.compare($0.entry, $1.entry)
                return order != 0 ? order < 0 : $0.sequence < $1.sequence
            }
            if index.root == nil {
                index.root = tree.build(
                    try Self.netEntries(sorted, index: index, file: tree.pages.fileName), owner: owner)
            } else {
                for change in sorted {
                    if change.isInsertion {
                        let (root, inserted) = try tree.insert(index.root, change.entry, owner: owner)
                        guard inserted else { throw Self.disagreement(index, file: tree.pages.fileName, extra: true) }
                        index.root = root
                    } else {
                        let (root, removed) = try tree.remove(index.root, change.entry, owner: owner)
                        guard removed else { throw Self.disagreement(index, file: tree.pages.fileName, extra: false) }
                        index.root = root
                    }
                }
            }
            state.indexes[id] = index
        }
        changes = [:]
    }

    /// The entries an empty index holds after `sorted` (grouped by entry, each group in transaction order).
    private static func netEntries(_ sorted: [Change], index: IndexState, file: String) throws -> [[UInt8]] {
        var entries: [[UInt8]] = []
        entries.reserveCapacity(sorted.count)
        var position = 0
        while position < sorted.count {
            var present = false
            let entry = sorted[position].entry
            while position < sorted.count, sorted[position].entry == entry {
                guard sorted[position].isInsertion != present else {
                    throw disagreement(index, file: file, extra: present)
                }
                present.toggle()
                position += 1
            }
            if present { entries.append(entry) }
        }
        return entries
    }

    private static func disagreement(_ index: IndexState, file: String, extra: Bool) -> StorageError {
        StorageError.corrupt(
            file, at: 0,
            extra
                ? "index '\(index.definition.name)' holds an entry for a row it lacks"
                : "index '\(index.definition.name)' lacks the entry of a row it indexes")
    }
}
