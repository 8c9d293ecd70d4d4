import Foundation

/// One collection operator's value, folded one element at a time: the only implementation of `@sum`, `@avg`,
/// `@min` and `@max` (the key-path walk feeds it a collection's elements; stores feed it a group's values as
/// they read rows, with no array of values), so that an aggregate computed in a store and the same operator in a
/// predicate give the same value, bit for bit. `@count` here counts the elements that are not nil.
///
/// Elements are folded in the order they come: a double sum depends on it, as it does in the key-path walk.
package struct AggregateAccumulator: Sendable {
    /// The operator folded.
    package let op: CollectionOperator
    /// How many non-nil elements were folded.
    package private(set) var count = 0
    private var integerSum: Int64? = 0
    private var doubleSum = 0.0
    /// The integers folded before the first decimal, exactly: `integerSpill + integerPartial` (Decimal holds 38
    /// digits; integer sums are exact there in any order, so this is the decimal sum of those integers).
    private var integerPartial: Int64 = 0
    private var integerSpill = Decimal(0)
    /// Set from the first decimal on: the decimal sum of every number folded so far.
    private var decimalSum: Decimal?
    private var hasDouble = false
    private var best: QueryValue?

    /// An empty fold of `op`.
    package init(_ op: CollectionOperator) {
        self.op = op
    }

    /// Folds one element; false when `@sum` or `@avg` meets a value that is not a number (nil is skipped).
    package mutating func add(_ value: QueryValue) -> Bool {
        if value == .null { return true }
        switch op {
        case .min, .max:
            count += 1
            guard let current = best else {
                best = value
                return true
            }
            if value.predicateCompare(current) == (op == .min ? .orderedAscending : .orderedDescending) {
                best = value
            }
            return true
        case .sum, .avg:
            guard let number = value.number else { return false }
            switch number {
            case .int(let integer): add(integer: integer)
            case .double(let double):
                count += 1
                doubleSum += double
                hasDouble = true
            case .decimal(let decimal):
                count += 1
                doubleSum += number.doubleValue
                if decimalSum == nil { decimalSum = integerSpill + Decimal(integerPartial) }
                decimalSum! += decimal
            }
            return true
        default:
            count += 1
            return true
        }
    }

    /// Folds an integer element (what ``add(_:)`` does with `.int(integer)`, without the value).
    @inline(__always)
    package mutating func add(integer: Int64) {
        switch op {
        case .sum, .avg:
            count += 1
            doubleSum += Double(integer)
            if let sum = integerSum {
                let (result, overflow) = sum.addingReportingOverflow(integer)
                integerSum = overflow ? nil : result
            }
            if decimalSum != nil {
                decimalSum! += Decimal(integer)
            } else {
                let (result, overflow) = integerPartial.addingReportingOverflow(integer)
                if overflow {
                    integerSpill += Decimal(integerPartial)
                    integerPartial = integer
                } else {
                    integerPartial = result
                }
            }
        case .min, .max:
            _ = add(.int(integer))
        default:
            count += 1
        }
    }

    /// The operator's value over the elements folded: `@sum` an integer while every element is one and the sum
    /// fits (else a double, or a decimal when decimals came without doubles), 0 when empty; `@avg` a double (a
    /// decimal for integers and decimals with at least one decimal), nil when empty; `@min`/`@max` the least or
    /// greatest element, nil when empty; `@count` the number of non-nil elements.
    package var result: QueryValue {
        switch op {
        case .min, .max:
            return best ?? .null
        case .sum:
            if hasDouble { return .double(doubleSum) }
            if let decimalSum { return .decimal(decimalSum) }
            return integerSum.map(QueryValue.int) ?? .double(doubleSum)
        case .avg:
            guard count > 0 else { return .null }
            if let decimalSum, !hasDouble { return .decimal(decimalSum / Decimal(count)) }
            return .double(doubleSum / Double(count))
        default:
            return .int(Int64(count))
        }
    }
}
