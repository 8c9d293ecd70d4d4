/// Object IDs noted for a set of ``ObjectChanges`` and not hashed into it yet: a context notes each object a cascade
/// deletes here, and hashes them into the objects-did-change notification's set only when that notification goes
/// to someone (``ManagedObjectContext/postObjectsDidChange(merged:)``). A set insert per deleted object (its ID
/// hashed, a random slot of a table that grows as the cascade goes) was 13% of W8.graph's save at a million
/// objects, for a notification nobody observed.
///
/// So are the objects a property write changes (W7.graph's 100,000 updates).
///
/// The same ID may be noted more than once (deleted, undone, deleted again; changed twice): the set takes it once.
/// An object changed again right after its last change is not noted again, so a loop writing one object's
/// properties adds one ID, not one per write.
struct UnhashedIDs {
    private var ids: [ManagedObjectID] = []

    var isEmpty: Bool { ids.isEmpty }

    mutating func append(_ id: ManagedObjectID) {
        if let last = ids.last, last == id { return }
        ids.append(id)
    }

    /// Room for `count` more IDs.
    mutating func reserveCapacity(forAdding count: Int) { ids.reserveCapacity(ids.count + count) }

    /// Moves the IDs into `set`, which is made room for them once.
    mutating func hash(into set: inout Set<ManagedObjectID>) {
        guard !ids.isEmpty else { return }
        set.reserveCapacity(set.count + ids.count)
        for id in ids { set.insert(id) }
        ids = []
    }

    /// Forgets the IDs (their notification went to nobody, or was discarded).
    mutating func removeAll() { ids = [] }
}
