import Foundation

/// Turns the values of a transformable attribute into `Data` for the store, and back (Foundation's
/// `NSValueTransformer` as Core Data uses it for transformable attributes, reduced to what a store needs).
///
/// Register a transformer under the name the attribute's
/// ``AttributeDescription/valueTransformerName`` gives, in ``ValueTransformerRegistry/shared``, before
/// objects with the attribute are saved or read.
///
/// For example:
///
///     ValueTransformerRegistry.shared.register(CodableValueTransformer<[String]>(), named: "Tags")
///     let model = try ManagedObjectModel {
///         Entity("Photo") { Attribute("tags", .transformable, valueTransformerName: "Tags") }
///     }
///
/// ## Topics
///
/// ### Transforming
/// - ``transformedValue(_:)``
/// - ``reverseTransformedValue(_:)``
public protocol ValueTransformer: Sendable {
    /// Encodes a value for the store.
    ///
    /// - Parameter value: the attribute's value.
    /// - Returns: the bytes to store.
    /// - Throws: any error when the value cannot be encoded (e.g. it is not of the expected type).
    func transformedValue(_ value: Any) throws -> Data

    /// Decodes a value the store holds; the inverse of ``transformedValue(_:)``.
    ///
    /// - Parameter data: bytes ``transformedValue(_:)`` produced.
    /// - Returns: the attribute's value.
    /// - Throws: any error when the bytes cannot be decoded.
    func reverseTransformedValue(_ data: Data) throws -> any Hashable & Sendable
}

/// Why a built-in ``ValueTransformer`` could not transform a value.
public enum ValueTransformerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value given to ``ValueTransformer/transformedValue(_:)`` is not of the type the transformer handles.
    case unexpectedValueType(expected: String, found: String)

    /// A sentence describing the failure.
    public var description: String {
        switch self {
        case .unexpectedValueType(let expected, let found): "expected a value of type \(expected), found \(found)"
        }
    }
}
