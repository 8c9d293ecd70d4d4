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

        /// The row and table only: the store's 16 bytes cost more to hash than the rest of a lookup, and keys
        /// that differ by store alone are rare (equality still compares it).
        func hash(into hasher: inout Hasher) {
            hasher.combine(rowID)
            hasher.combine(table)
        }
    }

    private struct Entry {
        var row: StoredRow?
        var fetchedAt: Date
        var references: Int

        /// Takes a row read at `now`; one more object holds the entry when `retaining`.
        mutating func update(_ row: StoredRow, at now: Date, retaining: Bool = true) {
            if retaining { references += 1 }
            self.row = row
            fetchedAt = now
        }
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
            // One hash lookup: the entry is changed in place.
            guard let index = state.entries.index(forKey: key), let row = state.entries.values[index].row,
                maximumAge.map({ Date().timeIntervalSince(state.entries.values[index].fetchedAt) <= $0 }) ?? true
            else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            if retaining { state.entries.values[index].references += 1 }
            return row
        }
    }

    /// Records a row read from (or written to) the store: in the entry an object retains with it when
    /// `retaining`, else only if some object holds the key already.
    func store(_ row: StoredRow, for key: Key, retaining: Bool) {
        let now = Date()
        state.withLock { state in
            // One hash lookup (three made this a third of a fault's cost): the entry is changed in place.
            if retaining {
                state.entries[key, default: Entry(row: nil, fetchedAt: now, references: 0)].update(row, at: now)
            } else if let index = state.entries.index(forKey: key) {
                state.entries.values[index].update(row, at: now, retaining: false)
            }
        }
    }

    /// Records rows read together (a batch of faults), `rows[i]` under `keys[i]`, each in the entry an object
    /// retains with it: one lock and one clock reading for all of them.
    func storeRetaining(_ keys: [Key], _ rows: [StoredRow]) {
        let now = Date()
        state.withLock { state in
            for index in keys.indices {
                // In place when the key has an entry; else one insert (no `default:` closure per row).
                if let slot = state.entries.index(forKey: keys[index]) {
                    state.entries.values[slot].update(rows[index], at: now)
                } else {
                    state.entries[keys[index]] = Entry(row: rows[index], fetchedAt: now, references: 1)
                }
            }
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
            guard let index = state.entries.index(forKey: key) else { return }
            if state.entries.values[index].references <= 1 {
                state.entries.remove(at: index)
            } else {
                state.entries.values[index].references -= 1
            }
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
    var cachedRowCount: Int { state.withLock { $0.entries.values.filter { $0.row != nil }.count } }
    var counters: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }
}
