/// A context's inserted objects, in the order they were inserted (saves write them in this order), held strongly
/// until they are saved, deleted or rolled back.
///
/// A list, not a table keyed by object: whether an object is in it is told by its own
/// ``ManagedObject/isInserted`` flag, which the context changes together with the list
/// (``ManagedObjectContext/isInsertedHere(_:)``). A `[ObjectIdentifier: ManagedObject]` beside an insertion-order
/// array was 34 bytes an insert of W1.graph's peak at a million, and a hash of each new object. Taking one object
/// out searches the list from its end, where the latest inserts are (deleting or undoing an insert is rare next to
/// making one).
struct InsertedObjects {
    /// The objects, in insertion order.
    private(set) var objects: [ManagedObject] = []

    var count: Int { objects.count }
    var isEmpty: Bool { objects.isEmpty }

    /// Adds an object that is not in the list.
    mutating func append(_ object: ManagedObject) {
        objects.append(object)
    }

    /// Takes `object` out, if it is in the list.
    mutating func remove(_ object: ManagedObject) {
        if let index = objects.lastIndex(where: { $0 === object }) { objects.remove(at: index) }
    }

    /// Takes out every object `leaves` picks, in one pass.
    mutating func removeAll(where leaves: (ManagedObject) -> Bool) {
        objects.removeAll(where: leaves)
    }

    /// Empties the list.
    mutating func removeAll() {
        objects = []
    }
}
