import StrataFormat

/// The index entries one put or delete of a row changes, computed where the tree's descent finds the old row (a
/// ``LeafVisitor`` for a delete; through ``IndexedLeafWriter`` for a put, once the new row is known): the one place a
/// write computes index keys.
///
/// A row whose indexed fields keep their bytes keeps its entries, found without decoding a field or making an entry
/// (an update of an unindexed field, the common one); else each index's old and new entries are made once, the new
/// one checked against the tree's entry limit. The first change is held inline: a table has one index, usually, and
/// a write that changes no entry (or one) allocates no list.
///
/// A put or delete in a transaction that defers its index changes lends them to the visit (``exchangeNoted(with:)``):
/// its entries are then noted where they are made, straight into the deferred changes, rather than kept here. For a
/// put that is safe because the visit is its last step that can fail (``IndexedLeafWriter`` visits after the put's own
/// writer, and ``BTree/put(_:key:owner:onlyReplacing:writing:)`` stores what the writer returns); a delete's
/// rebalancing can fail after it, so a delete that fails takes its removals back (``takeBackDelete()``).
struct RowIndexing: LeafVisitor {
    /// An index's entry for the row before (nil: none) and after (nil: none).
    struct Change {
        let index: IndexID
        let old: [UInt8]?
        let new: [UInt8]?
    }

    /// The table's indexes with their definitions, as the table lists them: no lookup in the state's catalog.
    private let indexes: [TableIndex]
    private let row: UInt64
    private let pages: PageStore
    private(set) var first: Change?
    /// The changes after the first, in the order of the table's indexes.
    private(set) var rest: [Change] = []
    /// Whether there are changes here to apply.
    var keepsChanges: Bool { first != nil }
    /// A put's or delete's deferred changes, lent: its entries are noted there.
    private var noted: DeferredIndexChanges?
    /// Whether a delete noted its removals in ``noted``.
    private var notedDelete = false

    init(_ indexes: [TableIndex], row: UInt64, pages: PageStore) {
        self.indexes = indexes
        self.row = row
        self.pages = pages
    }

    /// Exchanges the deferred changes a put notes its entries in with `deferred`: a put borrows a transaction's
    /// deferred changes with one exchange and gives them back with another (moved, not copied: a copy would share
    /// their buffers, and the next append would copy them whole). Nil: the put keeps its changes here.
    mutating func exchangeNoted(with deferred: inout DeferredIndexChanges?) {
        swap(&noted, &deferred)
    }

    /// Takes back the removals a delete noted in the lent deferred changes (if it got as far as noting them): for a
    /// delete that fails after its visit.
    mutating func takeBackDelete() {
        guard notedDelete else { return }
        noted!.takeBackDelete()
        notedDelete = false
    }

    /// Computes the changes of a delete of `old`, the row stored now (nil: none).
    mutating func visit(_ old: LeafCell?) throws { try visit(old, new: nil) }

    /// Computes the changes for `old`, the row stored now, becoming `new` (nil: none, a delete).
    ///
    /// - Throws: ``StorageError/invalidArgument(_:)`` for a new row that cannot be indexed (see
    ///   ``StoreState/entry(of:row:value:pages:limit:)``); ``StorageError/corruption(file:offset:reason:)`` for a
    ///   stored row that no longer decodes.
    mutating func visit(_ old: LeafCell?, new: LeafValue?) throws {
        if indexes.isEmpty { return }
        if noted != nil, new == nil {
            guard let old else { return }
            return try noteDelete(old: old)
        }
        if case .inline(let oldBytes)? = old, case .bytes(let newBytes)? = new,
            newBytes.withUnsafeBytes({ keysAgree(old: oldBytes, new: $0) })
        {
            return
        }
        let limit = PageFormat.maximumIndexEntry(pageSize: pages.pageSize)
        if noted != nil, let new {
            // A new row as the caller gave it (the usual case) is lent straight from its array.
            guard case .bytes(let newBytes) = new else {
                return try new.withCell { newCell in
                    try pages.withBytes(of: newCell) { try notePut(old: old, new: $0, limit: limit) }
                }
            }
            return try newBytes.withUnsafeBytes { try notePut(old: old, new: $0, limit: limit) }
        }
        for index in indexes {
            let newEntry = try new.flatMap {
                try StoreState.entry(of: index.definition, row: row, value: $0, pages: pages, limit: limit)
            }
            let oldEntry = try old.flatMap { try storedEntry(of: index.definition, cell: $0) }
            guard oldEntry != newEntry else { continue }
            let change = Change(index: index.id, old: oldEntry, new: newEntry)
            if first == nil { first = change } else { rest.append(change) }
        }
    }

    /// Notes a put's entries in ``noted``, the old row's lent where it lies.
    private mutating func notePut(old: LeafCell?, new: UnsafeRawBufferPointer, limit: Int) throws {
        guard let old else {
            return try noted!.notePut(row: row, old: nil, new: new, of: indexes, pages: pages, limit: limit)
        }
        if case .inline(let oldBytes) = old {
            return try noted!.notePut(row: row, old: oldBytes, new: new, of: indexes, pages: pages, limit: limit)
        }
        try pages.withBytes(of: old) {
            try noted!.notePut(row: row, old: $0, new: new, of: indexes, pages: pages, limit: limit)
        }
    }

    /// Notes a delete's removals in ``noted``, the row lent where it lies.
    private mutating func noteDelete(old: LeafCell) throws {
        if case .inline(let oldBytes) = old {
            try noted!.noteDelete(row: row, old: oldBytes, of: indexes, pages: pages)
        } else {
            try pages.withBytes(of: old) { try noted!.noteDelete(row: row, old: $0, of: indexes, pages: pages) }
        }
        notedDelete = true
    }

    /// Whether two rows have the same key in every index: both decode, each index filters their entities alike, and
    /// each indexed field has the same bytes in both (or lies past both rows' fields). False does not mean the keys
    /// differ (`1.50` and `1.5` make one key), only that they must be computed.
    private func keysAgree(old: UnsafeRawBufferPointer, new: UnsafeRawBufferPointer) -> Bool {
        guard let oldHeader = try? RowRecord.Header.decode(old), let newHeader = try? RowRecord.Header.decode(new)
        else { return false }
        for index in indexes {
            let definition = index.definition
            if let filter = definition.entityIDs, oldHeader.entityID != newHeader.entityID {
                let indexed = filter.contains(oldHeader.entityID)
                guard indexed == filter.contains(newHeader.entityID) else { return false }
                if !indexed { continue }
            }
            for position in definition.fields {
                let inOld = position < oldHeader.fieldCount
                guard inOld == (position < newHeader.fieldCount) else { return false }
                guard inOld else { continue }
                guard let oldSpan = try? oldHeader.span(ofField: position, in: old),
                    let newSpan = try? newHeader.span(ofField: position, in: new),
                    UnsafeRawBufferPointer(rebasing: old[oldSpan]).elementsEqual(
                        UnsafeRawBufferPointer(rebasing: new[newSpan]))
                else { return false }
            }
        }
        return true
    }

    /// The entry a stored row has in `index`: a row that was indexed once and no longer decodes is corruption.
    private func storedEntry(of index: IndexDefinition, cell: LeafCell) throws -> [UInt8]? {
        do {
            return try StoreState.entry(of: index, row: row, cell: cell, pages: pages, limit: .max)
        } catch StorageError.invalidArgument(let reason) {
            throw StorageError.corrupt(pages.fileName, at: 0, "a stored row no longer decodes: \(reason)")
        }
    }
}
