/// A live, mutable view of one object's to-many relationship (Core Data's `mutableSetValue(forKey:)` and
/// `mutableOrderedSetValue(forKey:)`): every change goes through the object, so the inverse side and the
/// context's change tracking stay in step.
///
/// For example:
///
///     let employees = try department.mutableSetValue(forKey: "employees")
///     try employees.insert(ada)          // ada.department is now department
///     try employees.remove(grace)        // grace.department is now nil
///
///     let steps = try recipe.mutableOrderedSetValue(forKey: "steps")
///     try steps.insert(step, at: 2)      // rows written: this step's link only
///
/// A view is valid while its object is; it is not `Sendable`.
public final class MutableRelationship {
    /// The object whose relationship this is.
    public let object: ManagedObject
    /// The relationship.
    public let relationship: RelationshipDescription

    init(object: ManagedObject, relationship: RelationshipDescription) {
        self.object = object
        self.relationship = relationship
    }

    /// The members, in order for an ordered relationship, else in the order they were added or loaded.
    /// Members that were not fetched are faults; reading this does not fire them.
    public var objects: [ManagedObject] {
        get throws { try object.toManyValue(relationship).objects }
    }

    /// The number of members (without firing any).
    public var count: Int {
        get throws { try object.toManyValue(relationship).count }
    }

    /// Whether `member` is in the relationship.
    public func contains(_ member: ManagedObject) throws -> Bool {
        try object.toManyValue(relationship).contains(member)
    }

    /// Adds `member` (at the end of an ordered relationship); no change when it is a member already.
    /// - Throws: ``ObjectGraphError/wrongRelationshipValue(entity:key:expected:got:)``,
    ///   ``ObjectGraphError/wrongContext(_:)``, ``ObjectGraphError/crossStoreRelationship(source:key:destination:)``.
    public func insert(_ member: ManagedObject) throws {
        guard try !contains(member) else { return }
        try object.addMember(relationship, member)
    }

    /// Removes `member`; no change when it is not a member.
    public func remove(_ member: ManagedObject) throws {
        try object.removeMember(relationship, member)
    }

    /// Removes every member.
    public func removeAll() throws {
        try object.replaceMembers(relationship, with: [])
    }

    // MARK: - Ordered relationships

    /// The member at `index` of an ordered relationship.
    /// - Throws: ``ObjectGraphError/notToMany(entity:key:operation:)`` for an unordered relationship.
    public func object(at index: Int) throws -> ManagedObject {
        try checkOrdered("object(at:)")
        return try objects[index]
    }

    /// Inserts `member` at `index` of an ordered relationship (moving it there when it is a member already).
    /// - Throws: ``ObjectGraphError/notToMany(entity:key:operation:)`` for an unordered relationship, and what
    ///   ``insert(_:)`` throws.
    public func insert(_ member: ManagedObject, at index: Int) throws {
        try checkOrdered("insert(_:at:)")
        let count = try count
        precondition(index >= 0 && index <= count, "index \(index) out of bounds (count \(count))")
        try object.addMember(relationship, member, at: index)
    }

    /// Removes the member at `index` of an ordered relationship.
    public func remove(at index: Int) throws {
        try checkOrdered("remove(at:)")
        try object.removeMember(relationship, try objects[index])
    }

    /// Moves the member at `source` to `destination` of an ordered relationship.
    public func move(from source: Int, to destination: Int) throws {
        try checkOrdered("move(from:to:)")
        let member = try objects[source]
        try object.insertMemberPrimitive(relationship, member, at: destination)
    }

    private func checkOrdered(_ operation: String) throws {
        guard relationship.isOrdered else {
            throw ObjectGraphError.notToMany(entity: object.entity.name, key: relationship.name, operation: operation)
        }
    }
}

@available(*, unavailable, message: "a relationship view belongs to its object's context thread")
extension MutableRelationship: Sendable {}

extension ManagedObject {
    /// A mutable view of the to-many relationship `key` (Core Data's `mutableSetValue(forKey:)`).
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``; ``ObjectGraphError/notToMany(entity:key:operation:)``
    ///   when `key` is an attribute or a to-one.
    public func mutableSetValue(forKey key: String) throws -> MutableRelationship {
        try mutableRelationship(forKey: key, operation: "mutableSetValue(forKey:)", ordered: false)
    }

    /// A mutable view of the ordered to-many relationship `key` (Core Data's `mutableOrderedSetValue(forKey:)`).
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)``; ``ObjectGraphError/notToMany(entity:key:operation:)``
    ///   when `key` is not an ordered to-many.
    public func mutableOrderedSetValue(forKey key: String) throws -> MutableRelationship {
        try mutableRelationship(forKey: key, operation: "mutableOrderedSetValue(forKey:)", ordered: true)
    }

    private func mutableRelationship(forKey key: String, operation: String, ordered: Bool) throws -> MutableRelationship
    {
        guard let relationship = relationship(forKey: key) else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        guard relationship.isToMany, relationship.isOrdered || !ordered else {
            throw ObjectGraphError.notToMany(entity: entity.name, key: key, operation: operation)
        }
        return MutableRelationship(object: self, relationship: relationship)
    }
}
