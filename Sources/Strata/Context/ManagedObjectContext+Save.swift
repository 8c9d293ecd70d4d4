import Foundation

extension ManagedObjectContext {
    /// Writes every change to the stores: one atomic engine transaction per store.
    ///
    /// 1. ``ManagedObject/willSave()`` on every inserted, updated and deleted object, then again on those changed
    ///    since their call (by their own `willSave()`, another's, inverse maintenance or a delete rule), until a
    ///    pass changes nothing.
    /// 2. Derived attributes are computed (``AttributeDescription/derivation``), then validation of inserted and
    ///    updated objects; any failure throws before anything is written.
    /// 3. Per store: inserts (which get their row IDs), updates (checked against the version they were read
    ///    at) and deletes, in one transaction.
    /// 4. Temporary IDs become permanent, the row cache takes the new rows, ``ManagedObject/didSave()`` runs
    ///    and the context lets go of the objects it held only because they had changes.
    ///
    /// Rows that changed in the store since the context read them are conflicts, which ``mergePolicy``
    /// resolves (the save then starts over from step 2 with the merged objects) or reports.
    ///
    /// A failed save throws and leaves the context's changes as they were, so they can be fixed and saved again.
    /// - Throws: ``ValidationError``, ``ObjectGraphError/mergeConflicts(_:)``,
    ///   ``ObjectGraphError/constraintConflicts(_:)``, ``ObjectGraphError/willSaveDidNotSettle(_:passes:)``,
    ///   ``ObjectGraphError/storage(_:)``.
    public func save() throws {
        checkConfinement()
        try processPendingChanges(propagatingDeletes: true)
        guard hasChanges else { return }
        post(.willSave)
        if let parent {
            try pushChangesToParent(parent)
            return
        }
        calledWillSave = false
        try callWillSave()
        try writeChanges(attempt: 1)
    }

    /// The most passes of ``ManagedObject/willSave()`` a save makes before it gives up (Core Data gives up too).
    static let willSavePassLimit = 100

    /// Step 1 of ``save()``: calls ``ManagedObject/willSave()`` on every inserted, updated and deleted object
    /// not called yet or changed since its last call, runs the delete rules, and repeats until a pass changes
    /// nothing, as Core Data does.
    /// - Throws: ``ObjectGraphError/willSaveDidNotSettle(_:passes:)`` after ``willSavePassLimit`` passes; what
    ///   ``processPendingChanges()`` throws.
    func callWillSave() throws {
        for pass in 1... {
            // The objects are called where they lie, in the tables' order (inserted, updated, deleted): a list of them
            // all, made for each pass, was 9% of W8.graph's save at a million deleted objects.
            let (inserted, updated, deleted) = (self.inserted.objects, self.updated.values, self.deleted.values)
            if calledWillSave {
                // An object is due when it changed since its call: every change counts in `changeCount`, so a mark
                // left by an earlier save is never equal unless the object was due in this save's first pass.
                func isDue(_ object: ManagedObject) -> Bool { object.willSaveMark != object.changeCount &+ 1 }
                var due = inserted.filter(isDue)
                for object in updated where isDue(object) { due.append(object) }
                for object in deleted where isDue(object) { due.append(object) }
                if due.isEmpty { return }
                guard pass <= Self.willSavePassLimit else {
                    throw ObjectGraphError.willSaveDidNotSettle(due.map(\.objectID), passes: Self.willSavePassLimit)
                }
                for object in due { callWillSave(of: object) }
            } else {
                // Before the first call every object is due (a cascade makes 100,000 of them: no test each).
                if inserted.isEmpty && updated.isEmpty && deleted.isEmpty { return }
                calledWillSave = true
                let changesBefore = changesMade
                for object in inserted { callWillSave(of: object) }
                for object in updated { callWillSave(of: object) }
                for object in deleted { callWillSave(of: object) }
                try processPendingChanges(propagatingDeletes: true)
                // Every object was called, and nothing changed since: none is due (each one's mark would be read,
                // cold in a cascade, to find none).
                if changesMade == changesBefore { return }
                continue
            }
            try processPendingChanges(propagatingDeletes: true)
        }
    }

