import Foundation

extension ManagedObject {
    func attribute(forKey key: String) throws -> AttributeDescription {
        guard let attribute = entity.attributesByName[key] else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        return attribute
    }

    /// The value of a property, firing the fault: for an attribute its ``AttributeValue/objectValue`` (an
    /// `NSNumber` for numbers and Booleans, which casts `as? Int`, `as? Int16`, `as? Double`... as Core Data's
    /// values do; `String`, `Date`, `Decimal`, ... for the other types); for a relationship the object or nil,
    /// a `Set<ManagedObject>`, or a `[ManagedObject]` when ordered.
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``; ``ObjectGraphError/objectInaccessible(_:)`` when
    ///   the fault cannot be fulfilled.
    public func value(forKey key: String) throws -> Any? {
        if let relationship = relationship(forKey: key) {
            try willAccessValue(forKey: key)
            defer { didAccessValue(forKey: key) }
            return try relationshipValue(relationship)
        }
        return try attributeValue(forKey: key)?.objectValue
    }

    /// Sets a property, recording the change in the context.
    ///
    /// - Parameters:
    ///   - value: a plain Swift value of the attribute's type (any integer type that fits for the integer
    ///     types), an ``AttributeValue``, or nil.
    ///   - key: the attribute's name.
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``, ``ObjectGraphError/wrongValueType(entity:key:expected:got:)``.
    public func setValue(_ value: Any?, forKey key: String) throws {
        if let relationship = relationship(forKey: key) {
            try setRelationshipValue(value, of: relationship)
            return
        }
        let attribute = try attribute(forKey: key)
        try setAttributeValue(try Self.convert(value, for: attribute, entity: entity), forKey: key)
    }

    /// Sets a relationship to a related object or nil (to-one), or a collection of objects (to-many).
    func setRelationshipValue(_ value: Any?, of relationship: RelationshipDescription) throws {
        if relationship.isToMany {
            try replaceMembers(relationship, with: members(from: value, for: relationship))
        } else {
            try setToOne(relationship, toOneTarget(value, for: relationship))
        }
    }

    /// The value at a key path such as `"department.name"`: each step reads a property of the object the
    /// previous step reached. A step that reaches nil ends the path with nil. A step through a to-many gives
    /// the collection of the next step's values (a set, or an array for an ordered to-many), and a
    /// collection operator summarises a to-many: `@count`, `@sum.x`, `@avg.x`, `@min.x`, `@max.x`,
    /// `@distinctUnionOfObjects.x` (e.g. `"employees.@sum.salary"`, `"department.employees.@count"`). Numbers,
    /// the operators' results among them, are `NSNumber`s, as ``value(forKey:)`` gives them.
    ///
    /// A path through a to-many is walked as predicates and sort keys walk it (StrataQuery's key paths), so the
    /// operators mean the same everywhere: `@sum` of integers is an integer while it fits, `@avg` a double (a
    /// decimal over decimals), nil values are skipped, and an operator over a nil to-one's collection is nil.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` for an unknown key;
    ///   ``ObjectGraphError/invalidKeyPath(_:reason:)`` for an unknown operator, an operator applied to
    ///   something that is not a collection or values it cannot combine; what ``value(forKey:)`` throws.
    public func value(forKeyPath keyPath: String) throws -> Any? {
        let path = QueryKeyPath(keyPath)
        let shape = try keyPathShape(path, keyPath)
        guard shape.isCollection else {
            // To-ones then a key: the key's value as value(forKey:) gives it (a float attribute stays a Float).
            var object = self
            for component in path.components.dropLast() {
                guard case .key(let key) = component, let next = try object.value(forKey: key) as? ManagedObject
                else { return nil }
                object = next
            }
            guard case .key(let last) = path.components[path.components.count - 1] else { return nil }
            return try object.value(forKey: last)
        }
        // Through a to-many: StrataQuery's walk, the one predicates and sort keys use (same collection operators).
        let value: EvaluatedValue
        do {
            value = try path.value(in: self)
        } catch {
            if case .evaluable(_, let underlying) = error { throw underlying }
            throw ObjectGraphError.invalidKeyPath(keyPath, reason: error.description)
        }
        return Self.keyValue(value, asArray: shape.isArray)
    }

