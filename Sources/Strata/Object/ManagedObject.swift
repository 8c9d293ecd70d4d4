import Foundation

/// An object of the object graph: one row of an entity, with change tracking, faulting and uniquing.
///
/// Subclass it and declare typed properties with ``Managed``, or use it as it is through key-value coding
/// (``value(forKey:)``, ``setValue(_:forKey:)``). An object belongs to one context; the context holds it
/// weakly unless it has unsaved changes.
///
/// For example:
/// ```swift
/// final class Employee: ManagedObject {
///     @Managed("name") var name: String
/// }
/// let ada = Employee(context: context)
/// ada.name = "Ada"
/// try context.save()
/// ```
///
/// Objects are not `Sendable`: use them only on the thread of their context. Pass ``objectID``s between
/// threads instead.
///
/// ## Topics
/// - ``init(entity:insertInto:)``
/// - ``value(forKey:)``
/// - ``setValue(_:forKey:)``
/// - ``isFault``
/// - ``changedValues()``
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The object's entity (its ID's: an ID changes from temporary to permanent, never its entity). Not stored
    /// twice: every registered fault would carry eight more bytes.
    @inlinable public var entity: EntityDescription { objectID.entity }
    /// The object's identity: temporary until saved.
    ///
    /// This and the object's other stored properties are `@exclusivity(unchecked)`: an object is confined to its
    /// context's thread, and the runtime's access checks on them were a tenth of a fault's lookup (W3.graph).
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context the object belongs to; nil before insertion and after the object leaves its context.
    ///
    /// Not a `weak` reference (which would give the context a side table and slow every retain of it): a context
    /// sets it to nil in each object it still has when it goes away (its `deinit`), and when it lets an object go.
    @exclusivity(unchecked) public internal(set) unowned(unsafe) var managedObjectContext: ManagedObjectContext?

    /// Values, committed state and change tracking (``ObjectState``); nil for a fault that never fired and a
    /// new object not yet given anything to remember. Read and written through the properties of
    /// `ManagedObject+State.swift`.
    @exclusivity(unchecked) var state: ObjectState?
    /// The faults made with this one in a batch (``FaultBatch``): a batched fetch's, or the members of a to-many
    /// read with it. Kept here, not in ``state``: a fault has no state, and giving each member of a to-many one
    /// would cost an allocation per member.
    @exclusivity(unchecked) var faultBatch: FaultBatch?
    /// The object's Boolean states, in one byte (six stored Booleans made every fault eight bytes larger).
    @exclusivity(unchecked) var flags: ObjectFlags = .changeProcessingEnabled

    /// Off while awakeFromFetch and refresh run: changes then do not dirty the object.
    var changeProcessingEnabled: Bool {
        get { flags.contains(.changeProcessingEnabled) }
        set { flags.set(.changeProcessingEnabled, newValue) }
    }
    /// Whether the object retains its row's entry in the coordinator's row cache (``RowCache``): it read or wrote
    /// its row through it. Its context releases the entry when the object goes.
    var holdsCachedRow: Bool {
        get { flags.contains(.holdsCachedRow) }
        set { flags.set(.holdsCachedRow, newValue) }
    }

    /// Whether the object's values are not in memory. Reading it never fires the fault.
    public internal(set) var isFault: Bool {
        get { flags.contains(.isFault) }
        set { flags.set(.isFault, newValue) }
    }
    /// Whether the object was inserted into its context and not yet saved.
    public internal(set) var isInserted: Bool {
        get { flags.contains(.isInserted) }
        set { flags.set(.isInserted, newValue) }
    }
    /// Whether the object was deleted in its context and the deletion not yet saved.
    public internal(set) var isDeleted: Bool {
        get { flags.contains(.isDeleted) }
        set { flags.set(.isDeleted, newValue) }
    }
    /// Whether the object was a fault whose row was gone when it fired, and is marked deleted for it
    /// (``ManagedObjectContext/shouldDeleteInaccessibleFaults``).
    var isInaccessible: Bool {
        get { flags.contains(.isInaccessible) }
        set { flags.set(.isInaccessible, newValue) }
    }

    /// Makes an object of `entity` and, when given a context, inserts it there (which calls ``awakeFromInsert()``).
    ///
    /// - Parameters:
    ///   - entity: the object's entity; an abstract entity is a precondition failure when `context` is given.
    ///   - context: the context to insert the object into, or nil for an object outside any context.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        precondition(!entity.isAbstract || context == nil, "\(entity.name) is abstract: it has no objects of its own")
        self.objectID = ManagedObjectID(temporaryFor: entity)
        if let context { context.insert(self) }
    }

    /// Makes an object of the entity registered for this class and inserts it into `context`.
    ///
    /// The entity is the one whose class name (or, failing that, name) is this class's name.
    public convenience init(context: ManagedObjectContext) {
        let className = String(describing: Self.self)
        let model = context.coordinator.model
        guard
            let entity = model.entities.first(where: { $0.managedObjectClassName == className })
                ?? model.entity(named: className)
        else { preconditionFailure("the model has no entity for class \(className)") }
        EntityClassRegistry.register(Self.self, forEntityName: entity.name)
        self.init(entity: entity, insertInto: context)
    }

    /// Registers this class as the class of `entityName`'s objects (faults and fetched objects are made of it).
    public static func register(forEntityName entityName: String) {
        EntityClassRegistry.register(self, forEntityName: entityName)
    }

    deinit {
        managedObjectContext?.objectWillDeinitialize(self)
        // A batch lists its members without retaining them: this one leaves it before it goes.
        faultBatch?.forget(self)
    }

    // MARK: - State

    /// Whether the object has unsaved changes: inserted, deleted, or any property (transients too) changed.
    public var hasChanges: Bool {
        isInserted || isDeleted || hasChangedProperties
    }

    /// Whether the object has changed properties and is neither inserted nor deleted.
    public var isUpdated: Bool {
        !isInserted && !isDeleted && hasChangedProperties
    }

    /// Whether a persistent property differs from its last saved value (unlike ``hasChanges``, a write of the
    /// same value does not count).
    public var hasPersistentChangedValues: Bool {
        if let state, let record = state.record {
            // Loaded from a row record: a value not decoded yet is the record's.
            return !changedRelationships.isEmpty
                || entity.persistentAttributes.contains { attribute in
                    !state.isUndecoded(attribute.index)
                        && state.values[attribute.index] != record.value(atStorageIndex: attribute.storageIndex!)
                }
        }
        guard let committed else { return isInserted }
        return !changedRelationships.isEmpty
            || entity.persistentAttributes.contains { values[$0.index] != committed[$0.storageIndex!] }
    }

    // MARK: - Life cycle hooks (override; call super)

    /// Called once, when the object is first inserted into a context.
    open func awakeFromInsert() {}
    /// Called after a fault is filled with values from the store, with change processing off: setting
    /// values here does not dirty the object.
    open func awakeFromFetch() {}
    /// Called at the start of a save that includes the object (inserted, updated or deleted), and again, as in
    /// Core Data, whenever the object changed since its last call, until a pass changes nothing: an object that
    /// another object's `willSave()` (or inverse maintenance, or a delete rule) dirties gets its own call.
    /// Setting a property, even to the value it has, is a change: compare first, or the save fails with
    /// ``ObjectGraphError/willSaveDidNotSettle(_:passes:)``.
    open func willSave() {}
    /// Called after a save that included the object.
    open func didSave() {}
    /// Called when the object is deleted, before its deletion is saved.
    open func prepareForDeletion() {}
    /// Called before the object turns into a fault (refresh, reset of values).
    open func willTurnIntoFault() {}
    /// Called after the object turned into a fault.
    open func didTurnIntoFault() {}

    // MARK: - Identity

    /// Two objects are equal only when they are the same instance: uniquing gives a context one instance
    /// per object ID. Compare ``objectID``s to match objects across contexts.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    /// Hashes the instance's identity, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// The hash of the instance's identity in one step, as the standard library hashes an `Int` key: what
    /// ``hash(into:)`` gives too. A set of objects hashes each member this way; the default feeds a whole `Hasher`
    /// (its seeding, a combine and its finalization: about 160 instructions a member of a to-many's typed set,
    /// W4c.graph).
    public final func _rawHashValue(seed: Int) -> Int {
        Int(bitPattern: ObjectIdentifier(self))._rawHashValue(seed: seed)
    }

    /// The entity, the object ID and every attribute's value, e.g.
    /// `<Employee x-strata://.../Employee/p1 name="Ada" salary=100>`;
    /// a fault shows only `fault`, without firing.
    open var description: String {
        if isFault { return "<\(entity.name) \(objectID) fault>" }
        let fields = entity.attributes.map { "\($0.name)=\(values[$0.index].map { "\($0)" } ?? "nil")" }
        return "<\(entity.name) \(objectID) \(fields.joined(separator: " "))>"
    }
}

/// The Boolean states of a ``ManagedObject``.
struct ObjectFlags: OptionSet {
    let rawValue: UInt8

    static let changeProcessingEnabled = ObjectFlags(rawValue: 1 << 0)
    static let holdsCachedRow = ObjectFlags(rawValue: 1 << 1)
    static let isFault = ObjectFlags(rawValue: 1 << 2)
    static let isInserted = ObjectFlags(rawValue: 1 << 3)
    static let isDeleted = ObjectFlags(rawValue: 1 << 4)
    static let isInaccessible = ObjectFlags(rawValue: 1 << 5)

    mutating func set(_ flag: ObjectFlags, _ on: Bool) {
        if on { insert(flag) } else { remove(flag) }
    }
}

/// An attribute's value before its first change (see ``ManagedObject/attributeBaselines``).
struct AttributeBaseline {
    var value: AttributeValue?
    var external: UInt64?
}
