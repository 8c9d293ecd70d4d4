extension ManagedObjectContext {
    /// Brings another context's saved changes into this one (Core Data's `mergeChanges(fromContextDidSave:)`):
    /// registered objects that were updated take the saved values for the properties they have not changed
    /// (their own unsaved changes stay), registered objects that were deleted leave the context, and
    /// inserted objects become reachable (to-many relationships that may hold them are read again).
    ///
    /// The saving context must share this context's coordinator (its row cache already holds the saved
    /// rows); for changes known only by ID use ``mergeChanges(fromRemoteContextSave:into:)``.
    ///
    /// - Parameter save: the payload of a ``ContextNotification/didSave(_:)``.
    /// - Throws: what ``refresh(_:mergeChanges:)`` throws when an updated row cannot be read.
    public func mergeChanges(fromContextDidSave save: ContextSave) throws {
        var touchedRoots = Set<ObjectIdentifier>()
        for id in save.inserted.union(save.updated).union(save.deleted) {
            touchedRoots.insert(ObjectIdentifier(id.entity.rootEntity))
        }
        for id in save.deleted {
            guard let object = registry[id] else { continue }
            invalidate(object)
        }
        for id in save.updated {
            guard let object = registry[id], !object.isDeleted else { continue }
            if object.isFault {
                object.forgetRelationshipValues()
            } else {
                try refresh(object, mergeChanges: true)
            }
            changes.refreshed.insert(id)
        }
        // To-manys that may hold inserted, moved or deleted objects are read again when next used (unless
        // this context changed them).
        for object in registeredObjects {
            for relationship in object.entity.relationships
            where relationship.isToMany && !object.changedRelationships.contains(relationship.index)
                && touchedRoots.contains(ObjectIdentifier(relationship.destinationEntity.rootEntity))
            {
                object.setRelationshipValue(nil, at: relationship.index)
            }
        }
        postObjectsDidChange(merged: save)
    }

    /// Merges changes known only by object ID (from another coordinator or process, or from a batch
    /// request) into each context: cached rows of the updated and deleted objects are dropped first, so
    /// the contexts read them from the store.
    ///
    /// - Parameters:
    ///   - save: the inserted, updated and deleted object IDs.
    ///   - contexts: the contexts to bring up to date (on their thread).
    /// - Throws: what ``mergeChanges(fromContextDidSave:)`` throws.
    public static func mergeChanges(
        fromRemoteContextSave save: ContextSave, into contexts: [ManagedObjectContext]
    )
        throws
    {
        for context in contexts {
            for id in save.updated.union(save.deleted) where !id.isTemporaryID {
                context.coordinator.rowCache.invalidate(RowCache.Key(id))
            }
            try context.mergeChanges(fromContextDidSave: save)
        }
    }

    /// Removes an object whose row is gone from the context and from the relationships of the objects
    /// that hold it.
    func invalidate(_ object: ManagedObject) {
        for relationship in object.entity.relationships {
            guard let inverse = relationship.inverseRelationship,
                let value = object.relationshipValue(at: relationship.index)
            else { continue }
            let targets: [ManagedObject]
            switch value {
            case .toOne(let target): targets = target.map { [$0] } ?? []
            case .toMany(let members): targets = members.objects
            }
            for target in targets {
                switch target.relationshipValue(at: inverse.index) {
                case .toOne(let back) where back === object:
                    target.setRelationshipValue(.toOne(nil), at: inverse.index)
                case .toMany(var members):
                    members.remove(object)
                    target.setRelationshipValue(.toMany(members), at: inverse.index)
                default:
                    break
                }
            }
        }
        let id = object.objectID
        unregister(object)
        object.isDeleted = false
        object.turnIntoFault()
        pendingDeletions.removeAll { $0 === object }
        changes.invalidated.insert(id)
    }
}
