import Foundation

extension QueryValue {
    /// Whether two values are equal as a predicate's `==` sees them.
    ///
    /// Numbers (and Booleans, as 1 and 0) compare by value across types; strings compare by Unicode canonical
    /// equivalence, folded as `options` ask; arrays compare element by element; ``null`` equals only ``null``.
    /// Values of unrelated kinds are unequal.
    ///
    /// - Parameters:
    ///   - other: the value to compare with.
    ///   - options: how strings compare.
    /// - Returns: whether the values are equal.
    public func predicateEquals(_ other: QueryValue, options: ComparisonOptions = []) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let left), .string(let right)):
            return options.folds ? options.fold(left) == options.fold(right) : left == right
        case (.array(let left), .array(let right)):
            guard left.count == right.count else { return false }
            for (l, r) in zip(left, right) where !l.predicateEquals(r, options: options) { return false }
            return true
        default:
            if let left = number, let right = other.number { return Number.compare(left, right) == .orderedSame }
            return predicateCompare(other, options: options) == .orderedSame || self == other
        }
    }

    /// How two values order as a predicate's `<`, `<=`, `>` and `>=` see them, or nil when they do not order.
    ///
    /// Numbers order by value across types, strings by Unicode scalar order after folding (as `options` ask),
    /// dates by time, data and UUIDs by their bytes, URLs by their strings. ``null``, NaN and values of unrelated
    /// kinds do not order (every ordering comparison with them is false).
    ///
    /// - Parameters:
    ///   - other: the value to compare with.
    ///   - options: how strings compare.
    /// - Returns: the order, or nil.
    public func predicateCompare(_ other: QueryValue, options: ComparisonOptions = []) -> ComparisonResult? {
        switch (self, other) {
        case (.string(let left), .string(let right)):
            return Self.order(options.fold(left), options.fold(right))
        case (.date(let left), .date(let right)):
            return Self.order(left.timeIntervalSinceReferenceDate, right.timeIntervalSinceReferenceDate)
        case (.data(let left), .data(let right)):
            return Self.order(bytes: left, right)
        case (.uuid(let left), .uuid(let right)):
            return withUnsafeBytes(of: left.uuid) { l in
                withUnsafeBytes(of: right.uuid) { r in Self.order(bytes: l, r) }
            }
        case (.url(let left), .url(let right)):
            return Self.order(left.absoluteString, right.absoluteString)
        default:
            guard let left = number, let right = other.number else { return nil }
            return Number.compare(left, right)
        }
    }

    static func order<T: Comparable>(_ left: T, _ right: T) -> ComparisonResult? {
        if left < right { return .orderedAscending }
        if right < left { return .orderedDescending }
        return left == right ? .orderedSame : nil
    }

    static func order(bytes left: some Collection<UInt8>, _ right: some Collection<UInt8>) -> ComparisonResult {
        for (l, r) in zip(left, right) where l != r { return l < r ? .orderedAscending : .orderedDescending }
        return order(left.count, right.count) ?? .orderedSame
    }

    // MARK: - Numbers

    /// A numeric view of a value, or nil.
    var number: Number? {
        switch self {
        case .bool(let value): .int(value ? 1 : 0)
        case .int(let value): .int(value)
        case .double(let value): .double(value)
        case .decimal(let value): .decimal(value)
        default: nil
        }
    }

    /// A number of one of the three numeric kinds.
    enum Number {
        case int(Int64)
        case double(Double)
        case decimal(Decimal)

        var doubleValue: Double {
            switch self {
            case .int(let value): Double(value)
            case .double(let value): value
            case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
            }
        }

        var queryValue: QueryValue {
            switch self {
            case .int(let value): .int(value)
            case .double(let value): .double(value)
            case .decimal(let value): .decimal(value)
            }
        }

        /// Exact across integers and decimals; integers against doubles without rounding the integer.
        static func compare(_ left: Number, _ right: Number) -> ComparisonResult? {
            switch (left, right) {
            case (.int(let l), .int(let r)): return QueryValue.order(l, r)
            case (.decimal(let l), .decimal(let r)): return QueryValue.order(l, r)
            case (.int(let l), .decimal(let r)): return QueryValue.order(Decimal(l), r)
            case (.decimal(let l), .int(let r)): return QueryValue.order(l, Decimal(r))
            case (.int(let l), .double(let r)): return compare(l, r)
            case (.double(let l), .int(let r)): return compare(r, l).map(Self.reversed)
            default: return QueryValue.order(left.doubleValue, right.doubleValue)
            }
        }

        static func reversed(_ result: ComparisonResult) -> ComparisonResult {
            switch result {
            case .orderedAscending: .orderedDescending
            case .orderedDescending: .orderedAscending
            case .orderedSame: .orderedSame
            }
        }

        /// Compares an integer with a double exactly (converting the integer to a double would round it).
        static func compare(_ integer: Int64, _ double: Double) -> ComparisonResult? {
            if double.isNaN { return nil }
            // 2^63 is exactly representable; every Int64 is below it and at or above -2^63.
            let twoTo63 = 9_223_372_036_854_775_808.0
            if double >= twoTo63 { return .orderedAscending }
            if double < -twoTo63 { return .orderedDescending }
            let whole = double.rounded(.towardZero)
            // Safe: `whole` is integral and within [-2^63, 2^63).
            let wholeInteger = Int64(whole)
            if integer != wholeInteger { return integer < wholeInteger ? .orderedAscending : .orderedDescending }
            let fraction = double - whole
            return fraction > 0 ? .orderedAscending : fraction < 0 ? .orderedDescending : .orderedSame
        }
    }
}
