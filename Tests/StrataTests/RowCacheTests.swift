import Foundation
import Testing

@testable import Strata

/// The coordinator's row cache: one entry per (store, table, row), held by the objects that read it.
@Suite struct RowCacheTests {
    static let entity = TestModel.model.entity(named: "GraphEmployee")!

    static func row(version: UInt64) -> StoredRow {
        StoredRow(entity: entity, version: version, values: [], references: [])
    }

    @Test func keysOfTheSameRowInTwoStoresAreDistinctEntries() {
        let cache = RowCache()
        let first = RowCache.Key(store: UUID(), entity: Self.entity, rowID: 7)
        let second = RowCache.Key(store: UUID(), entity: Self.entity, rowID: 7)
        cache.store(Self.row(version: 1), for: first, retaining: true)
        cache.store(Self.row(version: 2), for: second, retaining: true)
        #expect(cache.count == 2)
        #expect(cache.row(for: first, maximumAge: nil, retaining: false)?.version == 1)
        #expect(cache.row(for: second, maximumAge: nil, retaining: false)?.version == 2)
    }

    @Test func anEntryLivesWhileAnObjectHoldsItAndTakesNewerRows() {
        let cache = RowCache()
        let key = RowCache.Key(store: UUID(), entity: Self.entity, rowID: 3)
        // Not held by anyone: not cached.
        cache.store(Self.row(version: 1), for: key, retaining: false)
        #expect(cache.count == 0)
        cache.store(Self.row(version: 1), for: key, retaining: true)
        #expect(cache.row(for: key, maximumAge: nil, retaining: true)?.version == 1)  // a second holder
        cache.store(Self.row(version: 2), for: key, retaining: false)  // a newer row for the holders
        #expect(cache.row(for: key, maximumAge: nil, retaining: false)?.version == 2)
        cache.release(key)
        #expect(cache.count == 1)
        cache.invalidate(key)
        #expect(cache.row(for: key, maximumAge: nil, retaining: false) == nil)
        #expect(cache.count == 1)  // the references stay
        cache.release(key)
        #expect(cache.count == 0)
        #expect(cache.counters.hits == 2 && cache.counters.misses == 1)
    }

    /// The generation moves whenever an entry's row is replaced or forgotten, and only then: a to-many's batch that
    /// kept the rows it recorded loads its members from them while it has not moved (FaultBatch).
    @Test func theGenerationMovesWhenAnEntrysRowChangesOnly() {
        let cache = RowCache()
        let store = UUID()
        let key = RowCache.Key(store: store, entity: Self.entity, rowID: 1)
        let other = RowCache.Key(store: store, entity: Self.entity, rowID: 2)
        var generation = cache.generation
        // New entries, lookups, more holders and releases that leave the row: no move.
        let recorded = cache.storeRetaining(
            [Self.row(version: 1), Self.row(version: 1)], rowIDs: [1, 2], store: store, root: Self.entity)
        #expect(recorded.generation == generation && cache.generation == generation)
        _ = cache.row(for: key, maximumAge: nil, retaining: true)
        cache.release(key)
        let third = RowCache.Key(store: store, entity: Self.entity, rowID: 3)
        cache.store(Self.row(version: 1), for: third, retaining: true)
        #expect(cache.generation == generation)
        // A row replaced, through each way in.
        cache.store(Self.row(version: 2), for: key, retaining: false)
        #expect(cache.generation != generation)
        generation = cache.generation
        cache.store(Self.row(version: 3), for: key, retaining: true)
        #expect(cache.generation != generation)
        generation = cache.generation
        let again = cache.storeRetaining([Self.row(version: 4)], rowIDs: [2], store: store, root: Self.entity)
        #expect(again.generation != generation && again.generation == cache.generation)
        generation = cache.generation
        // A row forgotten, through each way in.
        cache.invalidate(key)
        #expect(cache.generation != generation)
        generation = cache.generation
        cache.invalidate([other])
        #expect(cache.generation != generation)
        generation = cache.generation
        cache.invalidate(store: store)
        #expect(cache.generation != generation)
    }

    /// A batch records its rows a limit at a time (no arrays as long as a large fetch), and the rest when asked.
    @Test func aLargeBatchRecordsItsRowsALimitAtATime() {
        let cache = RowCache()
        let store = UUID()
        let count = RowCache.Batch.limit * 2 + 100
        var batch = RowCache.Batch(cache, expected: count)
        let holder = NSObject()
        for rowID in 1...UInt64(count) {
            batch.append(
                Self.row(version: rowID), for: RowCache.Key(store: store, entity: Self.entity, rowID: rowID),
                heldBy: holder)
        }
        #expect(cache.count == RowCache.Batch.limit * 2)
        batch.record()
        #expect(cache.count == count)
        let last = RowCache.Key(store: store, entity: Self.entity, rowID: UInt64(count))
        #expect(cache.row(for: last, maximumAge: nil, retaining: false)?.version == UInt64(count))
        batch.record()
        #expect(cache.count == count)
    }

    @Test func rowsOfSeveralTablesAndStoresStoredTogetherStayApart() {
        let cache = RowCache()
        let other = TestModel.model.entity(named: "GraphThing")!
        let (first, second) = (UUID(), UUID())
        let keys = [
            RowCache.Key(store: first, entity: Self.entity, rowID: 1),
            RowCache.Key(store: first, entity: other, rowID: 1),
            RowCache.Key(store: second, entity: Self.entity, rowID: 1),
            RowCache.Key(store: first, entity: Self.entity, rowID: 2),
        ]
        var batch = RowCache.Batch(cache, expected: keys.count)
        let holder = NSObject()
        for (key, version) in zip(keys, 1...4) {
            batch.append(Self.row(version: UInt64(version)), for: key, heldBy: holder)
        }
        batch.record()
        #expect(cache.count == 4)
        for (index, key) in keys.enumerated() {
            #expect(cache.row(for: key, maximumAge: nil, retaining: false)?.version == UInt64(index + 1))
        }
        // Removing a store forgets its rows only; the objects still hold their entries.
        cache.invalidate(store: first)
        #expect(cache.count == 4)
        #expect(cache.cachedRowCount == 1)
        #expect(cache.row(for: keys[2], maximumAge: nil, retaining: false)?.version == 3)
        #expect(cache.row(for: keys[0], maximumAge: nil, retaining: false) == nil)
        // A forgotten entry takes a newer row for its holders.
        cache.store(Self.row(version: 9), for: keys[0], retaining: false)
        #expect(cache.row(for: keys[0], maximumAge: nil, retaining: false)?.version == 9)
        for key in keys { cache.release(key) }
        #expect(cache.count == 0)
    }

    @Test func anEntryOlderThanTheMaximumAgeIsAMiss() throws {
        let cache = RowCache()
        let key = RowCache.Key(store: UUID(), entity: Self.entity, rowID: 5)
        cache.store(Self.row(version: 1), for: key, retaining: true)
        #expect(cache.row(for: key, maximumAge: 60, retaining: false)?.version == 1)
        Thread.sleep(forTimeInterval: 0.01)
        #expect(cache.row(for: key, maximumAge: 0.001, retaining: false) == nil)
    }
}