    private func callWillSave(of object: ManagedObject) {
        // Marked before the call: a change the call makes calls it again in the next pass.
        object.willSaveMark = object.changeCount &+ 1
        object.willSave()
    }

    /// Steps 2 to 4 of ``save()``: they run again when the merge policy resolved conflicts (`attempt` counts),
    /// after ``ManagedObject/willSave()`` on the objects the resolution changed.
    private func writeChanges(attempt: Int) throws {
        if attempt > 1 { try callWillSave() }
        try updateDerivedAttributes(now: Date())
        // Rows are written whole: faults changed only through a relationship are filled, and binary values
        // still in the store are read (and kept if unchanged).
        // (The inserted objects, then the updated ones, where they lie: a list of them all copied every reference, 8 MB
        // at a million inserts.)
        for object in inserted.objects {
            try object.fulfillFaultIfNeeded()
            try object.resolveExternalValues()
        }
        for object in updated.values {
            try object.fulfillFaultIfNeeded()
            try object.resolveExternalValues()
        }
        try validateForSave()

        // Group the changes by store; an inserted object is named by its position among its store's inserts (found in
        // its batch's `insertedPositions`). No entry is made for an insert: the store makes each from its object and
        // the to-ones found here as it writes them (`StoreChanges.Inserts`), and drops it once written.
        var batches: [ObjectIdentifier: SaveBatch] = [:]
        func batch(_ store: any PersistentStore) -> ObjectIdentifier {
            let key = ObjectIdentifier(store)
            if batches[key] == nil {
                let batch = SaveBatch(store: store)
                batch.changes.transactionAuthor = transactionAuthor
                batch.changes.contextName = name
                batches[key] = batch
            }
            return key
        }
        // The batch of the last insert's store is kept at hand: a save's inserts go to one store or a few, in runs,
        // and a lookup of the batch by key hashed the store's identifier (three lookups an insert).
        var lastBatch: (store: ObjectIdentifier, batch: SaveBatch)?
        for (position, object) in inserted.objects.enumerated() {
            let store =
                try (assignedStores.isEmpty ? nil : assignedStores[ObjectIdentifier(object)])
                ?? coordinator.defaultStore(for: object.entity)
            if lastBatch?.store != ObjectIdentifier(store) {
                let key = batch(store)
                lastBatch = (key, batches[key]!)
                // Room for the rest of the inserts, made once: a list grown by doubling to a million objects left
                // 7 MB of its smaller copies in the heap under the save's peak.
                let batch = lastBatch!.batch
                if batch.inserted.isEmpty { batch.inserted.reserveCapacity(inserted.objects.count - position) }
            }
            lastBatch!.batch.inserted.append(object)
        }
        // Each batch's inserted objects found by their positions: a table of 4-byte slots hashed by address, where a
        // dictionary of every inserted object's (store, position) took a SipHash an insert and another a reference.
        for saving in batches.values { saving.insertedPositions = MemberPositions(positionsOf: saving.inserted) }
        // A constant for `reference` (which captured the batches' table before, and had it checked for exclusive access
        // at every use): the batches made for updates, after it, have no inserts.
        let insertingBatches = Array(batches.values)
        /// How a save in `batch` names `target`, related to `source` through `key`.
        func reference(
            to target: ManagedObject, from source: ManagedObject, key: String, batch: SaveBatch
        )
            throws -> ObjectReference
        {
            if let index = batch.insertedPositions.position(of: target, in: batch.inserted) {
                return .inserted(index)
            }
            // Inserted, and saved in another store.
            if insertingBatches.count > 1,
                insertingBatches.contains(where: { $0.insertedPositions.position(of: target, in: $0.inserted) != nil })
            {
                throw ObjectGraphError.crossStoreRelationship(
                    source: source.objectID, key: key, destination: target.objectID)
            }
            guard let rowID = target.objectID.rowID,
                try coordinator.store(for: target.objectID) === batch.store
            else {
                throw ObjectGraphError.crossStoreRelationship(
                    source: source.objectID, key: key, destination: target.objectID)
            }
            return .stored(StoredReference(entity: target.entity, rowID: rowID))
        }
        func references(of object: ManagedObject, batch: SaveBatch) throws -> [ObjectReference?] {
            try object.entity.toOneRelationships.map { relationship in
                // A to-one not read since the row was (nil: a fault) is the row's reference as it is: no object
                // is made for it (an update of an attribute made a fault of each one's department).
                if object.relationshipValue(at: relationship.index) == nil, let committed = object.committedReferences,
                    let toOneIndex = relationship.toOneIndex
                {
                    return committed[toOneIndex].map(ObjectReference.stored)
                }
                return try object.toOneValue(relationship).map {
                    try reference(to: $0, from: object, key: relationship.name, batch: batch)
                }
            }
        }
        func links(of object: ManagedObject, batch: SaveBatch, source: ObjectReference, all: Bool) throws {
            for relationship in object.entity.relationships where relationship.isToMany {
                guard case .joinTable = relationship.storage,
                    all || object.changedRelationships.contains(relationship.index),
                    case .toMany(let members) = object.relationshipValue(at: relationship.index)
                else { continue }
                if all && members.count == 0 { continue }
                let targets = try members.objects.map {
                    try reference(to: $0, from: object, key: relationship.name, batch: batch)
                }
                batch.changes.links.append(
                    StoreChanges.Links(relationship: relationship, source: source, members: targets))
            }
        }
        var sharedReferences = SharedArrays<ObjectReference?>(expected: inserted.count + updated.count)
        // Batch by batch, each in its order of insertion (each object's position without a lookup).
        for saving in batches.values {
            saving.insertedReferences.reserveCapacity(saving.inserted.count)
            for (index, object) in saving.inserted.enumerated() {
                saving.insertedReferences.append(sharedReferences.shared(try references(of: object, batch: saving)))
                try links(of: object, batch: saving, source: .inserted(index), all: true)
            }
            saving.changes.inserts = StoreChanges.Inserts(
                InsertedObjectsSource(objects: saving.inserted, references: saving.insertedReferences))
        }
        // The store is looked up when the ID names another than the last one's (a lock and a search each), as for the
        // deletions below.
        var lastUpdateStore: (identity: StoreIdentity, batch: SaveBatch)?
        for object in updated.values {
            let id = object.objectID
            if lastUpdateStore?.identity !== id.store {
                lastUpdateStore = (id.store, batches[batch(try coordinator.store(for: id))]!)
            }
            let saving = lastUpdateStore!.batch
            // The changed keys only for a store that records history: their names cost 1,400 instructions an object
            // in W7.graph.
            let changedKeys = saving.recordsHistory ? object.changedKeys : []
            if let changed = Self.changedFields(of: object) {
                // Read from a row record: the update names what changed since (the store encodes those fields alone),
                // and no value the object did not decode is decoded for it (2,170 instructions an object in W7.graph,
                // and the to-ones' 1,960 when none was read).
                saving.changes.updates.append(
                    StoreChanges.Update(
                        entity: object.entity, rowID: id.rowID!, changed: changed,
                        valueSlots: Self.valueSlots(of: object),
                        references: changed.references
                            ? sharedReferences.shared(try references(of: object, batch: saving)) : [],
                        changedKeys: changedKeys))
            } else {
                saving.changes.updates.append(
                    StoreChanges.Update(
                        entity: object.entity, rowID: id.rowID!, values: object.persistentValues,
                        expectedVersion: object.version,
                        references: sharedReferences.shared(try references(of: object, batch: saving)),
                        changedKeys: changedKeys))
            }
            saving.updated.append(object)
            try links(
                of: object, batch: saving,
                source: .stored(StoredReference(entity: object.entity, rowID: id.rowID!)), all: false)
        }
        // In row-ID order: the store's deletes then walk each table's tree from one end to the other, where the
        // dictionary's order sent each one down a cold path (a cascade deletes 100,000 rows).
        // Each object is read once, for its delete and its batch, before the sort: a cascade's objects are cold, and
        // a pass for the sort's keys, then one for the deletes, missed the cache twice an object. The store is
        // looked up when the ID names another than the last one's (a lock and a search each).
        var deletions: [(delete: StoreChanges.Delete, batch: SaveBatch, object: ManagedObject)] = []
        deletions.reserveCapacity(deleted.count)
        var lastStore: (identity: StoreIdentity, batch: SaveBatch)?
        for object in deleted.values {
            let id = object.objectID
            if lastStore?.identity !== id.store {
                lastStore = (id.store, batches[batch(try coordinator.store(for: id))]!)
            }
            deletions.append(
                (
                    StoreChanges.Delete(
                        entity: object.entity, rowID: id.rowID!, expectedVersion: object.isFault ? nil : object.version),
                    lastStore!.batch, object
                ))
        }
        deletions.sort { $0.delete.rowID < $1.delete.rowID }
        for (delete, saving, object) in deletions {
            saving.changes.deletes.append(delete)
            saving.deleted.append(object)
        }

        // Every reference is made: the positions go before the stores write (a million inserts' take 8 MB).
        for saving in insertingBatches { saving.insertedPositions = MemberPositions() }

        // Conflicts anywhere stop the save before any store is written. Each store's write is atomic; should a
        // later store fail (a full disk), the stores already written stay written and their objects saved.
        // The merge policy resolves version conflicts (ManagedObjectContext+Conflicts.swift) and the save starts
        // over; so it does when another writer got in between the check and the write of the first store.
        // A save to one store leaves the check to the store's write, which checks every version in its own
        // transaction (where it reads the row anyway) and throws before it writes: the conflicts it reports are
        // resolved below as these would be, without reading every row twice (W7.graph). A model with uniqueness
        // constraints is checked here first, so that version conflicts are still resolved before constraint ones.
        let checksFirst =
            batches.count > 1 || coordinator.model.entities.contains { !$0.uniquenessConstraints.isEmpty }
        if checksFirst,
            try resolveVersionConflicts(in: batches.values.map { ($0.store, $0.changes) }, attempt: attempt)
        {
            return try writeChanges(attempt: attempt + 1)
        }
        // Then uniqueness constraints (ManagedObjectContext+Constraints.swift), by the same policy.
        if try resolveConstraintConflicts(attempt: attempt) {
            return try writeChanges(attempt: attempt + 1)
        }
        for (position, batch) in batches.values.enumerated() {
            let result: StoreSaveResult
            do {
                do {
                    result = try batch.store.save(batch.changes)
                } catch {
                    // Nothing was written: the inserted objects that took their rows as the store wrote them
                    // (`StoreChanges.Inserts.written`) take their values back, every one decoded from its row.
                    for object in batch.inserted { object.state?.dropRecord() }
                    throw error
                }
            } catch ObjectGraphError.optimisticLockingConflict(let ids) where position == 0 {
                try resolveVersionConflicts(ids, attempt: attempt)
                return try writeChanges(attempt: attempt + 1)
            }
            apply(result, of: batch)
        }
        // The batches list every object the save wrote (a list of its own was 8 MB of W1.graph's peak).
        for batch in batches.values {
            for object in batch.inserted { object.didSave() }
            for object in batch.updated { object.didSave() }
            for object in batch.deleted { object.didSave() }
        }
        if !retainsRegisteredObjects { retainedObjects = [:] }
        // The saved objects' IDs are hashed into sets only for someone to read them: a cascade's 100,000 (each ID
        // read and hashed, a random slot of a large table) were 7% of W8.graph's save at a million, for nobody.
        var saved = ContextSave()
        if hasSaveListeners {
            // Room made once: a cascade's 100,000 IDs would otherwise grow the set by doubling, rehashing each time.
            saved.inserted.reserveCapacity(batches.values.reduce(0) { $0 + $1.inserted.count })
            saved.updated.reserveCapacity(batches.values.reduce(0) { $0 + $1.updated.count })
            saved.deleted.reserveCapacity(batches.values.reduce(0) { $0 + $1.deleted.count })
            for batch in batches.values {
                saved.inserted.formUnion(batch.inserted.map(\.objectID))
                saved.updated.formUnion(batch.updated.map(\.objectID))
                saved.deleted.formUnion(batch.deleted.map(\.objectID))
            }
        }
        resetChanges()
        post(.didSave(saved))
        notifyTrackers { try $0.contextDidSave() }
        notifyChildren(of: saved)
        coordinator.saveBroadcaster.broadcast(saved, from: self)
    }

