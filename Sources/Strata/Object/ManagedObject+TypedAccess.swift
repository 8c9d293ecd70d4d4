/// Typed access to modelled properties, for accessors written by hand: what ``ManagedAttribute`` and
/// ``ManagedRelationship`` properties call, and what a property declared in an extension (where a property
/// wrapper cannot go, and Core Data's `@NSManaged` can) calls. The key defaults to the calling property's name.
///
/// For example:
/// ```swift
/// extension Employee {
///     var nickname: String? {
///         get { managedValue() }              // the attribute "nickname"
///         set { setManagedValue(newValue) }
///     }
///     var manager: Employee? {
///         get { managedRelationship() }       // the relationship "manager"
///         set { setManagedRelationship(newValue) }
///     }
/// }
/// ```
///
/// A fault that cannot be fulfilled, an unknown key or a value of another type stops the program, naming
/// the object and the key; the throwing ``value(forKey:)`` and ``setValue(_:forKey:)`` report them instead.
extension ManagedObject {
    /// The value of an attribute, typed.
    ///
    /// - Parameter key: the attribute's name; by default the name of the property whose accessor calls this.
    /// - Returns: the value, converted with ``AttributeConvertible/init(attributeValue:)``.
    public func managedValue<Value: AttributeConvertible>(forKey key: String = #function) -> Value {
        guard let attribute = entity.attributesByName[key] else {
            preconditionFailure(
                "\(entity.name).\(key) of \(objectID): \(ObjectGraphError.unknownKey(entity: entity.name, key: key))")
        }
        return managedValue(of: attribute)
    }

    /// The value of the attribute a ``ManagedAttribute`` property declares, firing the fault: what its accessor
    /// (inlined in the class) converts to the property's type.
    @usableFromInline
    func managedAttributeValue(ofKey key: PropertyKey) -> AttributeValue? {
        // By index: the attribute itself is looked up only to report a failure (its entity, the attributes' array
        // and the attribute were retained and released around each read).
        let index = key.attributeIndex(in: self)
        do { return try attributeValue(at: index) } catch {
            preconditionFailure("\(entity.name).\(entity.attributes[index].name) of \(objectID): \(error)")
        }
    }

    /// Stops the program: the attribute a ``ManagedAttribute`` property declares holds `value`, not an `expected`.
    @usableFromInline
    func managedValueMismatch(_ value: AttributeValue?, ofKey key: PropertyKey, expected: Any.Type) -> Never {
        valueMismatch(value, of: key.attribute(in: self), expected: expected)
    }

    /// Sets the attribute a ``ManagedAttribute`` property declares (its accessor, inlined in the class).
    @usableFromInline
    func setManagedAttributeValue(_ value: AttributeValue?, ofKey key: PropertyKey) {
        setStoredValue(value, of: key.attribute(in: self))
    }

    /// The relationship a ``ManagedRelationship`` property declares, firing the fault: the related object of a to-one,
    /// the members of a to-many (what its accessor, inlined in the class, converts to the property's type with
    /// ``RelationshipConvertible/init(relatedObjects:ordered:)``).
    @usableFromInline
    func managedRelationshipRead(ofKey key: PropertyKey) -> ManagedRelationshipRead {
        let relationship = key.relationship(in: self)
        do {
            try fulfillFaultIfNeeded()
            guard relationship.isToMany else { return .toOne(try toOneValue(relationship)) }
            return .toMany(try toManyValue(relationship).objects, ordered: relationship.isOrdered)
        } catch {
            preconditionFailure("\(entity.name).\(relationship.name) of \(objectID): \(error)")
        }
    }

    /// Stops the program: the relationship a ``ManagedRelationship`` property declares does not hold `expected`.
    @usableFromInline
    func managedRelationshipMismatch(ofKey key: PropertyKey, expected: Any.Type) -> Never {
        preconditionFailure("\(entity.name).\(key.relationship(in: self).name) does not hold \(expected)")
    }

    /// Sets the relationship a ``ManagedRelationship`` property declares (its accessor, inlined in the class).
    @usableFromInline
    func setManagedRelationshipValue(_ value: Any?, ofKey key: PropertyKey) {
        let relationship = key.relationship(in: self)
        do { try setRelationshipValue(value, of: relationship) } catch {
            preconditionFailure("\(entity.name).\(relationship.name) of \(objectID): \(error)")
        }
    }

