import Dispatch
import Foundation
import Synchronization

/// A scratch pad of managed objects: it registers the objects you fetch or insert, guarantees one object
/// per ID (uniquing), tracks their changes, and writes them to the stores on ``save()``.
///
/// Memory follows Core Data: registered objects are held weakly, so an object nobody else holds leaves
/// ``registeredObjects`` (and its row-cache entry is released); inserted, updated and deleted objects are
/// held strongly until save, rollback or reset; ``retainsRegisteredObjects`` holds everything.
///
/// A context and its objects belong to one thread at a time (they are not `Sendable`); use one context per
/// thread, and pass ``ManagedObjectID``s between them.
///
/// ## Topics
/// - ``insert(_:)``
/// - ``delete(_:)``
/// - ``save()``
/// - ``object(with:)``
/// - ``existingObject(with:)``
/// - ``fetch(_:)``
/// - ``refresh(_:mergeChanges:)``
public final class ManagedObjectContext {
    /// The coordinator whose stores the context reads and saves to.
    public let coordinator: PersistentStoreCoordinator
    /// The coordinator's row cache, held here as well: reached through ``coordinator``, it was retained and released
    /// around each use, and the weak reference its ``RowCacheGroup`` keeps gives it a side table, which sends each of
    /// those down the runtime's slow path (170 instructions an object let go, W3.graph). A field of the context itself
    /// is borrowed for the call.
    let rowCache: RowCache
    /// A name for the context (logs, debugging).
    public var name: String?
    /// How long (seconds) row data cached by the coordinator may be used to fill faults, counted from when
    /// the row was fetched. Negative (the default, as in Core Data) means cached data never goes stale; 0 means
    /// every fault goes to the store.
    // This, `retainsRegisteredObjects` and `parent` are `@exclusivity(unchecked)`: each fault fired or registered
    // reads them (a runtime access check, about 80 instructions each), and a context is confined to its thread.
    @exclusivity(unchecked) public var stalenessInterval: TimeInterval = -1
    /// How ``save()`` resolves rows changed in the store since the context read them (optimistic locking) and
    /// uniqueness conflicts: ``MergePolicy/error`` (the default, as in Core Data) reports them; see
    /// ``MergePolicy`` for the others, and for subclasses of your own.
    public var mergePolicy: MergePolicy = .error
    /// Whether firing a fault whose row is gone (deleted through another context or coordinator) marks the
    /// object deleted instead of failing (Core Data's property of the same name; default true).
    ///
    /// When true, the object reads 0 or false for numbers and Booleans, nil for other attributes and to-ones,
    /// and empty to-manys, and its ``ManagedObject/isDeleted`` is true; it is not among ``deletedObjects`` (there
    /// is no row left to delete). When false, the throwing API (``ManagedObject/value(forKey:)``, ...) throws
    /// ``ObjectGraphError/objectInaccessible(_:)``, and a typed property (``Managed``) stops the program with a
    /// message naming the object ID and the cause. ``existingObject(with:)`` throws for a missing row either way.
    public var shouldDeleteInaccessibleFaults = true
    /// Whether ``processPendingChanges()`` runs the delete rules of the objects deleted during the event
    /// (Core Data's property of the same name; default true). When false, only ``save()`` runs them.
    public var propagatesDeletesAtEndOfEvent = true
    /// Whether the context holds every registered object strongly (default false: weakly).
    @exclusivity(unchecked) public var retainsRegisteredObjects = false {
        didSet {
            retainedObjects =
                retainsRegisteredObjects
                ? Dictionary(uniqueKeysWithValues: registry.objects.map { (ObjectIdentifier($0), $0) })
                : [:]
        }
    }

