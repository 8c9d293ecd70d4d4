extension ManagedObjectContext {
    /// Records an action that reverts a change, when the context has an undo manager.
    func registerUndo(_ action: @escaping () -> Void) {
        undoManager?.register(action)
    }

    /// Called when undo brings an object back to its unchanged state: the context stops holding it.
    func objectBecameUnchanged(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        guard !isInsertedHere(object), deleted[key] == nil, updated[key] === object else { return }
        updated[key] = nil
        if !retainsRegisteredObjects { retainedObjects[key] = nil }
    }

    // MARK: - Inserts

    /// Records the undo of an insert.
    func registerUndoOfInsertion(_ object: ManagedObject) {
        guard undoManager != nil else { return }
        registerUndo { [unowned self] in undoInsertion(object) }
    }

    /// Takes an inserted object out of the context again (it keeps its values, ready for a redo).
    private func undoInsertion(_ object: ManagedObject) {
        guard isInsertedHere(object) else { return }
        inserted.remove(object)
        object.isInserted = false
        unregister(object)
        noteRemovalOfInsertedObject(object)
        registerUndo { [unowned self] in reinsert(object) }
    }

    /// Puts an object whose insert was undone back, without calling `awakeFromInsert` again.
    private func reinsert(_ object: ManagedObject) {
        // Out of every context, so in no context's inserted objects.
        guard object.managedObjectContext == nil else { return }
        // Numbered anew: it is last in insertion order, and named by the next notification.
        insertionCounter += 1
        object.insertionSequence = insertionCounter
        changesMade &+= 1
        register(object)
        inserted.append(object)
        object.isInserted = true
        object.isDeleted = false
        registerUndo { [unowned self] in undoInsertion(object) }
    }

    // MARK: - Deletes

    /// Records the undo of a delete. Registered before the delete rules run, so that undo reverts their
    /// changes first and then the deletion itself.
    func registerUndoOfDeletion(_ object: ManagedObject) {
        // No action made without an undo manager to take it (an allocation per object a cascade deletes).
        guard undoManager != nil else { return }
        registerUndo { [unowned self] in undoDeletion(object) }
    }

    /// Takes back a deletion (the rules' changes are reverted by their own actions).
    private func undoDeletion(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        pendingDeletions.removeAll { $0 === object }
        if object.objectID.isTemporaryID {
            object.isDeleted = false
            reinsert(object)
        } else {
            guard deleted[key] === object else { return }
            deleted[key] = nil
            object.isDeleted = false
            if object.hasChangedProperties { updated[key] = object }
            changesMade &+= 1
            unhashedDeletions.hash(into: &changes.deleted)
            changes.deleted.remove(object.objectID)
        }
        registerUndo { [unowned self] in redoDeletion(object) }
    }

    /// Deletes again after an undo, without running the delete rules (their changes are redone by their
    /// own actions).
    private func redoDeletion(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        if object.objectID.isTemporaryID {
            guard isInsertedHere(object) else { return }
            inserted.remove(object)
            object.isInserted = false
            unregister(object)
            noteRemovalOfInsertedObject(object)
        } else {
            guard object.managedObjectContext === self, deleted[key] == nil else { return }
            updated[key] = nil
            deleted[key] = object
            object.isDeleted = true
            changesMade &+= 1
            changes.deleted.insert(object.objectID)
        }
        registerUndo { [unowned self] in undoDeletion(object) }
    }
}
