/// Uniqueness constraints at save: finding the objects of the save that share a ``UniquenessConstraint``'s
/// values with each other or with a stored row, and resolving them by ``ManagedObjectContext/mergePolicy``.
///
/// The save calls ``resolveConstraintConflicts(attempt:)`` after version conflicts are resolved (as Core Data
/// does) and before any store is written. What each policy does with the objects that share values (Core
/// Data's constraint-conflict resolution, where a duplicate insert becomes an update of the existing object):
///
/// 1. One object *survives*: the object whose row already holds the values (fetched into the context), else
///    the updated object of the save that holds them, else the first inserted one.
/// 2. Every other object of the group is an inserted *duplicate*. Object trumps copies each duplicate's
///    non-nil attribute values onto the survivor (in insertion order, so the last inserted wins); overwrite
///    copies all of them, nils included; store trumps and rollback keep the survivor's values.
/// 3. Object trumps, overwrite and store trumps hand the duplicate's relationships to the survivor (to-one
///    targets, store trumps only where the survivor has none; to-many members are added), so that objects
///    related to the duplicate are related to the survivor; rollback does not.
/// 4. The duplicates are deleted from the context (an unsaved insert just goes; its delete rules run).
/// 5. An updated object whose new values another row (or another updated object of the save) holds cannot
///    become that row: store trumps and rollback give the object back its saved values of the constrained
///    attributes; object trumps and overwrite report the conflict.
extension ManagedObjectContext {
    /// Objects of the save sharing one constraint's values.
    struct ConstraintGroup {
        var constraint: UniquenessConstraint
        var key: [AttributeValue]
        var objects: [ManagedObject]
        var database: (id: ManagedObjectID, row: StoredRow)?
    }

    /// Checks the save's inserted objects (and updated objects whose constrained values changed) against
    /// each other and the stores, and resolves what it finds by the merge policy.
    ///
    /// - Parameter attempt: 1 for the save's first try, one more after each resolution.
    /// - Returns: whether objects changed (the save must start over); false when nothing conflicts.
    /// - Throws: ``ObjectGraphError/constraintConflicts(_:)`` when the policy does not resolve them, before
    ///   any object changes; ``ObjectGraphError/storage(_:)`` when a store cannot be read.
    func resolveConstraintConflicts(attempt: Int) throws -> Bool {
        let groups = try constraintGroups()
        guard !groups.isEmpty else { return false }
        let policy: MergePolicy = attempt > Self.maximumConflictRounds ? .error : mergePolicy
        let conflicts = groups.map(conflict(for:))
        constraintGroupsByConflict = Dictionary(zip(conflicts, groups)) { first, _ in first }
        defer { constraintGroupsByConflict = [:] }
        try policy.resolve(constraintConflicts: conflicts, in: self)
        return true
    }

    /// The built-in resolution of constraint conflicts by `type` (``MergePolicy/resolve(constraintConflicts:in:)``):
    /// checks that every conflict can be resolved, then resolves each (steps 1 to 5 above). Conflicts this save
    /// did not report are ignored.
    ///
    /// - Throws: ``ObjectGraphError/constraintConflicts(_:)`` for what `type` cannot resolve, before any object
    ///   changes; ``ObjectGraphError/storage(_:)``.
    func resolveConstraintConflicts(_ conflicts: [ConstraintConflict], type: MergePolicyType) throws {
        let groups = conflicts.compactMap { constraintGroupsByConflict[$0] }
        let unresolvable = groups.filter { group in
            switch type {
            case .error: return true
            case .mergeByPropertyObjectTrump, .overwrite: return group.objects.contains { !$0.isInserted }
            case .mergeByPropertyStoreTrump, .rollback: return false
            }
        }
        guard unresolvable.isEmpty else {
            throw ObjectGraphError.constraintConflicts(unresolvable.map(conflict(for:)))
        }
        for group in groups { try resolve(group, policy: type) }
    }

    private func conflict(for group: ConstraintGroup) -> ConstraintConflict {
        var values: [String: AttributeValue] = [:]
        for (attribute, value) in zip(group.constraint.attributes, group.key) { values[attribute.name] = value }
        return ConstraintConflict(
            constraint: group.constraint, values: values, objectIDs: group.objects.map(\.objectID),
            databaseObjectID: group.database?.id,
            databaseSnapshot: group.database.map { id, row in
                ObjectSnapshot(
                    entity: row.entity, version: row.version, values: row.values, references: row.references,
                    storeIdentifier: id.storeIdentifier!)
            })
    }

