import Foundation

/// Optimistic-locking conflicts at save: detection through the stores, the ``MergeConflict``s the error
/// reports, and their resolution by ``ManagedObjectContext/mergePolicy`` (see ``MergePolicy`` for each
/// policy's behaviour).
///
/// The save calls ``resolveVersionConflicts(in:attempt:)`` once its changes are grouped by store and before
/// any store is written. On a conflict the policy either throws (nothing changed) or merges each conflicting
/// object with the row the store has now (values, version, relationships), and the save starts over: the
/// merged objects are validated again and written against the rows' new versions. Should another writer
/// change the rows again in between, the save merges again, at most ``maximumConflictRounds`` times.
extension ManagedObjectContext {
    /// How many times one save merges and starts over before it gives up with
    /// ``ObjectGraphError/mergeConflicts(_:)``, whatever the policy (another writer keeps changing the rows).
    static let maximumConflictRounds = 8

    /// Checks every store's changes for version conflicts and resolves them by the merge policy.
    ///
    /// - Parameters:
    ///   - batches: each store with its part of the save.
    ///   - attempt: 1 for the save's first try, one more after each resolution.
    /// - Returns: whether conflicts were resolved (the objects changed and the save must start over); false
    ///   when there were none.
    /// - Throws: ``ObjectGraphError/mergeConflicts(_:)`` when the policy does not resolve them;
    ///   ``ObjectGraphError/storage(_:)`` when a row cannot be read.
    func resolveVersionConflicts(in batches: [(any PersistentStore, StoreChanges)], attempt: Int) throws -> Bool {
        var ids: [ManagedObjectID] = []
        for (store, changes) in batches {
            do { try store.checkConflicts(changes) } catch ObjectGraphError.optimisticLockingConflict(let found) {
                ids += found
            }
        }
        guard !ids.isEmpty else { return false }
        try resolveVersionConflicts(ids, attempt: attempt)
        return true
    }

    /// Resolves the conflicts a store reported for `ids` by the merge policy (or throws): the policy's
    /// ``MergePolicy/resolve(optimisticLockingConflicts:in:)``, which a subclass may override.
    ///
    /// - Throws: what the policy throws: ``ObjectGraphError/mergeConflicts(_:)`` for the error policy, after
    ///   ``maximumConflictRounds`` attempts, and for updated objects whose row is gone under object trumps and
    ///   overwrite; in every such case before any object changes.
    func resolveVersionConflicts(_ ids: [ManagedObjectID], attempt: Int) throws {
        var conflicts: [MergeConflict] = []
        var rows: [ManagedObjectID: StoredRow?] = [:]
        for id in ids {
            guard let object = registry[id], let rowID = id.rowID else { continue }
            let store = try coordinator.store(for: id)
            let row = try store.row(rowID, of: object.entity).map { try Self.resolvingExternalValues($0, in: store) }
            rows[id] = .some(row)
            conflicts.append(conflict(for: object, row: row))
        }
        let policy: MergePolicy = attempt > Self.maximumConflictRounds ? .error : mergePolicy
        conflictRows = rows
        defer { conflictRows = [:] }
        try policy.resolve(optimisticLockingConflicts: conflicts, in: self)
        postObjectsDidChange()
    }

    /// The built-in resolution of version conflicts by `type` (``MergePolicy/resolve(optimisticLockingConflicts:in:)``):
    /// checks that every conflict can be resolved, then merges each object with the row the store has now.
    ///
    /// - Throws: ``ObjectGraphError/mergeConflicts(_:)`` for what `type` cannot resolve, before any object
    ///   changes; ``ObjectGraphError/storage(_:)`` when a row cannot be read.
    func resolveVersionConflicts(_ conflicts: [MergeConflict], type: MergePolicyType) throws {
        var found: [(object: ManagedObject, row: StoredRow?, conflict: MergeConflict)] = []
        for conflict in conflicts {
            guard let object = registry[conflict.objectID], let rowID = conflict.objectID.rowID else {
                continue
            }
            let row: StoredRow?
            if let read = conflictRows[conflict.objectID] {
                row = read
            } else {
                let store = try coordinator.store(for: conflict.objectID)
                row = try store.row(rowID, of: object.entity).map { try Self.resolvingExternalValues($0, in: store) }
            }
            found.append((object, row, conflict))
        }
        let unresolvable = found.filter { entry in
            switch type {
            case .error: true
            case .mergeByPropertyObjectTrump, .overwrite: entry.row == nil && !entry.object.isDeleted
            case .mergeByPropertyStoreTrump, .rollback: false
            }
        }
        guard unresolvable.isEmpty else { throw ObjectGraphError.mergeConflicts(unresolvable.map(\.conflict)) }
        for (object, row, _) in found {
            try resolve(object, against: row, policy: type)
        }
    }

