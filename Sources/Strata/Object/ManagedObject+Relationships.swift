import Foundation

/// Relationships of a managed object: reading them (relationship faults), changing one side, and keeping
/// the inverse side in step.
///
/// Reading a to-one gives the related object as a fault, made from the ID in this object's row without
/// reading the related row. Reading a to-many asks the store for the related IDs only (an index or join
/// table scan, no rows) and gives faults. Either way the objects are uniqued through the context and held
/// strongly by this object until it turns into a fault, as in Core Data: two objects that point at each
/// other form a reference cycle that `refresh(_:mergeChanges: false)` breaks.
extension ManagedObject {
    /// The relationship named `key`, or nil when `key` names none.
    func relationship(forKey key: String) -> RelationshipDescription? { entity.relationshipsByName[key] }

    // MARK: - Reading

    /// The relationship's value, reading it from the row or the store on first access.
    func materializedValue(_ relationship: RelationshipDescription) throws -> RelationshipValue {
        if let value = relationshipValue(at: relationship.index) { return value }
        guard let context = managedObjectContext else { throw ObjectGraphError.noContext(objectID) }
        let value: RelationshipValue
        if let ids = try context.relatedIDsFromAncestors(of: objectID, through: relationship) {
            // A child context: the parent's current relationship, unsaved changes and new objects included.
            let objects = ids.map { context.object(with: $0) }
            value = relationship.isToMany ? .toMany(RelatedObjects(objects)) : .toOne(objects.first)
        } else if let toOneIndex = relationship.toOneIndex {
            try fulfillFaultIfNeeded()
            if let value = relationshipValue(at: relationship.index) { return value }  // loaded while firing
            let reference = committedReference(at: toOneIndex)
            value = .toOne(reference.map { context.object(with: objectID(of: $0)) })
        } else if objectID.isTemporaryID {
            value = .toMany(RelatedObjects())
        } else {
            let members = try context.relatedReferences(of: self, through: relationship)
            context.registry.reserveCapacity(context.registry.count + members.count)
            // Objects deleted but not yet saved are still members: their delete rules remove them (nullify,
            // which undo can revert), or leave them (no action), as in Core Data.
            // Each member's registry slot is hinted a few members ahead: in a large registry it is a cold line.
            let ahead = ObjectRegistry.slotsHintedAhead
            // (Every member is of the destination's hierarchy: its root is the one the slot's hash takes.)
            let (registry, root) = (context.registry, relationship.destinationEntity.rootIdentifier)
            for member in members.prefix(ahead) { registry.prefetchSlot(ofRow: member.rowID, root: root) }
            let objects = members.indices.map { index in
                if index + ahead < members.count {
                    registry.prefetchSlot(ofRow: members[index + ahead].rowID, root: root)
                }
                return context.object(with: objectID(of: members[index]))
            }
            // Firing one member reads its batch's rows at once (``FaultBatch``): walking a to-many costs one store
            // query per batch, not one per member.
            context.makeRelationshipFaultBatches(objects)
            value = .toMany(RelatedObjects(objects))
        }
        setRelationshipValue(value, at: relationship.index)
        return value
    }

    /// The ID of the object a stored reference names: references never leave this object's store.
    func objectID(of reference: StoredReference) -> ManagedObjectID {
        ManagedObjectID(entity: reference.entity, store: objectID.store, rowID: reference.rowID)
    }

    /// Gives an unread to-one of a fault its value without firing the fault: `owner`, whose to-many (the to-one's
    /// inverse) lists this object. Inverse maintenance keeps the two sides in step (moving this object to another
    /// owner in this context reads the to-one first), so a member listed with its to-one unread was listed by the
    /// store through that to-one's index, and firing would read `owner` from the row. Nothing else changes: no
    /// change is recorded, and the object stays a fault.
    func noteUnreadToOne(_ relationship: RelationshipDescription, as owner: ManagedObject) {
        guard isFault, !relationship.isToMany, relationshipValue(at: relationship.index) == nil else { return }
        setRelationshipValue(.toOne(owner), at: relationship.index)
    }

    func toOneValue(_ relationship: RelationshipDescription) throws -> ManagedObject? {
        guard case .toOne(let object) = try materializedValue(relationship) else { return nil }
        return object
    }

    func toManyValue(_ relationship: RelationshipDescription) throws -> RelatedObjects {
        guard case .toMany(let objects) = try materializedValue(relationship) else { return RelatedObjects() }
        return objects
    }

    /// The value key-value coding returns: the object (or nil) for a to-one, a `Set<ManagedObject>` for a
    /// to-many and a `[ManagedObject]` for an ordered to-many.
    func relationshipValue(_ relationship: RelationshipDescription) throws -> Any? {
        if !relationship.isToMany { return try toOneValue(relationship) }
        let members = try toManyValue(relationship).objects
        return relationship.isOrdered ? members : Set(members)
    }