    /// Step 4 for one store's batch, which `result` saved: the objects take their IDs and their saved state, and
    /// the row cache their rows. What the batch held only for the store is let go of object by object as they
    /// settle, so that the rows they cache take its room (W1.graph's peak memory is here).
    private func apply(_ result: StoreSaveResult, of batch: SaveBatch) {
        let store = batch.store
        let inserted = batch.inserted
        let updated = batch.updated
        let deleted = batch.deleted
        // Interned once, not per object (a lock and a UUID hash each).
        let identity = StoreIdentity.interned(store.identifier)
        // The objects' committed to-ones, and the cached rows', share their buffers where equal.
        var sharedReferences = SharedArrays<StoredReference?>(expected: inserted.count + updated.count)
        // Resolved against the objects (an insert's entity is its object's), not through a copy of the changes.
        func resolved(_ reference: ObjectReference?) -> StoredReference? {
            switch reference {
            case nil: nil
            case .stored(let stored): stored
            case .inserted(let index):
                StoredReference(entity: inserted[index].entity, rowID: result.insertedRowIDs[index])
            }
        }
        // The changes' to-one arrays share buffers where equal (writeChanges): each buffer is resolved once. (Called
        // in place, not from a nested function: one that captured the tables was checked for exclusive access.)
        var resolvedArrays = ArrayResults<ObjectReference?, [StoredReference?]>()
        // Every inserted object was saved here (the usual single store): the table is emptied at once, not by one
        // removal an object, and its room is free before the rows are cached. The batch holds the objects.
        let insertedAll = inserted.count == self.inserted.count
        if insertedAll { self.inserted.removeAll() }
        // The store is done with the inserts: their source goes, and with it its hold on each object's to-ones, which
        // then go one by one as the objects settle.
        batch.changes.inserts = []
        reserveCachedRows(for: inserted, store: store.identifier)
        for (index, object) in inserted.enumerated() {
            let id = ManagedObjectID(entity: object.entity, store: identity, rowID: result.insertedRowIDs[index])
            if object.objectID != id { rekey(object, to: id) }
            if let state = object.state, let row = state.record {
                batch.insertedReferences[index] = []
                // The row the store wrote, which the object took in place of its values as it was written (an
                // inserted object holds no other record): its committed state, as a fetched object's, and the row
                // cache's row, the same bytes. No values buffer is kept and no decoded row is made.
                state.settle(record: row, of: object.entity)
                cacheRow(row, for: object)
            } else {
                let references = resolvedArrays.result(for: batch.insertedReferences[index]) {
                    sharedReferences.shared($0.map(resolved))
                }
                batch.insertedReferences[index] = []
                // The values the store wrote (the object's, unchanged since), at the version a context's inserts ask
                // for (`StoreChanges.Insert`'s first, 1).
                settle(
                    object, values: object.persistentValues, references: references, version: 1,
                    external: result.insertedExternalReferences.isEmpty
                        ? [:] : result.insertedExternalReferences[index] ?? [:])
            }
            object.isInserted = false
            if !assignedStores.isEmpty { assignedStores[ObjectIdentifier(object)] = nil }
        }
        // Another store's inserts are left: this batch's leave in one pass (they are no longer flagged inserted).
        if !insertedAll { self.inserted.removeAll { !$0.isInserted } }
        for (index, object) in updated.enumerated() {
            // A row the store wrote from the changed fields, as a fetch would read it: the object settles onto it as a
            // fetched object reads from its record, and the row cache takes it as it is (no values decoded or kept).
            if index < result.updatedRows.count, let row = result.updatedRows[index], row.isRecord,
                !row.referencesBlobs, row.entity === object.entity, let state = object.state
            {
                state.settle(record: row, of: object.entity)
                cacheRow(row, for: object)
                self.updated[ObjectIdentifier(object)] = nil
                continue
            }
            settle(
                object, values: batch.changes.updates[index].values,
                references: resolvedArrays.result(for: batch.changes.updates[index].references) {
                    sharedReferences.shared($0.map(resolved))
                },
                version: result.updatedVersions[index],
                external: index < result.updatedExternalReferences.count ? result.updatedExternalReferences[index] : [:]
            )
            self.updated[ObjectIdentifier(object)] = nil
        }
        // Every deleted object was saved here (the usual single store): the table is emptied at once, not by one
        // removal an object (a cascade's 100,000). The objects are among `self.deleted`'s, so equal counts mean
        // the same objects.
        if deleted.count == self.deleted.count { self.deleted.removeAll() }
        for object in deleted {
            coordinator.rowCache.invalidate(RowCache.Key(object.objectID))
            // Unregistering takes it out of `self.deleted` too.
            unregister(object)
            object.isDeleted = false
        }
    }