    /// The conflict `object` has with `row` (nil: deleted in the store).
    func conflict(for object: ManagedObject, row: StoredRow?) -> MergeConflict {
        let store = object.objectID.storeIdentifier!
        let entity = object.entity
        let cached = ObjectSnapshot(
            entity: entity, version: object.version, values: object.committed ?? object.persistentValues,
            references: object.committedReferences ?? [], storeIdentifier: store)
        var changedKeys = Set<String>()
        var current: ObjectSnapshot?
        if !object.isDeleted {
            for index in object.changedIndexes where entity.attributes[index].storageIndex != nil {
                changedKeys.insert(entity.attributes[index].name)
            }
            for index in object.changedRelationships { changedKeys.insert(entity.relationships[index].name) }
            let references = entity.toOneRelationships.map { relationship -> StoredReference? in
                guard let value = object.relationshipValue(at: relationship.index) else {
                    return object.committedReferences?[relationship.toOneIndex!] ?? nil
                }
                guard case .toOne(let target?) = value, let rowID = target.objectID.rowID else { return nil }
                return StoredReference(entity: target.entity, rowID: rowID)
            }
            current = ObjectSnapshot(
                entity: entity, version: object.version, values: object.persistentValues, references: references,
                storeIdentifier: store)
        }
        return MergeConflict(
            objectID: object.objectID, isDeletion: object.isDeleted, changedKeys: changedKeys,
            objectSnapshot: current, cachedSnapshot: cached,
            persistedSnapshot: row.map {
                ObjectSnapshot(
                    entity: $0.entity, version: $0.version, values: $0.values, references: $0.references,
                    storeIdentifier: store)
            })
    }

    /// The row with every binary value kept outside it read in, so that it compares with objects' values.
    static func resolvingExternalValues(_ row: StoredRow, in store: any PersistentStore) throws -> StoredRow {
        var row = row
        for (storageIndex, blob) in row.externalReferences where row.values[storageIndex] == nil {
            row.values[storageIndex] = .data(try store.externalData(blob))
        }
        return row
    }

    // MARK: - Resolution

    /// Merges one conflicting object with its row by `policy` (any but ``MergePolicy/error``).
    private func resolve(_ object: ManagedObject, against row: StoredRow?, policy: MergePolicyType) throws {
        let key = ObjectIdentifier(object)
        guard let row else {
            // The row is gone: a deletion is done, and (store trumps, rollback) an update gives way to it.
            if object.isDeleted {
                deleted[key] = nil
                coordinator.rowCache.invalidate(RowCache.Key(object.objectID))
                unregister(object)
                object.isDeleted = false
            } else {
                invalidate(object)
            }
            return
        }
        if object.isDeleted {
            switch policy {
            case .mergeByPropertyStoreTrump, .rollback:
                // The store's update wins over the deletion: the object comes back as the row now is.
                deleted[key] = nil
                object.isDeleted = false
                pendingDeletions.removeAll { $0 === object }
                cacheRow(row, for: object)
                object.turnIntoFault()
                changes.refreshed.insert(object.objectID)
            case .mergeByPropertyObjectTrump, .overwrite, .error:
                // The deletion wins: it is written against the row's new version.
                object.version = row.version
            }
            return
        }
        try mergeAttributes(of: object, with: row, policy: policy)
        try mergeToOnes(of: object, with: row, policy: policy)
        try mergeJoinTableToManys(of: object, policy: policy)
        // The merge changed the object: the save calls its willSave() again before writing it.
        object.changeCount &+= 1
        object.committed = row.values
        object.committedReferences = row.references
        object.committedExternalReferences = row.externalReferences
        object.version = row.version
        cacheRow(row, for: object)
        changes.refreshed.insert(object.objectID)
        if !object.hasChangedProperties {
            updated[key] = nil
            if !retainsRegisteredObjects { retainedObjects[key] = nil }
        }
    }

