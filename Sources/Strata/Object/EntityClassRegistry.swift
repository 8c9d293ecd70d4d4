import StrataLock

/// Which `ManagedObject` subclass represents an entity's objects.
///
/// Swift on Linux has no Objective-C runtime to find a class by name, so classes are registered:
/// ``ManagedObject/register(forEntityName:)``, or implicitly the first time `init(context:)` of a subclass
/// runs. Entities without a registered class get plain ``ManagedObject`` instances, used through key-value
/// coding.
enum EntityClassRegistry {
    private static let classes = Lock<[String: ManagedObject.Type]>([:])

    static func register(_ type: ManagedObject.Type, forEntityName name: String) {
        classes.withLock { $0[name] = type }
    }

    /// The class for an entity: registered for the entity's class name, else for its name, else ManagedObject.
    static func type(for entity: EntityDescription) -> ManagedObject.Type {
        classes.withLock { classes in
            if let className = entity.managedObjectClassName, let type = classes[className] { return type }
            return classes[entity.name] ?? ManagedObject.self
        }
    }
}
