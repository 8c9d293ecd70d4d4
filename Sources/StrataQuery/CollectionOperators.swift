import Foundation

/// `@sum`, `@avg`, `@min`, `@max`, `@distinctUnionOfObjects` and `@unionOfObjects` over a collection's
/// elements (`@count` needs no values and is counted by the key path walk).
enum CollectionOperators {
    static func apply(
        _ op: CollectionOperator, to elements: [EvaluatedValue]
    ) throws(PredicateEvaluationError)
        -> EvaluatedValue
    {
        switch op {
        case .count:
            return .value(.int(Int64(elements.count)))
        case .unionOfObjects:
            return .collection(elements.filter { !$0.isNull })
        case .distinctUnionOfObjects:
            var seen: Set<QueryValue> = []
            var result: [EvaluatedValue] = []
            for element in elements where !element.isNull && seen.insert(element.resolved).inserted {
                result.append(element)
            }
            return .collection(result)
        case .min, .max:
            var best: QueryValue?
            for element in elements {
                let value = element.resolved
                if value == .null { continue }
                guard let current = best else {
                    best = value
                    continue
                }
                let order = value.predicateCompare(current)
                if order == (op == .min ? .orderedAscending : .orderedDescending) { best = value }
            }
            return .value(best ?? .null)
        case .sum, .avg:
            var integerSum: Int64? = 0
            var doubleSum = 0.0
            var decimalSum = Decimal(0)
            var hasDecimal = false
            var hasDouble = false
            var count = 0
            for element in elements {
                let value = element.resolved
                if value == .null { continue }
                guard let number = value.number else {
                    throw .invalidCollectionOperator(op, value: .array(elements.map(\.resolved)))
                }
                count += 1
                doubleSum += number.doubleValue
                switch number {
                case .int(let integer):
                    decimalSum += Decimal(integer)
                    if let sum = integerSum {
                        let (result, overflow) = sum.addingReportingOverflow(integer)
                        integerSum = overflow ? nil : result
                    }
                case .double:
                    hasDouble = true
                case .decimal(let decimal):
                    hasDecimal = true
                    decimalSum += decimal
                }
            }
            if op == .avg {
                guard count > 0 else { return .value(.null) }
                if hasDecimal && !hasDouble { return .value(.decimal(decimalSum / Decimal(count))) }
                return .value(.double(doubleSum / Double(count)))
            }
            if hasDouble { return .value(.double(doubleSum)) }
            if hasDecimal { return .value(.decimal(decimalSum)) }
            return .value(integerSum.map(QueryValue.int) ?? .double(doubleSum))
        }
    }
}

extension EvaluatedValue {
    var isNull: Bool {
        if case .value(.null) = self { return true }
        return false
    }
}
