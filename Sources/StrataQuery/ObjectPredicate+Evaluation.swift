import Foundation

extension ObjectPredicate {
    /// Whether the predicate holds for an object, evaluated in memory with `NSPredicate`'s semantics.
    ///
    /// For example:
    /// ```swift
    /// let predicate = try ObjectPredicate(format: "ANY reports.age > $age")
    /// try predicate.evaluate(with: manager, variables: ["age": .int(40)])
    /// ```
    ///
    /// Comparisons with nil: `==` holds only for nil, `!=` for anything else, and every other operator is false.
    /// String operators (`BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `IN` on strings) never hold for an empty
    /// right-hand string, as with `NSString`.
    ///
    /// - Parameters:
    ///   - object: the object; `SELF` and the key paths start from it.
    ///   - variables: values of `$variables` not substituted beforehand.
    /// - Returns: whether the predicate holds.
    /// - Throws: ``PredicateEvaluationError``: what the object throws for a key, an unbound variable, operands
    ///   an operator cannot compare, an invalid regular expression.
    public func evaluate(
        with object: some PredicateEvaluable, variables: [String: QueryValue] = [:]
    )
        throws(PredicateEvaluationError) -> Bool
    {
        var scope = PredicateScope(object: .object(object), variables: [:])
        for (name, value) in variables { scope.variables[name] = .value(value) }
        return try evaluate(in: scope)
    }

    /// Whether the predicate holds for an object, with variables bound to evaluated values: objects whose key
    /// paths the predicate walks (`$FETCH_SOURCE.pages`, as a fetched property's predicate does) or collections.
    ///
    /// - Parameters:
    ///   - object: the object; `SELF` and the key paths start from it.
    ///   - variables: values of `$variables`, by name without the `$`.
    /// - Returns: whether the predicate holds.
    /// - Throws: what ``evaluate(with:variables:)`` throws.
    public func evaluate(
        with object: some PredicateEvaluable, evaluatedVariables variables: [String: EvaluatedValue]
    ) throws(PredicateEvaluationError) -> Bool {
        try evaluate(in: PredicateScope(object: .object(object), variables: variables))
    }

    func evaluate(in scope: PredicateScope) throws(PredicateEvaluationError) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .comparison(let comparison):
            return try comparison.evaluate(in: scope)
        case .and(let terms):
            for term in terms where !(try term.evaluate(in: scope)) { return false }
            return true
        case .or(let terms):
            for term in terms where try term.evaluate(in: scope) { return true }
            return false
        case .not(let inner):
            return !(try inner.evaluate(in: scope))
        }
    }
}

/// What `SELF` and the variables are during an evaluation.
struct PredicateScope {
    var object: EvaluatedValue
    var variables: [String: EvaluatedValue]
}

extension PredicateComparison {
    func evaluate(in scope: PredicateScope) throws(PredicateEvaluationError) -> Bool {
        let leftValue = try left.evaluate(in: scope)
        let rightValue = try right.evaluate(in: scope).resolved
        switch modifier {
        case .direct:
            return try Self.compare(leftValue.resolved, `operator`, rightValue, options: options)
        case .any:
            for element in leftValue.elements
            where try Self.compare(element.resolved, `operator`, rightValue, options: options) {
                return true
            }
            return false
        case .all:
            for element in leftValue.elements
            where !(try Self.compare(element.resolved, `operator`, rightValue, options: options)) {
                return false
            }
            return true
        }
    }

    /// One comparison of two resolved values (the Strata store's compiled predicates compare with it too).
    package static func compare(
        _ left: QueryValue, _ op: Operator, _ right: QueryValue, options: ComparisonOptions
    )
        throws(PredicateEvaluationError) -> Bool
    {
        func invalid() -> PredicateEvaluationError { .invalidOperands(operator: op, left: left, right: right) }
        switch op {
        case .equal: return left.predicateEquals(right, options: options)
        case .notEqual: return !left.predicateEquals(right, options: options)
        case .lessThan: return left.predicateCompare(right, options: options) == .orderedAscending
        case .lessThanOrEqual:
            return [.orderedAscending, .orderedSame].contains(left.predicateCompare(right, options: options))
        case .greaterThan: return left.predicateCompare(right, options: options) == .orderedDescending
        case .greaterThanOrEqual:
            return [.orderedDescending, .orderedSame].contains(left.predicateCompare(right, options: options))
        case .between:
            switch right {
            case .null: return false
            case .array(let bounds) where bounds.count == 2:
                guard let low = left.predicateCompare(bounds[0], options: options),
                    let high = left.predicateCompare(bounds[1], options: options)
                else { return false }
                return low != .orderedAscending && high != .orderedDescending
            default: throw invalid()
            }
        case .in:
            switch (left, right) {
            case (_, .array(let elements)): return elements.contains { left.predicateEquals($0, options: options) }
            case (.string(let needle), .string(let haystack)):
                return StringMatching.contains(haystack, needle, options: options)
            case (.null, _), (_, .null): return false
            case (_, .dictionary(let values)):
                return values.values.contains { left.predicateEquals($0, options: options) }
            default: throw invalid()
            }
        case .contains:
            switch (left, right) {
            case (.array(let elements), _): return elements.contains { $0.predicateEquals(right, options: options) }
            case (.string(let haystack), .string(let needle)):
                return StringMatching.contains(haystack, needle, options: options)
            case (.null, _), (_, .null): return false
            default: throw invalid()
            }
        case .beginsWith, .endsWith, .like, .matches:
            switch (left, right) {
            case (.string(let string), .string(let pattern)):
                switch op {
                case .beginsWith: return StringMatching.hasPrefix(string, pattern, options: options)
                case .endsWith: return StringMatching.hasSuffix(string, pattern, options: options)
                case .like: return StringMatching.like(string, pattern, options: options)
                default: return try StringMatching.matches(string, pattern, options: options)
                }
            case (.null, _), (_, .null): return false
            default: throw invalid()
            }
        }
    }
}

