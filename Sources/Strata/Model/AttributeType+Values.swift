/// Which ``AttributeValue`` cases each attribute type holds, and which validation rules apply to it.
extension AttributeType {
    /// Whether the type can be stored in a row: every type but ``undefined``, which only transient
    /// attributes may have.
    public var isStorable: Bool { self != .undefined }

    /// The values an integer type can hold, or nil for the other types. Every integer is kept as an
    /// `Int64` (``AttributeValue/integer(_:)``); the narrower types restrict its range.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }

    /// Whether `value` is of the case this type holds: ``AttributeValue/integer(_:)`` for the integer
    /// types (whatever its range), ``AttributeValue/object(_:)`` for ``transformable``, any value for
    /// ``undefined``, and the case of the same name for the others.
    ///
    /// - Parameter value: the value to check.
    /// - Returns: true when the case matches.
    public func accepts(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (.undefined, _): true
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): true
        case (.decimal, .decimal), (.double, .double), (.float, .float), (.string, .string): true
        case (.boolean, .boolean), (.date, .date), (.binaryData, .data), (.uuid, .uuid), (.uri, .uri): true
        case (.transformable, .object): true
        default: false
        }
    }

    /// Whether `value` can be this type's value: ``accepts(_:)`` and, for the integer types, within
    /// ``integerRange``.
    func holds(_ value: AttributeValue) -> Bool {
        guard accepts(value) else { return false }
        if let range = integerRange, case .integer(let integer) = value { return range.contains(integer) }
        return true
    }

    /// Whether ``ValidationRule/range(min:max:)`` applies: numbers and dates.
    var supportsRangeRule: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date: true
        default: false
        }
    }

    /// Whether `limit` can bound a ``ValidationRule/range(min:max:)`` of this type: an integer for integer
    /// types, a decimal or integer for decimals, any binary number for doubles and floats, a date for dates.
    func acceptsRangeLimit(_ limit: AttributeValue) -> Bool {
        switch (self, limit) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): true
        case (.decimal, .decimal), (.decimal, .integer): true
        case (.double, .double), (.double, .float), (.double, .integer): true
        case (.float, .double), (.float, .float), (.float, .integer): true
        case (.date, .date): true
        default: false
        }
    }

    /// Whether ``ValidationRule/length(min:max:)`` applies: strings and binary data.
    var supportsLengthRule: Bool { self == .string || self == .binaryData }

    /// Whether ``ValidationRule/regularExpression(_:)`` applies: strings.
    var supportsPatternRule: Bool { self == .string }
}
