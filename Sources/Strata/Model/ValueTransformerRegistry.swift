import StrataLock

/// The value transformers of transformable attributes, by name; safe to use from any thread.
///
/// The store looks a transformer up each time it encodes or decodes a transformable value, so a
/// transformer must be registered before then, not when the model is built.
///
/// For example:
///
///     ValueTransformerRegistry.shared.register(CodableValueTransformer<Address>(), named: "Address")
///     ValueTransformerRegistry.shared.transformer(named: "Address")   // the transformer
///
/// ## Topics
///
/// ### Registries
/// - ``shared``
/// - ``init()``
///
/// ### Registering
/// - ``register(_:named:)``
/// - ``removeTransformer(named:)``
/// - ``transformer(named:)``
public final class ValueTransformerRegistry: Sendable {
    /// The registry the object graph uses unless told otherwise.
    public static let shared = ValueTransformerRegistry()

    private let transformers = Lock<[String: any ValueTransformer]>([:])

    /// An empty registry (for tests, or a store that must not see the shared registrations).
    public init() {}

    /// Registers `transformer` under `name`, replacing any transformer registered under that name.
    ///
    /// - Parameters:
    ///   - transformer: the transformer.
    ///   - name: the name attributes refer to it by (``AttributeDescription/valueTransformerName``).
    public func register(_ transformer: any ValueTransformer, named name: String) {
        transformers.withLock { $0[name] = transformer }
    }

    /// Removes the transformer registered under `name`, if any.
    ///
    /// - Parameter name: a transformer name.
    public func removeTransformer(named name: String) {
        _ = transformers.withLock { $0.removeValue(forKey: name) }
    }

    /// The transformer registered under `name`, or nil.
    ///
    /// - Parameter name: a transformer name.
    /// - Returns: the transformer, or nil when none is registered under that name.
    public func transformer(named name: String) -> (any ValueTransformer)? {
        transformers.withLock { $0[name] }
    }
}