    /// What a key path reaches, checked against the model before anything is read: whether it goes through a
    /// to-many (and so gives a collection or an operator's value), and whether a collection it gives is an array
    /// (through an ordered to-many, or a union operator's result) rather than a set.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` for a key the entity reached does not have, or a key
    ///   after an attribute; ``ObjectGraphError/invalidKeyPath(_:reason:)`` for an empty step, an unknown operator,
    ///   an operator that no to-many precedes, or a step after `@count`.
    private func keyPathShape(_ path: QueryKeyPath, _ keyPath: String) throws -> (isCollection: Bool, isArray: Bool) {
        var current: EntityDescription? = entity
        var isCollection = false
        var isArray = false
        for (position, component) in path.components.enumerated() {
            switch component {
            case .key(let key):
                guard !key.isEmpty else { throw ObjectGraphError.invalidKeyPath(keyPath, reason: "an empty step") }
                guard key.first != "@" else {
                    throw ObjectGraphError.invalidKeyPath(keyPath, reason: "unknown collection operator \(key)")
                }
                guard let here = current else { throw ObjectGraphError.unknownKey(entity: entity.name, key: keyPath) }
                if here.attributesByName[key] != nil {
                    current = nil
                } else if let relationship = here.relationshipsByName[key] {
                    current = relationship.destinationEntity
                    if relationship.isToMany {
                        isCollection = true
                        isArray = isArray || relationship.isOrdered
                    }
                } else {
                    throw ObjectGraphError.unknownKey(entity: entity.name, key: keyPath)
                }
            case .collectionOperator(let op):
                guard isCollection else {
                    throw ObjectGraphError.invalidKeyPath(keyPath, reason: "@\(op.rawValue) needs a collection")
                }
                if op == .count, position != path.components.count - 1 {
                    throw ObjectGraphError.invalidKeyPath(keyPath, reason: "@count ends a key path")
                }
                isArray = isArray || op == .unionOfObjects || op == .distinctUnionOfObjects
            }
        }
        return (isCollection, isArray)
    }

    /// A walk's value as key-value coding gives it: objects as themselves, numbers as `NSNumber`, a collection as a
    /// set (an array when `asArray`) of its elements that are not nil.
    private static func keyValue(_ value: EvaluatedValue, asArray: Bool) -> Any? {
        switch value {
        case .value(let value): return value.objectValue
        case .object(let object): return object as? ManagedObject
        case .collection(let elements):
            let present = elements.compactMap { keyValue($0, asArray: asArray) }
            return asArray ? present : Set(present.compactMap { $0 as? AnyHashable })
        }
    }

    /// The stored value of a property without access or change notifications (fires the fault).
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``; ``ObjectGraphError/objectInaccessible(_:)`` when the
    ///   fault cannot be fulfilled (its row is gone);
    ///   ``ObjectGraphError/storage(_:)`` when the store cannot read the row.
    public func primitiveValue(forKey key: String) throws -> Any? {
        if let relationship = relationship(forKey: key) { return try relationshipValue(relationship) }
        let attribute = try attribute(forKey: key)
        try fulfillFaultIfNeeded()
        try resolveExternalValue(at: attribute.index)
        return value(at: attribute.index)?.objectValue
    }

