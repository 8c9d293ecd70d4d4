/// Finds the number of an interned ``PropertyKeySource`` (its position in the table's list of sources) without
/// `Hasher`: an open-addressed table of positions under a multiplicative hash of the source's bytes.
///
/// Every managed object made (a fault too) interns the key of each of its property wrappers, so this lookup runs
/// several times per object: through a `Dictionary` it was a tenth of the cost of making a fetched object
/// (SipHash of the enum and its string). Keys come from the program's declarations, never from untrusted input,
/// so a simple hash suffices.
struct PropertyKeyIndex {
    /// Position + 1 of a source in the sources list, or 0 for an empty slot; the count is a power of two.
    private var slots = [UInt32](repeating: 0, count: 64)
    private var count = 0

    /// The number of `source` in `sources`, if it is there.
    func number(of source: PropertyKeySource, in sources: [PropertyKeySource]) -> UInt32? {
        let mask = slots.count - 1
        var position = Self.hash(source) & mask
        while true {
            let slot = slots[position]
            if slot == 0 { return nil }
            if sources[Int(slot - 1)] == source { return slot - 1 }
            position = (position + 1) & mask
        }
    }

    /// Records that `source` is number `number` of `sources` (the list that already holds it).
    mutating func insert(_ source: PropertyKeySource, number: UInt32, in sources: [PropertyKeySource]) {
        if (count + 1) * 2 > slots.count {
            // Keep the table at most half full: rebuild it twice as large from the sources before this one.
            var larger = PropertyKeyIndex()
            larger.slots = [UInt32](repeating: 0, count: slots.count * 2)
            for (index, earlier) in sources.enumerated() where index != Int(number) {
                larger.place(earlier, slot: UInt32(index + 1))
            }
            self = larger
        }
        place(source, slot: number + 1)
    }

    private mutating func place(_ source: PropertyKeySource, slot: UInt32) {
        let mask = slots.count - 1
        var position = Self.hash(source) & mask
        while slots[position] != 0 { position = (position + 1) & mask }
        slots[position] = slot
        count += 1
    }

    /// FNV-1a over a name's UTF-8 bytes, or over a site's two words.
    static func hash(_ source: PropertyKeySource) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        switch source {
        case .name(let name):
            // Through `withUTF8`: iterating `utf8` cost 240 instructions for a ten-letter name.
            var name = name
            name.withUTF8 { bytes in
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            }
        case .site(let site):
            hash = (hash ^ UInt64(site.file)) &* 0x0000_0100_0000_01b3
            hash = (hash ^ site.position) &* 0x0000_0100_0000_01b3
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }
}
