extension ManagedObjectContext {
    /// Makes a child context (Core Data's `parent` context): it reads through `parent`, so it sees the
    /// parent's unsaved changes, and its ``save()`` pushes its changes into the parent without touching
    /// any store; the parent's own save writes them.
    ///
    /// Use the child on the parent's thread (or make both queue contexts and hand work over by object ID).
    ///
    /// - Parameter parent: the parent context; the child shares its coordinator.
    public convenience init(parent: ManagedObjectContext) {
        self.init(coordinator: parent.coordinator)
        self.parent = parent
        parent.children.append(WeakContext(context: self))
    }

    // MARK: - Reading through the parent

    /// The object's row as the parent (or its parent, …) sees it now, unsaved changes included; nil when no
    /// ancestor holds the object's values (the child then reads the store).
    func rowFromAncestors(for id: ManagedObjectID) throws -> StoredRow? {
        guard let parent else { return nil }
        guard let object = parent.registry[id], !object.isFault || object.isInserted else {
            return try parent.rowFromAncestors(for: id)
        }
        try object.resolveExternalValues()
        return StoredRow(entity: object.entity, version: object.version, values: object.persistentValues)
    }

    /// The IDs an ancestor's object relates to through `relationship` now (in order for an ordered one), or
    /// nil when no ancestor has the relationship in memory (the child then reads the store).
    func relatedIDsFromAncestors(
        of id: ManagedObjectID, through relationship: RelationshipDescription
    ) throws -> [ManagedObjectID]? {
        guard let parent else { return nil }
        // The parent's relationship when it has it in memory (even on a fault: inverse maintenance fills
        // to-manys without firing their owner).
        switch parent.registry[id]?.relationshipValue(at: relationship.index) {
        case .toMany(let members): return members.objects.map(\.objectID)
        case .toOne(let target): return target.map { [$0.objectID] } ?? []
        case nil: return try parent.relatedIDsFromAncestors(of: id, through: relationship)
        }
    }

    /// The objects the ancestors changed and have not saved: a child's fetch folds them in.
    func ancestorsPendingChanges() -> (changed: [ManagedObjectID], deleted: [ManagedObjectID]) {
        var changed: [ManagedObjectID] = []
        var deleted: [ManagedObjectID] = []
        var context = parent
        while let current = context {
            changed += current.inserted.objects.map(\.objectID) + current.updated.values.map(\.objectID)
            deleted += current.deleted.values.map(\.objectID)
            context = current.parent
        }
        return (changed, deleted)
    }

    // MARK: - Saving into the parent

    /// A child's save: its inserted, updated and deleted objects become changes of the parent's objects
    /// (inserted objects get permanent IDs first, so that both contexts name them alike after the parent's
    /// save); the child's objects are then unchanged.
    func pushChangesToParent(_ parent: ManagedObjectContext) throws {
        let changing = inserted.objects + Array(updated.values) + Array(deleted.values)
        for object in changing { object.willSave() }
        for object in inserted.objects + Array(updated.values) {
            try object.fulfillFaultIfNeeded()
            try object.resolveExternalValues()
        }
        try validateForSave()
        let insertedObjects = inserted.objects
        try obtainPermanentIDs(for: insertedObjects)

        // New objects first, so that relationships can name them.
        for object in insertedObjects {
            let copy = type(of: object).init(entity: object.entity, insertInto: nil)
            copy.objectID = object.objectID
            parent.insertPushed(copy, store: assignedStores[ObjectIdentifier(object)])
        }
        for object in insertedObjects + Array(updated.values) {
            let target = try parent.existingObject(with: object.objectID)
            for attribute in object.entity.attributes
            where object.isInserted || object.changedIndexes.contains(attribute.index) {
                try target.willChangeValue(forKey: attribute.name)
                target.applyAttribute(attribute, object.values[attribute.index], external: nil)
            }
            for relationship in object.entity.relationships
            where object.changedRelationships.contains(relationship.index)
                || (object.isInserted && object.relationshipValue(at: relationship.index) != nil)
            {
                if relationship.isToMany {
                    let members = try object.toManyValue(relationship).objects.map { parent.object(with: $0.objectID) }
                    try target.replaceMembers(relationship, with: members)
                } else {
                    try target.setToOne(
                        relationship, try object.toOneValue(relationship).map { parent.object(with: $0.objectID) })
                }
            }
        }
        for object in deleted.values { parent.delete(parent.object(with: object.objectID)) }
        try parent.processPendingChanges()

        // The child's objects now match the parent's: nothing of theirs is pending here any more.
        var saved = ContextSave()
        for object in insertedObjects {
            saved.inserted.insert(object.objectID)
            object.isInserted = false
            settleIntoParent(object)
        }
        for object in updated.values {
            saved.updated.insert(object.objectID)
            settleIntoParent(object)
        }
        for object in Array(deleted.values) {
            saved.deleted.insert(object.objectID)
            unregister(object)
            object.isDeleted = false
        }
        inserted.removeAll()
        updated = [:]
        deleted = [:]
        for object in changing { object.didSave() }
        if !retainsRegisteredObjects { retainedObjects = [:] }
        resetChanges()
        post(.didSave(saved))
        parent.childDidSave(saved, from: self)
    }

    /// Makes a pushed object's current values its committed ones.
    private func settleIntoParent(_ object: ManagedObject) {
        object.committed = object.persistentValues
        object.changedIndexes = []
        object.changedRelationships = []
        object.clearBaselines()
    }

    /// Registers an object a child inserted, under the child's ID, without calling `awakeFromInsert` again.
    private func insertPushed(_ object: ManagedObject, store: (any PersistentStore)?) {
        insertionCounter += 1
        object.insertionSequence = insertionCounter
        changesMade &+= 1
        register(object)
        inserted.append(object)
        object.isInserted = true
        if let store { assignedStores[ObjectIdentifier(object)] = store }
        registerUndoOfInsertion(object)
    }

    // MARK: - Merging into children

    /// Tells the children that merge automatically about changes saved into this context or its store.
    func notifyChildren(of save: ContextSave, except sender: ManagedObjectContext? = nil) {
        children.removeAll { $0.context == nil }
        for child in children.compactMap(\.context) where child !== sender && child.automaticallyMergesChangesFromParent
        {
            try? child.mergeChanges(fromContextDidSave: save)
        }
    }

    private func childDidSave(_ save: ContextSave, from child: ManagedObjectContext) {
        notifyChildren(of: save, except: child)
    }
}

/// A weak reference to a child context.
struct WeakContext {
    weak var context: ManagedObjectContext?
}
