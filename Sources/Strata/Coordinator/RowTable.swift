import CPrefetch

/// A hash table from row ID to a value, for the row cache: open addressing with linear probing, sized to what it
/// holds rather than to a power of two.
///
/// The row cache has one entry per registered object that read its row, so the table's empty slots are part of
/// what every fault costs. A `Dictionary` keeps between 3/8 and 3/4 of its buckets in use (a million entries
/// take 2^21 buckets); this table grows by half when it is 7/8 full, so it keeps between 2/3 and 7/8 of its slots
/// in use (a million entries take 1.14 to 1.5 million slots).
///
/// A removal leaves a tombstone (a bit of its own) rather than moving the rest of its probe run back: at 7/8 full
/// the run after a slot is tens of slots long, and shifting it cost more than the rest of a release. Searches pass
/// over tombstones; an insertion takes the first free slot of its run; the table is rehashed at its size when its
/// entries and tombstones fill it (after at least 5/24 of its slots were taken), and forgets its tombstones at once
/// when its last entry goes (its context let go of every object).
///
/// A table of more than ``smallCapacity`` slots whose last entry goes frees its slots and starts again at none; its
/// next growth past ``smallCapacity`` goes straight to the size that holds as many entries as it last held at most.
/// Without that, a table a large fetch grew stayed that large while it held one row at a time (W3.graph: after the
/// fetch of a million IDs, 37,450 slots, 1.8 MB): each row landed in a slot far from the last one's, a cache miss or
/// two on every fault fired. A context that fills the table as the one before did (a fetch per context) regrows it in
/// one step, where it reused it before.
final class RowTable<Value> {
    /// `rowID + 1` of each slot's entry, 0 for a free slot (a row ID is never `UInt64.max`: the engine stops
    /// allocating before it).
    private var keys: UnsafeMutablePointer<UInt64>
    /// One bit a slot, set when the slot is free because of a removal: a search goes on past it.
    private var tombstones: UnsafeMutablePointer<UInt64>
    /// The values; a slot's is initialized exactly when its key is not 0. Raw storage rather than `[Value?]`: an
    /// optional read in place through `!` was copied (with its references retained) on every access.
    private var values: UnsafeMutablePointer<Value>
    private(set) var capacity = 0
    private(set) var count = 0
    /// How many tombstones are set.
    private(set) var tombstoneCount = 0
    /// The most entries the table held since it was last empty.
    private var peakCount = 0
    /// The capacity that holds the most entries the table held before its last entry went and it let go of its
    /// slots (0: none, or already regrown): its next growth past ``smallCapacity`` goes straight to it.
    private(set) var formerCapacity = 0

    /// The most slots a table keeps once empty, and where an emptied table's growth starts.
    static var smallCapacity: Int { 16 }

    /// A slot of the table: valid until the next insertion or removal.
    typealias Slot = Int

    init() {
        keys = .allocate(capacity: 0)
        values = .allocate(capacity: 0)
        tombstones = .allocate(capacity: 0)
    }

    deinit {
        for slot in 0..<capacity where keys[slot] != 0 { (values + slot).deinitialize(count: 1) }
        keys.deallocate()
        values.deallocate()
        tombstones.deallocate()
    }

    /// Hints that `rowID` is about to be looked up or inserted: the CPU starts fetching its home slot's key and value
    /// (in a large table, lines not read for a while) while other work goes on. A hint only.
    func prefetchSlot(of rowID: UInt64) {
        guard capacity > 0 else { return }
        let slot = home(of: rowID &+ 1)
        cprefetch_read(keys + slot)
        cprefetch_write(values + slot)
    }

    /// The slot holding `rowID`, if the table has it.
    func slot(of rowID: UInt64) -> Slot? {
        guard capacity > 0 else { return nil }
        let key = rowID &+ 1
        var slot = home(of: key)
        while true {
            let found = keys[slot]
            if found == key { return slot }
            if found == 0 && !isTombstone(slot) { return nil }
            slot = slot == capacity - 1 ? 0 : slot + 1
        }
    }

    /// The slot holding `rowID`, and whether it was made now with the value `make` returns: one search for a row
    /// the table may have (a search, then an insertion, walked the probe run twice).
    func slot(of rowID: UInt64, insertingIfAbsent make: () -> Value) -> (slot: Slot, inserted: Bool) {
        precondition(rowID != .max, "row ID \(rowID) out of range")
        let key = rowID &+ 1
        if capacity > 0 {
            var slot = home(of: key)
            var free: Slot?
            while true {
                let found = keys[slot]
                if found == key { return (slot, false) }
                if found == 0 {
                    if !isTombstone(slot) { break }
                    if free == nil { free = slot }
                }
                slot = slot == capacity - 1 ? 0 : slot + 1
            }
            // The first tombstone of the run, else the empty slot that ended it.
            if !needsRoomForOne {
                let target = free ?? slot
                clearTombstone(target)
                keys[target] = key
                (values + target).initialize(to: make())
                count += 1
                peakCount = max(peakCount, count)
                return (target, true)
            }
        }
        makeRoomForOne()
        let slot = place(make(), key: key)
        peakCount = max(peakCount, count)
        return (slot, true)
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
        makeRoomForOne()
        place(value, key: rowID &+ 1)
        peakCount = max(peakCount, count)
    }

