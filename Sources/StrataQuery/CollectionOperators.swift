import Foundation

/// `@sum`, `@avg`, `@min`, `@max` (folded by ``AggregateAccumulator``), `@distinctUnionOfObjects` and
/// `@unionOfObjects` over a collection's elements (`@count` needs no values and is counted by the key path walk).
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
        case .min, .max, .sum, .avg:
            var accumulator = AggregateAccumulator(op)
            for element in elements where !accumulator.add(element.resolved) {
                throw .invalidCollectionOperator(op, value: .array(elements.map(\.resolved)))
            }
            return .value(accumulator.result)
        }
    }
}

extension EvaluatedValue {
    var isNull: Bool {
        if case .value(.null) = self { return true }
        return false
    }
}
