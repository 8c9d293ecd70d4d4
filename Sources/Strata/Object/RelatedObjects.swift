/// The objects of a to-many relationship in memory: an array for order and a position table for
/// membership (``MemberPositions``), so that `contains`, `append` and (unordered) removal take constant time.
struct RelatedObjects {
    private(set) var objects: [ManagedObject] = []
    /// Each member's index in `objects`.
    private var positions = MemberPositions()

    init() {}

    /// The objects of `objects`, each once, in their order (an object listed twice stays at its first place).
    init(_ objects: [ManagedObject]) {
        // Usually distinct (a to-many read from the store, hundreds of members): the array taken as it is and the
        // table made at its size, instead of each member searched for, appended and the table rebuilt as it grew.
        if let positions = MemberPositions(ifDistinct: objects) {
            self.objects = objects
            self.positions = positions
            return
        }
        self.objects.reserveCapacity(objects.count)
        for object in objects { append(object) }
    }

    var count: Int { objects.count }

    func contains(_ object: ManagedObject) -> Bool { position(of: object) != nil }

    /// The index of `object`, nil when it is not a member.
    func position(of object: ManagedObject) -> Int? { positions.position(of: object, in: objects) }

    /// Appends `object` unless it is a member already; returns whether it was added.
    @discardableResult
    mutating func append(_ object: ManagedObject) -> Bool {
        if position(of: object) != nil { return false }
        objects.append(object)
        positions.add(at: objects.count - 1, of: objects)
        return true
    }

    /// Inserts `object` at `index` (clamped to the end), moving it there when it is a member already.
    mutating func insert(_ object: ManagedObject, at index: Int) {
        remove(object, keepingOrder: true)
        let index = min(max(index, 0), objects.count)
        objects.insert(object, at: index)
        // From the end: each member takes the position the one after it just left.
        for position in stride(from: objects.count - 1, to: index, by: -1) {
            positions.move(objects[position], from: position - 1, to: position)
        }
        positions.add(at: index, of: objects)
    }

    /// Removes `object`; returns whether it was a member. Without `keepingOrder` the last member takes
    /// its place (constant time: the order of an unordered relationship means nothing).
    @discardableResult
    mutating func remove(_ object: ManagedObject, keepingOrder: Bool) -> Bool {
        guard let index = position(of: object) else { return false }
        positions.remove(object, at: index, of: objects)
        if keepingOrder {
            objects.remove(at: index)
            // From the front: each member takes the position the one before it just left.
            for position in index..<objects.count {
                positions.move(objects[position], from: position + 1, to: position)
            }
        } else {
            let last = objects.removeLast()
            if index < objects.count {
                objects[index] = last
                positions.move(last, from: objects.count, to: index)
            }
        }
        return true
    }

    /// Removes `object`, keeping the others' order; returns whether it was a member.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> Bool { remove(object, keepingOrder: true) }
}

/// A relationship's value in memory: nil in ``ManagedObject/relationshipValues`` until first read (a
/// relationship fault), then one of these, holding the related objects strongly as Core Data does.
enum RelationshipValue {
    case toOne(ManagedObject?)
    case toMany(RelatedObjects)
}
