import Foundation
import StrataQuery

/// A description of what to fetch (`NSFetchRequest`): an entity (with or without its subentities), a
/// predicate, a sort order, a window (``fetchOffset``, ``fetchLimit``) and the kind of result.
///
/// `Result` is what ``ManagedObjectContext/fetch(_:)`` returns for each match: a ``ManagedObject`` subclass
/// (``FetchRequestResultType/managedObject``), ``ManagedObjectID`` (``FetchRequestResultType/managedObjectID``),
/// `[String: QueryValue]` or `[String: Any]` (``FetchRequestResultType/dictionary``) or `Int`
/// (``FetchRequestResultType/count``);
/// ``resultType`` starts as the one that fits `Result`.
///
/// For example:
/// ```swift
/// let request = FetchRequest<Employee>(entityName: "Employee")
/// request.predicate = try ObjectPredicate(format: "salary > %d AND department.name == %@", 100_000, "Sales")
/// request.sortKeys = [SortKey("lastName", comparison: .caseInsensitive), SortKey("salary", ascending: false)]
/// request.fetchLimit = 10
/// let employees = try context.fetch(request)
/// ```
///
/// Without sort keys, results are in row order, store by store, followed by matching objects inserted
/// into the context and not yet saved. With sort keys, objects every key finds equal keep that order.
///
/// ## Topics
/// ### What to fetch
/// - ``entityName``
/// - ``predicate``
/// - ``setPredicate(format:_:)``
/// - ``includesSubentities``
/// ### Order and window
/// - ``sortKeys``
/// - ``fetchOffset``
/// - ``fetchLimit``
/// ### Results
/// - ``resultType``
/// - ``propertiesToFetch``
/// - ``propertiesToGroupBy``
/// - ``havingPredicate``
/// - ``returnsDistinctResults``
/// ### Objects
/// - ``includesPendingChanges``
/// - ``returnsObjectsAsFaults``
/// - ``includesPropertyValues``
/// - ``relationshipKeyPathsForPrefetching``
/// - ``fetchBatchSize``
public final class FetchRequest<Result> {
    /// The name of the entity to fetch; fetching throws ``ObjectGraphError/unknownEntity(_:)`` when the model
    /// has no such entity.
    public let entityName: String
    /// The condition objects must meet (nil: every object). Key paths may go through relationships
    /// (`department.name`, `ANY employees.salary > 10`). Stores evaluate it on their rows, and pending
    /// objects are evaluated in memory, with the same semantics.
    public var predicate: ObjectPredicate?
    /// The order of the results, most significant key first (`NSSortDescriptor`s).
    public var sortKeys: [SortKey] = []
    /// Whether objects of subentities are included (default true).
    public var includesSubentities = true
    /// The stores to search (Core Data's `affectedStores`; nil, the default: every store of the coordinator).
    /// Unsaved objects count when they belong to one of them (an insert by the store it will be saved in).
    public var affectedStores: [any PersistentStore]?
    /// At most this many results (0: no limit).
    public var fetchLimit = 0
    /// Skip this many results first.
    public var fetchOffset = 0
    /// What each result is; see ``FetchRequestResultType``.
    public var resultType: FetchRequestResultType
    /// For dictionary results: the properties each dictionary holds (key paths and expressions); nil: every
    /// persistent attribute. Nil values are left out of the dictionaries.
    public var propertiesToFetch: [FetchProperty]?
    /// For dictionary results: the key paths to group by (`GROUP BY`); each other property must be an
    /// aggregate expression.
    public var propertiesToGroupBy: [QueryKeyPath]?
    /// For grouped dictionary results: the condition a group's dictionary must meet (`HAVING`), on the
    /// dictionary's keys.
    public var havingPredicate: ObjectPredicate?
    /// For dictionary results: whether equal dictionaries are returned once.
    public var returnsDistinctResults = false
    /// Whether unsaved changes count (default true): inserted objects that match are returned, deleted ones
    /// are not, and updated ones are matched on their current values. Dictionary results reflect the stores
    /// only, as in Core Data.
    public var includesPendingChanges = true
    /// Whether objects not yet registered come back as faults (default true); false fills them in the same
    /// pass.
    public var returnsObjectsAsFaults = true
    /// Whether row values are read with the IDs (default true), so that faults fill without another trip
    /// to the store; false: IDs only, nothing read or cached.
    public var includesPropertyValues = true
    /// Relationship key paths (`"department"`, `"department.employees"`) whose objects are fetched and
    /// filled with the results, one store query per step, instead of one fault at a time.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// With a positive size, ``ManagedObjectContext/fetchBatched(_:)`` returns a collection that loads
    /// results this many at a time; ``ManagedObjectContext/fetch(_:)`` returns faults without reading rows,
    /// grouped in batches of this size as Core Data's batched array is: firing one fault fills its whole batch
    /// with one store query (a fetch of 100,000 with batch size 100 costs 1,000 queries as you walk it).
    /// 0 (the default): no batching.
    public var fetchBatchSize = 0

    /// Creates a request for every object of an entity, with the default options.
    ///
    /// - Parameter entityName: the entity's name in the model. With managed-object results, its objects
    ///   (and those of its subentities) must be instances of `Result`, or fetching stops the program.
    public init(entityName: String) {
        self.entityName = entityName
        resultType = FetchRequestResultType.default(for: Result.self)
    }

    /// Creates a request with a predicate and sort keys.
    ///
    /// - Parameters:
    ///   - entityName: the entity's name in the model.
    ///   - predicate: the condition objects must meet.
    ///   - sortKeys: the order of the results.
    public convenience init(entityName: String, predicate: ObjectPredicate?, sortKeys: [SortKey] = []) {
        self.init(entityName: entityName)
        self.predicate = predicate
        self.sortKeys = sortKeys
    }

    /// Sets ``predicate`` from an `NSPredicate` format string.
    ///
    /// For example:
    /// ```swift
    /// try request.setPredicate(format: "name BEGINSWITH[c] %@ AND salary > %d", "a", 1000)
    /// ```
    ///
    /// - Parameters:
    ///   - format: the format string.
    ///   - arguments: the values of `%@`, `%K`, `%d`, `%f`, in order.
    /// - Throws: `PredicateSyntaxError` when the string does not parse; ``predicate`` is unchanged then.
    public func setPredicate(format: String, _ arguments: any QueryValueConvertible...) throws {
        predicate = try ObjectPredicate(format: format, arguments: arguments.map(\.queryValue))
    }

    /// The sort keys under Core Data's name.
    public var sortDescriptors: [SortKey] {
        get { sortKeys }
        set { sortKeys = newValue }
    }
}

/// What each result of a ``FetchRequest`` is (`NSFetchRequestResultType`).
public enum FetchRequestResultType: Sendable, Hashable {
    /// Managed objects, registered in the context.
    case managedObject
    /// Object IDs; nothing is registered and no row value is cached.
    case managedObjectID
    /// Dictionaries of ``FetchRequest/propertiesToFetch``, possibly grouped and aggregated: `[String: QueryValue]`,
    /// or `[String: Any]` with the values as Core Data gives them (numbers as `NSNumber`, which casts `as? Int`,
    /// `as? Double`, `as? Int16`...; a to-one as its ``ManagedObjectID``).
    case dictionary
    /// One `Int`: the number of matches.
    case count

    /// The result type that fits a request's `Result` type.
    static func `default`(for type: Any.Type) -> FetchRequestResultType {
        if type == ManagedObjectID.self { return .managedObjectID }
        if type == [String: QueryValue].self || type == [String: Any].self { return .dictionary }
        if type == Int.self { return .count }
        return .managedObject
    }
}