    /// What changed in an updated object since the row record it was read from (``StoreChanges/Update/ChangedFields``),
    /// or nil when it was not read from one, or its record references blobs (such an object reads its blobs back
    /// before the save, and is written whole). A value still undecoded in the object (``ObjectState/undecoded``) is the
    /// record's: every other persistent value counts as changed. The to-ones count as changed once one of them was
    /// read (an unread one is the record's).
    private static func changedFields(of object: ManagedObject) -> StoreChanges.Update.ChangedFields? {
        guard let state = object.state, let record = state.record, record.isRecord, !record.referencesBlobs,
            record.version == state.version
        else { return nil }
        let entity = object.entity
        var values: PropertyIndexSet
        if entity.persistentAttributes.count == entity.attributes.count {
            // Storage order is attribute order.
            values = entity.persistentAttributeIndexes.subtracting(state.undecoded)
        } else {
            values = PropertyIndexSet()
            for attribute in entity.persistentAttributes where !state.undecoded.contains(attribute.index) {
                values.insert(attribute.storageIndex!)
            }
        }
        let references = entity.toOneRelationships.contains { state.relationshipValue(at: $0.index) != nil }
        return StoreChanges.Update.ChangedFields(record: record, values: values, references: references)
    }

    /// An updated object's values in storage order, for an update of its changed fields: the state's buffer itself
    /// when storage order is attribute order (no transients), its undecoded slots meaningless either way.
    private static func valueSlots(of object: ManagedObject) -> [AttributeValue?] {
        let entity = object.entity
        guard let state = object.state else { return entity.persistentAttributes.map(\.defaultValue) }
        if entity.persistentAttributes.count == entity.attributes.count { return state.values }
        return entity.persistentAttributes.map { state.values[$0.index] }
    }

