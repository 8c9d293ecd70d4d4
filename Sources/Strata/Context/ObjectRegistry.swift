import CPrefetch

/// A context's registered objects, found by object ID: the table behind uniquing.
///
/// Each slot is an unretained object pointer and the hash of its ID (its key is the object's own
/// ``ManagedObject/objectID``), in open addressing with linear probing, grown twice as large when 3/4 full (and
/// sized exactly for a fetch's results): 21 to 32 bytes per object. A `[ManagedObjectID: RegisteredObject]` took 16-byte buckets kept 3/8 to 3/4 full (33 bytes per
/// object for a million faults) and hashed each ID with SipHash. The hash in the slot keeps a search from reading
/// the objects it passes (without it, a search for an unregistered ID read two cold cache lines per slot passed,
/// which made W7.graph's changes 45% slower).
///
/// Not retained, and not `weak` either: a weak reference gives its object a side table for good, which sends every
/// retain and release of the object down the runtime's slow path (13% of W1.graph's samples once). The pointers
/// never dangle: an object leaves the registry when it is unregistered, rekeyed or reset away, and before it
/// deinitializes (``ManagedObject``'s `deinit` calls ``ManagedObjectContext/objectWillDeinitialize(_:)``). An
/// object's ID changes only while it is out of the registry (``ManagedObjectContext/rekey(_:to:)``).
final class ObjectRegistry {
    private struct Slot {
        var hash: UInt64
        var object: Unmanaged<ManagedObject>?
    }

    // Unchecked: scalars read and set in place on the context's thread (three runtime access checks a lookup).
    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<Slot>
    @exclusivity(unchecked) private var capacity = 0
    @exclusivity(unchecked) private(set) var count = 0

    init() { slots = .allocate(capacity: 0) }

    deinit { slots.deallocate() }

    /// The object registered under `id`.
    subscript(id: ManagedObjectID) -> ManagedObject? {
        guard let slot = slot(of: id) else { return nil }
        return slots[slot].object!.takeUnretainedValue()
    }

    /// How many objects ahead a walk that registers many hints their slots (``prefetchSlot(ofRow:root:)``).
    static let slotsHintedAhead = 8

    /// Hints that the permanent ID of row `rowID` of the hierarchy `root` (``EntityDescription/rootIdentifier``) is
    /// about to be looked up or registered: the CPU starts fetching its home slot (in a large registry, a line not
    /// read for a while) while other work goes on. A hint only.
    func prefetchSlot(ofRow rowID: UInt64, root: ObjectIdentifier) {
        guard capacity > 0 else { return }
        cprefetch_write(slots + home(of: Self.hash(rowID: rowID, root: root)))
    }

    /// Registers `object` under its ID, which must have no object yet.
    func insert(_ object: ManagedObject) {
        if (count + 1) * 4 > capacity * 3 { grow(to: max(16, 2 * (count + 1))) }
        place(Unmanaged.passUnretained(object), hash: Self.hash(object.objectID))
    }

    /// Unregisters the object under `id`, if there is one, and returns it.
    @discardableResult
    func remove(_ id: ManagedObjectID) -> ManagedObject? {
        guard let slot = slot(of: id) else { return nil }
        let object = slots[slot].object!.takeUnretainedValue()
        removeSlot(slot)
        return object
    }

    /// Unregisters `object` if it is the one registered under its ID (a replaced object may still name its ID).
    /// Reads only the object's ID: it may be deinitializing.
    func remove(ifRegistered object: ManagedObject) -> Bool {
        guard capacity > 0 else { return false }
        // Registered, it lies in the probe run of its ID's hash: found by its address, no ID compared (comparing
        // IDs was an eighth of letting a fired fault go).
        let address = Unmanaged.passUnretained(object).toOpaque()
        var slot = home(of: Self.hash(object.objectID))
        while let registered = slots[slot].object {
            if registered.toOpaque() == address {
                removeSlot(slot)
                return true
            }
            slot = next(slot)
        }
        return false
    }

    /// Makes room for `total` objects without growing again.
    func reserveCapacity(_ total: Int) {
        // Exactly room for them (a fetch reserves for its results): 3/4 full once they are in.
        if total * 4 > capacity * 3 { grow(to: total * 4 / 3 + 1) }
    }

    /// Every registered object, in no particular order.
    var objects: [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(count)
        for slot in 0..<capacity {
            if let object = slots[slot].object { objects.append(object.takeUnretainedValue()) }
        }
        return objects
    }

    /// Calls `body` with each registered object, in no particular order, without retaining it or listing the objects
    /// first (for a context going away: each of its objects is alive, and `body` must not register or unregister any).
    func forEachObject(_ body: (ManagedObject) -> Void) {
        for slot in 0..<capacity {
            if let object = slots[slot].object { object._withUnsafeGuaranteedRef(body) }
        }
    }

    /// Unregisters every object.
    func removeAll() {
        slots.deallocate()
        slots = .allocate(capacity: 0)
        capacity = 0
        count = 0
    }

    // MARK: - Table

    /// A hash consistent with ``ManagedObjectID``'s `==`: the temporary number, or the row and the root entity.
    private static func hash(_ id: ManagedObjectID) -> UInt64 {
        id.isTemporaryID ? spread(id.number) : hash(rowID: id.number, root: id.entity.rootIdentifier)
    }

    /// The hash of the permanent ID of row `rowID` of the hierarchy `root`.
    private static func hash(rowID: UInt64, root: ObjectIdentifier) -> UInt64 {
        spread(rowID ^ UInt64(UInt(bitPattern: root)))
    }

    /// IDs are dense: the multiplier spreads neighbours over the whole table.
    private static func spread(_ key: UInt64) -> UInt64 { key &* 0x9E37_79B9_7F4A_7C15 }

    private func home(of hash: UInt64) -> Int { Int(hash.multipliedFullWidth(by: UInt64(capacity)).high) }

    private func next(_ slot: Int) -> Int { slot == capacity - 1 ? 0 : slot + 1 }

    private func slot(of id: ManagedObjectID) -> Int? {
        guard capacity > 0 else { return nil }
        let hash = Self.hash(id)
        var slot = home(of: hash)
        while let object = slots[slot].object {
            if slots[slot].hash == hash, object._withUnsafeGuaranteedRef({ $0.objectID == id }) { return slot }
            slot = next(slot)
        }
        return nil
    }

    private func place(_ object: Unmanaged<ManagedObject>, hash: UInt64) {
        var slot = home(of: hash)
        while slots[slot].object != nil { slot = next(slot) }
        slots[slot] = Slot(hash: hash, object: object)
        count += 1
    }

    /// Empties `slot`, moving later objects of its probe run back so that no search stops early.
    private func removeSlot(_ slot: Int) {
        var hole = slot
        var probe = slot
        while true {
            probe = next(probe)
            guard slots[probe].object != nil else { break }
            // An object may fill the hole when the hole lies on its way from its home slot to where it is.
            let home = home(of: slots[probe].hash)
            let reachable = hole <= probe ? (home <= hole || home > probe) : (home <= hole && home > probe)
            if reachable {
                slots[hole] = slots[probe]
                hole = probe
            }
        }
        slots[hole] = Slot(hash: 0, object: nil)
        count -= 1
    }

    private func grow(to newCapacity: Int) {
        let (old, oldCapacity) = (slots, capacity)
        capacity = newCapacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(hash: 0, object: nil), count: capacity)
        count = 0
        for slot in 0..<oldCapacity {
            if let object = old[slot].object { place(object, hash: old[slot].hash) }
        }
        old.deallocate()
    }
}
