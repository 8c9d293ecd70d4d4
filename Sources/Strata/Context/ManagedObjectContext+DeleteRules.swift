extension ManagedObjectContext {
    /// Ends the current event (Core Data's `processPendingChanges`): runs the delete rules of objects deleted
    /// since the last call when ``propagatesDeletesAtEndOfEvent`` is set (else ``save()`` runs them), closes the
    /// undo manager's automatic group and posts the objects-did-change notification.
    ///
    /// The delete rules: ``DeleteRule/nullify`` removes the deleted object from the inverse side of each related
    /// object, ``DeleteRule/cascade`` deletes the related objects (whose own rules then run; cycles end because
    /// an object is deleted once), ``DeleteRule/noAction`` does nothing, and ``DeleteRule/deny`` is checked at
    /// save. An object that was inserted and never saved then leaves the context. They run on the relationships
    /// as they are when the event ends, as in Core Data: an object moved out of a relationship after its owner
    /// was deleted, and before the event ended, is not cascaded to.
    ///
    /// ``save()``, ``fetch(_:)`` and ``count(for:)`` (when they include pending changes) and the end of each
    /// ``PrivateQueueContext/perform(_:)`` call it; call it yourself to end an event elsewhere.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` or ``ObjectGraphError/objectInaccessible(_:)`` when a related
    ///   object cannot be read; the rules not yet run are kept for the next call.
    public func processPendingChanges() throws {
        try processPendingChanges(propagatingDeletes: propagatesDeletesAtEndOfEvent)
    }

    /// ``processPendingChanges()``, running the delete rules when `propagatingDeletes` (a save always does).
    func processPendingChanges(propagatingDeletes: Bool) throws {
        guard propagatingDeletes else {
            undoManager?.closeAutomaticGroup()
            postObjectsDidChange()
            return
        }
        // Cascades delete objects while rules run: they join the queue this loop is working through.
        guard !isProcessingDeletions else { return }
        isProcessingDeletions = true
        // The queue is walked with a cursor (a cascade of 100,000 objects must not shift it 100,000 times);
        // what was processed leaves it at the end, also when a rule throws.
        var processed = 0
        defer {
            pendingDeletions.removeFirst(processed)
            isProcessingDeletions = false
        }
        while processed < pendingDeletions.count {
            let object = pendingDeletions[processed]
            for relationship in object.entity.relationships {
                switch relationship.deleteRule {
                case .deny, .noAction:
                    continue
                case .nullify:
                    guard let inverse = relationship.inverseRelationship else { continue }
                    // A to-one's target is read as it is, not in an array (an allocation per member of a cascade).
                    if !relationship.isToMany {
                        if let target = try object.toOneValue(relationship) {
                            try take(object, outOf: inverse, of: target)
                        }
                        continue
                    }
                    for target in try object.toManyValue(relationship).objects {
                        try take(object, outOf: inverse, of: target)
                    }
                case .cascade:
                    // The members of a to-many name `object` in its inverse to-one: they need not fire to say so
                    // when their own nullify rule runs (a cascade of 100,000 faults reads no row). They are still
                    // made and registered, not deleted by row ID: Core Data calls prepareForDeletion(), willSave()
                    // and didSave() on each, which a subclass may override (Swift cannot tell), and lists each in
                    // deletedObjects (CoreDataDifferences.md).
                    let inverse = relationship.isToMany ? relationship.inverseRelationship : nil
                    let targets = try relatedObjects(of: object, through: relationship)
                    reserveDeletions(targets.count)
                    var everyTargetDeleted = true
                    for target in targets where !target.isDeleted {
                        if let inverse, !inverse.isToMany { target.noteUnreadToOne(inverse, as: object) }
                        delete(target)
                        if !target.isDeleted { everyTargetDeleted = false }
                    }
                    // Every member is deleted, and the nullify rule of each would take it out of this to-many (one
                    // change each, 2,300 instructions a member): it is emptied at once, which leaves what they would,
                    // and their rules then find nothing to remove.
                    if let inverse, !inverse.isToMany, inverse.deleteRule == .nullify, everyTargetDeleted,
                        !targets.isEmpty
                    {
                        try object.setMembersPrimitive(relationship, RelatedObjects())
                    }
                }
            }
            processed += 1
            if object.objectID.isTemporaryID {
                object.isDeleted = false
                unregister(object)
            }
        }
        undoManager?.closeAutomaticGroup()
        postObjectsDidChange()
    }

    /// The nullify rule for one related object: `object` leaves `target`'s side of the relationship (`inverse`).
    private func take(
        _ object: ManagedObject, outOf inverse: RelationshipDescription, of target: ManagedObject
    ) throws {
        if inverse.isToMany {
            try target.removeMemberPrimitive(inverse, object)
        } else if try target.toOneValue(inverse) === object {
            try target.setToOnePrimitive(inverse, nil)
        }
    }

    /// Room for `count` more deleted objects in the context's tables, made once for a cascade (hash tables grow by
    /// doubling, rehashing every entry each time; their capacities are powers of two, so this stays amortized).
    private func reserveDeletions(_ count: Int) {
        guard count > 1 else { return }
        deleted.reserveCapacity(deleted.count + count)
        unhashedDeletions.reserveCapacity(forAdding: count)
    }

    /// The objects `object` relates to through `relationship` (materializing it).
    private func relatedObjects(
        of object: ManagedObject, through relationship: RelationshipDescription
    ) throws -> [ManagedObject] {
        if relationship.isToMany { return try object.toManyValue(relationship).objects }
        return try object.toOneValue(relationship).map { [$0] } ?? []
    }

    /// Validates every object the save writes: attribute rules, mandatory to-ones and to-many counts of
    /// inserted and updated objects, and the deny rule of deleted ones.
    /// - Throws: the ``ValidationError`` of every failure, combined.
    func validateForSave() throws {
        var failures: [ValidationError] = []
        // The inserted objects, then the updated ones, where they lie: a list of them all was a copy of every
        // reference (8 MB at a million inserts, in the save's peak).
        for object in inserted.objects { try validate(object, into: &failures) }
        for object in updated.values { try validate(object, into: &failures) }
        // Deleted objects are visited only in a model with a deny rule (each one's entity read, in a cascade's
        // 100,000 objects, cold).
        if coordinator.model.entities.contains(where: { $0.relationships.contains { $0.deleteRule == .deny } }) {
            for object in deleted.values {
                for relationship in object.entity.relationships where relationship.deleteRule == .deny {
                    let count = try relatedObjects(of: object, through: relationship).filter { !$0.isDeleted }.count
                    if count > 0 {
                        failures.append(
                            .deleteDenied(
                                object: ValidatedObject(object.objectID), key: relationship.name, count: count))
                    }
                }
            }
        }
        if let failure = ValidationError.combining(failures) { throw failure }
    }

    /// The checks of ``validateForSave()`` for one inserted or updated object: attribute rules, mandatory to-ones and
    /// to-many counts, each failure appended to `failures`.
    private func validate(_ object: ManagedObject, into failures: inout [ValidationError]) throws {
        // Named only when something fails: an ID's URI (a UUID formatted with snprintf) cost 15,000
        // instructions, 13% of W1.graph's.
        func name() -> ValidatedObject { ValidatedObject(object.objectID) }
        // A value still only in the row record it was read with was checked then (its type, an integer's width):
        // without rules, only a mandatory attribute's nil can fail, told by its field's tag. (The record is not
        // bound: a copy of it was retained and released at each attribute.)
        let state = object.state
        for attribute in object.entity.persistentAttributes {
            if let state, attribute.validationRules.isEmpty, state.isUndecoded(attribute.index),
                attribute.isOptional || state.record?.valueIsNil(of: attribute) == false
            {
                continue
            }
            do {
                try attribute.validate(object.value(at: attribute.index), object: name())
            } catch { failures.append(error) }
        }
        for relationship in object.entity.relationships {
            if !relationship.isToMany {
                if !relationship.isOptional, try object.toOneValue(relationship) == nil {
                    failures.append(.missingMandatoryValue(object: name(), key: relationship.name))
                }
                continue
            }
            guard relationship.minCount > 0 || relationship.maxCount != nil else { continue }
            let count = try object.toManyValue(relationship).count
            if count < relationship.minCount {
                failures.append(
                    .tooFewObjects(
                        object: name(), key: relationship.name, count: count, limit: relationship.minCount)
                )
            }
            if let maximum = relationship.maxCount, count > maximum {
                failures.append(
                    .tooManyObjects(object: name(), key: relationship.name, count: count, limit: maximum))
            }
        }
    }
}
