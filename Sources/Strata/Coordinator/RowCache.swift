import Foundation
import StrataLock

/// The coordinator's cache of rows, keyed by (store, table, row ID), shared by all its contexts.
///
/// Each entry holds the row's values, its version and when it was fetched. An entry exists while at least
/// one context holds an object with that ID (contexts ``retain(_:)`` and ``release(_:)`` keys as they
/// register and drop objects); the last release drops it. Faults are filled from here; a miss, or an entry
/// older than the context's staleness interval, goes to the store.
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

    /// The cached row when it is there and no older than `maximumAge` (nil: any age).
    func row(for key: Key, maximumAge: TimeInterval?) -> StoredRow? {
        state.withLock { state in
            guard let entry = state.entries[key], let row = entry.row,
                maximumAge.map({ Date().timeIntervalSince(entry.fetchedAt) <= $0 }) ?? true
            else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            return row
        }
    }

    /// Records a row read from (or written to) the store, if some context holds its object.
    func store(_ row: StoredRow, for key: Key) {
        state.withLock { state in
            guard state.entries[key] != nil else { return }
            state.entries[key]!.row = row
            state.entries[key]!.fetchedAt = Date()
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

    func retain(_ key: Key) {
        state.withLock { state in
            state.entries[key, default: Entry(row: nil, fetchedAt: .distantPast, references: 0)].references += 1
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
