extension ManagedObjectContext {
    /// Brings an object up to date with its store.
    ///
    /// - `mergeChanges: false`: the object turns into a fault; unsaved changes (and transient values) are lost.
    /// - `mergeChanges: true`: the object takes its row's newest values (from the row cache within the
    ///   staleness interval, else the store) for properties it has not changed, and keeps its own changes. As in
    ///   Core Data, the sequence is: copy the changed properties, fault, ``ManagedObject/awakeFromFetch()``,
    ///   restore the copies; so a changed transient keeps its old value even if awakeFromFetch recomputed it.
    ///
    /// Objects of another context and inserted objects are left alone.
    ///
    /// - Parameters:
    ///   - object: a registered object of this context.
    ///   - mergeChanges: whether to keep the object's unsaved changes (see above).
    /// - Throws: only when merging: ``ObjectGraphError/objectInaccessible(_:)`` when the row no longer exists;
    ///   ``ObjectGraphError/storage(_:)`` when it cannot be read. The object is then unchanged.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) throws {
        guard object.managedObjectContext === self, !object.isInserted else { return }
        let key = ObjectIdentifier(object)
        guard mergeChanges, object.hasChangedProperties else {
            updated[key] = nil
            if deleted[key] == nil { object.turnIntoFault() }
            changes.refreshed.insert(object.objectID)
            if !retainsRegisteredObjects, deleted[key] == nil { retainedObjects[key] = nil }
            return
        }
        let saved = object.changedIndexes.map { ($0, object.values[$0]) }
        let savedRelationships = object.changedRelationships.map { ($0, object.relationshipValue(at: $0)) }
        let before = object.values
        // Read first: a failed read leaves the object as it was.
        guard let row = try storedRow(loadingInto: object) else {
            throw ObjectGraphError.objectInaccessible(object.objectID)
        }
        object.turnIntoFault()
        object.load(row)
        changes.refreshed.insert(object.objectID)
        for (index, value) in saved {
            object.values[index] = value
            object.changedIndexes.insert(index)
        }
        for (index, value) in savedRelationships {
            object.setRelationshipValue(value, at: index)
            object.changedRelationships.insert(index)
        }
        for (index, _) in saved { object.didChangeAttribute(object.entity.attributes[index]) }
        let restored = Set(saved.map(\.0))
        for attribute in object.entity.attributes
        where !restored.contains(attribute.index) && object.values[attribute.index] != before[attribute.index] {
            for observer in (object.observers[attribute.name] ?? [:]).values { observer(object) }
        }
    }

    /// Refreshes every registered object, keeping unsaved changes (``refresh(_:mergeChanges:)`` with true).
    ///
    /// - Throws: the first error of ``refresh(_:mergeChanges:)``; the objects after it are not refreshed.
    public func refreshAllObjects() throws {
        for object in registeredObjects where !object.isInserted {
            try refresh(object, mergeChanges: true)
        }
    }
}
