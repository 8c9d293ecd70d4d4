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

    /// The value of an attribute, typed: what ``managedValue(forKey:)`` and ``ManagedAttribute`` properties
    /// read once they know the attribute.
    func managedValue<Value: AttributeConvertible>(of attribute: AttributeDescription) -> Value {
        do {
            let value = try attributeValue(of: attribute)
            guard let typed = Value(attributeValue: value) else {
                if isInaccessible {
                    preconditionFailure(
                        "\(entity.name).\(attribute.name) of \(objectID) is nil: the object's row was deleted from "
                            + "its store, and the fault was marked deleted (shouldDeleteInaccessibleFaults)")
                }
                preconditionFailure(
                    "\(entity.name).\(attribute.name) holds \(value.map { "\($0)" } ?? "nil"), not a \(Value.self)")
            }
            return typed
        } catch {
            preconditionFailure("\(entity.name).\(attribute.name) of \(objectID): \(error)")
        }
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
        do { try setAttributeValue(value.attributeValue, of: attribute) } catch {
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

    /// The value of a relationship the caller knows (``ManagedRelationship`` properties), typed.
    func managedRelationship<Value: RelationshipConvertible>(of relationship: RelationshipDescription) -> Value {
        do {
            try fulfillFaultIfNeeded()
            guard let typed = Value(relationshipValue: try relationshipValue(relationship)) else {
                preconditionFailure("\(entity.name).\(relationship.name) does not hold \(Value.self)")
            }
            return typed
        } catch {
            preconditionFailure("\(entity.name).\(relationship.name) of \(objectID): \(error)")
        }
    }

    /// Sets a relationship the caller knows (``ManagedRelationship`` properties), keeping the inverse in step.
    func setManagedRelationship<Value: RelationshipConvertible>(
        _ value: Value, of relationship: RelationshipDescription
    ) {
        do { try setRelationshipValue(value.relationshipValue, of: relationship) } catch {
            preconditionFailure("\(entity.name).\(relationship.name) of \(objectID): \(error)")
        }
    }
}
