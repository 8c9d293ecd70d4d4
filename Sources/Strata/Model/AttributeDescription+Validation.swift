import Foundation

extension AttributeDescription {
    /// Checks a value against the attribute: optionality, the value's type (and integer width), then
    /// every validation rule in order.
    ///
    /// A nil value passes when the attribute is optional and fails with
    /// ``ValidationError/missingMandatoryValue(object:key:)`` otherwise; rules never see nil. A value of
    /// the wrong type fails with ``ValidationError/wrongType(object:key:expected:)`` alone. Otherwise every
    /// failure is collected: one is thrown as it is, several as ``ValidationError/multiple(_:)``.
    ///
    /// For example:
    ///
    ///     try name.validate(.string("Ada"), objectDescription: id.uriRepresentation)
    ///
    /// - Parameters:
    ///   - value: the value, nil for none.
    ///   - objectDescription: how errors name the object, e.g. its object ID's URI.
    /// - Throws: ``ValidationError/missingMandatoryValue(object:key:)``,
    ///   ``ValidationError/wrongType(object:key:expected:)``,
    ///   ``ValidationError/valueTooSmall(object:key:value:limit:)``,
    ///   ``ValidationError/valueTooLarge(object:key:value:limit:)`` (range rules and integer widths),
    ///   ``ValidationError/tooShort(object:key:length:limit:)``, ``ValidationError/tooLong(object:key:length:limit:)``,
    ///   ``ValidationError/patternMismatch(object:key:pattern:)``, or ``ValidationError/multiple(_:)`` of them.
    public func validate(
        _ value: AttributeValue?, objectDescription: @autoclosure () -> String
    ) throws(ValidationError) {
        try validate(value, object: ValidatedObject(description: objectDescription()))
    }

    /// Checks a value of an object's attribute as ``validate(_:objectDescription:)`` does; the errors carry the
    /// object's ID and entity (``ValidatedObject``).
    ///
    /// - Parameters:
    ///   - value: the value, nil for none.
    ///   - object: the object the value belongs to.
    /// - Throws: what ``validate(_:objectDescription:)`` throws.
    public func validate(_ value: AttributeValue?, object: @autoclosure () -> ValidatedObject) throws(ValidationError) {
        let objectDescription = object
        guard let value else {
            if isOptional { return }
            throw .missingMandatoryValue(object: objectDescription(), key: name)
        }
        guard type.accepts(value) else { throw .wrongType(object: objectDescription(), key: name, expected: type) }
        var failures: [ValidationError] = []
        if let range = type.integerRange, case .integer(let integer) = value {
            if integer < range.lowerBound {
                failures.append(
                    .valueTooSmall(
                        object: objectDescription(), key: name, value: value, limit: .integer(range.lowerBound)))
            } else if integer > range.upperBound {
                failures.append(
                    .valueTooLarge(
                        object: objectDescription(), key: name, value: value, limit: .integer(range.upperBound)))
            }
        }
        for (rule, pattern) in zip(validationRules, patterns) {
            switch rule {
            case .range(let min, let max):
                // An incomparable value (NaN) lies within no range.
                if let min, (Self.compare(value, min) ?? -1) < 0 {
                    failures.append(.valueTooSmall(object: objectDescription(), key: name, value: value, limit: min))
                }
                if let max, (Self.compare(value, max) ?? 1) > 0 {
                    failures.append(.valueTooLarge(object: objectDescription(), key: name, value: value, limit: max))
                }
            case .length(let min, let max):
                let length: Int
                switch value {
                case .string(let string): length = string.count
                case .data(let data): length = data.count
                default: continue  // not reached: the model only allows length rules on strings and data
                }
                if let min, length < min {
                    failures.append(.tooShort(object: objectDescription(), key: name, length: length, limit: min))
                }
                if let max, length > max {
                    failures.append(.tooLong(object: objectDescription(), key: name, length: length, limit: max))
                }
            case .regularExpression(let source):
                if case .string(let string) = value, let pattern, !pattern.matches(string) {
                    failures.append(.patternMismatch(object: objectDescription(), key: name, pattern: source))
                }
            }
        }
        if let failure = ValidationError.combining(failures) { throw failure }
    }

    /// Orders a value against a range bound: -1, 0 or 1, or nil when they cannot be compared (NaN, or
    /// kinds the model does not allow together). Integers and decimals compare exactly; binary
    /// floating-point numbers compare as `Double`.
    static func compare(_ value: AttributeValue, _ limit: AttributeValue) -> Int? {
        func order<T: Comparable>(_ lhs: T, _ rhs: T) -> Int { lhs < rhs ? -1 : (lhs == rhs ? 0 : 1) }
        func orderNumbers(_ lhs: Double, _ rhs: Double) -> Int? { lhs.isNaN || rhs.isNaN ? nil : order(lhs, rhs) }
        func orderDecimals(_ lhs: Decimal, _ rhs: Decimal) -> Int? { lhs.isNaN || rhs.isNaN ? nil : order(lhs, rhs) }
        switch (value, limit) {
        case (.integer(let lhs), .integer(let rhs)): return order(lhs, rhs)
        case (.decimal(let lhs), .decimal(let rhs)): return orderDecimals(lhs, rhs)
        case (.decimal(let lhs), .integer(let rhs)): return orderDecimals(lhs, Decimal(rhs))
        case (.date(let lhs), .date(let rhs)): return order(lhs, rhs)
        default:
            guard let lhs = binaryFloatingPoint(value), let rhs = binaryFloatingPoint(limit) else { return nil }
            return orderNumbers(lhs, rhs)
        }
    }

    /// A double, float or integer as a `Double`.
    private static func binaryFloatingPoint(_ value: AttributeValue) -> Double? {
        switch value {
        case .double(let number): number
        case .float(let number): Double(number)
        case .integer(let number): Double(number)
        default: nil
        }
    }
}