    // MARK: - Changing one side

    /// Keeps the relationship's value before its first change since the last fetch or save (what undo
    /// compares with). Called before a change; copies the value only for the first change of a cycle.
    private func noteBaseline(_ relationship: RelationshipDescription, _ value: RelationshipValue) {
        // Baselines serve undo and `committedValues(forKeys:)`; an inserted object has no committed values, so
        // without an undo manager it keeps none (a dictionary made per new object).
        guard changeProcessingEnabled, !isInserted || recordsUndo, !changedRelationships.contains(relationship.index),
            relationshipBaselines[relationship.index] == nil
        else { return }
        relationshipBaselines[relationship.index] = value
    }

    /// Records a change of `relationship` (dirtying the object unless change processing is off), registers
    /// `reverse` with the context's undo manager, and tells observers.
    ///
    /// - Parameter reverse: what undoes the change; nil when ``recordsUndo`` is false (callers make it only
    ///   then: a closure per change was an allocation per relationship write with no undo manager to take it).
    private func relationshipDidChange(_ relationship: RelationshipDescription, reverse: (() throws -> Void)?) {
        if changeProcessingEnabled {
            madeState.noteChange(ofRelationship: relationship.index)
            if let context = managedObjectContext {
                context.objectDidChange(self)
                if let reverse {
                    context.registerUndo { [self] in
                        try? reverse()
                        revertIfUnchanged()
                    }
                }
            }
        }
        notifyObservers(of: relationship.name)
    }

    /// Whether a change made now is recorded for undo: change processing is on and the context has an undo
    /// manager.
    var recordsUndo: Bool { changeProcessingEnabled && managedObjectContext?.undoManager != nil }

    /// Sets a to-one on this side only.
    func setToOnePrimitive(_ relationship: RelationshipDescription, _ target: ManagedObject?) throws {
        let old = try toOneValue(relationship)
        if old === target { return }
        noteBaseline(relationship, .toOne(old))
        setRelationshipValue(.toOne(target), at: relationship.index)
        relationshipDidChange(
            relationship, reverse: recordsUndo ? { [self] in try setToOnePrimitive(relationship, old) } : nil)
    }

    /// Adds `target` to a to-many on this side only, at `index` (or the end) of an ordered one.
    func insertMemberPrimitive(_ relationship: RelationshipDescription, _ target: ManagedObject, at index: Int?) throws
    {
        var members = try toManyValue(relationship)
        let oldPosition = members.position(of: target)
        if relationship.isOrdered, let index {
            if oldPosition == index { return }
        } else if oldPosition != nil {
            return
        }
        noteBaseline(relationship, .toMany(members))
        // Mutate the only copy: with the slot still holding the value, each change would copy every member.
        setRelationshipValue(nil, at: relationship.index)
        if relationship.isOrdered, let index { members.insert(target, at: index) } else { members.append(target) }
        setRelationshipValue(.toMany(members), at: relationship.index)
        relationshipDidChange(
            relationship,
            reverse: recordsUndo
                ? { [self] in
                    if let oldPosition {
                        try insertMemberPrimitive(relationship, target, at: oldPosition)
                    } else {
                        try removeMemberPrimitive(relationship, target)
                    }
                } : nil)
    }

    /// Removes `target` from a to-many on this side only.
    func removeMemberPrimitive(_ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        var members = try toManyValue(relationship)
        guard let position = members.position(of: target) else { return }
        noteBaseline(relationship, .toMany(members))
        setRelationshipValue(nil, at: relationship.index)
        members.remove(target, keepingOrder: relationship.isOrdered)
        setRelationshipValue(.toMany(members), at: relationship.index)
        relationshipDidChange(
            relationship,
            reverse: recordsUndo
                ? { [self] in
                    try insertMemberPrimitive(relationship, target, at: relationship.isOrdered ? position : nil)
                } : nil)
    }

    /// Replaces a to-many's members on this side only, as one change (undo puts the old members back).
    ///
    /// A cascade empties its owner's to-many with it: each deleted member's nullify rule would otherwise take
    /// itself out, one change (a copy of the positions, an undo action, a notification) per member.
    func setMembersPrimitive(_ relationship: RelationshipDescription, _ members: RelatedObjects) throws {
        let old = try toManyValue(relationship)
        noteBaseline(relationship, .toMany(old))
        setRelationshipValue(.toMany(members), at: relationship.index)
        relationshipDidChange(
            relationship, reverse: recordsUndo ? { [self] in try setMembersPrimitive(relationship, old) } : nil)
    }

