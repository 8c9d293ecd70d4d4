import Foundation

/// Derived attributes kept up to date by batch requests, as Core Data's SQLite store keeps them (with triggers) when
/// a batch insert, update or delete changes their inputs: the same values a save through objects
/// (``ManagedObjectContext/updateDerivedAttributes(now:)``) would give, computed on rows.
///
/// 1. Each row the batch inserts or updates gets all its derived values from its values after the batch (`now()`
///    is the batch's date; a new row has no related objects yet).
/// 2. Each owner, a row whose derivation reads a changed row through its first relationship step (a department's
///    `employees.@count` for an employee inserted, updated or deleted), is found through the inverse of that step
///    as the changed row stores it, and gets the values of its derivations that read relationships; it is written
///    (an update in the batch's transaction, with the version it was read at) only when one of them changed.
///
/// Related rows are read as the batch leaves them: the batch's own updates overlay the store's rows, and its
/// deletes are gone.
struct BatchDerivation {
    let store: any PersistentStore
    let now: Date
    /// Updated rows' values after the batch, by row.
    private var updated: [StoredReference: [AttributeValue?]] = [:]
    private var deleted: Set<StoredReference> = []

    init(store: any PersistentStore, now: Date) {
        self.store = store
        self.now = now
    }

    /// Whether batch changes to `entity`'s rows can change a derived value: it has derived attributes, or a derived
    /// attribute of another entity reads it through a relationship.
    static func matters(for entity: EntityDescription, in model: ManagedObjectModel) -> Bool {
        guard model.hasDerivedAttributes else { return false }
        return entity.allEntitiesInHierarchyBelow.contains { concrete in
            !concrete.derivedAttributes.isEmpty
                || concrete.relationships.contains {
                    $0.inverseRelationship.map(ManagedObjectContext.readsFirst) ?? false
                }
        }
    }

    /// Adds the derived values of `changes` to it (step 1) and the owners' updates (step 2). Called before the
    /// store applies `changes`: the rows it deletes are still there to say where their owners are.
    ///
    /// - Throws: ``ValidationError/valueTooLarge(object:key:value:limit:)`` (or `valueTooSmall`) when an aggregate
    ///   does not fit its integer attribute; ``ObjectGraphError/storage(_:)``.
    mutating func apply(to changes: inout StoreChanges) throws {
        for update in changes.updates {
            updated[StoredReference(entity: update.entity, rowID: update.rowID)] = update.values
        }
        for delete in changes.deletes { deleted.insert(StoredReference(entity: delete.entity, rowID: delete.rowID)) }
        // 1. The rows written.
        for position in changes.inserts.indices {
            let insert = changes.inserts[position]
            for attribute in insert.entity.derivedAttributes {
                changes.inserts[position].values[attribute.storageIndex!] = try value(
                    of: attribute, for: nil, entity: insert.entity, values: insert.values,
                    references: Array(repeating: nil, count: insert.entity.toOneRelationships.count))
            }
        }
        var due = Set<StoredReference>()
        var written = Set(updated.keys)
        for position in changes.updates.indices {
            let update = changes.updates[position]
            let reference = StoredReference(entity: update.entity, rowID: update.rowID)
            let references = update.references.map(stored)
            for attribute in update.entity.derivedAttributes {
                let value = try value(
                    of: attribute, for: reference, entity: update.entity, values: update.values, references: references)
                if value != update.values[attribute.storageIndex!] {
                    changes.updates[position].values[attribute.storageIndex!] = value
                    if !changes.updates[position].changedKeys.contains(attribute.name) {
                        changes.updates[position].changedKeys.append(attribute.name)
                    }
                }
            }
            updated[reference] = changes.updates[position].values
            due.formUnion(try owners(of: reference, references: references))
        }
        for delete in changes.deletes {
            // Read before the batch deletes it: what it relates to is where its owners are.
            let reference = StoredReference(entity: delete.entity, rowID: delete.rowID)
            guard let row = try store.row(delete.rowID, of: delete.entity) else { continue }
            due.formUnion(try owners(of: reference, references: row.references))
        }
        // 2. The owners not otherwise written.
        for owner in due.sorted(by: { $0.rowID < $1.rowID }) where !deleted.contains(owner) {
            guard written.insert(owner).inserted, let row = try store.row(owner.rowID, of: owner.entity) else {
                continue
            }
            var values = try BatchDerivation.fullValues(of: row, in: store)
            var changedKeys: [String] = []
            for attribute in row.entity.derivedAttributes where attribute.derivation != .now {
                let value = try value(
                    of: attribute, for: owner, entity: row.entity, values: values, references: row.references)
                if value != values[attribute.storageIndex!] {
                    values[attribute.storageIndex!] = value
                    changedKeys.append(attribute.name)
                }
            }
            guard !changedKeys.isEmpty else { continue }
            changes.updates.append(
                StoreChanges.Update(
                    entity: row.entity, rowID: owner.rowID, values: values, expectedVersion: row.version,
                    references: row.references.map { $0.map(ObjectReference.stored) }, changedKeys: changedKeys))
        }
    }

