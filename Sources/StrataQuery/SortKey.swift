import Foundation

/// One key of a sort order: `NSSortDescriptor`'s counterpart.
///
/// Values order as in a predicate (numbers across types, strings by Unicode scalars unless ``comparison`` says
/// otherwise, dates by time), with nil first when ascending and last when descending (as SQLite orders NULL,
/// and so Core Data's SQLite store). Values of different kinds order by kind (nil, numbers, strings, dates,
/// data, UUIDs, URLs, collections, dictionaries, identities), so that any mix sorts consistently.
///
/// For example:
/// ```swift
/// let order = [SortKey("lastName", comparison: .caseInsensitive), SortKey("age", ascending: false)]
/// let sorted = try employees.sorted(by: order)
/// ```
///
/// ## Topics
/// ### Making
/// - ``init(_:ascending:comparison:)``
/// - ``Comparison``
/// ### Comparing
/// - ``compare(_:_:)-(QueryValue,QueryValue)``
/// - ``compare(_:_:)-(PredicateEvaluable,PredicateEvaluable)``
public struct SortKey: Hashable, Sendable, CustomStringConvertible {
    /// How strings compare (the selectors Core Data's SQLite store supports, and diacritic folding).
    public enum Comparison: Hashable, Sendable {
        /// By Unicode scalar values (`compare:`).
        case standard
        /// Case folded (`caseInsensitiveCompare:`).
        case caseInsensitive
        /// Diacritics folded.
        case diacriticInsensitive
        /// Case and diacritics folded.
        case caseAndDiacriticInsensitive
        /// By the current locale's collation (`localizedCompare:`).
        case localized
        /// By the current locale's collation, case folded (`localizedCaseInsensitiveCompare:`).
        case localizedCaseInsensitive
        /// As the Finder sorts names: localized, case-insensitive, digits as numbers
        /// (`localizedStandardCompare:`).
        case localizedStandard
    }

    /// The key path whose values are compared.
    public var keyPath: QueryKeyPath
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: Comparison

    /// A sort key.
    ///
    /// - Parameters:
    ///   - keyPath: the key path, e.g. `"department.name"`.
    ///   - ascending: smaller values first (default true).
    ///   - comparison: how strings compare (default ``Comparison/standard``).
    public init(_ keyPath: QueryKeyPath, ascending: Bool = true, comparison: Comparison = .standard) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
    }

    /// `keyPath ASC` or `keyPath DESC`, with the comparison when it is not the standard one.
    public var description: String {
        "\(keyPath) \(ascending ? "ASC" : "DESC")" + (comparison == .standard ? "" : " (\(comparison))")
    }

    /// The value this key sorts an object by.
    ///
    /// - Parameter object: the object.
    /// - Returns: the resolved value at ``keyPath``.
    /// - Throws: ``PredicateEvaluationError``, as from a predicate.
    public func value(of object: some PredicateEvaluable) throws(PredicateEvaluationError) -> QueryValue {
        try keyPath.value(in: object).resolved
    }

    /// How two objects order by this key.
    ///
    /// - Parameters:
    ///   - lhs: the first object.
    ///   - rhs: the second object.
    /// - Returns: `.orderedAscending` when `lhs` comes first.
    /// - Throws: ``PredicateEvaluationError``.
    public func compare(
        _ lhs: some PredicateEvaluable, _ rhs: some PredicateEvaluable
    )
        throws(PredicateEvaluationError) -> ComparisonResult
    {
        compare(try value(of: lhs), try value(of: rhs))
    }

    /// How two values order by this key: the direction, nil placement and string comparison applied.
    ///
    /// - Parameters:
    ///   - lhs: the first value.
    ///   - rhs: the second value.
    /// - Returns: `.orderedAscending` when `lhs` comes first.
    public func compare(_ lhs: QueryValue, _ rhs: QueryValue) -> ComparisonResult {
        let result = ascendingOrder(lhs, rhs)
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    private func ascendingOrder(_ lhs: QueryValue, _ rhs: QueryValue) -> ComparisonResult {
        let (leftRank, rightRank) = (Self.rank(lhs), Self.rank(rhs))
        if leftRank != rightRank { return leftRank < rightRank ? .orderedAscending : .orderedDescending }
        if case .string(let left) = lhs, case .string(let right) = rhs {
            switch comparison {
            case .standard: return QueryValue.order(left, right) ?? .orderedSame
            case .caseInsensitive:
                return QueryValue.order(fold(left, [.caseInsensitive]), fold(right, [.caseInsensitive])) ?? .orderedSame
            case .diacriticInsensitive:
                return QueryValue.order(fold(left, [.diacriticInsensitive]), fold(right, [.diacriticInsensitive]))
                    ?? .orderedSame
            case .caseAndDiacriticInsensitive:
                let options: ComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
                return QueryValue.order(fold(left, options), fold(right, options)) ?? .orderedSame
            case .localized: return left.localizedCompare(right)
            case .localizedCaseInsensitive: return left.localizedCaseInsensitiveCompare(right)
            case .localizedStandard: return left.localizedStandardCompare(right)
            }
        }
        return lhs.predicateCompare(rhs) ?? .orderedSame
    }

    private func fold(_ string: String, _ options: ComparisonOptions) -> String {
        options.fold(string)
    }

    /// The order of kinds when values of different kinds meet.
    private static func rank(_ value: QueryValue) -> Int {
        switch value {
        case .null: 0
        case .bool, .int, .double, .decimal: 1
        case .string: 2
        case .date: 3
        case .data: 4
        case .uuid: 5
        case .url: 6
        case .array: 7
        case .dictionary: 8
        case .identity: 9
        }
    }
}