    /// The registered objects, not retained (see ``ObjectRegistry``).
    let registry = ObjectRegistry()
    // The tables marked `@exclusivity(unchecked)` are touched for every object a save or a cascade handles (nine
    // runtime access checks an unregistering, 5% of W8.graph's save): a context is used on one thread, and each
    // access is a single read or in-place change that calls nothing that could reach the table again.
    @exclusivity(unchecked) var inserted = InsertedObjects()
    @exclusivity(unchecked) var updated: [ObjectIdentifier: ManagedObject] = [:]
    @exclusivity(unchecked) var deleted: [ObjectIdentifier: ManagedObject] = [:]
    @exclusivity(unchecked) var retainedObjects: [ObjectIdentifier: ManagedObject] = [:]
    /// Numbers inserted objects in order.
    @exclusivity(unchecked) var insertionCounter: UInt64 = 0
    /// Deleted objects whose delete rules have not run yet (``processPendingChanges()``).
    @exclusivity(unchecked) var pendingDeletions: [ManagedObject] = []
    /// The context this one reads through and saves into (``init(parent:)``); nil for a context on the
    /// coordinator.
    @exclusivity(unchecked) public internal(set) var parent: ManagedObjectContext?
    /// The child contexts, weakly.
    var children: [WeakContext] = []
    /// Whether this context merges the changes saved into its parent as they happen, through
    /// ``mergeChanges(fromContextDidSave:)`` (Core Data's property of the same name). Off by default.
    ///
    /// For a child context the parent is its ``parent``: it merges what a sibling pushes and what the parent
    /// saves. For a context on the coordinator it merges what the coordinator's other contexts save: on its
    /// queue for a queue-confined context (``PrivateQueueContext``, ``mainQueue(coordinator:)``), else at the
    /// save when it happens on the thread that set this property (a context used on one thread).
    public var automaticallyMergesChangesFromParent = false {
        didSet {
            guard parent == nil else { return }
            if automaticallyMergesChangesFromParent {
                coordinator.saveBroadcaster.register(self)
            } else {
                coordinator.saveBroadcaster.unregister(self)
            }
        }
    }
    /// The queue a queue-confined context belongs to (``PrivateQueueContext``, ``mainQueue(coordinator:)``).
    var ownerQueue: DispatchQueue?
    /// Where the context's work runs (``perform(_:)``): ``ManagedObjectContextConcurrencyType/confinement``
    /// unless the context was made for a queue.
    public internal(set) var concurrencyType = ManagedObjectContextConcurrencyType.confinement
    /// Fetched results controllers following the context's objects (weakly).
    var changeTrackers: [ObjectIdentifier: WeakChangeTracker] = [:]
    /// Who makes this context's saves, recorded in persistent history (Core Data's `transactionAuthor`): name
    /// your importer, your sync engine, your app, so that each can skip or pick out the others' transactions.
    public var transactionAuthor: String?
    /// Your own values kept with the context (Core Data's `userInfo`); Strata never reads them.
    public var userInfo: [AnyHashable: Any] = [:]
    /// Objects changed since the last objects-did-change notification. Emptied only by ``resetChanges()``.
    @exclusivity(unchecked) var changes = ObjectChanges()
    /// Objects deleted since the last objects-did-change notification, not yet in `changes.deleted`: hashed into it
    /// when the notification is posted to someone, or when a deletion is taken back.
    @exclusivity(unchecked) var unhashedDeletions = UnhashedIDs()
    /// Objects changed since the last objects-did-change notification, not yet in `changes.updated`, as
    /// `unhashedDeletions` (a set insert per property write was 3% of W7.graph's instructions).
    @exclusivity(unchecked) var unhashedUpdates = UnhashedIDs()
    /// ``insertionCounter`` when ``changes`` was last emptied: an inserted object numbered up to it is no longer
    /// in `changes.inserted` (a notification named it), so a change of it is an update. Unchecked: read at every
    /// change of an inserted object.
    @exclusivity(unchecked) var insertionsNamed: UInt64 = 0
    var notificationObservers: [UUID: (ContextNotification) -> Void] = [:]
    /// The continuations of ``notifications()`` streams: locked, as a stream's termination may run on any thread.
    let notificationStreams = NotificationStreams()

    /// The context's undo manager (Core Data's `undoManager`): nil by default, as for Core Data's contexts on
    /// iOS and those a persistent container makes, because its actions hold every object they name strongly and
    /// a long-running process would keep every object it ever changed alive. Turn undo on with one line:
    ///
    ///     context.undoManager = ContextUndoManager()
    ///
    /// Set it back to nil to turn undo off again (and let go of what its actions hold).
    // Unchecked, as the tables above: every property change reads it, one to three times (a runtime access check
    // each, about 76 instructions: 2% of W1.graph's instructions).
    @exclusivity(unchecked) public var undoManager: ContextUndoManager?
    /// While a merge policy resolves version conflicts: the rows the store had for the conflicting objects.
    var conflictRows: [ManagedObjectID: StoredRow?] = [:]
    /// While a merge policy resolves constraint conflicts: the objects behind each conflict.
    var constraintGroupsByConflict: [ConstraintConflict: ConstraintGroup] = [:]
    /// During a save: whether it called `willSave()` on any object yet (each object's call is marked in
    /// ``ManagedObject/willSaveMark``).
    var calledWillSave = false
    /// Counts changes of this context's objects and of its inserted, updated and deleted tables (each property
    /// change, insert, delete and their undo): a willSave pass after which it did not move left no object due for
    /// another call, and the save skips the pass that would read every object to find none (W8.graph's 100,000).
    @exclusivity(unchecked) var changesMade: UInt64 = 0
    /// Whether ``processPendingChanges()`` is running (a cascade's deletes only queue).
    var isProcessingDeletions = false

