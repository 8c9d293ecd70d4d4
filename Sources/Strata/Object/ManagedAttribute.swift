/// Declares a typed property of a ``ManagedObject`` subclass, stored in the object's modelled attribute (what
/// Core Data's `@NSManaged` does for an attribute).
///
/// The attribute is the one named after the property, unless a key is given. Reading fires the object's fault;
/// writing records the change in the object's context, exactly as ``ManagedObject/setValue(_:forKey:)`` does.
///
/// For example:
/// ```swift
/// final class Employee: ManagedObject {
///     @ManagedAttribute var name: String
///     @ManagedAttribute var salary: Int64
///     @ManagedAttribute("photoData") var photo: Data?
/// }
/// ```
///
/// ``Managed`` is the same wrapper under its first name; an app that declares a `Managed` of its own (a
/// `protocol Managed` is common in Core Data code) writes `@ManagedAttribute`. In an extension, where a
/// property wrapper cannot go, declare a computed property with ``ManagedObject/managedValue(forKey:)``.
///
/// Reading a property whose fault cannot be fulfilled (its row was deleted in the store, and the context's
/// ``ManagedObjectContext/shouldDeleteInaccessibleFaults`` is off) stops the program, as Core Data's accessors
/// raise an exception; use the throwing ``ManagedObject/value(forKey:)`` or
/// ``ManagedObjectContext/existingObject(with:)`` where that can happen.
@propertyWrapper
public struct ManagedAttribute<Value: AttributeConvertible>: DeclaredManagedProperty {
    @usableFromInline let propertyKey: PropertyKey

    /// Declares the property as the modelled attribute named `key`.
    ///
    /// - Parameter key: the attribute's name in the object's entity.
    // Inlinable, as ``ManagedRelationship``'s: every object made (every fault) makes its wrappers, and called across
    // modules the wrapper's initializer took the literal key as its own and released it, a call and a release more
    // for each wrapper (about 30 instructions of the 97 a wrapper cost, W3.graph). Inlined, the key is passed
    // borrowed straight to ``PropertyKey/named(_:)``.
    @inlinable
    public init(_ key: String) { propertyKey = .named(key) }

    /// Declares the property as the modelled attribute named after the property.
    ///
    /// - Parameters:
    ///   - file: where the property is declared (the compiler fills it in; it tells the property apart).
    ///   - line: where the property is declared.
    ///   - column: where the property is declared.
    public init(file: StaticString = #fileID, line: UInt = #line, column: UInt = #column) {
        propertyKey = .declared(file: file, line: line, column: column)
    }

    /// Unavailable: a managed property is reached only through its enclosing ``ManagedObject``
    /// (``subscript(_enclosingInstance:wrapped:storage:)``).
    @available(*, unavailable, message: "@ManagedAttribute properties exist only in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { preconditionFailure("@ManagedAttribute properties exist only in ManagedObject subclasses") }
        set { preconditionFailure("@ManagedAttribute properties exist only in ManagedObject subclasses") }
    }

    /// Reads or writes the attribute in the enclosing object: the accessor the compiler calls for the property
    /// (``ManagedObject/managedValue(forKey:)`` and ``ManagedObject/setManagedValue(_:forKey:)``).
    ///
    /// A fault that cannot be fulfilled, an unknown key or a value of another type stops the program
    /// (a precondition failure).
    // Inlinable, so that in the class that declares the property the storage key path is a literal the compiler
    // reads directly and the conversion to `Value` is specialized: called across modules, the key path was
    // projected at run time and generic metadata made on each read (about 1,300 instructions a read).
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let key = object[keyPath: storageKeyPath].propertyKey
            let value = object.managedAttributeValue(ofKey: key)
            guard let typed = Value(attributeValue: value) else {
                object.managedValueMismatch(value, ofKey: key, expected: Value.self)
            }
            return typed
        }
        set {
            object.setManagedAttributeValue(newValue.attributeValue, ofKey: object[keyPath: storageKeyPath].propertyKey)
        }
    }
}

/// The first name of ``ManagedAttribute``: `@Managed var name: String` declares the same property.
public typealias Managed<Value: AttributeConvertible> = ManagedAttribute<Value>
