/// A hash table from row ID to a value, for the row cache: open addressing with linear probing, sized to what it
/// holds rather than to a power of two.
///
/// The row cache has one entry per registered object that read its row, so the table's empty slots are part of
/// what every fault costs. A `Dictionary` keeps between 3/8 and 3/4 of its buckets in use (a million entries
/// take 2^21 buckets); this table grows by half when it is 7/8 full, so it keeps between 2/3 and 7/8 of its slots
/// in use (a million entries take 1.14 to 1.5 million slots).
final class RowTable<Value> {
    /// `rowID + 1` of each slot's entry, 0 for an empty slot (a row ID is never `UInt64.max`: the engine stops
    /// allocating before it).
    private var keys: UnsafeMutablePointer<UInt64>
    /// The values; a slot's is initialized exactly when its key is not 0. Raw storage rather than `[Value?]`: an
    /// optional read in place through `!` was copied (with its references retained) on every access.
    private var values: UnsafeMutablePointer<Value>
    private(set) var capacity = 0
    private(set) var count = 0

    /// A slot of the table: valid until the next insertion or removal.
    typealias Slot = Int

    init() {
        keys = .allocate(capacity: 0)
        values = .allocate(capacity: 0)
    }

    deinit {
        for slot in 0..<capacity where keys[slot] != 0 { (values + slot).deinitialize(count: 1) }
        keys.deallocate()
        values.deallocate()
    }

    /// The slot holding `rowID`, if the table has it.
    func slot(of rowID: UInt64) -> Slot? {
        guard capacity > 0 else { return nil }
        let key = rowID &+ 1
        var slot = home(of: key)
        while true {
            let found = keys[slot]
            if found == key { return slot }
            if found == 0 { return nil }
            slot = slot == capacity - 1 ? 0 : slot + 1
        }
    }

    /// The value in `slot`, read and changed in place.
    subscript(slot: Slot) -> Value {
        _read {
            precondition(slot >= 0 && slot < capacity && keys[slot] != 0, "slot \(slot) holds no entry")
            yield values[slot]
        }
        _modify {
            precondition(slot >= 0 && slot < capacity && keys[slot] != 0, "slot \(slot) holds no entry")
            yield &values[slot]
        }
    }

    /// Adds `value` for `rowID`, which the table must not have.
    func insert(_ value: Value, for rowID: UInt64) {
        precondition(rowID != .max, "row ID \(rowID) out of range")
        if (count + 1) * 8 > capacity * 7 { grow(toHold: count + 1) }
        place(value, key: rowID &+ 1)
    }

    /// Makes room for `wanted` entries in all, so that insertions up to that count do not grow the table: the
    /// fewest slots that hold them at the most the table fills (7/8).
    func reserveCapacity(_ wanted: Int) {
        guard wanted * 8 > capacity * 7 else { return }
        resize(to: max(16, wanted * 8 / 7 + 1))
    }

    /// Removes the entry in `slot`, moving later entries of its probe run back so that no search stops early.
    func remove(at slot: Slot) {
        precondition(slot >= 0 && slot < capacity && keys[slot] != 0, "slot \(slot) holds no entry")
        (values + slot).deinitialize(count: 1)
        var hole = slot
        var next = slot
        while true {
            next = next == capacity - 1 ? 0 : next + 1
            let key = keys[next]
            if key == 0 { break }
            // An entry may fill the hole when the hole lies on its way from its home slot to where it is.
            let home = home(of: key)
            let reachable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next)
            if reachable {
                keys[hole] = key
                (values + hole).moveInitialize(from: values + next, count: 1)
                hole = next
            }
        }
        keys[hole] = 0
        count -= 1
    }

    /// Calls `body` with every entry's value, to change it in place.
    func updateEach(_ body: (inout Value) -> Void) {
        for slot in 0..<capacity where keys[slot] != 0 { body(&values[slot]) }
    }

    /// How many entries' values satisfy `predicate`.
    func count(where predicate: (Value) -> Bool) -> Int {
        var found = 0
        for slot in 0..<capacity where keys[slot] != 0 && predicate(values[slot]) { found += 1 }
        return found
    }

    /// The home slot of a stored key: its hash scaled to the table's size (a multiply, not a modulo).
    private func home(of key: UInt64) -> Int {
        // Row IDs are dense: the multiplier spreads neighbours over the whole table.
        let hash = key &* 0x9E37_79B9_7F4A_7C15
        return Int(hash.multipliedFullWidth(by: UInt64(capacity)).high)
    }

    /// Puts a value in the first free slot of its key's probe run (the table has room and not the key).
    private func place(_ value: Value, key: UInt64) {
        var slot = home(of: key)
        while keys[slot] != 0 {
            assert(keys[slot] != key, "row \(key - 1) is in the table already")
            slot = slot == capacity - 1 ? 0 : slot + 1
        }
        keys[slot] = key
        (values + slot).initialize(to: value)
        count += 1
    }

    private func grow(toHold wanted: Int) {
        resize(to: max(16, wanted * 3 / 2))
    }

    /// Moves every entry into a table of `newCapacity` slots, which must hold them.
    private func resize(to newCapacity: Int) {
        let (oldKeys, oldValues, oldCapacity) = (keys, values, capacity)
        capacity = newCapacity
        keys = .allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        values = .allocate(capacity: capacity)
        count = 0
        for slot in 0..<oldCapacity where oldKeys[slot] != 0 {
            place((oldValues + slot).move(), key: oldKeys[slot])
        }
        oldKeys.deallocate()
        oldValues.deallocate()
    }
}