    /// The groups of objects that break a constraint.
    private func constraintGroups() throws -> [ConstraintGroup] {
        // A model without constraints has nothing to check: no walk over every change of the save.
        guard coordinator.model.entities.contains(where: { !$0.uniquenessConstraints.isEmpty }) else { return [] }
        // The objects to check, by constraint: inserts, and updates that changed a constrained attribute.
        var checked: [UniquenessConstraint: [ManagedObject]] = [:]
        var constraints: [UniquenessConstraint] = []
        // Only objects of constrained entities are ordered: sorting every update of a save whose model has no
        // constraint was 5% of W7.graph's samples.
        let constrained = { (object: ManagedObject) in !object.entity.uniquenessConstraints.isEmpty }
        let updates = updated.values.filter(constrained).sorted { $0.objectID.precedes($1.objectID) }
        let inserts = inserted.objects.filter(constrained)
        for object in inserts + updates {
            for constraint in object.entity.uniquenessConstraints {
                if !object.isInserted,
                    !constraint.attributes.contains(where: { object.changedIndexes.contains($0.index) })
                {
                    continue
                }
                if checked[constraint] == nil { constraints.append(constraint) }
                checked[constraint, default: []].append(object)
            }
        }
        guard !constraints.isEmpty else { return [] }
        // Rows whose stored values do not count: deleted by this save, or checked with their new values.
        let deletedIDs = Set(deleted.values.map(\.objectID))
        var groups: [ConstraintGroup] = []
        for constraint in constraints {
            let objects = checked[constraint]!
            let leaving = deletedIDs.union(objects.map(\.objectID))
            var keys: [[AttributeValue]] = []
            var byKey: [[AttributeValue]: [ManagedObject]] = [:]
            for object in objects {
                guard let key = constraint.key(of: object.persistentValues) else { continue }
                if byKey[key] == nil { keys.append(key) }
                byKey[key, default: []].append(object)
            }
            for key in keys {
                let members = byKey[key]!
                var database: (id: ManagedObjectID, row: StoredRow)?
                var searched = Set<ObjectIdentifier>()
                for member in members {
                    let store =
                        try member.objectID.isTemporaryID
                        ? assignedStores[ObjectIdentifier(member)] ?? coordinator.defaultStore(for: member.entity)
                        : coordinator.store(for: member.objectID)
                    guard searched.insert(ObjectIdentifier(store)).inserted else { continue }
                    for (rowID, row) in try store.rows(matching: constraint, values: key) {
                        let id = ManagedObjectID(entity: row.entity, storeIdentifier: store.identifier, rowID: rowID)
                        if !leaving.contains(id) {
                            database = (id, row)
                            break
                        }
                    }
                    if database != nil { break }
                }
                if members.count > 1 || database != nil {
                    groups.append(
                        ConstraintGroup(constraint: constraint, key: key, objects: members, database: database))
                }
            }
        }
        return groups
    }

    /// Resolves one group by `policy` (not ``MergePolicy/error``; object trumps and overwrite only for groups
    /// of inserted objects).
    private func resolve(_ group: ConstraintGroup, policy: MergePolicyType) throws {
        var duplicates = group.objects.filter(\.isInserted)
        var updatedObjects = group.objects.filter { !$0.isInserted }
        let survivor: ManagedObject
        if let database = group.database {
            survivor = try existingObject(with: database.id)
        } else if !updatedObjects.isEmpty {
            survivor = updatedObjects.removeFirst()
        } else {
            survivor = duplicates.removeFirst()
        }
        // Updated objects cannot become another row: they keep their saved values of the constraint.
        for object in updatedObjects {
            for attribute in group.constraint.attributes {
                let saved = object.committed?[attribute.storageIndex!] ?? nil
                try object.setAttributeValue(saved, forKey: attribute.name)
            }
        }
        try survivor.fulfillFaultIfNeeded()
        for duplicate in duplicates {
            switch policy {
            case .mergeByPropertyObjectTrump, .overwrite:
                for attribute in duplicate.entity.persistentAttributes
                where survivor.entity.attributesByName[attribute.name] === attribute {
                    let value = duplicate.values[attribute.index]
                    if value == nil && policy == .mergeByPropertyObjectTrump { continue }
                    if survivor.values[attribute.index] != value {
                        try survivor.setAttributeValue(value, forKey: attribute.name)
                    }
                }
            case .mergeByPropertyStoreTrump, .rollback, .error:
                break
            }
            if policy != .rollback { try handOverRelationships(of: duplicate, to: survivor, policy: policy) }
            delete(duplicate)
        }
        try processPendingChanges(propagatingDeletes: true)
    }

    /// Relates the duplicate's related objects to the survivor instead (see step 3 above).
    private func handOverRelationships(
        of duplicate: ManagedObject, to survivor: ManagedObject, policy: MergePolicyType
    ) throws {
        for relationship in duplicate.entity.relationships
        where survivor.entity.relationshipsByName[relationship.name] === relationship {
            if relationship.isToMany {
                for member in try duplicate.toManyValue(relationship).objects {
                    try survivor.addMember(relationship, member)
                }
            } else if let target = try duplicate.toOneValue(relationship) {
                if policy == .mergeByPropertyStoreTrump, try survivor.toOneValue(relationship) != nil { continue }
                try survivor.setToOne(relationship, target)
            }
        }
    }
}
