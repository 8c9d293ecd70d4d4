import Foundation

/// Evaluates a key path with collection operators against managed objects (see
/// ``ManagedObject/value(forKeyPath:)``).
struct KeyPathEvaluator {
    let path: String
    let steps: [Substring]
    /// The entity of the object the path starts from (named by errors).
    private var rootEntity = ""

    init(path: String) {
        self.path = path
        self.steps = path.split(separator: ".", omittingEmptySubsequences: false)
    }

    func value(of object: ManagedObject) throws -> Any? {
        var evaluator = self
        evaluator.rootEntity = object.entity.name
        return try evaluator.evaluate(object, steps[...])
    }

    private func evaluate(_ value: Any?, _ rest: ArraySlice<Substring>) throws -> Any? {
        guard let step = rest.first else { return value }
        let remaining = rest.dropFirst()
        if step.hasPrefix("@") { return try apply(String(step), to: value, remaining) }
        guard !step.isEmpty else { throw ObjectGraphError.invalidKeyPath(path, reason: "an empty step") }
        switch value {
        case nil:
            return nil
        case let object as ManagedObject:
            // Only relationships lead on: a key after an attribute is unknown, even when the value is nil.
            if let next = remaining.first, !next.hasPrefix("@"), object.entity.attributesByName[String(step)] != nil {
                throw ObjectGraphError.unknownKey(entity: rootEntity, key: path)
            }
            return try evaluate(object.value(forKey: String(step)), remaining)
        case let objects as Set<ManagedObject>:
            return Set(
                try objects.compactMap { try evaluate($0.value(forKey: String(step)), remaining) as? AnyHashable })
        case let objects as [ManagedObject]:
            return try objects.map { try evaluate($0.value(forKey: String(step)), remaining) }
        default:
            // A key of something that is not an object (e.g. "name.count"): unknown, as Core Data reports it.
            throw ObjectGraphError.unknownKey(entity: rootEntity, key: path)
        }
    }

    /// Applies a collection operator to `value` (a to-many's objects, or values a to-many step gave).
    private func apply(_ name: String, to value: Any?, _ rest: ArraySlice<Substring>) throws -> Any? {
        let elements: [Any?]
        switch value {
        case nil: elements = []
        case let objects as Set<ManagedObject>: elements = Array(objects)
        case let objects as [ManagedObject]: elements = objects
        case let values as Set<AnyHashable>: elements = values.map { $0.base }
        case let values as [Any?]: elements = values
        default:
            throw ObjectGraphError.invalidKeyPath(path, reason: "\(name) needs a collection, not \(type(of: value!))")
        }
        if name == "@count" {
            guard rest.isEmpty else { throw ObjectGraphError.invalidKeyPath(path, reason: "@count ends a key path") }
            return elements.count
        }
        let operand = try elements.map { try evaluate($0, rest) }
        let present = operand.compactMap { $0 }
        switch name {
        case "@sum": return try Aggregate(present, path: path).sum()
        case "@avg": return present.isEmpty ? nil : try Aggregate(present, path: path).average()
        case "@min": return try Aggregate(present, path: path).extreme(smallest: true)
        case "@max": return try Aggregate(present, path: path).extreme(smallest: false)
        case "@distinctUnionOfObjects":
            var seen = Set<AnyHashable>()
            return present.compactMap { $0 as? AnyHashable }.filter { seen.insert($0).inserted }.map(\.base)
        default:
            throw ObjectGraphError.invalidKeyPath(path, reason: "unknown collection operator \(name)")
        }
    }
}

/// Sums, averages and extremes of attribute values of one kind.
private struct Aggregate {
    let values: [Any]
    let path: String

    init(_ values: [Any], path: String) {
        self.values = values
        self.path = path
    }

    private func failure(_ what: String) -> ObjectGraphError {
        .invalidKeyPath(path, reason: "cannot \(what) values of type \(values.first.map { "\(type(of: $0))" } ?? "")")
    }

    /// The integers' sum as `Int64`, decimals' as `Decimal`, any other numbers' as `Double`; 0 when empty.
    func sum() throws -> Any {
        if values.isEmpty { return Int64(0) }
        if let integers = integers() {
            var total: Int64 = 0
            for value in integers {
                let (sum, overflow) = total.addingReportingOverflow(value)
                guard !overflow else { return Double(integers.reduce(0.0) { $0 + Double($1) }) }
                total = sum
            }
            return total
        }
        if let decimals = values as? [Decimal] { return decimals.reduce(Decimal(0), +) }
        guard let doubles = doubles() else { throw failure("sum") }
        return doubles.reduce(0, +)
    }

    /// The mean as `Decimal` for decimals, else `Double`.
    func average() throws -> Any {
        if let decimals = values as? [Decimal] { return decimals.reduce(Decimal(0), +) / Decimal(decimals.count) }
        guard let doubles = doubles() else { throw failure("average") }
        return doubles.reduce(0, +) / Double(doubles.count)
    }

    /// The smallest or largest value, nil when empty.
    func extreme(smallest: Bool) throws -> Any? {
        guard !values.isEmpty else { return nil }
        func pick<T: Comparable>(_ items: [T]) -> T { smallest ? items.min()! : items.max()! }
        if let items = integers() { return pick(items) }
        if let items = values as? [Double] { return pick(items) }
        if let items = values as? [Float] { return pick(items) }
        if let items = values as? [Decimal] { return pick(items) }
        if let items = values as? [String] { return pick(items) }
        if let items = values as? [Date] { return pick(items) }
        if let items = doubles() { return pick(items) }
        throw failure("compare")
    }

    private func integers() -> [Int64]? {
        var result: [Int64] = []
        for value in values {
            switch value {
            case let number as Int64: result.append(number)
            case let number as Int: result.append(Int64(number))
            case let number as Int32: result.append(Int64(number))
            case let number as Int16: result.append(Int64(number))
            default: return nil
            }
        }
        return result
    }

    private func doubles() -> [Double]? {
        var result: [Double] = []
        for value in values {
            switch value {
            case let number as Double: result.append(number)
            case let number as Float: result.append(Double(number))
            case let number as Int64: result.append(Double(number))
            case let number as Int: result.append(Double(number))
            case let number as Decimal: result.append(NSDecimalNumber(decimal: number).doubleValue)
            default: return nil
            }
        }
        return result
    }
}
