import Foundation

/// A ``ValueTransformer`` for any `Codable` type, stored as JSON (Foundation's `JSONEncoder` with
/// sorted keys, so that equal values give equal bytes).
///
/// For example:
///
///     struct Address: Codable, Hashable, Sendable { var street: String; var city: String }
///     ValueTransformerRegistry.shared.register(CodableValueTransformer<Address>(), named: "Address")
public struct CodableValueTransformer<Value: Codable & Hashable & Sendable>: ValueTransformer {
    /// A transformer for values of type `Value`.
    public init() {}

    /// Encodes a `Value` as JSON.
    ///
    /// - Parameter value: a `Value`.
    /// - Returns: its JSON bytes.
    /// - Throws: ``ValueTransformerError/unexpectedValueType(expected:found:)`` when `value` is not a
    ///   `Value`; `EncodingError` when it cannot be encoded.
    public func transformedValue(_ value: Any) throws -> Data {
        let unboxed = value
        guard let typed = unboxed as? Value else {
            throw ValueTransformerError.unexpectedValueType(
                expected: String(describing: Value.self), found: String(describing: type(of: unboxed)))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(typed)
    }

    /// Decodes a `Value` from JSON.
    ///
    /// - Parameter data: JSON bytes ``transformedValue(_:)`` produced.
    /// - Returns: the `Value`.
    /// - Throws: `DecodingError` when the bytes are not a JSON `Value`.
    public func reverseTransformedValue(_ data: Data) throws -> any Hashable & Sendable {
        try JSONDecoder().decode(Value.self, from: data)
    }
}
