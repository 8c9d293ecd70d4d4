import Foundation
import Strata

/// A value transformer that keeps a transformable attribute's stored bytes as its value (`Data` both ways): what a
/// tool without the app's types (the `strata` CLI) registers for the transformers a model names, so that a
/// migration on the way in copies transformable values byte for byte.
///
/// For example:
///
///     let importer = try CoreDataImporter(modelAt: "Shop.xcdatamodeld")
///     StoredBytesTransformer.registerWhereMissing(for: importer.versions.map(\.model))
public struct StoredBytesTransformer: ValueTransformer {
    /// A transformer.
    public init() {}

    /// The bytes themselves.
    ///
    /// - Throws: ``ValueTransformerError`` when the value is not `Data`.
    public func transformedValue(_ value: Any) throws -> Data {
        guard let data = value as? Data else {
            throw ValueTransformerError.unexpectedValueType(expected: "Data", found: "\(type(of: value))")
        }
        return data
    }

    /// The stored bytes, as `Data`.
    public func reverseTransformedValue(_ data: Data) throws -> any Hashable & Sendable { data }

    /// Registers a ``StoredBytesTransformer`` in `registry` under every value transformer name the models'
    /// transformable attributes use that has no transformer registered yet.
    ///
    /// - Returns: the names registered.
    @discardableResult
    public static func registerWhereMissing(
        for models: [ManagedObjectModel], in registry: ValueTransformerRegistry = .shared
    ) -> [String] {
        var names = Set<String>()
        for model in models {
            for entity in model.entities {
                for attribute in entity.attributes where attribute.type == .transformable {
                    if let name = attribute.valueTransformerName { names.insert(name) }
                }
            }
        }
        var registered: [String] = []
        for name in names.sorted() where registry.transformer(named: name) == nil {
            registry.register(StoredBytesTransformer(), named: name)
            registered.append(name)
        }
        return registered
    }
}
