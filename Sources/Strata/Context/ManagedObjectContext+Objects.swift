extension ManagedObjectContext {
    /// The object for an ID: the registered one, or a new fault. Never does I/O and never fails; firing the
    /// fault of a row that does not exist throws ``ObjectGraphError/objectInaccessible(_:)``.
    public func object(with id: ManagedObjectID) -> ManagedObject {
        if let object = registry[id] { return object }
        return makeFault(for: id)
    }

    /// The object for an ID, with its values: never a fault. Goes to the row cache or the store.
    /// - Throws: ``ObjectGraphError/objectInaccessible(_:)`` when the row does not exist.
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        let object = object(with: id)
        if object.isInserted { return object }
        // Never an inaccessible fault marked deleted: a missing row throws, whatever shouldDeleteInaccessibleFaults.
        if object.isInaccessible { throw ObjectGraphError.objectInaccessible(id) }
        try object.fulfillFaultIfNeeded(deletingInaccessible: false)
        return object
    }

    /// A new fault for `id`, registered: the caller found no object registered under it.
    func makeFault(for id: ManagedObjectID) -> ManagedObject {
        let type = EntityClassRegistry.type(for: id.entity)
        let object = type.init(entity: id.entity, insertInto: nil)
        object.objectID = id
        // A fault holds no state until it fires (whatever an overridden initializer made is a new object's).
        object.state = nil
        object.isFault = true
        registerUnregistered(object)
        return object
    }

    /// Registers the object for a fetched row: the registered object when there is one (its in-memory state
    /// wins, as uniquing requires), else a fault, or a filled object when `populate` is set.
    func object(for id: ManagedObjectID, row: StoredRow, populate: Bool) -> ManagedObject {
        var rows = RowCache.Batch(coordinator.rowCache, expected: 1)
        let object = object(for: id, row: row, populate: populate, caching: &rows)
        rows.record()
        return object
    }

    /// ``object(for:row:populate:)`` for one of several rows: a new object's row is added to `rows`, which the caller
    /// records (``RowCache/Batch/record()``) once the last one is added.
    func object(
        for id: ManagedObjectID, row: StoredRow, populate: Bool, caching rows: inout RowCache.Batch
    ) -> ManagedObject {
        if let object = registry[id] {
            if populate, object.isFault { object.load(row) }
            return object
        }
        // The row names its concrete entity, which the ID (made from an index entry, or for a superentity) may not.
        let object = makeFault(
            for: row.entity === id.entity
                ? id : ManagedObjectID(entity: row.entity, store: id.store, rowID: id.rowID!))
        // A new fault holds no entry yet: its row is one more holder's.
        rows.append(row, for: RowCache.Key(borrowing: object), heldBy: object)
        object.holdsCachedRow = true
        if populate { object.load(row) }
        return object
    }

    /// Gives inserted objects permanent IDs now, reserving their rows in their stores; they stay inserted.
    ///
    /// Objects that already have a permanent ID or belong to another context are skipped. Each object's row
    /// is reserved by its own store write.
    ///
    /// - Throws: ``ObjectGraphError/noStore(entity:)`` when the coordinator has no store;
    ///   ``ObjectGraphError/storage(_:)`` when a reservation fails (the objects before it keep their new IDs).
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        // One reservation (one store transaction) per store and entity hierarchy, however many objects.
        var groups: [[ObjectIdentifier]: (store: any PersistentStore, objects: [ManagedObject])] = [:]
        for object in objects where object.objectID.isTemporaryID && object.managedObjectContext === self {
            let store = try assignedStores[ObjectIdentifier(object)] ?? coordinator.defaultStore(for: object.entity)
            let group = [ObjectIdentifier(store), ObjectIdentifier(object.entity.rootEntity)]
            groups[group, default: (store, [])].objects.append(object)
        }
        for (store, members) in groups.values {
            let rowIDs = try store.allocateRowIDs(for: members[0].entity, count: members.count)
            let identity = StoreIdentity.interned(store.identifier)
            for (object, rowID) in zip(members, rowIDs) {
                rekey(object, to: ManagedObjectID(entity: object.entity, store: identity, rowID: rowID))
                assignedStores[ObjectIdentifier(object)] = store
            }
        }
    }

    /// Gives an object its permanent ID in the registry.
    /// The objects a saved object relates to through a to-many, as its store keeps them (no rows read).
    func relatedReferences(
        of object: ManagedObject, through relationship: RelationshipDescription
    ) throws -> [StoredReference] {
        guard let rowID = object.objectID.rowID else { return [] }
        return try coordinator.store(for: object.objectID).relatedObjects(
            through: relationship, of: StoredReference(entity: object.entity, rowID: rowID))
    }

    func rekey(_ object: ManagedObject, to id: ManagedObjectID) {
        // Found by its address, no ID compared (a save rekeys every object it inserted).
        _ = registry.remove(ifRegistered: object)
        object.objectID = id
        registry.insert(object)
    }
}
