import Foundation
import StrataStorage

/// Why an object-graph operation failed (validation failures are ``ValidationError``).
public enum ObjectGraphError: Error, Sendable, CustomStringConvertible {
    /// The entity has no property with this key.
    case unknownKey(entity: String, key: String)
    /// A value of the wrong type was given for a key.
    case wrongValueType(entity: String, key: String, expected: AttributeType, got: String)
    /// The model has no entity with this name (or for this class).
    case unknownEntity(String)
    /// The object's row no longer exists in its store (deleted elsewhere): a fault cannot be fulfilled. Firing
    /// such a fault throws it when the context's ``ManagedObjectContext/shouldDeleteInaccessibleFaults`` is
    /// false (else the object is marked deleted); ``ManagedObjectContext/existingObject(with:)`` always does.
    case objectInaccessible(ManagedObjectID)
    /// A save called ``ManagedObject/willSave()`` pass after pass (`passes` of them) and the objects kept
    /// changing (a `willSave()` that sets a value, even the same one, without comparing first, or objects that
    /// change each other in turn): the save stopped before writing anything. The IDs are those of the objects
    /// changed in the last pass; the context's changes are as they were.
    case willSaveDidNotSettle([ManagedObjectID], passes: Int)
    /// The object is in no context (never inserted, or its context was reset or is gone), so its fault or
    /// relationship cannot be read; its row may well exist.
    case noContext(ManagedObjectID)
    /// No store of the coordinator can hold the entity.
    case noStore(entity: String)
    /// The ID names a store the coordinator does not have.
    case unknownStore(UUID)
    /// A URI that is not an object ID of this coordinator.
    case invalidURI(URL)
    /// The store was written with another model (migration is not supported yet).
    case incompatibleModel(storeHash: String, modelHash: String)
    /// A ``PersistentStoreDescription`` of a Strata store has no URL.
    case noStoreURL
    /// Rows changed in the store since these objects were read (optimistic locking): what a
    /// ``PersistentStore`` and the batch requests report. A context's save reports ``mergeConflicts(_:)``.
    case optimisticLockingConflict([ManagedObjectID])
    /// A save found rows changed or deleted in the store since the context read them, and its
    /// ``ManagedObjectContext/mergePolicy`` (``MergePolicy/error``, or a policy that cannot write an object
    /// back to a deleted row) did not resolve them: one ``MergeConflict`` per object, with its cached and
    /// persisted snapshots. Nothing was written and the context's changes are as they were.
    case mergeConflicts([MergeConflict])
    /// A save would break uniqueness constraints and its ``ManagedObjectContext/mergePolicy`` did not resolve
    /// them: ``MergePolicy/error``, or an updated (not inserted) object that takes values another row holds,
    /// which no policy but store trumps and rollback (which undo the object's change of those values) can
    /// settle. One ``ConstraintConflict`` per constraint and values; nothing was written and the context's
    /// changes are as they were.
    case constraintConflicts([ConstraintConflict])
    /// The object belongs to another context.
    case wrongContext(ManagedObjectID)
    /// A transformable attribute names a transformer that is not registered.
    case missingTransformer(name: String)
    /// A transformer failed to turn a value into data or back.
    case transformationFailed(key: String, reason: String)
    /// The storage engine failed.
    case storage(StorageError)
    /// A relationship was given a value of the wrong kind (e.g. a set for a to-one, an object of another
    /// entity, or a non-object).
    case wrongRelationshipValue(entity: String, key: String, expected: String, got: String)
    /// A to-many operation (``ManagedObject/mutableSetValue(forKey:)``, an ordered operation on an unordered
    /// relationship, …) was asked of a property that does not support it.
    case notToMany(entity: String, key: String, operation: String)
    /// Two objects in different persistent stores were related: relationships never cross stores.
    case crossStoreRelationship(source: ManagedObjectID, key: String, destination: ManagedObjectID)
    /// A key path uses a collection operator that does not exist or is applied to something that is not
    /// a collection.
    case invalidKeyPath(String, reason: String)
    /// The value of an indexed attribute is too long for the Strata store's index pages (`length` bytes of
    /// index key, at most `limit`): shorten it, or do not mark the attribute indexed.
    case valueTooLongForIndex(entity: String, key: String, length: Int, limit: Int)

    /// A one-line description of the failure, naming the entity, key, object or store involved.
    public var description: String {
        switch self {
        case .unknownKey(let entity, let key): "\(entity) has no property '\(key)'"
        case .wrongValueType(let entity, let key, let expected, let got):
            "\(entity).\(key) takes \(expected) values, not \(got)"
        case .unknownEntity(let name): "no entity \(name) in the model"
        case .objectInaccessible(let id): "the row of \(id) no longer exists in its store"
        case .willSaveDidNotSettle(let ids, let passes):
            "objects still changed after \(passes) passes of willSave (a willSave that sets values without comparing"
                + " them first?): \(ids)"
        case .noContext(let id): "\(id) is in no context (never inserted, or its context was reset or is gone)"
        case .noStore(let entity): "no persistent store of the coordinator holds entity \(entity)"
        case .unknownStore(let id): "no persistent store \(id) in the coordinator"
        case .invalidURI(let url): "\(url) is not an object ID of this coordinator"
        case .incompatibleModel(let store, let model):
            "the store was written with model version \(store), the coordinator's model is \(model)"
        case .noStoreURL: "the description of a Strata store has no URL"
        case .optimisticLockingConflict(let ids): "rows changed in the store since they were read: \(ids)"
        case .mergeConflicts(let conflicts):
            "rows changed in the store since they were read: "
                + conflicts.map(\.description).joined(separator: "; ")
        case .constraintConflicts(let conflicts):
            "uniqueness constraints violated: " + conflicts.map(\.description).joined(separator: "; ")
        case .wrongContext(let id): "\(id) belongs to another context"
        case .missingTransformer(let name): "no value transformer registered as '\(name)'"
        case .transformationFailed(let key, let reason): "transforming '\(key)' failed: \(reason)"
        case .storage(let error): "\(error)"
        case .wrongRelationshipValue(let entity, let key, let expected, let got):
            "\(entity).\(key) takes \(expected), not \(got)"
        case .notToMany(let entity, let key, let operation): "\(entity).\(key) does not support \(operation)"
        case .crossStoreRelationship(let source, let key, let destination):
            "\(source).\(key) cannot relate to \(destination), which is in another store"
        case .invalidKeyPath(let path, let reason): "key path '\(path)': \(reason)"
        case .valueTooLongForIndex(let entity, let key, let length, let limit):
            "\(entity).\(key) is indexed, and its value makes an index key of \(length) bytes, more than \(limit)"
        }
    }
}
