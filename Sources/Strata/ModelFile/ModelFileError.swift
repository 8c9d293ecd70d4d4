/// Why a Core Data model file (`.xcdatamodeld` bundle, `.xcdatamodel` package or its `contents` XML) could not
/// be loaded. Every case about the XML names the line of the element at fault (the line its start tag ends on).
///
/// ## Topics
/// - ``unreadable(path:reason:)``
/// - ``malformedXML(line:column:reason:)``
/// - ``unsupportedElement(_:line:reason:)``
/// - ``missingAttribute(element:attribute:line:)``
/// - ``invalidValue(element:attribute:value:line:reason:)``
/// - ``invalidModel(_:line:)``
/// - ``noCurrentVersion(path:reason:)``
public enum ModelFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file or directory could not be read, or is not a model file.
    case unreadable(path: String, reason: String)
    /// The XML is not well-formed (or declares a document type, which Xcode never writes).
    case malformedXML(line: Int, column: Int, reason: String)
    /// An element Strata does not read and cannot ignore without changing the model.
    case unsupportedElement(String, line: Int, reason: String)
    /// An element lacks an attribute it needs.
    case missingAttribute(element: String, attribute: String, line: Int)
    /// An attribute's value is not one Strata understands (a type name, a number, a flag, a delete rule...).
    case invalidValue(element: String, attribute: String, value: String, line: Int, reason: String)
    /// The file describes a model the model builder refuses; `line` is that of the entity or property at fault
    /// (nil when the error names none).
    case invalidModel(ModelError, line: Int?)
    /// A `.xcdatamodeld` bundle has no version to load: no `.xcdatamodel` inside, or a `.xccurrentversion`
    /// naming one that is not there.
    case noCurrentVersion(path: String, reason: String)

    /// A sentence naming the file, element and line at fault.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "\(path): \(reason)"
        case .malformedXML(let line, let column, let reason): "line \(line), column \(column): malformed XML: \(reason)"
        case .unsupportedElement(let element, let line, let reason):
            "line \(line): <\(element)> is not supported: \(reason)"
        case .missingAttribute(let element, let attribute, let line):
            "line \(line): <\(element)> has no \(attribute) attribute"
        case .invalidValue(let element, let attribute, let value, let line, let reason):
            "line \(line): <\(element) \(attribute)=\(value.debugDescription)>: \(reason)"
        case .invalidModel(let error, let line): (line.map { "line \($0): " } ?? "") + error.description
        case .noCurrentVersion(let path, let reason): "\(path): \(reason)"
        }
    }
}
