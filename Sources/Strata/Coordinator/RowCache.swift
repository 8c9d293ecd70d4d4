import Foundation
import StrataLock

/// The coordinator's cache of rows, keyed by (store, table, row ID), shared by all its contexts.
///
/// Each entry holds the row's values, its version and when it was fetched. An entry exists while at least
/// one context holds an object that read its row through the cache (``ManagedObject/holdsCachedRow``: a fetched
/// object, a fired fault, a saved object); each such object retains its key once, and its context
/// ``release(_:)``s it when the object goes. A fault that never read its row holds nothing here. Faults are
/// filled from here; a miss, or an entry older than the context's staleness interval, goes to the store.
final class RowCache: Sendable {
    struct Key: Hashable, Sendable {
        let store: UUID
        let table: ObjectIdentifier
        let rowID: UInt64

        init(_ id: ManagedObjectID) {
            store = id.storeIdentifier!
            table = ObjectIdentifier(id.entity.rootEntity)
            rowID = id.rowID!
        }

        init(store: UUID, entity: EntityDescription, rowID: UInt64) {
            self.store = store
            table = ObjectIdentifier(entity.rootEntity)
            self.rowID = rowID
        }
    }

    private struct Entry {
        var row: StoredRow?
        var fetchedAt: Date
        var references: Int
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var hits = 0
        var misses = 0
    }

    private let state = Lock(State())

    /// The cached row when it is there and no older than `maximumAge` (nil: any age); a hit is retained once
    /// more when `retaining` (an object will hold it).
    func row(for key: Key, maximumAge: TimeInterval?, retaining: Bool) -> StoredRow? {
        state.withLock { state in
            guard let entry = state.entries[key], let row = entry.row,
                maximumAge.map({ Date().timeIntervalSince(entry.fetchedAt) <= $0 }) ?? true
            else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            if retaining { state.entries[key]!.references += 1 }
            return row
        }
    }

    /// Records a row read from (or written to) the store: in the entry an object retains with it when
    /// `retaining`, else only if some object holds the key already.
    func store(_ row: StoredRow, for key: Key, retaining: Bool) {
        let now = Date()
        state.withLock { state in
            if retaining {
                state.entries[key, default: Entry(row: nil, fetchedAt: now, references: 0)].references += 1
            } else if state.entries[key] == nil {
                return
            }
            state.entries[key]!.row = row
            state.entries[key]!.fetchedAt = now
        }
    }

    /// Forgets a row's values (its object was deleted or changed elsewhere) but keeps the references.
    func invalidate(_ key: Key) {
        state.withLock { $0.entries[key]?.row = nil }
    }

    /// Forgets the rows of several entries (another coordinator saved them).
    func invalidate(_ keys: [Key]) {
        state.withLock { state in
            for key in keys where state.entries[key] != nil { state.entries[key]!.row = nil }
        }
    }

    /// Forgets the rows of every entry of a store (it was removed).
    func invalidate(store: UUID) {
        state.withLock { state in
            for key in state.entries.keys where key.store == store { state.entries[key]!.row = nil }
        }
    }

    func release(_ key: Key) {
        state.withLock { state in
            guard let references = state.entries[key]?.references else { return }
            if references <= 1 { state.entries[key] = nil } else { state.entries[key]!.references = references - 1 }
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
    var cachedRowCount: Int { state.withLock { $0.entries.values.filter { $0.row != nil }.count } }
    var counters: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }
}
