/// The objects of a to-many relationship in memory: an array for order and a position map for
/// membership, so that `contains`, `append` and (unordered) removal take constant time.
struct RelatedObjects {
    private(set) var objects: [ManagedObject] = []
    /// Each member's index in `objects`.
    private var positions: [ObjectIdentifier: Int] = [:]

    init() {}

    init(_ objects: [ManagedObject]) {
        // Sized once: a to-many read from the store has hundreds of members, and growing rehashed the map ~8 times.
        self.objects.reserveCapacity(objects.count)
        positions.reserveCapacity(objects.count)
        for object in objects { append(object) }
    }

    var count: Int { objects.count }

    func contains(_ object: ManagedObject) -> Bool { positions[ObjectIdentifier(object)] != nil }

    /// The index of `object`, nil when it is not a member.
    func position(of object: ManagedObject) -> Int? { positions[ObjectIdentifier(object)] }

    /// Appends `object` unless it is a member already; returns whether it was added.
    @discardableResult
    mutating func append(_ object: ManagedObject) -> Bool {
        let key = ObjectIdentifier(object)
        // One hashing for a new member (the usual case); a member already there gets its position back.
        if let position = positions.updateValue(objects.count, forKey: key) {
            positions[key] = position
            return false
        }
        objects.append(object)
        return true
    }

    /// Inserts `object` at `index` (clamped to the end), moving it there when it is a member already.
    mutating func insert(_ object: ManagedObject, at index: Int) {
        remove(object, keepingOrder: true)
        let index = min(max(index, 0), objects.count)
        objects.insert(object, at: index)
        renumber(from: index)
    }

    /// Removes `object`; returns whether it was a member. Without `keepingOrder` the last member takes
    /// its place (constant time: the order of an unordered relationship means nothing).
    @discardableResult
    mutating func remove(_ object: ManagedObject, keepingOrder: Bool) -> Bool {
        guard let index = positions.removeValue(forKey: ObjectIdentifier(object)) else { return false }
        if keepingOrder {
            objects.remove(at: index)
            renumber(from: index)
        } else {
            let last = objects.removeLast()
            if index < objects.count {
                objects[index] = last
                positions[ObjectIdentifier(last)] = index
            }
        }
        return true
    }

    /// Removes `object`, keeping the others' order; returns whether it was a member.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> Bool { remove(object, keepingOrder: true) }

    private mutating func renumber(from index: Int) {
        for position in index..<objects.count { positions[ObjectIdentifier(objects[position])] = position }
    }
}

/// A relationship's value in memory: nil in ``ManagedObject/relationshipValues`` until first read (a
/// relationship fault), then one of these, holding the related objects strongly as Core Data does.
enum RelationshipValue {
    case toOne(ManagedObject?)
    case toMany(RelatedObjects)
}
