/// A hash table from row ID to a value, for the row cache: open addressing with linear probing, sized to what it
/// holds rather than to a power of two.
///
/// The row cache has one entry per registered object that read its row, so the table's empty slots are part of
/// what every fault costs. A `Dictionary` keeps between 3/8 and 3/4 of its buckets in use (a million entries
/// take 2^21 buckets); this table grows by half when it is 7/8 full, so it keeps between 2/3 and 7/8 of its slots
/// in use (a million entries take 1.14 to 1.5 million slots).
struct RowTable<Value> {
    /// `rowID + 1` of each slot's entry, 0 for an empty slot (a row ID is never `UInt64.max`: the engine stops
    /// allocating before it).
    private var keys: [UInt64] = []
    private var values: [Value?] = []
    private(set) var count = 0

    /// A slot of the table: valid until the next insertion or removal.
    typealias Slot = Int

    init() {}

    /// The slot holding `rowID`, if the table has it.
    func slot(of rowID: UInt64) -> Slot? {
        guard !keys.isEmpty else { return nil }
        let key = rowID &+ 1
        var slot = home(of: key)
        while true {
            let found = keys[slot]
            if found == key { return slot }
            if found == 0 { return nil }
            slot = slot == keys.count - 1 ? 0 : slot + 1
        }
    }

    /// The value in `slot`, read and changed in place.
    subscript(slot: Slot) -> Value {
        _read { yield values[slot]! }
        _modify { yield &values[slot]! }
    }

    /// Adds `value` for `rowID`, which the table must not have.
    mutating func insert(_ value: Value, for rowID: UInt64) {
        precondition(rowID != .max, "row ID \(rowID) out of range")
        if (count + 1) * 8 > keys.count * 7 { grow(toHold: count + 1) }
        let key = rowID &+ 1
        var slot = home(of: key)
        while keys[slot] != 0 {
            assert(keys[slot] != key, "row \(rowID) is in the table already")
            slot = slot == keys.count - 1 ? 0 : slot + 1
        }
        keys[slot] = key
        values[slot] = value
        count += 1
    }

    /// Removes the entry in `slot`, moving later entries of its probe run back so that no search stops early.
    mutating func remove(at slot: Slot) {
        var hole = slot
        var next = slot
        while true {
            next = next == keys.count - 1 ? 0 : next + 1
            let key = keys[next]
            if key == 0 { break }
            // An entry may fill the hole when the hole lies on its way from its home slot to where it is.
            let home = home(of: key)
            let reachable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
            if reachable {
                keys[hole] = key
                values[hole] = values[next]
                hole = next
            }
        }
        keys[hole] = 0
        values[hole] = nil
        count -= 1
    }

    /// Calls `body` with every entry's value, to change it in place.
    mutating func updateEach(_ body: (inout Value) -> Void) {
        for slot in keys.indices where keys[slot] != 0 { body(&values[slot]!) }
    }

    /// How many entries' values satisfy `predicate`.
    func count(where predicate: (Value) -> Bool) -> Int {
        var found = 0
        for slot in keys.indices where keys[slot] != 0 && predicate(values[slot]!) { found += 1 }
        return found
    }

    /// The home slot of a stored key: its hash scaled to the table's size (a multiply, not a modulo).
    private func home(of key: UInt64) -> Int {
        // Row IDs are dense: the multiplier spreads neighbours over the whole table.
        let hash = key &* 0x9E37_79B9_7F4A_7C15
        return Int(hash.multipliedFullWidth(by: UInt64(keys.count)).high)
    }

    private mutating func grow(toHold wanted: Int) {
        let capacity = max(16, wanted * 3 / 2)
        let oldKeys = keys
        var oldValues = values
        keys = [UInt64](repeating: 0, count: capacity)
        values = [Value?](repeating: nil, count: capacity)
        count = 0
        for slot in oldKeys.indices where oldKeys[slot] != 0 {
            insert(oldValues[slot].take()!, for: oldKeys[slot] &- 1)
        }
    }
}
