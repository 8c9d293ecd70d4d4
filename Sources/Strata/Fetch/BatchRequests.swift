import Foundation
import StrataQuery

/// What a batch request returns (`NSBatchInsertResult`, `NSBatchUpdateResult`, `NSBatchDeleteResult`).
public enum BatchResultType: Sendable, Hashable {
    /// The number of objects affected.
    case count
    /// The affected objects' IDs too, so that contexts can merge the change.
    case objectIDs
}

/// What a batch request did: how many objects it affected and, when asked, which.
public struct BatchResult: Sendable {
    /// The number of objects inserted, updated or deleted.
    public var count: Int
    /// Their IDs, when the request's result type is ``BatchResultType/objectIDs`` (else empty).
    public var objectIDs: [ManagedObjectID]
}

/// Inserts objects straight into a store from dictionaries of attribute values (`NSBatchInsertRequest`):
/// no object is made or registered, no validation runs, relationships are not set. Derived attributes are computed
/// (``BatchDerivation``), as for every batch request.
///
/// For example:
/// ```swift
/// let insert = BatchInsertRequest(entityName: "Employee", objects: [["name": "Ada", "salary": 100]])
/// let result = try context.execute(insert)
/// ```
public final class BatchInsertRequest {
    /// The entity of the new objects (a concrete one).
    public let entityName: String
    /// One dictionary of attribute values per object; missing attributes get their default values.
    public var objects: [[String: Any]]
    /// Whether to return the new objects' IDs (default: the count only).
    public var resultType: BatchResultType = .count

    /// Creates a batch insert.
    ///
    /// - Parameters:
    ///   - entityName: the entity of the new objects.
    ///   - objects: their attribute values, as for ``ManagedObject/setValue(_:forKey:)``.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objects = objects
    }
}

/// Sets attributes of every object that matches a predicate, in the stores (`NSBatchUpdateRequest`): no
/// object is made or registered, no validation runs; rows get new versions, so contexts holding the
/// objects see a conflict if they save them without merging. Derived attributes are kept up to date as a save keeps
/// them: the updated rows' own, and their owners' (a department's `staff.salary.@sum`), in the same transaction.
public final class BatchUpdateRequest {
    /// The entity whose objects are updated.
    public let entityName: String
    /// Which objects (nil: all).
    public var predicate: ObjectPredicate?
    /// Whether objects of subentities are updated too (default true).
    public var includesSubentities = true
    /// The new values, by attribute name (nil or `Optional<Any>.none` to clear).
    public var propertiesToUpdate: [String: Any?]
    /// Whether to return the updated objects' IDs (default: the count only).
    public var resultType: BatchResultType = .count