    /// Sets the stored value of a property without change notifications: the change is not recorded.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``;
    ///   ``ObjectGraphError/wrongValueType(entity:key:expected:got:)``; ``ObjectGraphError/objectInaccessible(_:)``
    ///   when the fault cannot be fulfilled (its row is gone);
    ///   ``ObjectGraphError/storage(_:)`` when the store cannot read the row.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) throws {
        if let relationship = relationship(forKey: key) {
            // This side only, unrecorded, as in Core Data: the inverse is the caller's to keep in step.
            let processing = changeProcessingEnabled
            changeProcessingEnabled = false
            defer { changeProcessingEnabled = processing }
            if relationship.isToMany {
                let targets = try members(from: value, for: relationship)
                for target in targets { try checkRelatable(target, through: relationship) }
                setRelationshipValue(.toMany(RelatedObjects(targets)), at: relationship.index)
            } else {
                let target = try toOneTarget(value, for: relationship)
                if let target { try checkRelatable(target, through: relationship) }
                setRelationshipValue(.toOne(target), at: relationship.index)
            }
            return
        }
        let attribute = try attribute(forKey: key)
        try fulfillFaultIfNeeded()
        setValue(try Self.convert(value, for: attribute, entity: entity), at: attribute.index)
        externalReferences[attribute.index] = nil
    }

    /// Called before a property is read: fires the fault (`key` nil: the whole object).
    ///
    /// - Throws: ``ObjectGraphError/objectInaccessible(_:)`` when the fault cannot be fulfilled (its row is gone);
    ///   ``ObjectGraphError/storage(_:)`` when the store cannot read the row.
    public func willAccessValue(forKey key: String?) throws {
        try fulfillFaultIfNeeded()
    }

    /// Called after a property is read.
    public func didAccessValue(forKey key: String?) {}

    /// Called before a property changes: fires the fault.
    ///
    /// - Throws: ``ObjectGraphError/objectInaccessible(_:)`` when the fault cannot be fulfilled (its row is gone);
    ///   ``ObjectGraphError/storage(_:)`` when the store cannot read the row.
    public func willChangeValue(forKey key: String) throws {
        try fulfillFaultIfNeeded()
    }

    /// Called after a property changed: records the change and tells observers.
    public func didChangeValue(forKey key: String) {
        if let relationship = relationship(forKey: key) {
            if changeProcessingEnabled {
                madeState.noteChange(ofRelationship: relationship.index)
                managedObjectContext?.objectDidChange(self)
            }
            notifyObservers(of: key)
            return
        }
        guard let attribute = entity.attributesByName[key] else { return }
        didChangeAttribute(attribute)
    }

    /// ``didChangeValue(forKey:)`` for an attribute the caller knows.
    func didChangeAttribute(_ attribute: AttributeDescription) {
        if changeProcessingEnabled {
            madeState.noteChange(ofAttribute: attribute.index)
            managedObjectContext?.objectDidChange(self)
        }
        notifyObservers(of: attribute.name)
    }

    /// Calls the observers of `key` (``observe(_:_:)``), if the object has any.
    func notifyObservers(of key: String) {
        guard let observers = state?.observers, !observers.isEmpty, let handlers = observers[key] else { return }
        for observer in handlers.values { observer(self) }
    }

    /// Calls `handler` after every change of `key` (through setValue, typed properties, refresh or merge).
    ///
    /// - Parameters:
    ///   - key: the attribute's or relationship's name.
    ///   - handler: called with the object, on the context's thread, after each change.
    /// - Returns: a token; pass it to ``removeObserver(_:)`` to stop.
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when the entity has no such property.
    @discardableResult
    public func observe(_ key: String, _ handler: @escaping (ManagedObject) -> Void) throws -> PropertyObservation {
        if relationship(forKey: key) == nil { _ = try attribute(forKey: key) }
        let token = PropertyObservation(key: key, id: UUID())
        observers[key, default: [:]][token.id] = handler
        return token
    }

    /// Stops an observation.
    public func removeObserver(_ observation: PropertyObservation) {
        observers[observation.key]?[observation.id] = nil
    }

    /// The object a to-one is being set to, from what key-value coding was given.
    func toOneTarget(_ value: Any?, for relationship: RelationshipDescription) throws -> ManagedObject? {
        guard let value else { return nil }
        guard let object = value as? ManagedObject else {
            throw ObjectGraphError.wrongRelationshipValue(
                entity: entity.name, key: relationship.name,
                expected: "a \(relationship.destinationEntity.name) or nil",
                got: "\(type(of: value))")
        }
        return object
    }

    // MARK: - Typed access (used by @Managed)

    func attributeValue(forKey key: String) throws -> AttributeValue? {
        try attributeValue(of: try attribute(forKey: key))
    }

    /// An attribute's value, firing the fault (what ``willAccessValue(forKey:)`` does) and reading an external
    /// binary value.
    func attributeValue(of attribute: AttributeDescription) throws -> AttributeValue? {
        try attributeValue(at: attribute.index)
    }

    /// ``attributeValue(of:)`` of the attribute at `index` in ``entity``'s attributes.
    func attributeValue(at index: Int) throws -> AttributeValue? {
        try fulfillFaultIfNeeded()
        try resolveExternalValue(at: index)
        return value(at: index)
    }

    func setAttributeValue(_ value: AttributeValue?, forKey key: String) throws {
        try setAttributeValue(value, of: try attribute(forKey: key))
    }

    /// Sets an attribute's value after checking it, firing the fault first (what ``willChangeValue(forKey:)``
    /// does).
    func setAttributeValue(_ value: AttributeValue?, of attribute: AttributeDescription) throws {
        if let value { try Self.check(value, for: attribute, entity: entity) }
        try fulfillFaultIfNeeded()
        applyAttribute(attribute, value, external: nil)
    }

    /// Sets an attribute's value (and external reference) as a recorded change: dirties the object, tells
    /// observers, and registers the reverse with the context's undo manager.
    func applyAttribute(_ attribute: AttributeDescription, _ value: AttributeValue?, external: UInt64?) {
        let index = attribute.index
        let (oldValue, oldExternal) = (self.value(at: index), externalReferences[index])
        // Baselines serve undo only (revertIfUnchanged): without an undo manager none is kept.
        if changeProcessingEnabled, managedObjectContext?.undoManager != nil, !changedIndexes.contains(index),
            attributeBaselines[index] == nil
        {
            attributeBaselines[index] = AttributeBaseline(value: oldValue, external: oldExternal)
        }
        setValue(value, at: index)
        // Most values are in the row: no lookup to remove a reference that is not there.
        if external != nil || oldExternal != nil { externalReferences[index] = external }
        didChangeAttribute(attribute)
        // No undo closure (an allocation per write) without an undo manager to take it.
        guard recordsUndo, let context = managedObjectContext else { return }
        context.registerUndo { [self] in
            applyAttribute(attribute, oldValue, external: oldExternal)
            revertIfUnchanged()
        }
    }

    // MARK: - Changes

    /// The persistent and transient properties changed since the last fetch or save, with their new values
    /// (attributes as ``AttributeValue/objectValue``, as ``value(forKey:)`` gives them).
    ///
    /// For an object inserted and not yet saved, as in Core Data, every attribute with a value counts as
    /// changed: the defaults applied at insert as well as the values set since. Relationships count once set.
    /// Does not fire relationship faults.
    public func changedValues() -> [String: Any?] {
        var result: [String: Any?] = [:]
        for index in changedIndexes {
            let attribute = entity.attributes[index]
            result.updateValue(value(at: index)?.objectValue, forKey: attribute.name)
        }
        if isInserted {
            for attribute in entity.attributes where !changedIndexes.contains(attribute.index) {
                guard let value = values[attribute.index] else { continue }
                result.updateValue(value.objectValue, forKey: attribute.name)
            }
        }
        for index in changedRelationships {
            let relationship = entity.relationships[index]
            if let value = relationshipValue(at: index) {
                result.updateValue(Self.keyValue(of: value, relationship), forKey: relationship.name)
            }
        }
        return result
    }

    /// The values of persistent properties as last fetched or saved (`keys` nil: all of them): attributes (as
    /// ``AttributeValue/objectValue``, as ``value(forKey:)`` gives them), and
    /// relationships as the related objects (nil or the object for a to-one; a `Set<ManagedObject>`, or
    /// `[ManagedObject]` when ordered, for a to-many), whatever was changed since.
    ///
    /// Does not fire the object's fault: empty for a fault and for an object never saved. A to-many that was
    /// not read since the object was fetched is read from the store (its members' IDs only, as faults); a
    /// to-many the store cannot read is left out.
    public func committedValues(forKeys keys: [String]?) -> [String: Any?] {
        try? resolveExternalValues()
        guard let committed else { return [:] }
        var result: [String: Any?] = [:]
        for attribute in entity.persistentAttributes where keys?.contains(attribute.name) ?? true {
            result.updateValue(committed[attribute.storageIndex!]?.objectValue, forKey: attribute.name)
        }
        for relationship in entity.relationships where keys?.contains(relationship.name) ?? true {
            // A changed relationship's value before its first change; an unchanged one's value now (a to-one
            // from the committed row, a to-many from the store).
            let value: RelationshipValue?
            if changedRelationships.contains(relationship.index) {
                value = relationshipBaselines[relationship.index]
            } else {
                value = try? materializedValue(relationship)
            }
            if let value { result.updateValue(Self.keyValue(of: value, relationship), forKey: relationship.name) }
        }
        return result
    }

    /// A relationship value as key-value coding gives it: the object or nil, a set, or an array when ordered.
    private static func keyValue(of value: RelationshipValue, _ relationship: RelationshipDescription) -> Any? {
        switch value {
        case .toOne(let object): object
        case .toMany(let members): relationship.isOrdered ? members.objects : Set(members.objects)
        }
    }

    // MARK: - Conversion

    /// Turns a plain Swift value into the attribute's kind of value.
    static func convert(
        _ value: Any?, for attribute: AttributeDescription, entity: EntityDescription
    ) throws -> AttributeValue? {
        guard let value else { return nil }
        if let value = value as? AttributeValue {
            try check(value, for: attribute, entity: entity)
            return value
        }
        func wrong() -> ObjectGraphError {
            .wrongValueType(
                entity: entity.name, key: attribute.name, expected: attribute.type, got: "\(type(of: value))")
        }
        func integer(_ bits: Int) throws -> AttributeValue {
            let wide: Int64?
            switch value {
            case let number as Int: wide = Int64(number)
            case let number as Int64: wide = number
            case let number as Int32: wide = Int64(number)
            case let number as Int16: wide = Int64(number)
            case let number as Int8: wide = Int64(number)
            case let number as UInt8: wide = Int64(number)
            case let number as UInt16: wide = Int64(number)
            case let number as UInt32: wide = Int64(number)
            default: wide = nil
            }
            guard let wide, bits == 64 || (wide >= -(1 << (bits - 1)) && wide < (1 << (bits - 1))) else {
                throw wrong()
            }
            return .integer(wide)
        }
        switch attribute.type {
        case .integer16: return try integer(16)
        case .integer32: return try integer(32)
        case .integer64: return try integer(64)
        case .double:
            switch value {
            case let number as Double: return .double(number)
            case let number as Float: return .double(Double(number))
            case let number as Int: return .double(Double(number))
            default: throw wrong()
            }
        case .float:
            switch value {
            case let number as Float: return .float(number)
            case let number as Double: return .float(Float(number))
            case let number as Int: return .float(Float(number))
            default: throw wrong()
            }
        case .decimal:
            switch value {
            case let number as Decimal: return .decimal(number)
            case let number as Int: return .decimal(Decimal(number))
            default: throw wrong()
            }
        case .boolean:
            guard let flag = value as? Bool else { throw wrong() }
            return .boolean(flag)
        case .string:
            guard let text = value as? String else { throw wrong() }
            return .string(text)
        case .date:
            guard let date = value as? Date else { throw wrong() }
            return .date(date)
        case .binaryData:
            if let data = value as? Data { return .data(data) }
            if let bytes = value as? [UInt8] { return .data(Data(bytes)) }
            throw wrong()
        case .uuid:
            guard let uuid = value as? UUID else { throw wrong() }
            return .uuid(uuid)
        case .uri:
            guard let url = value as? URL else { throw wrong() }
            return .uri(url)
        case .transformable, .undefined:
            guard let object = value as? AnyHashable else { throw wrong() }
            return .object(AnyHashableSendable(unchecked: object))
        }
    }

    /// Checks that a value's kind is the attribute's.
    static func check(_ value: AttributeValue, for attribute: AttributeDescription, entity: EntityDescription) throws {
        let matches: Bool
        switch (attribute.type, value) {
        case (.integer16, .integer(let number)): matches = Int16(exactly: number) != nil
        case (.integer32, .integer(let number)): matches = Int32(exactly: number) != nil
        case (.integer64, .integer): matches = true
        case (.double, .double), (.float, .float), (.decimal, .decimal), (.boolean, .boolean), (.string, .string),
            (.date, .date), (.binaryData, .data), (.uuid, .uuid), (.uri, .uri), (.transformable, .object),
            (.undefined, _):
            matches = true
        default: matches = false
        }
        guard matches else {
            throw ObjectGraphError.wrongValueType(
                entity: entity.name, key: attribute.name, expected: attribute.type, got: "\(value)")
        }
    }
}

/// A registration made by ``ManagedObject/observe(_:_:)``.
public struct PropertyObservation: Hashable, Sendable {
    /// The key the observation watches; pass the observation to ``ManagedObject/removeObserver(_:)`` to end it.
    public let key: String
    let id: UUID
}