    /// Makes room in the row cache for the rows of `inserted`, saved in `store`, before they are cached one by one:
    /// its tables then never grow during the save (a growing table is briefly held twice: at a million inserts, the
    /// old table was 49 MB of the save's peak).
    private func reserveCachedRows(for inserted: [ManagedObject], store: UUID) {
        // Counted by table (entity hierarchy): a save's inserts are of a handful of them, in runs.
        var counts: [(root: EntityDescription, count: Int)] = []
        var last = -1
        for object in inserted {
            let root = object.entity.rootEntity
            if last < 0 || counts[last].root !== root {
                last = counts.firstIndex { $0.root === root } ?? counts.count
                if last == counts.count { counts.append((root, 0)) }
            }
            counts[last].count += 1
        }
        for (root, count) in counts {
            coordinator.rowCache.reserveCapacity(
                forAdding: count, to: RowCache.Key(store: store, entity: root, rowID: 0))
        }
    }

    /// An object's values were saved: they are its committed state, and the row cache's.
    /// The row cache gets the row as a fault would read it: values written outside the row (`external`, by storage
    /// index) only as references, so large binary values never sit in the shared cache.
    private func settle(
        _ object: ManagedObject, values: [AttributeValue?], references: [StoredReference?], version: UInt64,
        external: [Int: UInt64]
    ) {
        object.madeState.settle(values: values, references: references, version: version)
        var row = StoredRow(entity: object.entity, version: version, values: values, references: references)
        for (storageIndex, blob) in external {
            row.values[storageIndex] = nil
            row.externalReferences[storageIndex] = blob
        }
        cacheRow(row, for: object)
    }

