import Foundation
import StrataQuery

/// A store that groups and aggregates rows itself (the PostgreSQL store: `GROUP BY` in the server), so that a
/// dictionary request with `propertiesToGroupBy` and aggregates sends one row per group, not every row.
///
/// The context asks it only when the request's one store is such a store, and uses its answer only when it is not
/// nil: a store answers only what it computes exactly as the context's own grouping would (StrataQuery's
/// collection operators), and returns nil for the rest.
package protocol GroupingStore: PersistentStore {
    /// One array per group: the values of ``StoreGroupRequest/groupPaths`` (to-ones as the related object's
    /// identity, nil as `.null`), then one value per aggregate; in any order. Nil when the store cannot answer the
    /// request exactly.
    ///
    /// - Throws: what a fetch of the store throws.
    func groups(_ request: StoreGroupRequest) throws -> [[QueryValue]]?
}

/// A grouped aggregate query: the rows of ``entity`` (and of its subentities) that meet ``predicate``, grouped by
/// the values of ``groupPaths`` (none: one group of every row, even of no row), and the ``aggregates`` of each.
package struct StoreGroupRequest: Sendable {
    /// An aggregate of a group.
    package struct Aggregate: Sendable, Hashable {
        /// What it computes.
        package enum Function: Sendable, Hashable {
            /// The number of rows (``path`` nil) or of non-nil values.
            case count
            /// The sum of the non-nil values (0 for none).
            case sum
            /// Their mean (nil for none).
            case average
            /// The least (nil for none).
            case min
            /// The greatest (nil for none).
            case max
        }

        package var function: Function
        package var path: QueryKeyPath?

        package init(_ function: Function, _ path: QueryKeyPath?) {
            self.function = function
            self.path = path
        }
    }

    package var entity: EntityDescription
    package var includesSubentities = true
    package var predicate: ObjectPredicate?
    package var groupPaths: [QueryKeyPath] = []
    package var aggregates: [Aggregate] = []

    package init(entity: EntityDescription) {
        self.entity = entity
    }
}
