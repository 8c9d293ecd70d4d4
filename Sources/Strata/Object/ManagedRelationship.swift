/// A typed relationship property of a ``ManagedObject`` subclass: reads and writes go through the object,
/// with relationship faults and inverse maintenance, exactly as key-value coding does.
///
/// The relationship is the one named after the property, unless a key is given. The value type says the
/// relationship's kind, as in Core Data's generated code: `Department?` for a to-one, `Set<Employee>` for a
/// to-many, `[Step]` for an ordered to-many.
///
/// For example:
/// ```swift
/// final class Employee: ManagedObject {
///     @ManagedRelationship var department: Department?
/// }
/// final class Department: ManagedObject {
///     @ManagedRelationship("employees") var staff: Set<Employee>
/// }
/// ada.department = research        // research.staff now holds ada
/// ```
///
/// In an extension, where a property wrapper cannot go, declare a computed property with
/// ``ManagedObject/managedRelationship(forKey:)``.
///
/// Errors (an unknown key, an object of another context or store, a row that no longer exists) are
/// programmer errors here and stop the program; use ``ManagedObject/setValue(_:forKey:)`` to handle them.
@propertyWrapper
public struct ManagedRelationship<Value: RelationshipConvertible>: DeclaredManagedProperty {
    @usableFromInline let propertyKey: PropertyKey

    /// A property backed by the relationship `key`.
    // Inlinable for the reason ``ManagedAttribute``'s `init(_:)` is: the key is passed borrowed, not released here.
    @inlinable
    public init(_ key: String) { propertyKey = .named(key) }

    /// A property backed by the relationship named after the property.
    ///
    /// - Parameters:
    ///   - file: where the property is declared (the compiler fills it in; it tells the property apart).
    ///   - line: where the property is declared.
    ///   - column: where the property is declared.
    public init(file: StaticString = #fileID, line: UInt = #line, column: UInt = #column) {
        propertyKey = .declared(file: file, line: line, column: column)
    }

    @available(*, unavailable, message: "@ManagedRelationship properties exist only in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { preconditionFailure("@ManagedRelationship properties exist only in ManagedObject subclasses") }
        set { preconditionFailure("@ManagedRelationship properties exist only in ManagedObject subclasses") }
    }

    /// Reads and writes the enclosing object's relationship (``ManagedObject/managedRelationship(forKey:)``
    /// and ``ManagedObject/setManagedRelationship(_:forKey:)``).
    // Inlinable for the reason ``ManagedAttribute``'s accessor is: the storage key path is read directly, and the
    // conversion to `Value` is specialized.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let key = object[keyPath: storageKeyPath].propertyKey
            // A to-many's members converted from their array: through the set key-value coding gives, each member
            // was hashed twice (into that set, then into the typed one), about 700 instructions a member.
            let typed: Value?
            switch object.managedRelationshipRead(ofKey: key) {
            case .toOne(let related): typed = Value(relationshipValue: related)
            case .toMany(let members, let ordered): typed = Value(relatedObjects: members, ordered: ordered)
            }
            guard let typed else { object.managedRelationshipMismatch(ofKey: key, expected: Value.self) }
            return typed
        }
        set {
            object.setManagedRelationshipValue(
                newValue.relationshipValue, ofKey: object[keyPath: storageKeyPath].propertyKey)
        }
    }
}

/// A type a relationship property can have: an optional object (to-one), a set (to-many) or an array
/// (ordered to-many) of a ``ManagedObject`` class.
public protocol RelationshipConvertible {
    /// Converts what key-value coding returns for the relationship; nil when it does not fit.
    init?(relationshipValue: Any?)
    /// What key-value coding takes for the relationship.
    var relationshipValue: Any? { get }
    /// Converts a to-many's members, each listed once (in order when `ordered`): what a ``ManagedRelationship``
    /// property reads, without the set or array key-value coding would make of them first. Nil when they do not fit,
    /// as ``init(relationshipValue:)`` gives for key-value coding's value of the same relationship.
    ///
    /// The default converts that value: `members` as an array when `ordered`, else as a `Set<ManagedObject>`.
    ///
    /// - Parameters:
    ///   - members: the related objects, distinct.
    ///   - ordered: whether the relationship is ordered.
    init?(relatedObjects members: [ManagedObject], ordered: Bool)
}

extension RelationshipConvertible {
    /// Converts `members` as key-value coding gives them: an array when `ordered`, else a `Set<ManagedObject>`.
    @inlinable
    public init?(relatedObjects members: [ManagedObject], ordered: Bool) {
        self.init(relationshipValue: ordered ? members as Any : Set(members) as Any)
    }
}

extension Optional: RelationshipConvertible where Wrapped: ManagedObject {
    /// A to-one's object, nil for none.
    @inlinable
    public init?(relationshipValue: Any?) {
        guard let value = relationshipValue else {
            self = .none
            return
        }
        guard let object = value as? Wrapped else { return nil }
        self = .some(object)
    }

    /// The object, or nil.
    public var relationshipValue: Any? { self }
}

extension Set: RelationshipConvertible where Element: ManagedObject {
    /// A to-many's objects.
    // Inlinable: specialized where the property is declared (unspecialized, each insert was 1,800 instructions).
    @inlinable
    public init?(relationshipValue: Any?) {
        guard let objects = relationshipValue as? Set<ManagedObject> else { return nil }
        self.init(casting: objects)
    }

    /// An unordered to-many's members, each inserted once (an ordered one's do not fit a set, as its array does
    /// not fit ``init(relationshipValue:)``).
    @inlinable
    public init?(relatedObjects members: [ManagedObject], ordered: Bool) {
        guard !ordered else { return nil }
        self.init(casting: members)
    }

    /// `objects`, each cast to `Element`; nil when one is not.
    @inlinable
    init?(casting objects: some Collection<ManagedObject>) {
        var typed = Set<Element>(minimumCapacity: objects.count)
        for object in objects {
            guard let member = object as? Element else { return nil }
            typed.insert(member)
        }
        self = typed
    }

    /// The objects as a set of managed objects.
    public var relationshipValue: Any? { Set<ManagedObject>(map { $0 as ManagedObject }) }
}

extension Array: RelationshipConvertible where Element: ManagedObject {
    /// An ordered to-many's objects, in order.
    @inlinable
    public init?(relationshipValue: Any?) {
        guard let objects = relationshipValue as? [ManagedObject] else { return nil }
        self.init(casting: objects)
    }

    /// An ordered to-many's members, in order (an unordered one's do not fit an array, as its set does not fit
    /// ``init(relationshipValue:)``).
    @inlinable
    public init?(relatedObjects members: [ManagedObject], ordered: Bool) {
        guard ordered else { return nil }
        self.init(casting: members)
    }

    /// `objects`, each cast to `Element`, in order; nil when one is not.
    @inlinable
    init?(casting objects: [ManagedObject]) {
        var typed: [Element] = []
        typed.reserveCapacity(objects.count)
        for object in objects {
            guard let member = object as? Element else { return nil }
            typed.append(member)
        }
        self = typed
    }

    /// The objects as an array of managed objects.
    public var relationshipValue: Any? { map { $0 as ManagedObject } }
}