    /// Whether the object's value of a property stays, by policy, given who changed it.
    private static func keepsObjectValue(policy: MergePolicyType, objectChanged: Bool, storeChanged: Bool) -> Bool {
        switch policy {
        case .mergeByPropertyStoreTrump: !storeChanged
        case .mergeByPropertyObjectTrump: objectChanged
        case .overwrite: true
        case .rollback, .error: false
        }
    }

    private func mergeAttributes(of object: ManagedObject, with row: StoredRow, policy: MergePolicyType) throws {
        let cached = object.committed ?? row.values
        for attribute in object.entity.persistentAttributes {
            let (index, storageIndex) = (attribute.index, attribute.storageIndex!)
            let stored = row.value(atStorageIndex: storageIndex)
            let keeps = Self.keepsObjectValue(
                policy: policy, objectChanged: object.changedIndexes.contains(index),
                storeChanged: stored != cached[storageIndex])
            let old = object.values[index]
            if !keeps { object.values[index] = stored }
            object.externalReferences[index] = nil
            if object.values[index] == stored {
                object.changedIndexes.remove(index)
                object.attributeBaselines[index] = nil
            } else {
                object.changedIndexes.insert(index)
            }
            if object.values[index] != old {
                for observer in (object.observers[attribute.name] ?? [:]).values { observer(object) }
            }
        }
    }

    /// To-ones live in the row: they merge like attributes. The in-memory inverse sides of the old and new
    /// targets follow (without counting as changes).
    private func mergeToOnes(of object: ManagedObject, with row: StoredRow, policy: MergePolicyType) throws {
        let cached = object.committedReferences ?? row.references
        for relationship in object.entity.toOneRelationships {
            let (index, toOneIndex) = (relationship.index, relationship.toOneIndex!)
            let stored = row.reference(atToOneIndex: toOneIndex)
            let objectChanged = object.changedRelationships.contains(index)
            let keeps = Self.keepsObjectValue(
                policy: policy, objectChanged: objectChanged, storeChanged: stored != cached[toOneIndex])
            let current: ManagedObject?? =
                if case .toOne(let target) = object.relationshipValue(at: index) { .some(target) } else { nil }
            if keeps {
                // Overwrite writes the cached target back over the store's.
                guard !objectChanged, cached[toOneIndex] != stored else { continue }
                let target = cached[toOneIndex].map { self.object(with: object.objectID(of: $0)) }
                object.setRelationshipValue(.toOne(target), at: index)
                object.changedRelationships.insert(index)
                moveInverse(of: object, through: relationship, from: stored, to: target)
            } else {
                guard objectChanged || cached[toOneIndex] != stored else { continue }
                // A fault again: it reads the store's reference from the committed row.
                object.setRelationshipValue(nil, at: index)
                object.changedRelationships.remove(index)
                object.relationshipBaselines[index] = nil
                let target = stored.flatMap { registry[object.objectID(of: $0)] }
                if let inverse = relationship.inverseRelationship {
                    // The old target: the one read, or for a to-one never read the registered object the cached
                    // row names, whose to-many, read, may list this object.
                    let old: ManagedObject? =
                        if case .some(let read) = current {
                            read
                        } else {
                            cached[toOneIndex].flatMap { registry[object.objectID(of: $0)] }
                        }
                    if let old { Self.detach(object, from: old, through: inverse) }
                    if let target { Self.attach(object, to: target, through: inverse) }
                }
            }
        }
    }

    /// The inverse sides when a to-one moves from the store's target to `target`.
    private func moveInverse(
        of object: ManagedObject, through relationship: RelationshipDescription, from stored: StoredReference?,
        to target: ManagedObject?
    ) {
        guard let inverse = relationship.inverseRelationship else { return }
        if let stored, let old = registry[object.objectID(of: stored)] {
            Self.detach(object, from: old, through: inverse)
        }
        if let target { Self.attach(object, to: target, through: inverse) }
    }