    /// Creates a batch update.
    ///
    /// - Parameters:
    ///   - entityName: the entity whose objects are updated.
    ///   - predicate: which objects (nil: all).
    ///   - propertiesToUpdate: the new values, by attribute name.
    public init(entityName: String, predicate: ObjectPredicate? = nil, propertiesToUpdate: [String: Any?]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Deletes every object that matches a predicate, in the stores (`NSBatchDeleteRequest`): no object is
/// made or registered and delete rules do not run (join-table links of the deleted rows go with them).
public final class BatchDeleteRequest {
    /// The entity whose objects are deleted.
    public let entityName: String
    /// Which objects (nil: all).
    public var predicate: ObjectPredicate?
    /// Whether objects of subentities are deleted too (default true).
    public var includesSubentities = true
    /// Whether to return the deleted objects' IDs (default: the count only).
    public var resultType: BatchResultType = .count

    /// Creates a batch delete.
    ///
    /// - Parameters:
    ///   - entityName: the entity whose objects are deleted.
    ///   - predicate: which objects (nil: all).
    public init(entityName: String, predicate: ObjectPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// Creates a batch delete of the objects with these IDs (`NSBatchDeleteRequest(objectIDs:)`).
    ///
    /// - Parameter objectIDs: permanent IDs of objects of one entity hierarchy (at least one).
    public convenience init(objectIDs: [ManagedObjectID]) {
        precondition(!objectIDs.isEmpty, "a batch delete by IDs needs at least one ID")
        self.init(
            entityName: objectIDs[0].entity.rootEntity.name,
            predicate: .comparison(
                PredicateComparison(.evaluatedObject, .in, .constant(.array(objectIDs.map(\.queryValue))))))
    }
}

extension ManagedObjectContext {
    /// Runs a batch insert in the coordinator's first store, in one transaction.
    ///
    /// - Returns: how many objects were inserted, and their IDs when asked.
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``; ``FetchRequestError/invalidValue(key:entity:reason:)``
    ///   for an unknown attribute or a value of the wrong type (nothing is inserted then);
    ///   ``ObjectGraphError/noStore(entity:)``; ``ObjectGraphError/storage(_:)``.
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        guard let entity = coordinator.model.entity(named: request.entityName) else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        precondition(!entity.isAbstract, "\(entity.name) is abstract: it has no objects of its own")
        let store = try coordinator.defaultStore(for: entity)
        var changes = StoreChanges(transactionAuthor: transactionAuthor, contextName: name)
        for object in request.objects {
            var values = entity.persistentAttributes.map(\.defaultValue)
            for (key, value) in object {
                guard let attribute = entity.attributesByName[key], let index = attribute.storageIndex else {
                    throw FetchRequestError.invalidValue(
                        key: key, entity: entity.name, reason: "no such stored attribute")
                }
                values[index] = try Self.batchValue(value, for: attribute, of: entity)
            }
            changes.inserts.append(StoreChanges.Insert(entity: entity, values: values, rowID: nil))
        }
        guard !changes.inserts.isEmpty else { return BatchResult(count: 0, objectIDs: []) }
        if BatchDerivation.matters(for: entity, in: coordinator.model) {
            var derivation = BatchDerivation(store: store, now: Date())
            try derivation.apply(to: &changes)
        }
        let saved = try store.save(changes)
        return BatchResult(
            count: saved.insertedRowIDs.count,
            objectIDs: request.resultType == .objectIDs
                ? saved.insertedRowIDs.map {
                    ManagedObjectID(entity: entity, storeIdentifier: store.identifier, rowID: $0)
                }
                : [])
    }

    /// Runs a batch update in every store: the matching rows are found by the store's query (without
    /// objects), then rewritten in one transaction per store with their new values and new versions.
    /// Cached rows of the updated objects are dropped from the coordinator's row cache; registered objects
    /// keep their values until refreshed or merged.
    ///
    /// - Returns: how many objects were updated, and their IDs when asked.
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``; ``FetchRequestError/invalidValue(key:entity:reason:)``;
    ///   ``ObjectGraphError/optimisticLockingConflict(_:)`` when a row changed between the query and the write
    ///   (nothing of that store is written); ``ObjectGraphError/storage(_:)``; `PredicateEvaluationError`.
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        guard let entity = coordinator.model.entity(named: request.entityName) else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        var ids: [ManagedObjectID] = []
        for store in coordinator.persistentStores {
            var query = StoreFetchRequest(entity: entity)
            query.includesSubentities = request.includesSubentities
            query.predicate = request.predicate
            let found = try store.fetch(query)
            var changes = StoreChanges(transactionAuthor: transactionAuthor, contextName: name)
            for (reference, row) in zip(found.references, found.rows) {
                // Values kept outside the row come back in, so that the rewrite keeps them.
                var values = try BatchDerivation.fullValues(of: row, in: store)
                for (key, value) in request.propertiesToUpdate {
                    guard let attribute = reference.entity.attributesByName[key], let index = attribute.storageIndex
                    else {
                        throw FetchRequestError.invalidValue(
                            key: key, entity: reference.entity.name, reason: "no such stored attribute")
                    }
                    values[index] = try Self.batchValue(value, for: attribute, of: reference.entity)
                }
                changes.updates.append(
                    StoreChanges.Update(
                        entity: reference.entity, rowID: reference.rowID, values: values, expectedVersion: row.version,
                        references: row.references.map { $0.map { ObjectReference.stored($0) } },
                        changedKeys: request.propertiesToUpdate.keys.sorted()))
                ids.append(
                    ManagedObjectID(entity: reference.entity, storeIdentifier: store.identifier, rowID: reference.rowID)
                )
            }
            guard !changes.updates.isEmpty else { continue }
            let matched = changes.updates.count
            if BatchDerivation.matters(for: entity, in: coordinator.model) {
                var derivation = BatchDerivation(store: store, now: Date())
                try derivation.apply(to: &changes)
            }
            _ = try store.save(changes)
            // Owners whose derived values changed were rewritten too.
            for update in changes.updates[matched...] {
                let id = ManagedObjectID(entity: update.entity, storeIdentifier: store.identifier, rowID: update.rowID)
                coordinator.rowCache.invalidate(RowCache.Key(id))
            }
        }
        for id in ids { coordinator.rowCache.invalidate(RowCache.Key(id)) }
        return BatchResult(count: ids.count, objectIDs: request.resultType == .objectIDs ? ids : [])
    }

    /// Runs a batch delete in every store: the matching rows' IDs and versions are found by the store's
    /// query (no row decoded unless the predicate reads it), then deleted in one transaction per store.
    /// Cached rows of the deleted objects are dropped; registered objects stay until merged or refreshed
    /// (firing one that is a fault throws ``ObjectGraphError/objectInaccessible(_:)``).
    ///
    /// - Returns: how many objects were deleted, and their IDs when asked.
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)``; ``ObjectGraphError/optimisticLockingConflict(_:)`` when
    ///   a row changed between the query and the write; ``ObjectGraphError/storage(_:)``; `PredicateEvaluationError`.
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        guard let entity = coordinator.model.entity(named: request.entityName) else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        var ids: [ManagedObjectID] = []
        for store in coordinator.persistentStores {
            var query = StoreFetchRequest(entity: entity)
            query.includesSubentities = request.includesSubentities
            query.predicate = request.predicate
            query.resultKind = .objectIDs
            let found = try store.fetch(query)
            var changes = StoreChanges(transactionAuthor: transactionAuthor, contextName: name)
            for (reference, version) in zip(found.references, found.versions) {
                changes.deletes.append(
                    StoreChanges.Delete(entity: reference.entity, rowID: reference.rowID, expectedVersion: version))
                ids.append(
                    ManagedObjectID(entity: reference.entity, storeIdentifier: store.identifier, rowID: reference.rowID)
                )
            }
            guard !changes.deletes.isEmpty else { continue }
            if BatchDerivation.matters(for: entity, in: coordinator.model) {
                var derivation = BatchDerivation(store: store, now: Date())
                try derivation.apply(to: &changes)
            }
            _ = try store.save(changes)
            // Owners whose derived values changed were rewritten.
            for update in changes.updates {
                let id = ManagedObjectID(entity: update.entity, storeIdentifier: store.identifier, rowID: update.rowID)
                coordinator.rowCache.invalidate(RowCache.Key(id))
            }
        }
        for id in ids { coordinator.rowCache.invalidate(RowCache.Key(id)) }
        return BatchResult(count: ids.count, objectIDs: request.resultType == .objectIDs ? ids : [])
    }

    /// A batch request's value for an attribute, checked as ``ManagedObject/setValue(_:forKey:)`` checks it.
    static func batchValue(
        _ value: Any?, for attribute: AttributeDescription, of entity: EntityDescription
    ) throws
        -> AttributeValue?
    {
        do {
            let converted: AttributeValue?
            if let query = value as? QueryValue {
                guard query != .null else { return nil }
                guard let attributeValue = AttributeValue(query, type: attribute.type) else {
                    throw FetchRequestError.invalidValue(
                        key: attribute.name, entity: entity.name, reason: "\(query) is not a \(attribute.type)")
                }
                converted = attributeValue
            } else {
                converted = try ManagedObject.convert(value, for: attribute, entity: entity)
            }
            if let converted { try ManagedObject.check(converted, for: attribute, entity: entity) }
            return converted
        } catch let error as ObjectGraphError {
            throw FetchRequestError.invalidValue(key: attribute.name, entity: entity.name, reason: "\(error)")
        }
    }
}
