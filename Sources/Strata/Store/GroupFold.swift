import StrataQuery

/// Rows folded into groups as a store reads them: each group's key, row count and one
/// ``AggregateAccumulator`` per aggregate, with no value kept per row. Stores answer
/// ``StoreFetchRequest/ResultKind/groups(keys:aggregates:)`` with it: ``StoreQuery`` over key values it read
/// (`[QueryValue]`), the Strata store over keys it reads from the row bytes (``RowGrouping``).
struct GroupFold<Key: Hashable> {
    private let functions: [CollectionOperator]
    private var positions: [Key: Int] = [:]
    /// The groups' keys, in the order their first rows came.
    private(set) var keys: [Key] = []
    private(set) var rowCounts: [Int] = []
    /// Group `g`'s accumulators are `accumulators[g * functions.count ..< (g + 1) * functions.count]`.
    private var accumulators: [AggregateAccumulator] = []

    /// An empty fold of the aggregates `functions` (`.count`, `.sum`, `.avg`, `.min`, `.max`).
    init(_ functions: [CollectionOperator]) {
        self.functions = functions
    }

    /// The group of `key` (a new one when no row had it), with one more row counted: the position of its first
    /// accumulator, for ``add(_:at:)`` and ``add(integer:at:)`` (then +1 per aggregate).
    mutating func row(_ key: Key) -> Int {
        let group: Int
        if let known = positions[key] {
            group = known
        } else {
            group = keys.count
            positions[key] = group
            keys.append(key)
            rowCounts.append(0)
            accumulators.append(contentsOf: functions.map(AggregateAccumulator.init))
        }
        rowCounts[group] &+= 1
        return group &* functions.count
    }

    /// Folds one value into the accumulator at `position`.
    ///
    /// - Throws: `PredicateEvaluationError.invalidCollectionOperator` when `@sum` or `@avg` meets a value that is
    ///   not a number.
    mutating func add(_ value: QueryValue, at position: Int) throws {
        guard accumulators[position].add(value) else {
            throw PredicateEvaluationError.invalidCollectionOperator(accumulators[position].op, value: value)
        }
    }

    /// Folds an integer into the accumulator at `position`.
    @inline(__always)
    mutating func add(integer: Int64, at position: Int) {
        accumulators[position].add(integer: integer)
    }

    /// The groups, their keys made values by `value`.
    func groups(_ value: (Key) throws -> [QueryValue]) rethrows -> [StoreFetchResult.Group] {
        let width = functions.count
        return try keys.indices.map { group in
            StoreFetchResult.Group(
                keys: try value(keys[group]), rowCount: rowCounts[group],
                aggregates: accumulators[group * width..<(group + 1) * width].map(\.result))
        }
    }
}