    /// Discards every unsaved change: inserted objects leave the context, deleted ones come back, updated ones
    /// return to their last saved values.
    public func rollback() {
        let insertedObjects = inserted.objects
        inserted.removeAll()
        for object in insertedObjects {
            object.isInserted = false
            unregister(object)
        }
        for object in Array(updated.values) + Array(deleted.values) {
            object.isDeleted = false
            restoreCommittedValues(object)
        }
        updated = [:]
        deleted = [:]
        pendingDeletions = []
        if !retainsRegisteredObjects { retainedObjects = [:] }
        // As in Core Data: the undo stack describes changes that no longer exist.
        undoManager?.removeAllActions()
        resetChanges()
        notifyTrackers { try $0.contextDidDiscardChanges() }
    }

    func restoreCommittedValues(_ object: ManagedObject) {
        guard let committed = object.committed else {
            object.turnIntoFault()
            return
        }
        for attribute in object.entity.attributes {
            object.values[attribute.index] = attribute.storageIndex.map { committed[$0] } ?? attribute.defaultValue
        }
        object.externalReferences = [:]
        for (storageIndex, blob) in object.committedExternalReferences where committed[storageIndex] == nil {
            object.externalReferences[object.entity.persistentAttributes[storageIndex].index] = blob
        }
        object.changedIndexes = []
        // Relationships become faults again: read back from the committed row and the store when next used.
        object.forgetRelationshipValues()
        object.changedRelationships = []
        object.clearBaselines()
    }

