/// The objects of a to-many relationship in memory: an array for order, a set of identities for
/// membership, so that both `contains` and positional access are cheap.
struct RelatedObjects {
    private(set) var objects: [ManagedObject] = []
    private var identities: Set<ObjectIdentifier> = []

    init() {}

    init(_ objects: [ManagedObject]) {
        for object in objects { append(object) }
    }

    var count: Int { objects.count }

    func contains(_ object: ManagedObject) -> Bool { identities.contains(ObjectIdentifier(object)) }

    /// Appends `object` unless it is a member already; returns whether it was added.
    @discardableResult
    mutating func append(_ object: ManagedObject) -> Bool {
        guard identities.insert(ObjectIdentifier(object)).inserted else { return false }
        objects.append(object)
        return true
    }

    /// Inserts `object` at `index` (clamped to the end), moving it there when it is a member already.
    mutating func insert(_ object: ManagedObject, at index: Int) {
        if contains(object) { remove(object) }
        identities.insert(ObjectIdentifier(object))
        objects.insert(object, at: min(max(index, 0), objects.count))
    }

    /// Removes `object`; returns whether it was a member.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> Bool {
        guard identities.remove(ObjectIdentifier(object)) != nil else { return false }
        objects.removeAll { $0 === object }
        return true
    }
}

/// A relationship's value in memory: nil in ``ManagedObject/relationshipValues`` until first read (a
/// relationship fault), then one of these, holding the related objects strongly as Core Data does.
enum RelationshipValue {
    case toOne(ManagedObject?)
    case toMany(RelatedObjects)
}
