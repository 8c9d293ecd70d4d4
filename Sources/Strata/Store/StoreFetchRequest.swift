import Foundation
import StrataQuery

/// A query as a persistent store answers it (``PersistentStore/fetch(_:)``): the entity, a predicate, a sort
/// order, a window and what to return for each matching row. Contexts build these from ``FetchRequest``s;
/// stores never see managed objects or pending changes.
///
/// For example, the IDs of the ten best-paid employees:
/// ```swift
/// var request = StoreFetchRequest(entity: model.entity(named: "Employee")!)
/// request.sortKeys = [SortKey("salary", ascending: false)]
/// request.fetchLimit = 10
/// request.resultKind = .objectIDs
/// let best = try store.fetch(request).references
/// ```
///
/// ## Topics
/// - ``ResultKind``
/// - ``StoreFetchResult``
public struct StoreFetchRequest: Sendable {
    /// What the store returns for each matching row.
    public enum ResultKind: Sendable, Hashable {
        /// The rows, decoded (``StoreFetchResult/rows``), with their references and versions.
        case rows
        /// The references and versions only: no row is decoded beyond what the predicate and sort keys read.
        case objectIDs
        /// The number of matching rows only (``StoreFetchResult/count``).
        case count
        /// For each matching row, the values of these key paths (``StoreFetchResult/values``): attributes as
        /// values, to-one relationships as the related object's ``ManagedObjectID`` identity.
        case values([QueryKeyPath])
        /// The matching rows grouped by the values of `keys` (as ``values(_:)`` gives them), and for each group
        /// its number of rows and the `aggregates` over its rows (``StoreFetchResult/groups``): no value per row
        /// leaves the store. The window and the sort keys do not apply.
        case groups(keys: [QueryKeyPath], aggregates: [Aggregate])
    }

    /// A collection operator over the values of a key path in a group's rows: `@sum`, `@avg`, `@min`, `@max` as
    /// the key-path walk computes them over the same values in row-ID order, or `@count`, the number of those
    /// values that are not nil.
    public struct Aggregate: Sendable, Hashable {
        /// The operator: `.count`, `.sum`, `.avg`, `.min` or `.max`.
        public var function: CollectionOperator
        /// The values it folds: a key path through to-ones, read on each row of the group.
        public var keyPath: QueryKeyPath

        /// `function` over the values of `keyPath`.
        ///
        /// - Parameters:
        ///   - function: `.count`, `.sum`, `.avg`, `.min` or `.max`.
        ///   - keyPath: the values it folds.
        public init(_ function: CollectionOperator, _ keyPath: QueryKeyPath) {
            precondition(
                [.count, .sum, .avg, .min, .max].contains(function), "@\(function.rawValue) is not an aggregate")
            self.function = function
            self.keyPath = keyPath
        }
    }

    /// The entity whose rows are fetched.
    public var entity: EntityDescription
    /// Whether rows of the entity's subentities match too (default true).
    public var includesSubentities = true
    /// The condition rows must meet; nil: every row. Key paths may go through relationships.
    public var predicate: ObjectPredicate?
    /// The order of the results, most significant key first; rows equal by every key stay in row-ID order.
    /// Without keys, results are in row-ID order.
    public var sortKeys: [SortKey] = []
    /// Skip this many matching rows first (after sorting).
    public var fetchOffset = 0
    /// At most this many results (0: no limit).
    public var fetchLimit = 0
    /// When set, only these rows of the entity's table are candidates (in row-ID order, duplicates ignored).
    public var rowIDs: [UInt64]?
    /// What to return.
    public var resultKind: ResultKind = .rows
    /// With ``ResultKind/rows``, how many results at most come with their decoded rows (nil: every one): the first
    /// ones in result order. The others come as references and versions only, and no row is decoded for them.
    public var rowLimit: Int?
    /// Whether ``StoreFetchResult/sortValues`` is filled (a context merging results of several stores, or
    /// pending changes, sorts on them).
    public var returnsSortValues = false
    /// Asked now and then while rows are read; when it returns true the store stops and throws
    /// `CancellationError`.
    public var isCancelled: (@Sendable () -> Bool)?

    /// A request for every row of `entity` (and of its subentities), decoded, in row-ID order.
    ///
    /// - Parameter entity: the entity whose rows are fetched.
    public init(entity: EntityDescription) {
        self.entity = entity
    }

    /// Whether a row of `concrete` entity is of the requested entity.
    package func includes(_ concrete: EntityDescription) -> Bool {
        includesSubentities ? concrete.isKind(of: entity) : concrete === entity
    }

    /// The entity IDs whose rows are candidates.
    package var entityIDs: Set<UInt16> {
        Set((includesSubentities ? entity.allEntitiesInHierarchyBelow : [entity]).map(\.entityID))
    }

    /// Throws `CancellationError` when ``isCancelled`` says so.
    package func checkCancellation() throws {
        if let isCancelled, isCancelled() { throw CancellationError() }
    }
}

/// What a store found for a ``StoreFetchRequest``: the arrays that the request's
/// ``StoreFetchRequest/ResultKind`` fills, each in result order.
public struct StoreFetchResult: Sendable {
    /// The matching rows' concrete entities and row IDs (every kind but ``StoreFetchRequest/ResultKind/count``).
    public var references: [StoredReference] = []
    /// The matching rows' versions, as ``references``.
    public var versions: [UInt64] = []
    /// The decoded rows (``StoreFetchRequest/ResultKind/rows``): those of the first ``references`` (all of them
    /// unless ``StoreFetchRequest/rowLimit`` is smaller).
    public var rows: [StoredRow] = []
    /// The values of the requested key paths, one array per row (``StoreFetchRequest/ResultKind/values(_:)``).
    public var values: [[QueryValue]] = []
    /// The groups of ``StoreFetchRequest/ResultKind/groups(keys:aggregates:)``, each once, in the order their
    /// first rows came.
    public var groups: [Group] = []
    /// Each row's values of the sort keys, when ``StoreFetchRequest/returnsSortValues`` is set.
    public var sortValues: [[QueryValue]] = []
    /// The number of results: ``references``' count, or the count alone for
    /// ``StoreFetchRequest/ResultKind/count``.
    public var count = 0

    /// An empty result.
    public init() {}

    /// One group of rows that share their values of the grouping key paths.
    public struct Group: Sendable {
        /// The values of the key paths, in the request's order.
        public var keys: [QueryValue]
        /// How many rows the group has.
        public var rowCount: Int
        /// The value of each of the request's aggregates over the group's rows, in the request's order.
        public var aggregates: [QueryValue]

        /// A group with these values.
        public init(keys: [QueryValue], rowCount: Int, aggregates: [QueryValue]) {
            self.keys = keys
            self.rowCount = rowCount
            self.aggregates = aggregates
        }
    }
}
