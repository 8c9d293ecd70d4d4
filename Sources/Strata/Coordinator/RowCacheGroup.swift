import Foundation
import StrataLock

/// The row caches of every coordinator that has one store (Core Data lets several coordinators open one
/// SQLite file): a save through one coordinator forgets the rows it changed in the others' caches, so that
/// their contexts see the save after a refresh or a merge instead of the cached rows.
///
/// Each coordinator keeps its own cache, attached when it adds the store and detached when it removes it. The
/// store tells the group after each save; with a single coordinator attached (the usual case) that costs
/// nothing.
package final class RowCacheGroup: Sendable {
    package init() {}

    fileprivate struct Member {
        weak var cache: RowCache?
    }

    fileprivate let members = Lock<[Member]>([])

    /// Attaches a coordinator's cache.
    func attach(_ cache: RowCache) {
        members.withLock { members in
            members.removeAll { $0.cache == nil }
            members.append(Member(cache: cache))
        }
    }

    /// Detaches a coordinator's cache.
    func detach(_ cache: RowCache) {
        members.withLock { $0.removeAll { $0.cache == nil || $0.cache === cache } }
    }

    /// Forgets the rows of a save's updates and deletes in every attached cache, when there are several. The
    /// saving coordinator's cache takes the saved rows right after, as its context settles the save.
    package func invalidate(_ changes: StoreChanges, store: UUID) {
        let caches = members.withLock { $0.compactMap(\.cache) }
        guard caches.count > 1 else { return }
        var keys: [RowCache.Key] = []
        keys.reserveCapacity(changes.updates.count + changes.deletes.count)
        for update in changes.updates {
            keys.append(RowCache.Key(store: store, entity: update.entity, rowID: update.rowID))
        }
        for delete in changes.deletes {
            keys.append(RowCache.Key(store: store, entity: delete.entity, rowID: delete.rowID))
        }
        for cache in caches { cache.invalidate(keys) }
    }
}

extension RowCacheGroup {
    /// Forgets these rows in every attached cache, however many there are: another process changed them.
    func invalidateEverywhere(_ keys: [RowCache.Key]) {
        for cache in members.withLock({ $0.compactMap(\.cache) }) { cache.invalidate(keys) }
    }

    /// Forgets every row of a store in every attached cache: another process changed rows it cannot name.
    /// Makes every attached cache forget these rows of a store's tables (another process changed them): for
    /// stores outside this module, which cannot name a `RowCache.Key`.
    package func invalidateEverywhere(store: UUID, rows: [(entity: EntityDescription, rowID: UInt64)]) {
        invalidateEverywhere(rows.map { RowCache.Key(store: store, entity: $0.entity, rowID: $0.rowID) })
    }

    package func invalidateEverywhere(store: UUID) {
        for cache in members.withLock({ $0.compactMap(\.cache) }) { cache.invalidate(store: store) }
    }
}

/// A store whose coordinators' row caches are kept in step (``RowCacheGroup``).
package protocol RowCacheSharing: AnyObject {
    var rowCacheGroup: RowCacheGroup { get }
}
