import Foundation

/// What a managed object holds beyond its identity: values, committed state, change tracking.
///
/// A fault that never fired has none (``ManagedObject/state`` is nil): a million registered faults cost their
/// identities, not a million sets of empty arrays, dictionaries and sets. The state is made when the object is
/// inserted, fired, or first given anything to remember, and a fault's reads see the entity's shared defaults.
final class ObjectState {
    /// Values of every attribute (transients included), by ``AttributeDescription/index``.
    var values: [AttributeValue?]
    /// The persistent values as last fetched or saved, by storage index; nil when the object has none
    /// (a new object, or a fault never fired).
    var committed: [AttributeValue?]?
    /// The row version the committed values were read at (optimistic locking).
    var version: UInt64 = 0
    /// The coordinator of the context the object was registered in: external values are read through it even
    /// after that context is gone.
    var coordinator: PersistentStoreCoordinator?
    /// Binary values still in their store's blob segments, by attribute index: read on first access.
    var externalReferences: [Int: UInt64] = [:]
    /// The external references of the committed state, by storage index (restored by rollback).
    var committedExternalReferences: [Int: UInt64] = [:]
    /// Indexes of the attributes changed since the last fetch or save.
    var changedIndexes = PropertyIndexSet()
    /// Each relationship's value by ``RelationshipDescription/index``: nil while it is a fault (not read
    /// since the object was fetched or turned into a fault), else the related objects, held strongly.
    var relationshipValues: [RelationshipValue?]
    /// The to-ones as last fetched or saved, by ``RelationshipDescription/toOneIndex``; nil when the object
    /// has none (a new object, or a fault never fired).
    var committedReferences: [StoredReference?]?
    /// Indexes of the relationships changed since the last fetch or save.
    var changedRelationships = PropertyIndexSet()
    /// Each changed attribute's value before its first change since the last fetch or save, by index:
    /// what tells that undo brought the object back to its unchanged state.
    var attributeBaselines: [Int: AttributeBaseline] = [:]
    /// Each changed relationship's value before its first change since the last fetch or save.
    var relationshipBaselines: [Int: RelationshipValue] = [:]
    /// Counts the recorded changes of the object (property changes and its deletion).
    var changeCount: UInt64 = 0
    var observers: [String: [UUID: (ManagedObject) -> Void]] = [:]
    /// The order of insertion into its context: saves and fetches list new objects in this order.
    var insertionSequence: UInt64 = 0

    /// The state of a new object of `entity`: default values, empty to-manys, no to-one.
    init(newObjectOf entity: EntityDescription, coordinator: PersistentStoreCoordinator?) {
        values = entity.defaultValues
        relationshipValues = entity.emptyRelationshipValues
        self.coordinator = coordinator
    }

    /// The state of a fault of `entity`: default values, every relationship not read yet.
    init(faultOf entity: EntityDescription, coordinator: PersistentStoreCoordinator?) {
        values = entity.defaultValues
        relationshipValues = entity.unreadRelationshipValues
        self.coordinator = coordinator
    }

    /// The state of a fault of `entity` that fires with `row` and had no state (the usual case): what
    /// ``ManagedObject/load(_:)`` makes of a state, set as the object is made. Made in one piece, its properties are
    /// not checked for exclusive access one by one (a dozen dynamic checks a fired fault).
    init(loading row: StoredRow, of entity: EntityDescription, coordinator: PersistentStoreCoordinator?) {
        values = Self.values(of: row, entity: entity)
        committed = row.values
        version = row.version
        self.coordinator = coordinator
        externalReferences = Self.externalReferences(of: row, entity: entity)
        committedExternalReferences = row.externalReferences
        relationshipValues = entity.unreadRelationshipValues
        committedReferences = row.references
    }

    /// The values by attribute index of an object that loads `row`: transients start from their defaults.
    static func values(of row: StoredRow, entity: EntityDescription) -> [AttributeValue?] {
        // No transients: storage order is attribute order, and the object shares the row's buffer until a write
        // copies it.
        if entity.persistentAttributes.count == entity.attributes.count { return row.values }
        return entity.attributes.map { attribute in
            attribute.storageIndex.map { row.values[$0] } ?? attribute.defaultValue
        }
    }

    /// The blob references by attribute index of an object that loads `row`.
    static func externalReferences(of row: StoredRow, entity: EntityDescription) -> [Int: UInt64] {
        guard !row.externalReferences.isEmpty else { return [:] }
        var references: [Int: UInt64] = [:]
        for (storageIndex, blob) in row.externalReferences {
            references[entity.persistentAttributes[storageIndex].index] = blob
        }
        return references
    }
}
