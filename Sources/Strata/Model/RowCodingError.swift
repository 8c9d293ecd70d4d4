import StrataFormat

/// Why a ``RowCoder`` could not turn values into a row, or a row into values.
///
/// ## Topics
///
/// ### Encoding
/// - ``valueTypeMismatch(attribute:expected:)``
/// - ``transformerNotRegistered(attribute:name:)``
/// - ``transformationFailed(attribute:name:reason:)``
///
/// ### Decoding
/// - ``format(_:)``
/// - ``entityMismatch(expected:found:)``
/// - ``fieldCountMismatch(expected:found:)``
/// - ``fieldTypeMismatch(attribute:expected:found:)``
/// - ``integerOutOfRange(attribute:value:)``
/// - ``invalidURI(attribute:string:)``
/// - ``unresolvedBlobReference(attribute:blobID:)``
public enum RowCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A value is not of its attribute's type.
    case valueTypeMismatch(attribute: String, expected: AttributeType)
    /// A transformable attribute's transformer is not registered.
    case transformerNotRegistered(attribute: String, name: String)
    /// A transformable attribute's transformer threw; `reason` describes its error.
    case transformationFailed(attribute: String, name: String, reason: String)
    /// The row's bytes do not decode (a damaged row).
    case format(FormatError)
    /// The row belongs to another entity than the coder's (or, for a single field, to an entity
    /// outside the coder's hierarchy).
    case entityMismatch(expected: UInt16, found: UInt16)
    /// The row has another number of fields than the entity has persistent attributes.
    case fieldCountMismatch(expected: Int, found: Int)
    /// A field's kind does not fit its attribute's type (e.g. a string field for an integer attribute).
    case fieldTypeMismatch(attribute: String, expected: AttributeType, found: RowRecord.Tag)
    /// An integer field is outside its attribute's integer width.
    case integerOutOfRange(attribute: String, value: Int64)
    /// A URI field does not parse as a URL.
    case invalidURI(attribute: String, string: String)
    /// A binary field refers to a blob in the blob store, which the store must resolve before decoding.
    case unresolvedBlobReference(attribute: String, blobID: UInt64)

    /// A sentence naming the attribute or row at fault.
    public var description: String {
        switch self {
        case .valueTypeMismatch(let attribute, let expected): "the value of \(attribute) is not a \(expected)"
        case .transformerNotRegistered(let attribute, let name):
            "no value transformer named \(name) is registered (attribute \(attribute))"
        case .transformationFailed(let attribute, let name, let reason):
            "value transformer \(name) failed for \(attribute): \(reason)"
        case .format(let error): "damaged row: \(error)"
        case .entityMismatch(let expected, let found): "row of entity \(found), expected entity \(expected)"
        case .fieldCountMismatch(let expected, let found): "row has \(found) fields, expected \(expected)"
        case .fieldTypeMismatch(let attribute, let expected, let found):
            "field of \(attribute) is a \(found), not a \(expected)"
        case .integerOutOfRange(let attribute, let value): "\(value) does not fit the type of \(attribute)"
        case .invalidURI(let attribute, let string): "field of \(attribute) is not a URI: \(string.debugDescription)"
        case .unresolvedBlobReference(let attribute, let blobID): "\(attribute) refers to blob \(blobID)"
        }
    }
}