    /// The value of an attribute, typed: what ``managedValue(forKey:)`` and ``ManagedAttribute`` properties
    /// read once they know the attribute.
    func managedValue<Value: AttributeConvertible>(of attribute: AttributeDescription) -> Value {
        let value = storedValue(of: attribute)
        guard let typed = Value(attributeValue: value) else {
            valueMismatch(value, of: attribute, expected: Value.self)
        }
        return typed
    }

    /// An attribute's value, firing the fault; a fault that cannot be fulfilled stops the program.
    private func storedValue(of attribute: AttributeDescription) -> AttributeValue? {
        do { return try attributeValue(of: attribute) } catch {
            preconditionFailure("\(entity.name).\(attribute.name) of \(objectID): \(error)")
        }
    }

    /// Stops the program: `attribute` holds `value`, not an `expected`.
    private func valueMismatch(
        _ value: AttributeValue?, of attribute: AttributeDescription, expected: Any.Type
    ) -> Never {
        if isInaccessible {
            preconditionFailure(
                "\(entity.name).\(attribute.name) of \(objectID) is nil: the object's row was deleted from "
                    + "its store, and the fault was marked deleted (shouldDeleteInaccessibleFaults)")
        }
        preconditionFailure(
            "\(entity.name).\(attribute.name) holds \(value.map { "\($0)" } ?? "nil"), not a \(expected)")
    }

    /// Sets an attribute, recording the change in the context.
    ///
    /// - Parameters:
    ///   - value: the new value, converted with ``AttributeConvertible/attributeValue``.
    ///   - key: the attribute's name; by default the name of the property whose accessor calls this.
    public func setManagedValue<Value: AttributeConvertible>(_ value: Value, forKey key: String = #function) {
        guard let attribute = entity.attributesByName[key] else {
            preconditionFailure(
                "\(entity.name).\(key) of \(objectID): \(ObjectGraphError.unknownKey(entity: entity.name, key: key))")
        }
        setManagedValue(value, of: attribute)
    }

    /// Sets an attribute known to the caller (``ManagedAttribute`` properties), recording the change.
    func setManagedValue<Value: AttributeConvertible>(_ value: Value, of attribute: AttributeDescription) {
        setStoredValue(value.attributeValue, of: attribute)
    }

    /// Sets an attribute, recording the change; a value the attribute cannot take stops the program.
    private func setStoredValue(_ value: AttributeValue?, of attribute: AttributeDescription) {
        do { try setAttributeValue(value, of: attribute) } catch {
            preconditionFailure("\(entity.name).\(attribute.name) of \(objectID): \(error)")
        }
    }

    /// The related object (`Value?`), set (`Set<Value>`) or ordered objects (`[Value]`) of a relationship.
    ///
    /// - Parameter key: the relationship's name; by default the name of the property whose accessor calls this.
    /// - Returns: the related objects, converted with ``RelationshipConvertible/init(relationshipValue:)``.
    public func managedRelationship<Value: RelationshipConvertible>(forKey key: String = #function) -> Value {
        do {
            guard let typed = Value(relationshipValue: try value(forKey: key)) else {
                preconditionFailure("\(entity.name).\(key) does not hold \(Value.self)")
            }
            return typed
        } catch {
            preconditionFailure("\(entity.name).\(key) of \(objectID): \(error)")
        }
    }

    /// Sets a relationship, keeping the inverse in step and recording the change.
    ///
    /// - Parameters:
    ///   - value: the new related object, set or ordered objects.
    ///   - key: the relationship's name; by default the name of the property whose accessor calls this.
    public func setManagedRelationship<Value: RelationshipConvertible>(_ value: Value, forKey key: String = #function) {
        do { try setValue(value.relationshipValue, forKey: key) } catch {
            preconditionFailure("\(entity.name).\(key) of \(objectID): \(error)")
        }
    }
}

/// What ``ManagedObject/managedRelationshipRead(ofKey:)`` reads: a to-one's object, or a to-many's members.
@usableFromInline
enum ManagedRelationshipRead {
    case toOne(ManagedObject?)
    case toMany([ManagedObject], ordered: Bool)
}