extension Array where Element == SortKey {
    /// How two objects order by these keys: the first key that does not find them equal decides.
    ///
    /// - Parameters:
    ///   - lhs: the first object.
    ///   - rhs: the second object.
    /// - Returns: `.orderedSame` when every key finds them equal.
    /// - Throws: ``PredicateEvaluationError``.
    public func compare(
        _ lhs: some PredicateEvaluable, _ rhs: some PredicateEvaluable
    )
        throws(PredicateEvaluationError) -> ComparisonResult
    {
        for key in self {
            let result = try key.compare(lhs, rhs)
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// How two rows of sort values (one value per key, as ``SortKey/value(of:)`` gives) order by these keys.
    ///
    /// - Parameters:
    ///   - lhs: the first row's values, one per key.
    ///   - rhs: the second row's values, one per key.
    /// - Returns: `.orderedSame` when every key finds them equal.
    public func compare(values lhs: [QueryValue], _ rhs: [QueryValue]) -> ComparisonResult {
        precondition(lhs.count == count && rhs.count == count, "one value per sort key")
        for (index, key) in enumerated() {
            let result = key.compare(lhs[index], rhs[index])
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }
}

extension Sequence where Element: PredicateEvaluable {
    /// The elements sorted by several keys; elements that every key finds equal keep their order (stable).
    ///
    /// Each element's values are read once per key, not once per comparison.
    ///
    /// - Parameter keys: the sort keys, most significant first.
    /// - Returns: the sorted elements.
    /// - Throws: ``PredicateEvaluationError`` from reading a key.
    public func sorted(by keys: [SortKey]) throws(PredicateEvaluationError) -> [Element] {
        var rows: [(element: Element, values: [QueryValue], index: Int)] = []
        for (index, element) in enumerated() {
            var values: [QueryValue] = []
            values.reserveCapacity(keys.count)
            for key in keys { values.append(try key.value(of: element)) }
            rows.append((element, values, index))
        }
        rows.sort { a, b in
            switch keys.compare(values: a.values, b.values) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: a.index < b.index
            }
        }
        return rows.map(\.element)
    }
}
