/// The type of an attribute's values. Raw values are Core Data's `NSAttributeType`, which the store
/// records in its model metadata.
public enum AttributeType: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    /// Only for transient attributes: any value, never stored.
    case undefined = 0
    case integer16 = 100
    case integer32 = 200
    case integer64 = 300
    /// `Foundation.Decimal`, kept at full precision (never through `Double`).
    case decimal = 400
    case double = 500
    case float = 600
    case string = 700
    case boolean = 800
    case date = 900
    /// `Foundation.Data`; with ``AttributeDescription/allowsExternalBinaryDataStorage`` long values go to
    /// the engine's blob segments.
    case binaryData = 1000
    case uuid = 1100
    case uri = 1200
    /// Any value a named ``ValueTransformer`` turns into `Data` and back.
    case transformable = 1800

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
