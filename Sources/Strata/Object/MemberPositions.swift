/// Where each member of a to-many stands in its array (``RelatedObjects``): the table behind `contains` and
/// `position(of:)` in constant time. A save finds its inserted objects' positions among its inserts with one too.
///
/// Each slot holds a member's position + 1 (0: empty), in open addressing with linear probing on the member's address,
/// grown twice as large when 3/4 full: 4 bytes a slot, 5 to 11 bytes a member, where a `[ObjectIdentifier: Int]`
/// took 16-byte buckets (26 bytes a member of W1.graph's departments, which list a million employees) and hashed
/// each key with SipHash. A slot names its member by position only, so every operation is given the members'
/// array, and a search compares the member found there by identity.
struct MemberPositions {
    /// The slots; empty (no allocation) until the first member. As many are full as there are members: the count is
    /// the members' array's, not stored (a relationship's value stays three words in every object's state).
    private var slots: [UInt32] = []

    /// No member: no allocation.
    init() {}

    /// The positions of every object of `members`, which are distinct.
    init(positionsOf members: [ManagedObject]) {
        precondition(members.count < Int(UInt32.max), "a table holds fewer than 2^32 - 1 members")
        if !members.isEmpty { rebuild(from: members, capacity: 8) }
    }

    /// The positions of every identity of `identities`, which are distinct: objects known by identity only, never
    /// read through (a fault batch's rows, ``FaultBatch``).
    init(positionsOf identities: [ObjectIdentifier]) {
        precondition(identities.count < Int(UInt32.max), "a table holds fewer than 2^32 - 1 members")
        guard !identities.isEmpty else { return }
        var capacity = 8
        while identities.count * 4 > capacity * 3 { capacity *= 2 }
        slots = Array(repeating: 0, count: capacity)
        for (position, identity) in identities.enumerated() { place(position, of: identity) }
    }

    /// The position of `identity` in `identities`, nil when it is not there.
    func position(of identity: ObjectIdentifier, in identities: [ObjectIdentifier]) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = home(of: identity)
        while slots[slot] != 0 {
            let position = Int(slots[slot]) - 1
            if identities[position] == identity { return position }
            slot = next(slot)
        }
        return nil
    }

    /// The position of `object` in `members`, nil when it is not a member.
    func position(of object: ManagedObject, in members: [ManagedObject]) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = home(of: object)
        while slots[slot] != 0 {
            let position = Int(slots[slot]) - 1
            if members[position] === object { return position }
            slot = next(slot)
        }
        return nil
    }

    /// The positions of every object of `members`, in a table sized once; nil when an object is listed twice (its
    /// second listing is found where it would go, so distinct members cost one probe each and no search before it).
    init?(ifDistinct members: [ManagedObject]) {
        precondition(members.count < Int(UInt32.max), "a table holds fewer than 2^32 - 1 members")
        guard !members.isEmpty else { return }
        var capacity = 8
        while members.count * 4 > capacity * 3 { capacity *= 2 }
        slots = Array(repeating: 0, count: capacity)
        for (position, member) in members.enumerated() {
            var slot = home(of: member)
            while slots[slot] != 0 {
                if members[Int(slots[slot]) - 1] === member { return nil }
                slot = next(slot)
            }
            slots[slot] = UInt32(position + 1)
        }
    }

    /// Adds the member at `position` of `members`, which has no slot yet; every other member of `members` has one.
    mutating func add(at position: Int, of members: [ManagedObject]) {
        precondition(position < Int(UInt32.max), "a to-many holds fewer than 2^32 - 1 members")
        if members.count * 4 > slots.count * 3 {
            // Rebuilt from the members, this one included.
            rebuild(from: members, capacity: max(8, 2 * slots.count))
            return
        }
        place(position, of: ObjectIdentifier(members[position]))
    }

    /// Takes `object`, at `position` of `members` (which still lists it there), out of the table.
    mutating func remove(_ object: ManagedObject, at position: Int, of members: [ManagedObject]) {
        var hole = slot(holding: position, of: object)
        var probe = hole
        while true {
            probe = next(probe)
            guard slots[probe] != 0 else { break }
            // A member may fill the hole when the hole lies on its way from its home slot to where it is.
            let home = home(of: members[Int(slots[probe]) - 1])
            let reachable = hole <= probe ? (home <= hole || home > probe) : (home <= hole && home > probe)
            if reachable {
                slots[hole] = slots[probe]
                hole = probe
            }
        }
        slots[hole] = 0
    }

    /// Records that `object` moved from position `old` to `new`; no other member may be at `new` in the table.
    /// Found by its old position along its probe run, so the members' array may have changed already.
    mutating func move(_ object: ManagedObject, from old: Int, to new: Int) {
        slots[slot(holding: old, of: object)] = UInt32(new + 1)
    }

    /// The slot that holds `position`, the position of `object`.
    private func slot(holding position: Int, of object: ManagedObject) -> Int {
        let value = UInt32(position + 1)
        var slot = home(of: object)
        while slots[slot] != value {
            precondition(slots[slot] != 0, "a member of a to-many has no position")
            slot = next(slot)
        }
        return slot
    }

    private mutating func rebuild(from members: [ManagedObject], capacity: Int) {
        var capacity = capacity
        while members.count * 4 > capacity * 3 { capacity *= 2 }
        slots = Array(repeating: 0, count: capacity)
        for (position, member) in members.enumerated() { place(position, of: ObjectIdentifier(member)) }
    }

    private mutating func place(_ position: Int, of identity: ObjectIdentifier) {
        var slot = home(of: identity)
        while slots[slot] != 0 { slot = next(slot) }
        slots[slot] = UInt32(position + 1)
    }

    private func home(of object: ManagedObject) -> Int { home(of: ObjectIdentifier(object)) }

    private func home(of identity: ObjectIdentifier) -> Int {
        // Objects lie a few dozen bytes apart: the multiplier spreads neighbours over the whole table.
        let hash = UInt64(UInt(bitPattern: identity)) &* 0x9E37_79B9_7F4A_7C15
        return Int(hash.multipliedFullWidth(by: UInt64(slots.count)).high)
    }

    private func next(_ slot: Int) -> Int { slot == slots.count - 1 ? 0 : slot + 1 }
}
