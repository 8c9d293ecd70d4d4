/// Declares a typed property of a ``ManagedObject`` subclass, stored in the object's modelled attribute.
///
/// Reading fires the object's fault; writing records the change in the object's context, exactly as
/// ``ManagedObject/setValue(_:forKey:)`` does.
///
/// For example:
/// ```swift
/// final class Employee: ManagedObject {
///     @Managed("name") var name: String
///     @Managed("salary") var salary: Int64
///     @Managed("photo") var photo: Data?
/// }
/// ```
/// Reading a property whose fault cannot be fulfilled (its row was deleted in the store) stops the program,
/// as Core Data's accessors raise an exception; use the throwing ``ManagedObject/value(forKey:)`` or
/// ``ManagedObjectContext/existingObject(with:)`` where that can happen.
@propertyWrapper
public struct Managed<Value: AttributeConvertible> {
    /// The attribute's name in the model.
    public let key: String

    /// Declares the property as the modelled attribute named `key`.
    ///
    /// - Parameter key: the attribute's name in the object's entity.
    public init(_ key: String) { self.key = key }

    /// Unavailable: a `@Managed` property is reached only through its enclosing ``ManagedObject``
    /// (``subscript(_enclosingInstance:wrapped:storage:)``).
    @available(*, unavailable, message: "@Managed properties exist only in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { preconditionFailure("@Managed properties exist only in ManagedObject subclasses") }
        set { preconditionFailure("@Managed properties exist only in ManagedObject subclasses") }
    }

    /// Reads or writes the attribute in the enclosing object: the accessor the compiler calls for a
    /// `@Managed` property.
    ///
    /// Reading fires the fault and converts the value with ``AttributeConvertible/init(attributeValue:)``;
    /// writing converts it with ``AttributeConvertible/attributeValue`` and records the change in the context.
    /// A fault that cannot be fulfilled, an unknown key or a value of another type stops the program
    /// (a precondition failure).
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let key = object[keyPath: storageKeyPath].key
            do {
                let value = try object.attributeValue(forKey: key)
                guard let typed = Value(attributeValue: value) else {
                    if object.isInaccessible {
                        preconditionFailure(
                            "\(object.entity.name).\(key) of \(object.objectID) is nil: the object's row was deleted "
                                + "from its store, and the fault was marked deleted (shouldDeleteInaccessibleFaults)")
                    }
                    preconditionFailure(
                        "\(object.entity.name).\(key) holds \(value.map { "\($0)" } ?? "nil"), not a \(Value.self)")
                }
                return typed
            } catch {
                preconditionFailure("\(object.entity.name).\(key) of \(object.objectID): \(error)")
            }
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            do { try object.setAttributeValue(newValue.attributeValue, forKey: key) } catch {
                preconditionFailure("\(object.entity.name).\(key): \(error)")
            }
        }
    }
}
