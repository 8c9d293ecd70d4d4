/// What follows a context's objects as they change, in memory (a ``FetchedResultsController``): told of every
/// objects-did-change with the save a merge brought in, of saves, and of changes discarded wholesale.
protocol ContextChangeTracking: AnyObject {
    /// Objects changed: `changes` as the objects-did-change notification names them, and `merged`, when the
    /// change is a merge, the whole save (it names objects the context never registered).
    func contextDidChange(_ changes: ObjectChanges, merged: ContextSave?) throws
    /// The context saved: inserted objects have permanent IDs now.
    func contextDidSave() throws
    /// ``ManagedObjectContext/rollback()`` or ``ManagedObjectContext/reset()`` discarded changes without naming them.
    func contextDidDiscardChanges() throws
}

/// A tracker held weakly by its context.
struct WeakChangeTracker {
    weak var tracker: (any ContextChangeTracking)?
}

extension ManagedObjectContext {
    func addChangeTracker(_ tracker: any ContextChangeTracking) {
        changeTrackers[ObjectIdentifier(tracker)] = WeakChangeTracker(tracker: tracker)
    }

    func removeChangeTracker(_ tracker: any ContextChangeTracking) {
        changeTrackers[ObjectIdentifier(tracker)] = nil
    }

    /// Tells every live tracker; a tracker's failure is its own (it keeps its last state), not the context's.
    func notifyTrackers(_ body: (any ContextChangeTracking) throws -> Void) {
        changeTrackers = changeTrackers.filter { $0.value.tracker != nil }
        for entry in changeTrackers.values {
            if let tracker = entry.tracker { try? body(tracker) }
        }
    }

    /// Empties ``changes`` (they were notified, saved or discarded): objects inserted so far are named.
    func resetChanges() {
        changes = ObjectChanges()
        unhashedDeletions.removeAll()
        unhashedUpdates.removeAll()
        insertionsNamed = insertionCounter
    }

    /// An object left the context unsaved (deleted or its insert undone): an insert not yet notified is simply
    /// forgotten (it is no longer among ``ManagedObjectContext/inserted``), one already notified is reported
    /// deleted, as Core Data reports it.
    func noteRemovalOfInsertedObject(_ object: ManagedObject) {
        if object.insertionSequence <= insertionsNamed { changes.deleted.insert(object.objectID) }
    }

    /// The changes the next objects-did-change names: ``changes`` with the objects inserted since the last one.
    ///
    /// Those are not kept in `changes.inserted` as they come: they are the inserted objects numbered after
    /// ``insertionsNamed``, the end of the insertion-ordered list. A set of their IDs cost a hash of each new
    /// object's ID (900 instructions an insert of W1.graph) and a table a million inserts long.
    var pendingChanges: ObjectChanges {
        var pending = changes
        let objects = inserted.objects
        var first = objects.endIndex
        while first > objects.startIndex, objects[first - 1].insertionSequence > insertionsNamed { first -= 1 }
        pending.inserted.reserveCapacity(objects.endIndex - first)
        for object in objects[first...] { pending.inserted.insert(object.objectID) }
        return pending
    }
}
