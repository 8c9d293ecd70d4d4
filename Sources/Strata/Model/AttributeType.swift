/// The type of an attribute's values. Raw values are Core Data's `NSAttributeType`, which the store
/// records in its model metadata.
public enum AttributeType: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    /// Only for transient attributes: any value, never stored.
    case undefined = 0
    /// A 16-bit signed integer, kept as an `Int64` limited to `Int16`'s range.
    case integer16 = 100
    /// A 32-bit signed integer, kept as an `Int64` limited to `Int32`'s range.
    case integer32 = 200
    /// A 64-bit signed integer.
    case integer64 = 300
    /// `Foundation.Decimal`, kept at full precision (never through `Double`).
    case decimal = 400
    /// A 64-bit binary floating-point number, `Double`.
    case double = 500
    /// A 32-bit binary floating-point number, `Float`.
    case float = 600
    /// A Unicode string.
    case string = 700
    /// `true` or `false`.
    case boolean = 800
    /// `Foundation.Date`, stored exactly (its `timeIntervalSinceReferenceDate`).
    case date = 900
    /// `Foundation.Data`; with ``AttributeDescription/allowsExternalBinaryDataStorage`` long values go to
    /// the engine's blob segments.
    case binaryData = 1000
    /// `Foundation.UUID`.
    case uuid = 1100
    /// `Foundation.URL`, stored as its absolute string (a relative URL comes back absolute).
    case uri = 1200
    /// Any value a named ``ValueTransformer`` turns into `Data` and back.
    case transformable = 1800

    /// The type's name as Core Data's model editor shows it, e.g. `Integer 64`.
    public var description: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        }
    }
}