    /// Whether `object` is one of this context's inserted objects (in ``inserted``): an object of this context is
    /// there exactly when its flag says so, as the context sets the flag and the list together.
    func isInsertedHere(_ object: ManagedObject) -> Bool {
        object.isInserted && object.managedObjectContext === self
    }
    /// Stores chosen for inserted objects by ``assign(_:to:)`` or ``obtainPermanentIDs(for:)``.
    @exclusivity(unchecked) var assignedStores: [ObjectIdentifier: any PersistentStore] = [:]

    /// Creates an empty context on a coordinator.
    ///
    /// - Parameter coordinator: the coordinator whose model and stores the context uses.
    public init(coordinator: PersistentStoreCoordinator) {
        self.coordinator = coordinator
        rowCache = coordinator.rowCache
    }

    /// The coordinator (Core Data's name).
    public var persistentStoreCoordinator: PersistentStoreCoordinator { coordinator }

    deinit {
        if automaticallyMergesChangesFromParent, parent == nil { coordinator.saveBroadcaster.unregister(self) }
        // In place: an array of every object, each retained and released, was a fifth of this (W4b.graph's contexts).
        registry.forEachObject { object in
            // Objects that outlive their context no longer name it (their reference to it is not weak).
            object.managedObjectContext = nil
            releaseCachedRow(of: object)
        }
    }

    // MARK: - Registered objects

    /// Every object registered in the context and still alive.
    public var registeredObjects: Set<ManagedObject> { Set(registry.objects) }

    /// Objects inserted since the last save.
    public var insertedObjects: Set<ManagedObject> { Set(inserted.objects) }
    /// Objects with changed properties since the last save (neither inserted nor deleted).
    public var updatedObjects: Set<ManagedObject> { Set(updated.values) }
    /// Objects deleted since the last save.
    public var deletedObjects: Set<ManagedObject> { Set(deleted.values) }

    /// Whether the context has unsaved changes.
    public var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// The object registered for an ID, if any; never does I/O and never makes a fault.
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? {
        registry[id]
    }

    func register(_ object: ManagedObject) {
        // Uniquing: one object per ID. An object this replaced would keep naming the context after it is gone.
        assert(registry[object.objectID].map { $0 === object } ?? true, "\(object.objectID) registered twice")
        // In a release build another object under the ID is replaced, as a dictionary's assignment did.
        if let registered = registry[object.objectID] {
            if registered !== object {
                registry.remove(object.objectID)
                registry.insert(object)
            }
        } else {
            registry.insert(object)
        }
        adopt(object)
    }

    /// ``register(_:)`` for an object whose ID has no registered object, as its caller just found: without searching
    /// the registry again (a tenth of making a fault).
    func registerUnregistered(_ object: ManagedObject) {
        assert(registry[object.objectID] == nil, "\(object.objectID) registered twice")
        registry.insert(object)
        adopt(object)
    }

    /// Makes a registered object this context's.
    private func adopt(_ object: ManagedObject) {
        object.managedObjectContext = self
        object.state?.coordinator = coordinator
        if retainsRegisteredObjects { retainedObjects[ObjectIdentifier(object)] = object }
    }

    func unregister(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        if registry.remove(ifRegistered: object) { releaseCachedRow(of: object) }
        // Empty tables are not searched: a save unregisters each object it deleted (a cascade's 100,000), which is
        // in none of them but `deleted` and `retainedObjects`.
        if isInsertedHere(object) { inserted.remove(object) }
        if !updated.isEmpty { updated[key] = nil }
        if !deleted.isEmpty { deleted[key] = nil }
        if !retainedObjects.isEmpty { retainedObjects[key] = nil }
        if !assignedStores.isEmpty { assignedStores[key] = nil }
        object.managedObjectContext = nil
    }

    /// An object is going away (nobody holds it): forget it and release its row-cache entry. Called from its
    /// `deinit`, so nothing here may retain it.
    func objectWillDeinitialize(_ object: ManagedObject) {
        // One search: the entry is removed where it was found.
        guard registry.remove(ifRegistered: object) else { return }
        releaseCachedRow(of: object)
    }

    /// Caches a row the object now holds (read from the store, fetched or saved): its first one retains the
    /// row cache's entry for it.
    func cacheRow(_ row: StoredRow, for object: ManagedObject) {
        rowCache.store(row, for: RowCache.Key(object.objectID), retaining: !object.holdsCachedRow)
        object.holdsCachedRow = true
    }

    /// Releases the row cache's entry the object holds under its ID, if it holds one.
    func releaseCachedRow(of object: ManagedObject) {
        guard object.holdsCachedRow else { return }
        object.holdsCachedRow = false
        // The key read in place: a copy of the ID retained and released its entity (an object may be going away).
        rowCache.release(RowCache.Key(borrowing: object))
    }

    // MARK: - Inserting and deleting