    /// A row's values with those kept outside it (blobs) read back in, so that rewriting the row keeps them.
    static func fullValues(of row: StoredRow, in store: any PersistentStore) throws -> [AttributeValue?] {
        var values = row.values
        for (storageIndex, blob) in row.externalReferences {
            values[storageIndex] = try RowCoder.value(
                from: .bytes(Array(store.externalData(blob))), of: row.entity.persistentAttributes[storageIndex])
        }
        return values
    }

    /// The rows whose derivations read `reference` through their first step: at the other end of each of its
    /// relationships whose inverse such a derivation starts with.
    private func owners(of reference: StoredReference, references: [StoredReference?]) throws -> [StoredReference] {
        var owners: [StoredReference] = []
        for relationship in reference.entity.relationships {
            guard let inverse = relationship.inverseRelationship, ManagedObjectContext.readsFirst(inverse) else {
                continue
            }
            if let index = relationship.toOneIndex {
                if let owner = references[index] { owners.append(owner) }
            } else {
                owners += try store.relatedObjects(through: relationship, of: reference)
            }
        }
        return owners
    }

    /// The value `attribute`'s derivation gives for a row (`reference` nil: a row being inserted, which has no
    /// related rows yet).
    private func value(
        of attribute: AttributeDescription, for reference: StoredReference?, entity: EntityDescription,
        values: [AttributeValue?], references: [StoredReference?]
    ) throws -> AttributeValue? {
        let id = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, rowID: reference?.rowID ?? 0)
        switch attribute.derivation! {
        case .now:
            return .date(now)
        case .keyPath(let path):
            var (current, currentValues, currentReferences) = (entity, values, references)
            for step in path.dropLast() {
                let relationship = current.relationshipsByName[step]!
                guard let next = currentReferences[relationship.toOneIndex!], let row = try self.row(next) else {
                    return nil
                }
                (current, currentValues, currentReferences) = (row.entity, row.values, row.references)
            }
            let target = current.attributesByName[path.last!]!
            return currentValues[target.storageIndex!]
        case .aggregate(let function, let relationshipName, let attributeName):
            guard let reference else {
                return try ManagedObjectContext.aggregate(function, count: 0, values: [], as: attribute, of: id)
            }
            let relationship = entity.relationshipsByName[relationshipName]!
            let members = try store.relatedObjects(through: relationship, of: reference).filter {
                !deleted.contains($0)
            }
            var memberValues: [AttributeValue?] = []
            if let attributeName {
                for member in members {
                    guard let row = try row(member) else { continue }
                    memberValues.append(
                        row.value(atStorageIndex: row.entity.attributesByName[attributeName]!.storageIndex!))
                }
            }
            return try ManagedObjectContext.aggregate(
                function, count: members.count, values: memberValues, as: attribute, of: id)
        }
    }

    /// A related row as the batch leaves it (nil when deleted or missing), with its blob values read in.
    private func row(_ reference: StoredReference) throws -> StoredRow? {
        guard !deleted.contains(reference), var row = try store.row(reference.rowID, of: reference.entity) else {
            return nil
        }
        if let values = updated[reference] {
            row.values = values
        } else {
            row.values = try BatchDerivation.fullValues(of: row, in: store)
        }
        return row
    }

    /// A batch's reference as a stored one (batch requests never name rows they insert).
    private func stored(_ reference: ObjectReference?) -> StoredReference? {
        guard case .stored(let stored)? = reference else { return nil }
        return stored
    }
}