    // MARK: - Changing both sides

    /// Sets a to-one and keeps the inverse in step: the old target loses this object, the new target gains
    /// it (and, for a one-to-one, the new target's previous partner loses the new target).
    func setToOne(_ relationship: RelationshipDescription, _ target: ManagedObject?) throws {
        if let target { try checkRelatable(target, through: relationship) }
        let old = try toOneValue(relationship)
        if old === target { return }
        try setToOnePrimitive(relationship, target)
        guard let inverse = relationship.inverseRelationship else { return }
        if let old {
            if inverse.isToMany {
                try old.removeMemberPrimitive(inverse, self)
            } else if try old.toOneValue(inverse) === self {
                try old.setToOnePrimitive(inverse, nil)
            }
        }
        guard let target else { return }
        if inverse.isToMany {
            try target.insertMemberPrimitive(inverse, self, at: nil)
        } else {
            if let previous = try target.toOneValue(inverse), previous !== self {
                try previous.setToOnePrimitive(relationship, nil)
            }
            try target.setToOnePrimitive(inverse, self)
        }
    }

    /// Adds `target` to a to-many (at `index` of an ordered one) and keeps the inverse in step.
    func addMember(_ relationship: RelationshipDescription, _ target: ManagedObject, at index: Int? = nil) throws {
        try checkRelatable(target, through: relationship)
        if let inverse = relationship.inverseRelationship, !inverse.isToMany {
            // The to-one side leads: it takes the target from its old owner and appends it here.
            try target.setToOne(inverse, self)
            if let index { try insertMemberPrimitive(relationship, target, at: index) }
            return
        }
        try insertMemberPrimitive(relationship, target, at: index)
        if let inverse = relationship.inverseRelationship { try target.insertMemberPrimitive(inverse, self, at: nil) }
    }

    /// Removes `target` from a to-many and keeps the inverse in step.
    func removeMember(_ relationship: RelationshipDescription, _ target: ManagedObject) throws {
        guard try toManyValue(relationship).contains(target) else { return }
        if let inverse = relationship.inverseRelationship, !inverse.isToMany {
            try target.setToOne(inverse, nil)
            return
        }
        try removeMemberPrimitive(relationship, target)
        if let inverse = relationship.inverseRelationship { try target.removeMemberPrimitive(inverse, self) }
    }

    /// Replaces a to-many's members (in this order for an ordered one), keeping every inverse in step.
    func replaceMembers(_ relationship: RelationshipDescription, with targets: [ManagedObject]) throws {
        for target in targets { try checkRelatable(target, through: relationship) }
        let keep = Set(targets.map(ObjectIdentifier.init))
        for old in try toManyValue(relationship).objects where !keep.contains(ObjectIdentifier(old)) {
            try removeMember(relationship, old)
        }
        for (position, target) in targets.enumerated() {
            try addMember(relationship, target, at: relationship.isOrdered ? position : nil)
        }
    }

    /// Checks that `target` may be related to this object through `relationship`: an object of the
    /// destination entity, in the same context and, when both are saved, the same store.
    func checkRelatable(_ target: ManagedObject, through relationship: RelationshipDescription) throws {
        guard target.entity.isKind(of: relationship.destinationEntity) else {
            throw ObjectGraphError.wrongRelationshipValue(
                entity: entity.name, key: relationship.name, expected: "\(relationship.destinationEntity.name) objects",
                got: "a \(target.entity.name)")
        }
        guard target.managedObjectContext === managedObjectContext, managedObjectContext != nil else {
            throw ObjectGraphError.wrongContext(target.objectID)
        }
        if let source = objectID.storeIdentifier, let destination = target.objectID.storeIdentifier,
            source != destination
        {
            throw ObjectGraphError.crossStoreRelationship(
                source: objectID, key: relationship.name, destination: target.objectID)
        }
    }

    /// Converts what key-value coding was given for a to-many into its objects, in order.
    func members(from value: Any?, for relationship: RelationshipDescription) throws -> [ManagedObject] {
        switch value {
        case nil: return []
        case let objects as [ManagedObject]: return objects
        case let objects as Set<ManagedObject>: return objects.sorted { $0.objectID.precedes($1.objectID) }
        case let objects as any Sequence:
            return try objects.map { element in
                guard let object = element as? ManagedObject else {
                    throw ObjectGraphError.wrongRelationshipValue(
                        entity: entity.name, key: relationship.name, expected: "managed objects",
                        got: "\(type(of: element))")
                }
                return object
            }
        default:
            throw ObjectGraphError.wrongRelationshipValue(
                entity: entity.name, key: relationship.name, expected: "a collection of managed objects",
                got: "\(type(of: value!))")
        }
    }
}