    /// Inserts a new object (made with `init(entity:insertInto: nil)`), calling its ``ManagedObject/awakeFromInsert()``.
    public func insert(_ object: ManagedObject) {
        checkConfinement()
        if let other = object.managedObjectContext, other !== self {
            preconditionFailure("\(object.objectID) belongs to another context")
        }
        if object.isDeleted, deleted[ObjectIdentifier(object)] != nil {
            // Re-inserting a deleted object undoes the deletion.
            deleted[ObjectIdentifier(object)] = nil
            object.isDeleted = false
            return
        }
        guard object.objectID.isTemporaryID, !isInsertedHere(object) else { return }
        precondition(!object.entity.isAbstract, "\(object.entity.name) is abstract: it has no objects of its own")
        insertionCounter += 1
        changesMade &+= 1
        object.insertionSequence = insertionCounter
        register(object)
        inserted.append(object)
        object.isInserted = true
        registerUndoOfInsertion(object)
        object.awakeFromInsert()
    }

    /// Deletes an object: its deletion is written at the next save. Deleting an object that was inserted and
    /// never saved simply removes it from the context.
    ///
    /// The delete rules of the object's relationships run at the end of the event, in
    /// ``processPendingChanges()`` (which ``save()`` also calls), as in Core Data: until then related objects
    /// still list the object, and moving one out of a relationship saves it from a cascade.
    public func delete(_ object: ManagedObject) {
        checkConfinement()
        guard object.managedObjectContext === self else { return }
        let key = ObjectIdentifier(object)
        // An inaccessible fault marked deleted has no row left to delete. Only an object flagged deleted can be
        // in `deleted`, and only a flagged inserted one in `inserted` (objectDidChange(_:)): the flags spare
        // lookups for the objects a cascade deletes.
        guard !(object.isDeleted && deleted[key] != nil), !object.isInaccessible else { return }
        object.prepareForDeletion()
        object.changeCount &+= 1
        changesMade &+= 1
        registerUndoOfDeletion(object)
        pendingDeletions.append(object)
        if object.isInserted {
            object.isInserted = false
            object.isDeleted = true
            inserted.remove(object)
            noteRemovalOfInsertedObject(object)
        } else {
            if !updated.isEmpty { updated[key] = nil }
            deleted[key] = object
            object.isDeleted = true
            unhashedDeletions.append(object.objectID)
        }
        // Delete rules run at the end of the event (processPendingChanges(), save()), as in Core Data.
    }

    /// Chooses the store an inserted object will be saved in (default: the coordinator's first store).
    ///
    /// - Parameters:
    ///   - object: an object inserted into this context and not yet saved (a precondition).
    ///   - store: one of the coordinator's stores.
    public func assign(_ object: ManagedObject, to store: any PersistentStore) {
        precondition(object.isInserted && object.managedObjectContext === self, "only inserted objects can be assigned")
        assignedStores[ObjectIdentifier(object)] = store
    }

    /// A property of a registered object changed.
    func objectDidChange(_ object: ManagedObject) {
        guard object.managedObjectContext === self else { return }
        changesMade &+= 1
        // An object of this context is in `inserted` exactly when its flag says so, and in `deleted` only when
        // flagged deleted: the flags spare two dictionary lookups per property write.
        if object.isInserted {
            // An insert already notified changed since: observers hear of it as an update. Told by its number, not
            // by a search of the notification's inserted IDs (hashing its ID was 4% of W1.graph).
            if object.insertionSequence <= insertionsNamed { unhashedUpdates.append(object.objectID) }
            return
        }
        let key = ObjectIdentifier(object)
        if object.isDeleted, deleted[key] != nil { return }
        updated[key] = object
        unhashedUpdates.append(object.objectID)
    }

    // MARK: - Rows

    /// The row of a permanent ID, through the coordinator's row cache (honouring ``stalenessInterval``).
    func storedRow(for id: ManagedObjectID) throws -> StoredRow? {
        if let row = try rowFromAncestors(for: id) { return row }
        guard !id.isTemporaryID else { return nil }
        return try coordinator.row(
            for: id, maximumAge: stalenessInterval >= 0 ? stalenessInterval : nil, retaining: false)
    }

    /// The row an object loads (firing its fault, refreshing it): as ``storedRow(for:)``, and the object holds
    /// the row cache's entry from then on.
    func storedRow(loadingInto object: ManagedObject) throws -> StoredRow? {
        let id = object.objectID
        if let row = try rowFromAncestors(for: id) { return row }
        guard !id.isTemporaryID else { return nil }
        let row = try coordinator.row(
            for: id, maximumAge: stalenessInterval >= 0 ? stalenessInterval : nil, retaining: !object.holdsCachedRow)
        if row != nil { object.holdsCachedRow = true }
        return row
    }
}

@available(*, unavailable, message: "a context belongs to one thread; pass object IDs between threads")
extension ManagedObjectContext: Sendable {}
