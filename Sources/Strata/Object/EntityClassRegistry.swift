import StrataLock

/// Which `ManagedObject` subclass represents an entity's objects.
///
/// Swift on Linux has no Objective-C runtime to find a class by name, so classes are registered:
/// ``ManagedObject/register(forEntityName:)``, or implicitly the first time `init(context:)` of a subclass
/// runs. Entities without a registered class get plain ``ManagedObject`` instances, used through key-value
/// coding.
enum EntityClassRegistry {
    private struct State {
        var classes: [String: ManagedObject.Type] = [:]
        /// Raised by every registration: a class an entity resolved earlier may no longer be the one.
        var generation = 0
    }

    private static let state = Lock(State())

    static func register(_ type: ManagedObject.Type, forEntityName name: String) {
        state.withLock { state in
            state.classes[name] = type
            state.generation += 1
        }
    }

    /// The class of `entity`'s objects: resolved by name once per entity (and again after a registration), then
    /// kept in the entity's ``EntityClassBinding`` (every fault made asks: two lookups by string were 5% of
    /// making one).
    static func type(for entity: EntityDescription) -> ManagedObject.Type {
        state.withLock { state in
            if let type = entity.classBinding.type(at: state.generation) { return type }
            let type: ManagedObject.Type =
                entity.managedObjectClassName.flatMap { state.classes[$0] } ?? state.classes[entity.name]
                ?? ManagedObject.self
            entity.classBinding.bind(type, at: state.generation)
            return type
        }
    }
}