    /// Makes room for `wanted` entries in all, so that insertions up to that count do not grow the table: the
    /// fewest slots that hold them at the most the table fills (7/8).
    func reserveCapacity(_ wanted: Int) {
        if wanted * 8 > capacity * 7 {
            resize(to: Self.capacity(holding: wanted))
        } else if (wanted + tombstoneCount) * 8 > capacity * 7 {
            resize(to: capacity)
        }
    }

    /// Removes the entry in `slot`. Its slot becomes a tombstone unless the next slot is empty (no probe run goes
    /// on past it then).
    func remove(at slot: Slot) {
        precondition(slot >= 0 && slot < capacity && keys[slot] != 0, "slot \(slot) holds no entry")
        (values + slot).deinitialize(count: 1)
        keys[slot] = 0
        count -= 1
        let next = slot == capacity - 1 ? 0 : slot + 1
        if keys[next] != 0 || isTombstone(next) {
            tombstones[slot >> 6] |= 1 << UInt64(slot & 63)
            tombstoneCount += 1
        }
        guard count == 0 else { return }
        // The last entry gone from a large table: its slots go, and its size is remembered for its next growth.
        defer { peakCount = 0 }
        if capacity > Self.smallCapacity {
            formerCapacity = Self.capacity(holding: peakCount)
            keys.deallocate()
            values.deallocate()
            tombstones.deallocate()
            keys = .allocate(capacity: 0)
            values = .allocate(capacity: 0)
            tombstones = .allocate(capacity: 0)
            capacity = 0
            tombstoneCount = 0
            return
        }
        // The last entry gone: every tombstone goes, for what it costs to clear a bit of each (at most a word per
        // 64 removals).
        if tombstoneCount * 64 >= capacity {
            tombstones.update(repeating: 0, count: Self.words(capacity))
            tombstoneCount = 0
        }
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

    /// Puts a value in the first free slot of its key's probe run (the table has room and not the key). The peak
    /// count is its callers' to raise: a resize places entries again without adding any.
    @discardableResult
    private func place(_ value: Value, key: UInt64) -> Slot {
        var slot = home(of: key)
        while keys[slot] != 0 {
            assert(keys[slot] != key, "row \(key - 1) is in the table already")
            slot = slot == capacity - 1 ? 0 : slot + 1
        }
        clearTombstone(slot)
        keys[slot] = key
        (values + slot).initialize(to: value)
        count += 1
        return slot
    }

    /// Whether one more entry would fill the table past 7/8 with its entries and tombstones.
    private var needsRoomForOne: Bool { (count + tombstoneCount + 1) * 8 > capacity * 7 }

    /// Makes room for one more entry: grows the table by half when its entries fill 2/3 of it, else rehashes it at
    /// its size to drop its tombstones.
    private func makeRoomForOne() {
        guard needsRoomForOne else { return }
        guard (count + 1) * 3 > capacity * 2 else { return resize(to: capacity) }
        let grown = max(Self.smallCapacity, (count + 1) * 3 / 2)
        // An emptied table grows back to its former size at once, once it holds more than a small table's rows.
        if grown > Self.smallCapacity && formerCapacity > grown {
            resize(to: formerCapacity)
            formerCapacity = 0
        } else {
            resize(to: grown)
        }
    }

    private func isTombstone(_ slot: Slot) -> Bool {
        tombstones[slot >> 6] & (1 << UInt64(slot & 63)) != 0
    }

    private func clearTombstone(_ slot: Slot) {
        let bit: UInt64 = 1 << UInt64(slot & 63)
        guard tombstones[slot >> 6] & bit != 0 else { return }
        tombstones[slot >> 6] &= ~bit
        tombstoneCount -= 1
    }

    /// The fewest slots that hold `entries` at the most the table fills (7/8).
    private static func capacity(holding entries: Int) -> Int { max(smallCapacity, entries * 8 / 7 + 1) }

    /// The words of a tombstone bitmap for `capacity` slots.
    private static func words(_ capacity: Int) -> Int { (capacity + 63) / 64 }

    /// Moves every entry into a table of `newCapacity` slots, which must hold them.
    private func resize(to newCapacity: Int) {
        let (oldKeys, oldValues, oldTombstones, oldCapacity) = (keys, values, tombstones, capacity)
        capacity = newCapacity
        keys = .allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        values = .allocate(capacity: capacity)
        tombstones = .allocate(capacity: Self.words(capacity))
        tombstones.initialize(repeating: 0, count: Self.words(capacity))
        count = 0
        tombstoneCount = 0
        for slot in 0..<oldCapacity where oldKeys[slot] != 0 {
            place((oldValues + slot).move(), key: oldKeys[slot])
        }
        oldKeys.deallocate()
        oldValues.deallocate()
        oldTombstones.deallocate()
    }
}