extension EvaluatedValue {
    /// The elements `ANY`/`ALL` iterate: a collection's elements, none for nil, the value itself otherwise.
    var elements: [EvaluatedValue] {
        switch self {
        case .collection(let elements): elements
        case .value(.array(let values)): values.map { .value($0) }
        case .value(.null): []
        default: [self]
        }
    }

    /// The elements when the value is a collection, nil otherwise.
    var collectionElements: [EvaluatedValue]? {
        switch self {
        case .collection(let elements): elements
        case .value(.array(let values)): values.map { .value($0) }
        default: nil
        }
    }
}

extension ObjectExpression {
    func evaluate(in scope: PredicateScope) throws(PredicateEvaluationError) -> EvaluatedValue {
        switch self {
        case .constant(let value):
            return .value(value)
        case .evaluatedObject:
            return scope.object
        case .variable(let name):
            guard let value = scope.variables[name] else { throw .unboundVariable(name) }
            return value
        case .keyPath(let path, let base):
            return try Self.walk(try base.evaluate(in: scope), path.components[...])
        case .aggregate(let elements):
            var values: [EvaluatedValue] = []
            for element in elements { values.append(try element.evaluate(in: scope)) }
            return .collection(values)
        case .subquery(let collection, let variable, let predicate):
            var matching: [EvaluatedValue] = []
            var inner = scope
            for element in try collection.evaluate(in: scope).elements {
                inner.object = element
                inner.variables[variable] = element
                if try predicate.evaluate(in: inner) { matching.append(element) }
            }
            return .collection(matching)
        }
    }

    /// Follows key path components from a value.
    static func walk(
        _ start: EvaluatedValue, _ components: ArraySlice<QueryKeyPath.Component>
    )
        throws(PredicateEvaluationError) -> EvaluatedValue
    {
        var current = start
        var index = components.startIndex
        while index < components.endIndex {
            switch components[index] {
            case .key(let key):
                current = try step(current, key)
            case .collectionOperator(let op):
                let rest = components[(index + 1)...]
                guard let elements = current.collectionElements else {
                    if case .value(.null) = current { return current }
                    throw .invalidCollectionOperator(op, value: current.resolved)
                }
                if op == .count { return .value(.int(Int64(elements.count))) }
                // `@distinctUnionOfObjects.@count`: a union followed by another operator applies to the union.
                if op == .distinctUnionOfObjects || op == .unionOfObjects, case .collectionOperator = rest.first {
                    return try walk(try CollectionOperators.apply(op, to: elements), rest)
                }
                var values: [EvaluatedValue] = []
                for element in elements {
                    let value = rest.isEmpty ? element : try walk(element, rest)
                    if let nested = value.collectionElements, !rest.isEmpty {
                        values += nested
                    } else {
                        values.append(value)
                    }
                }
                return try CollectionOperators.apply(op, to: values)
            }
            index += 1
        }
        return current
    }

    /// One key: into an object or dictionary, over a collection (flattening nested collections), nil from nil.
    static func step(_ value: EvaluatedValue, _ key: String) throws(PredicateEvaluationError) -> EvaluatedValue {
        switch value {
        case .object(let object):
            do {
                return try object.predicateValue(forKey: key)
            } catch let error as PredicateEvaluationError {
                throw error
            } catch {
                throw .evaluable(key: key, underlying: error)
            }
        case .value(.dictionary(let values)):
            return .value(values[key] ?? .null)
        case .value(.null):
            return value
        case .collection, .value(.array):
            var results: [EvaluatedValue] = []
            for element in value.collectionElements ?? [] {
                let result = try step(element, key)
                if let nested = result.collectionElements { results += nested } else { results.append(result) }
            }
            return .collection(results)
        case .value(let scalar):
            throw .notAnObject(key: key, value: scalar)
        }
    }
}
