import Foundation
import StrataLock
import Synchronization

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
            table = id.entity.rootIdentifier
            rowID = id.rowID!
        }

        /// The key of `object`'s permanent ID, read in place from the object (no copy of its ID, so no retain of its
        /// entity).
        // Inlined, and each field read where it is: called, it retained and released the object, and the ID's
        // `storeIdentifier` (its store bound to a local) retained the entity and the store.
        @inline(__always)
        init(borrowing object: ManagedObject) {
            precondition(!object.objectID.store.isTemporary, "a temporary ID has no cached row")
            store = object.objectID.store.uuid
            table = object.objectID.entity.rootIdentifier
            rowID = object.objectID.number
        }

        init(store: UUID, entity: EntityDescription, rowID: UInt64) {
            self.store = store
            table = entity.rootIdentifier
            self.rowID = rowID
        }

        /// The row and table only: the store's 16 bytes cost more to hash than the rest of a lookup, and keys
        /// that differ by store alone are rare (equality still compares it).
        func hash(into hasher: inout Hasher) {
            hasher.combine(rowID)
            hasher.combine(table)
        }
    }

    /// A row and who holds it. 32 bytes (with its 8-byte key, a slot of ``RowTable`` is 40): one per registered
    /// object that read its row, so its size is a large part of what a fetched fault costs. The row is three words
    /// (``StoredRow``): a row of the engine's store is its record's bytes, one allocation, decoded when read. The
    /// time it was read and its reference count share the fourth word: the time as a ``FetchClock`` tick, which
    /// also says whether the entry has its row.
    private struct Entry {
        /// The row; when ``hasRow`` is false, only its entity is meaningful (the values were forgotten).
        var row: StoredRow
        /// When the row was read (``FetchClock``), or ``FetchClock/noRow`` when the values were forgotten.
        private(set) var fetchedAt: FetchClock.Tick
        /// How many objects hold the entry.
        var references: UInt32

        var hasRow: Bool { fetchedAt != FetchClock.noRow }

        init(_ row: StoredRow, at now: FetchClock.Tick, references: UInt32) {
            self.row = row
            fetchedAt = now
            self.references = references
        }

        /// Takes a row read at `now`; one more object holds the entry when `retaining`.
        mutating func update(_ row: StoredRow, at now: FetchClock.Tick, retaining: Bool = true) {
            if retaining { references += 1 }
            self.row = row
            fetchedAt = now
        }

        /// Forgets the values (and frees them) but keeps the references.
        mutating func forgetRow() {
            guard hasRow else { return }
            fetchedAt = FetchClock.noRow
            row = StoredRow(placeholderFor: row.entity)
        }
    }

    /// The times rows are read at, as 32-bit ticks: whole milliseconds since the cache was made, rounded down.
    ///
    /// A tick never makes a row look younger than it is, so ``row(for:maximumAge:retaining:)`` never serves a row
    /// older than the age asked for (a row may count as up to a millisecond older than it is, and go to the store a
    /// millisecond early). The ticks reach ``latest`` 49.7 days after the cache was made: a row read later is
    /// recorded as read then, so with a finite staleness interval it counts as old (a read of the store, never a
    /// stale row); an unbounded age (``ManagedObjectContext/stalenessInterval`` negative, the default) is
    /// unaffected. A clock set back before the cache was made records tick 0, which also only makes rows older.
    private struct FetchClock {
        typealias Tick = UInt32

        /// The tick of an entry whose values were forgotten (no time is recorded at it).
        static let noRow = Tick.max
        /// The last tick a read is recorded at.
        static let latest = Tick.max - 1

        /// Tick 0.
        let epoch = Date()

        /// The tick of `date`: the millisecond it is in, clamped to `0...latest`.
        func tick(_ date: Date) -> Tick {
            let milliseconds = (date.timeIntervalSince(epoch) * 1000).rounded(.down)
            guard milliseconds > 0 else { return 0 }  // also NaN
            return milliseconds < Double(Self.latest) ? Tick(milliseconds) : Self.latest
        }

        /// The time `tick` stands for (its millisecond's start: no later than any time recorded at it).
        func date(of tick: Tick) -> Date { epoch.addingTimeInterval(Double(tick) / 1000) }
    }

    /// One table's rows of one store, keyed by row ID alone: a key of 8 bytes instead of 32 in every slot.
    private struct Table {
        let rows = RowTable<Entry>()
    }

    /// Which store's table a ``Table`` holds: a plain value, so that finding a key's table copies no reference (a
    /// search through the tables themselves copied each, retaining and releasing its rows, three times a result).
    private struct TableName: Equatable {
        let store: UUID
        let table: ObjectIdentifier

        init(_ key: Key) { (store, table) = (key.store, key.table) }
    }

    private struct State {
        /// A handful (one per entity hierarchy and store): found by a linear search, cheaper than a hash.
        var tables: [Table] = []
        /// `tables[i]`'s name at `names[i]`.
        var names: [TableName] = []
        var hits = 0
        var misses = 0

        /// The position of `key`'s table in ``tables``, if it has one.
        func table(of key: Key) -> Int? {
            let name = TableName(key)
            return names.firstIndex(of: name)
        }

        /// The position of `key`'s table in ``tables``, made when it has none.
        mutating func makeTable(of key: Key) -> Int {
            if let index = table(of: key) { return index }
            tables.append(Table())
            names.append(TableName(key))
            return tables.count - 1
        }
    }

    private let state = Lock(State())

    /// The stride of an entry (``ObjectLayoutTests`` pins it).
    static var entryStride: Int { MemoryLayout<Entry>.stride }

    /// The ticks of ``Entry/fetchedAt``.
    private let clock = FetchClock()

    /// Counts the changes to the rows of entries that exist (a row replaced by another, or forgotten); entries made
    /// or let go, and their references, do not count. While it has not moved, an entry holds the row it held when
    /// it was read: a to-many's batch that kept the rows it recorded here loads its members from them
    /// (``FaultBatch/row(for:in:)``) without looking each up. Changed under the lock, read without it.
    private let changes = Atomic<UInt64>(0)

    /// See ``changes``.
    var generation: UInt64 { changes.load(ordering: .acquiring) }

    /// Counts a change to an existing entry's row (under the lock).
    private func rowChanged() { changes.wrappingAdd(1, ordering: .releasing) }

    /// The cached row when it is there and no older than `maximumAge` (nil: any age); a hit is retained once
    /// more when `retaining` (an object will hold it).
    func row(for key: Key, maximumAge: TimeInterval?, retaining: Bool) -> StoredRow? {
        state.withLock { state in
            // One search: the entry is changed in place.
            guard let table = state.table(of: key), let slot = state.tables[table].rows.slot(of: key.rowID),
                state.tables[table].rows[slot].hasRow,
                maximumAge.map({
                    Date().timeIntervalSince(clock.date(of: state.tables[table].rows[slot].fetchedAt)) <= $0
                }) ?? true
            else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            if retaining { state.tables[table].rows[slot].references += 1 }
            return state.tables[table].rows[slot].row
        }
    }

    /// Records a row read from (or written to) the store: in the entry an object retains with it when
    /// `retaining`, else only if some object holds the key already.
    func store(_ row: StoredRow, for key: Key, retaining: Bool) {
        let now = clock.tick(Date())
        state.withLock { state in
            // One search (three made this a third of a fault's cost): the entry is changed in place.
            if retaining {
                let table = state.makeTable(of: key)
                let (slot, inserted) = state.tables[table].rows.slot(of: key.rowID) {
                    Entry(row, at: now, references: 1)
                }
                if !inserted {
                    state.tables[table].rows[slot].update(row, at: now)
                    rowChanged()
                }
            } else if let table = state.table(of: key), let slot = state.tables[table].rows.slot(of: key.rowID) {
                state.tables[table].rows[slot].update(row, at: now, retaining: false)
                rowChanged()
            }
        }
    }

    /// Rows read together (a fetch's results, a batch of faults), each for an object that will retain its entry:
    /// recorded under one lock a ``limit`` of rows. The batch holds the objects until their rows are recorded (one
    /// that went away first would release an entry not made yet). Bounded, so that a fetch of a million faults makes
    /// no transient arrays of a million keys and rows: freed among the objects made meanwhile, they stayed in the heap
    /// (56 bytes a fault of M1.graph's resident memory).
    struct Batch {
        /// Rows recorded under one lock.
        static let limit = 1_024
        private let cache: RowCache
        private var keys: [Key] = []
        private var rows: [StoredRow] = []
        private var holders: [AnyObject] = []

        /// - Parameter expected: how many rows are likely to come (room for at most ``limit`` is made at once).
        init(_ cache: RowCache, expected: Int) {
            self.cache = cache
            keys.reserveCapacity(min(expected, Self.limit))
            rows.reserveCapacity(min(expected, Self.limit))
            holders.reserveCapacity(min(expected, Self.limit))
        }

        /// Adds a row for the object that will retain its entry; records the batch when it holds ``limit`` rows.
        mutating func append(_ row: StoredRow, for key: Key, heldBy holder: AnyObject) {
            keys.append(key)
            rows.append(row)
            holders.append(holder)
            if keys.count >= Self.limit { record() }
        }

        /// Records the rows appended since the last time, and lets their objects go: to be called once the last one
        /// is appended.
        mutating func record() {
            guard !keys.isEmpty else { return }
            cache.storeRetaining(keys, rows)
            keys.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
            holders.removeAll(keepingCapacity: true)
        }
    }

    /// Records rows read together, `rows[i]` under `keys[i]`, each in the entry an object retains with it: one lock and
    /// one clock reading for all of them.
    private func storeRetaining(_ keys: [Key], _ rows: [StoredRow]) {
        let now = clock.tick(Date())
        state.withLock { state in
            var table = -1
            for index in keys.indices {
                let key = keys[index]
                // Rows read together are mostly of one table: its position is looked up only when it changes.
                if table < 0 || state.names[table] != TableName(key) {
                    table = state.makeTable(of: key)
                }
                // In place when the key has an entry; else made where the one search ended.
                let (slot, inserted) = state.tables[table].rows.slot(of: key.rowID) {
                    Entry(rows[index], at: now, references: 1)
                }
                if !inserted {
                    state.tables[table].rows[slot].update(rows[index], at: now)
                    rowChanged()
                }
            }
        }
    }

    /// Records rows of one store's table read together (a to-many's batch of members), `rows[i]` as row `rowIDs[i]`
    /// (each present: they are optional for a batch that takes each out for its member afterwards,
    /// ``FaultBatch/row(for:in:)``), each in the entry an object retains with it: one lock, one clock reading and one
    /// search for the table for all of them. The caller holds those objects until this returns (``Batch`` holds them
    /// itself, a key and an object per row).
    ///
    /// - Returns: the ``generation`` once the rows are recorded (while it stays the same, their entries hold these
    ///   rows), and the time they are recorded as read at.
    @discardableResult
    func storeRetaining(
        _ rows: [StoredRow?], rowIDs: [UInt64], store: UUID, root: EntityDescription
    ) -> (generation: UInt64, date: Date) {
        precondition(rows.count == rowIDs.count, "a row ID for each row")
        let now = clock.tick(Date())
        guard !rows.isEmpty else { return (generation, clock.date(of: now)) }
        let key = Key(store: store, entity: root, rowID: rowIDs[0])
        return state.withLock { state in
            let table = state.makeTable(of: key)
            let slots = state.tables[table].rows
            // The rows of a batch land in slots far apart: each slot is hinted a few rows before it is written.
            for index in rowIDs.indices.prefix(Self.slotsHintedAhead) { slots.prefetchSlot(of: rowIDs[index]) }
            for index in rows.indices {
                if index + Self.slotsHintedAhead < rowIDs.count {
                    slots.prefetchSlot(of: rowIDs[index + Self.slotsHintedAhead])
                }
                // In place when the key has an entry; else made where the one search ended. (Unwrapped where it is
                // used: a row bound first was copied once more, two retains and releases a row.)
                let (slot, inserted) = slots.slot(of: rowIDs[index]) { Entry(rows[index]!, at: now, references: 1) }
                if !inserted {
                    slots[slot].update(rows[index]!, at: now)
                    rowChanged()
                }
            }
            return (generation, clock.date(of: now))
        }
    }

    /// How many rows ahead ``storeRetaining(_:rowIDs:store:root:)`` hints the slots of.
    static let slotsHintedAhead = 8

    /// Makes room for `count` more entries in the table of `key` (its store and table; the row ID is not read), so
    /// that they go in without the table growing.
    func reserveCapacity(forAdding count: Int, to key: Key) {
        state.withLock { state in
            let table = state.makeTable(of: key)
            state.tables[table].rows.reserveCapacity(state.tables[table].rows.count + count)
        }
    }

    /// Forgets a row's values (its object was deleted or changed elsewhere) but keeps the references.
    func invalidate(_ key: Key) {
        state.withLock { state in
            guard let table = state.table(of: key), let slot = state.tables[table].rows.slot(of: key.rowID)
            else { return }
            state.tables[table].rows[slot].forgetRow()
            rowChanged()
        }
    }

    /// Forgets the rows of several entries (another coordinator saved them).
    func invalidate(_ keys: [Key]) {
        state.withLock { state in
            for key in keys {
                guard let table = state.table(of: key), let slot = state.tables[table].rows.slot(of: key.rowID)
                else { continue }
                state.tables[table].rows[slot].forgetRow()
            }
            rowChanged()
        }
    }

    /// Forgets the rows of every entry of a store (it was removed).
    func invalidate(store: UUID) {
        state.withLock { state in
            for table in state.tables.indices where state.names[table].store == store {
                state.tables[table].rows.updateEach { $0.forgetRow() }
            }
            rowChanged()
        }
    }

    func release(_ key: Key) {
        state.withLock { state in
            guard let table = state.table(of: key), let slot = state.tables[table].rows.slot(of: key.rowID)
            else { return }
            if state.tables[table].rows[slot].references <= 1 {
                state.tables[table].rows.remove(at: slot)
            } else {
                state.tables[table].rows[slot].references -= 1
            }
        }
    }

    var count: Int { state.withLock { $0.tables.reduce(0) { $0 + $1.rows.count } } }
    var cachedRowCount: Int {
        state.withLock { $0.tables.reduce(0) { $0 + $1.rows.count(where: \.hasRow) } }
    }
    var counters: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }
}