    /// Forgets every object: the context is as new. Objects held elsewhere no longer belong to it.
    public func reset() {
        for object in registry.objects {
            object.managedObjectContext = nil
            releaseCachedRow(of: object)
        }
        registry.removeAll()
        inserted.removeAll()
        updated = [:]
        deleted = [:]
        retainedObjects = [:]
        assignedStores = [:]
        pendingDeletions = []
        undoManager?.removeAllActions()
        resetChanges()
        notifyTrackers { try $0.contextDidDiscardChanges() }
    }
}

/// One store's part of a save (``ManagedObjectContext/save()``): the changes handed to the store, and the objects
/// behind them, in the same order. A class: each `batches[key]!` reads a reference, where a struct was copied whole
/// (16 retains and as many releases an object). Its tables are `@exclusivity(unchecked)`: a save is on its context's
/// thread, and each access (about six an inserted object, a runtime check of about 76 instructions each) is a single
/// read or in-place change that calls nothing reaching the batch again.
private final class SaveBatch {
    let store: any PersistentStore
    /// Whether the store records persistent history, the one reader of an update's changed keys.
    let recordsHistory: Bool
    @exclusivity(unchecked) var changes = StoreChanges()
    @exclusivity(unchecked) var inserted: [ManagedObject] = []
    /// The to-ones of each of ``inserted``, by ``RelationshipDescription/toOneIndex`` (arrays shared where equal).
    @exclusivity(unchecked) var insertedReferences: [[ObjectReference?]] = []
    /// Where each of ``inserted`` is in it, while the save names inserted objects by their positions.
    @exclusivity(unchecked) var insertedPositions = MemberPositions()
    @exclusivity(unchecked) var updated: [ManagedObject] = []
    @exclusivity(unchecked) var deleted: [ManagedObject] = []

    init(store: any PersistentStore) {
        self.store = store
        recordsHistory = store.recordsPersistentHistory
    }
}
