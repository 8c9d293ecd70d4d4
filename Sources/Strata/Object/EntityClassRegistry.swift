import StrataLock
import Synchronization

/// Which `ManagedObject` subclass represents an entity's objects.
///
/// Swift on Linux has no Objective-C runtime to find a class by name, so classes are registered:
/// ``ManagedObject/register(forEntityName:)``, or implicitly the first time `init(context:)` of a subclass
/// runs. Entities without a registered class get plain ``ManagedObject`` instances, used through key-value
/// coding.
enum EntityClassRegistry {
    private static let classes = Lock<[String: ManagedObject.Type]>([:])
    /// Raised by every registration that changes a class (under the lock of ``classes``): a class an entity resolved
    /// earlier may no longer be the one. Read without the lock by every fault made.
    private static let generation = Atomic<Int>(0)

    static func register(_ type: ManagedObject.Type, forEntityName name: String) {
        classes.withLock { classes in
            // `init(context:)` registers its class on every insert: the same class again changes nothing, and
            // leaves every entity's binding valid.
            guard classes[name].map({ $0 != type }) ?? true else { return }
            classes[name] = type
            generation.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// The class of `entity`'s objects: resolved by name once per entity (and again after a registration), then
    /// kept in the entity's ``EntityClassBinding`` (every fault made asks: two lookups by string were 5% of
    /// making one, and the lock round trips of this lookup about 200 instructions).
    static func type(for entity: EntityDescription) -> ManagedObject.Type {
        // A class registered after the generation is read is one registered after this call, as far as it knows.
        if let type = entity.classBinding.type(at: generation.load(ordering: .acquiring)) { return type }
        return classes.withLock { classes in
            let generation = generation.load(ordering: .relaxed)
            let type: ManagedObject.Type =
                entity.managedObjectClassName.flatMap { classes[$0] } ?? classes[entity.name] ?? ManagedObject.self
            entity.classBinding.bind(type, at: generation)
            return type
        }
    }
}