    /// Removes `object` from `target`'s in-memory side of `inverse` (a fault stays a fault).
    private static func detach(
        _ object: ManagedObject, from target: ManagedObject, through inverse: RelationshipDescription
    ) {
        switch target.relationshipValue(at: inverse.index) {
        case .toOne(let back) where back === object: target.setRelationshipValue(.toOne(nil), at: inverse.index)
        case .toMany(var members):
            members.remove(object)
            target.setRelationshipValue(.toMany(members), at: inverse.index)
        default: break
        }
    }

    /// Adds `object` to `target`'s in-memory side of `inverse` (a fault stays a fault).
    private static func attach(
        _ object: ManagedObject, to target: ManagedObject, through inverse: RelationshipDescription
    ) {
        switch target.relationshipValue(at: inverse.index) {
        case .toOne: target.setRelationshipValue(.toOne(object), at: inverse.index)
        case .toMany(var members):
            members.append(object)
            target.setRelationshipValue(.toMany(members), at: inverse.index)
        case nil: break
        }
    }

    /// To-manys kept in join tables: the object's added and removed members apply to the store's membership
    /// (see ``MergePolicy``). To-manys kept as the other side's foreign key are not this row's: nothing to merge.
    private func mergeJoinTableToManys(of object: ManagedObject, policy: MergePolicyType) throws {
        guard let rowID = object.objectID.rowID else { return }
        let store = try coordinator.store(for: object.objectID)
        for relationship in object.entity.relationships where relationship.isToMany {
            guard case .joinTable = relationship.storage else { continue }
            let index = relationship.index
            guard object.changedRelationships.contains(index) else {
                // Unchanged here: read again from the store when next used (its inverse is a join table too).
                if policy != .overwrite { object.setRelationshipValue(nil, at: index) }
                continue
            }
            if policy == .overwrite { continue }
            var baseline = RelatedObjects()
            if case .toMany(let members) = object.relationshipBaselines[index] { baseline = members }
            var mine = RelatedObjects()
            if case .toMany(let members) = object.relationshipValue(at: index) { mine = members }
            guard policy != .rollback else {
                object.setRelationshipValue(nil, at: index)
                object.changedRelationships.remove(index)
                object.relationshipBaselines[index] = nil
                // The members' sides gave up the object's additions and removals too (their own save would
                // write them).
                if let inverse = relationship.inverseRelationship {
                    for member in mine.objects where !baseline.contains(member) {
                        Self.detach(object, from: member, through: inverse)
                    }
                    for member in baseline.objects where !mine.contains(member) {
                        Self.attach(object, to: member, through: inverse)
                    }
                }
                continue
            }
            let stored = try store.relatedObjects(
                through: relationship, of: StoredReference(entity: object.entity, rowID: rowID)
            ).map { self.object(with: object.objectID(of: $0)) }
            let storeMembers = RelatedObjects(stored)
            var merged = RelatedObjects()
            if policy == .mergeByPropertyStoreTrump {
                for member in stored where !(baseline.contains(member) && !mine.contains(member)) {
                    merged.append(member)
                }
                for member in mine.objects where !baseline.contains(member) { merged.append(member) }
            } else {
                for member in mine.objects where !(baseline.contains(member) && !storeMembers.contains(member)) {
                    merged.append(member)
                }
                for member in stored where !baseline.contains(member) { merged.append(member) }
            }
            object.setRelationshipValue(.toMany(merged), at: index)
            // Members that joined or left in the store: their in-memory inverse is read again when next used.
            if let inverse = relationship.inverseRelationship {
                for member in stored
                where !baseline.contains(member) && !member.changedRelationships.contains(inverse.index) {
                    member.setRelationshipValue(nil, at: inverse.index)
                }
                for member in baseline.objects
                where !storeMembers.contains(member) && !member.changedRelationships.contains(inverse.index) {
                    member.setRelationshipValue(nil, at: inverse.index)
                }
            }
        }
    }
}
