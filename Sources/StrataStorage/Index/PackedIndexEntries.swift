import StrataFormat

/// Index entries packed back to back in one buffer (in the order they were appended), then sorted and built into an
/// index tree bottom-up, or walked in key order: how recovery's ``ReplayBatch`` indexes the rows it gathered and how a
/// write transaction applies its ``DeferredIndexChanges``.
///
/// An array per entry cost a malloc and a free per row, and a retain and release at every comparison of the sort and
/// every step of the build: with them, the sort and the build were 40% of W10's recovery. Packed, the sort moves 32-byte
/// records holding each entry's first 24 bytes as integers (only entries equal that far are compared in full), and
/// the build copies each entry once, into its leaf.
struct PackedIndexEntries {
    private var bytes: [UInt8] = []
    /// `ends[k]`: where entry k ends in ``bytes``; it starts where entry k − 1 ends.
    private var ends: [UInt32] = []
    /// `tags[k]`: the caller's number for entry k (recovery: the position of the put it belongs to, since an index
    /// that filters a row out has no entry for it; a transaction: whether the change adds the entry).
    private var tags: [Int] = []

    var count: Int { ends.count }

    /// Appends the entry of a put's row, if `index` has one for it.
    ///
    /// - Throws: what ``StoreState/entry(of:row:value:pages:limit:)`` throws for the row.
    mutating func append(
        of index: IndexDefinition, row: UInt64, value: [UInt8], put: Int, limit: Int, pages: PageStore
    ) throws {
        _ = try value.withUnsafeBytes {
            try append(of: index, row: row, bytes: $0, tag: put, limit: limit, pages: pages)
        }
    }

    /// Appends the entry of a row lent where it lies, if `index` has one for it, with the caller's `tag`; on a throw,
    /// nothing.
    ///
    /// - Returns: whether an entry was appended (false: the index filters the row out).
    /// - Throws: what ``StoreState/entry(of:row:value:pages:limit:)`` throws for the row.
    @discardableResult
    mutating func append(
        of index: IndexDefinition, row: UInt64, bytes value: UnsafeRawBufferPointer, tag: Int, limit: Int,
        pages: PageStore
    ) throws -> Bool {
        let start = bytes.count
        let appended = Result { () throws(FormatError) in try index.appendEntry(forRow: row, value, to: &bytes) }
        guard case .success(let present) = appended, bytes.count - start <= limit else {
            bytes.removeSubrange(start...)
            // The same check again, to throw exactly what a put applied at once throws.
            _ = try StoreState.entry(of: index, row: row, value: .bytes(Array(value)), pages: pages, limit: limit)
            preconditionFailure("an entry that did not fit was accepted")
        }
        guard present else { return false }
        ends.append(UInt32(bytes.count))
        tags.append(tag)
        return true
    }

    /// Removes the last `count` entries.
    mutating func removeLast(_ count: Int) {
        guard count > 0 else { return }
        ends.removeLast(count)
        tags.removeLast(count)
        bytes.removeSubrange((ends.last.map(Int.init) ?? 0)...)
    }

    /// Removes every entry, keeping the room they took for the entries noted next.
    mutating func removeAllKeepingCapacity() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        tags.removeAll(keepingCapacity: true)
    }

    /// Whether the last two entries are the same bytes (at least two entries).
    var lastTwoAreEqual: Bool {
        let count = ends.count
        let end = Int(ends[count - 1])
        let middle = Int(ends[count - 2])
        let start = count > 2 ? Int(ends[count - 3]) : 0
        guard end - middle == middle - start else { return false }
        return bytes.withUnsafeBytes {
            UnsafeRawBufferPointer(rebasing: $0[start..<middle]).elementsEqual(
                UnsafeRawBufferPointer(rebasing: $0[middle..<end]))
        }
    }

    /// Appends an entry with the caller's `tag`.
    mutating func append(_ entry: [UInt8], tag: Int) {
        entry.withUnsafeBytes { append($0, tag: tag) }
    }

    /// Appends an entry lent where it lies with the caller's `tag`.
    mutating func append(_ entry: UnsafeRawBufferPointer, tag: Int) {
        bytes.append(contentsOf: entry.assumingMemoryBound(to: UInt8.self))
        ends.append(UInt32(bytes.count))
        tags.append(tag)
    }

    /// The total bytes of the entries.
    var byteCount: Int { bytes.count }

    /// The memory the entries take: their bytes, and each one's end and tag.
    var memoryBytes: Int { bytes.count &+ ends.count &* (MemoryLayout<UInt32>.size &+ MemoryLayout<Int>.size) }

    /// An entry as the sort moves it: its first 24 bytes as big-endian integers (zero-padded), its length and where
    /// it lies. An entry of at most 24 bytes (an index on a number or a reference: 9 or 10 bytes of key and 8 of row
    /// ID) is whole in it, so the build reads it from here rather than from the buffer, where entries in sorted order
    /// lie scattered (a cache miss each: that was 96% of the build).
    struct SortKey {
        var first: UInt64
        var second: UInt64
        var third: UInt64
        var length: UInt32
        /// The entry's position in append order.
        var entry: UInt32

        static let inlineLength = 24

        /// Calls `body` with the entry's bytes: from the words when they hold it all, else from `bytes`.
        @inline(__always)
        func withBytes<R>(
            _ bytes: (Int) -> UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R
        ) -> R {
            guard Int(length) <= Self.inlineLength else { return body(bytes(Int(entry))) }
            let words = (first.bigEndian, second.bigEndian, third.bigEndian)
            return withUnsafeBytes(of: words) { body(UnsafeRawBufferPointer(rebasing: $0[..<Int(length)])) }
        }
    }

    /// A tree holding the entries of the puts `kept` accepts (by tag: the put's position), built bottom-up as
    /// ``IndexTree/build(_:owner:)`` builds it.
    ///
    /// - Parameter inRowOrder: whether the entries were appended in increasing row order (then entries of one key
    ///   need no sorting among themselves).
    func build(
        keeping kept: (Int) -> Bool, inRowOrder: Bool, tree: IndexTree, owner: UInt64
    ) -> (root: IndexNodeRef?, count: Int) {
        let keys = sorted(inRowOrder: inRowOrder, including: kept)
        return (build(keys, tree: tree, owner: owner), keys.count)
    }

    /// Below this many entries ``sorted(inRowOrder:including:)`` compares them rather than grouping them by key.
    static let fewestToGroup = 32

    /// The entries whose tag `include` accepts, in key order; equal entries in the order they were appended.
    ///
    /// - Parameter inRowOrder: whether the entries were appended in increasing row order (then entries of one key
    ///   need no sorting among themselves).
    func sorted(inRowOrder: Bool, including include: (Int) -> Bool = { _ in true }) -> [SortKey] {
        withEntries { entry in
            // A few entries (a small commit's) sort faster than grouping's tables are made.
            let groups = inRowOrder && ends.count > Self.fewestToGroup
            if groups, let grouped = sortedByKey(including: include, entry: entry) { return grouped }
            var keys: [SortKey] = []
            keys.reserveCapacity(ends.count)
            for k in 0..<ends.count where include(tags[k]) { keys.append(Self.sortKey(entry(k), k)) }
            keys.sort { a, b in
                if a.first != b.first { return a.first < b.first }
                if a.second != b.second { return a.second < b.second }
                if a.third != b.third { return a.third < b.third }
                let order = IndexKey.compare(entry(Int(a.entry)), entry(Int(b.entry)))
                return order != 0 ? order < 0 : a.entry < b.entry
            }
            return keys
        }
    }

    /// The tag of a sorted entry.
    func tag(of key: SortKey) -> Int { tags[Int(key.entry)] }

    /// Whether two sorted entries are the same bytes.
    func same(_ a: SortKey, _ b: SortKey) -> Bool {
        guard a.first == b.first, a.second == b.second, a.third == b.third, a.length == b.length else { return false }
        guard Int(a.length) > SortKey.inlineLength else { return true }
        return withEntries { IndexKey.compare($0(Int(a.entry)), $0(Int(b.entry))) == 0 }
    }

    /// A sorted entry's bytes, as an array (for a tree insert or remove).
    func entry(_ key: SortKey) -> [UInt8] {
        withEntries { entry in key.withBytes(entry) { Array($0) } }
    }

    /// Appends a sorted entry's bytes to `run` (a run of removals, for a tree remove).
    func append(_ key: SortKey, to run: inout IndexEntries) {
        withEntries { entry in key.withBytes(entry) { run.append($0) } }
    }

    /// Calls `body` with each of `sorted`'s entries in turn, lent (from the sort's words where they hold it all, else
    /// where it lies in the buffer; valid only during the call): how compaction writes an index's leaves.
    func forEach(
        _ sorted: [SortKey], _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try withEntries { entry in
            for key in sorted {
                try key.withBytes(entry) { bytes in Result { try body(bytes) } }.get()
            }
        }
    }

    /// A tree of `sorted` (strictly increasing), built bottom-up; `place` puts each leaf as the build closes it (kept
    /// in memory, or written to the page file by a large transaction).
    func build(
        _ sorted: [SortKey], tree: IndexTree, owner: UInt64, place: (IndexNode) throws -> IndexNodeRef
    ) rethrows -> IndexNodeRef? {
        let leaves = try withEntries { entry in
            try Self.fill(count: sorted.count, tree: tree, owner: owner, place: place) { position, body in
                sorted[position].withBytes(entry, body)
            }
        }
        return leaves.isEmpty ? nil : tree.buildLevels(above: leaves, owner: owner)
    }

    /// ``build(_:tree:owner:place:)`` in memory.
    func build(_ sorted: [SortKey], tree: IndexTree, owner: UInt64) -> IndexNodeRef? {
        build(sorted, tree: tree, owner: owner) { .node($0) }
    }

    /// The tree of a load: every entry present and distinct, appended in increasing row order; `place` puts each leaf
    /// as the build closes it.
    func buildLoad(
        tree: IndexTree, owner: UInt64, place: (IndexNode) throws -> IndexNodeRef
    ) rethrows -> IndexNodeRef? {
        let leaves = try fillLoad(tree: tree, owner: owner, place: place)
        return leaves.isEmpty ? nil : tree.buildLevels(above: leaves, owner: owner)
    }

    /// The leaves of a load in key order, each put by `place` as the fill closes it, after the separator that divides
    /// it from the one before. Where the keys group (``sortedByKey(including:entry:)``'s case), the sort keeps each
    /// entry's row ID only (8 bytes: the rest is its group's key) instead of a 32-byte record, and the fill makes each
    /// entry from the two: a bulk load's sort records were a third of its commit's memory (W1's massif).
    func fillLoad(
        tree: IndexTree, owner: UInt64, place: (IndexNode) throws -> IndexNodeRef
    ) rethrows -> [(separator: [UInt8], child: IndexNodeRef)] {
        try withEntries { entry in
            guard let grouping = grouping(including: { _ in true }, entry: entry) else {
                let sorted = sorted(inRowOrder: false)
                return try Self.fill(count: sorted.count, tree: tree, owner: owner, place: place) { position, body in
                    sorted[position].withBytes(entry, body)
                }
            }
            let starts = grouping.starts
            var rows = [UInt64](repeating: 0, count: starts[starts.count - 1])
            var next = starts
            for (k, rank) in grouping.rankOf.enumerated() {
                let e = entry(k)
                // Safe: every entry ends with its row ID (IndexKey.rowIDSize bytes, big-endian).
                rows[next[Int(rank)]] = UInt64(
                    bigEndian: e.loadUnaligned(fromByteOffset: e.count &- IndexKey.rowIDSize, as: UInt64.self))
                next[Int(rank)] += 1
            }
            let keyLength = grouping.keyLength
            var scratch = [UInt8](repeating: 0, count: keyLength + IndexKey.rowIDSize)
            var group = 0
            var scratchGroup = -1
            return try Self.fill(count: rows.count, tree: tree, owner: owner, place: place) { position, body in
                while position >= starts[group + 1] { group += 1 }
                while position < starts[group] { group -= 1 }
                scratch.withUnsafeMutableBytes { bytes in
                    if scratchGroup != group {
                        bytes.copyMemory(
                            from: UnsafeRawBufferPointer(rebasing: entry(grouping.firstEntry[group])[..<keyLength]))
                        scratchGroup = group
                    }
                    bytes.storeBytes(of: rows[position].bigEndian, toByteOffset: keyLength, as: UInt64.self)
                }
                scratch.withUnsafeBytes(body)
            }
        }
    }

    /// Calls `body` with a function that lends entry k's bytes where they lie.
    private func withEntries<R>(_ body: ((Int) -> UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { bytes in
            try ends.withUnsafeBufferPointer { ends in
                try body { k in
                    UnsafeRawBufferPointer(rebasing: bytes[(k == 0 ? 0 : Int(ends[k - 1]))..<Int(ends[k])])
                }
            }
        }
    }

    /// A key without its row ID, as ``KeyGroups`` groups it: the entry's words with the row ID's bytes cleared, and its
    /// length.
    private struct Key: Equatable {
        var first: UInt64
        var second: UInt64
        var third: UInt64
        var length: Int
    }

    /// The distinct keys of ``sortedByKey(_:)``, numbered in the order first seen: open addressing with a
    /// multiplicative hash. A `Dictionary` hashed each of W10's 1.85M entries with SipHash (three `Hasher` rounds,
    /// about 7% of its replay's instructions) to find one of 100 keys.
    private struct KeyGroups {
        /// The keys, by group number.
        private(set) var keys: [Key] = []
        /// Group number + 1 of the key hashed there; 0 for none. A power of two, at most half full.
        private var slots = [Int32](repeating: 0, count: 64)
        private var shift = 64 - 6
        private let limit: Int

        /// - Parameter limit: how many distinct keys ``group(of:)`` accepts.
        init(limit: Int) { self.limit = limit }

        /// The group of `key`, a new one if it was not seen; nil when that would make more than the limit.
        @inline(__always)
        mutating func group(of key: Key) -> Int? {
            let mask = slots.count &- 1
            var slot = hash(key)
            while true {
                let found = Int(slots[slot])
                if found == 0 { break }
                if keys[found &- 1] == key { return found &- 1 }
                slot = (slot &+ 1) & mask
            }
            guard keys.count < limit else { return nil }
            keys.append(key)
            slots[slot] = Int32(keys.count)
            if keys.count &* 2 > slots.count { grow() }
            return keys.count &- 1
        }

        @inline(__always)
        private func hash(_ key: Key) -> Int {
            var h = key.first &* 0x9E37_79B9_7F4A_7C15
            h = (h ^ (h >> 29) ^ key.second) &* 0xBF58_476D_1CE4_E5B9
            h = (h ^ (h >> 32) ^ key.third) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: h >> UInt64(shift))
        }

        private mutating func grow() {
            slots = [Int32](repeating: 0, count: slots.count &* 2)
            shift &-= 1
            let mask = slots.count &- 1
            for (group, key) in keys.enumerated() {
                var slot = hash(key)
                while slots[slot] != 0 { slot = (slot &+ 1) & mask }
                slots[slot] = Int32(group &+ 1)
            }
        }
    }

    /// Entries in row order sorted by key without comparing them: each key (the entry less its row ID) gets a group
    /// by hashing, the few distinct keys are sorted, and a counting sort places the groups, each in row order. An
    /// index on a to-one or on a category (W10's `employee_department`: 100 keys for 1.85M entries) then costs a hash
    /// per entry instead of a merge sort's twenty comparisons. Nil when it does not apply, and the caller sorts: an
    /// entry longer than the integers hold, keys of different lengths (a key that is a prefix of another would not
    /// order as its entries do), or keys mostly distinct.
    ///
    /// Works from the packed entries, not from a first array of sort records: only the sorted records are made (a
    /// bulk load's sort held two arrays of 32 bytes an entry at once).
    private func sortedByKey(
        including include: (Int) -> Bool, entry: (Int) -> UnsafeRawBufferPointer
    ) -> [SortKey]? {
        guard let grouping = grouping(including: include, entry: entry) else { return nil }
        var next = grouping.starts
        var sorted = [SortKey](
            repeating: SortKey(first: 0, second: 0, third: 0, length: 0, entry: 0), count: next[next.count - 1])
        for (k, rank) in grouping.rankOf.enumerated() where rank >= 0 {
            sorted[next[Int(rank)]] = Self.sortKey(entry(k), k)
            next[Int(rank)] += 1
        }
        return sorted
    }

    /// The plan of ``sortedByKey(including:entry:)``'s counting sort: each entry's key rank (-1 for an entry not
    /// included), where each rank's entries start in key order (the last start is the count), an entry of each rank,
    /// and the keys' length. Nil when the entries do not group.
    private struct Grouping {
        var rankOf: [Int32]
        var starts: [Int]
        var firstEntry: [Int]
        var keyLength: Int
    }

    private func grouping(including include: (Int) -> Bool, entry: (Int) -> UnsafeRawBufferPointer) -> Grouping? {
        guard let firstIncluded = (0..<ends.count).first(where: { include(tags[$0]) }) else {
            return Grouping(
                rankOf: [Int32](repeating: -1, count: ends.count), starts: [0], firstEntry: [], keyLength: 0)
        }
        let length = entry(firstIncluded).count
        guard length <= SortKey.inlineLength else { return nil }
        let keyLength = length - IndexKey.rowIDSize
        func mask(_ offset: Int) -> UInt64 {
            let kept = min(max(keyLength - offset, 0), 8)
            return kept == 0 ? 0 : kept == 8 ? .max : ~(UInt64.max >> (8 * kept))
        }
        let masks = (mask(0), mask(8), mask(16))
        var groups = KeyGroups(limit: max(16, ends.count / 8))
        var groupOf: [Int32] = []
        groupOf.reserveCapacity(ends.count)
        var firstOfGroup: [Int] = []
        for k in 0..<ends.count {
            guard include(tags[k]) else {
                groupOf.append(-1)
                continue
            }
            let e = entry(k)
            guard e.count == length,
                let group = groups.group(
                    of: Key(
                        first: Self.word(e, at: 0) & masks.0, second: Self.word(e, at: 8) & masks.1,
                        third: Self.word(e, at: 16) & masks.2, length: keyLength))
            else { return nil }
            if group == firstOfGroup.count { firstOfGroup.append(k) }
            groupOf.append(Int32(group))
        }
        let distinct = groups.keys
        // Keys of one length in byte order: their big-endian words in order.
        let ranked = distinct.indices.sorted { a, b in
            let (x, y) = (distinct[a], distinct[b])
            if x.first != y.first { return x.first < y.first }
            if x.second != y.second { return x.second < y.second }
            return x.third < y.third
        }
        var rank = [Int32](repeating: 0, count: distinct.count)
        for (position, group) in ranked.enumerated() { rank[group] = Int32(position) }
        var starts = [Int](repeating: 0, count: distinct.count + 1)
        for k in groupOf.indices where groupOf[k] >= 0 {
            groupOf[k] = rank[Int(groupOf[k])]
            starts[Int(groupOf[k]) + 1] += 1
        }
        for position in 1..<starts.count { starts[position] += starts[position - 1] }
        return Grouping(
            rankOf: groupOf, starts: starts, firstEntry: ranked.map { firstOfGroup[$0] }, keyLength: keyLength)
    }

    /// The sort record of entry `k`, whose bytes are `e`.
    @inline(__always)
    private static func sortKey(_ e: UnsafeRawBufferPointer, _ k: Int) -> SortKey {
        SortKey(
            first: word(e, at: 0), second: word(e, at: 8), third: word(e, at: 16), length: UInt32(e.count),
            entry: UInt32(k))
    }

    /// Fills leaves with `count` entries in order (``IndexLeafFiller``), `withEntry(position, body)` lending each, and
    /// puts each with `place` as it closes; returns them, each after its separator, for
    /// ``IndexTree/buildLevels(above:owner:)`` (``IndexTree/build(_:owner:)``'s shape exactly). Inlined into its
    /// callers, so that the lending costs no call per entry.
    @inline(__always)
    private static func fill(
        count: Int, tree: IndexTree, owner: UInt64, place: (IndexNode) throws -> IndexNodeRef,
        withEntry: (Int, (UnsafeRawBufferPointer) -> Void) -> Void
    ) rethrows -> [(separator: [UInt8], child: IndexNodeRef)] {
        var leaves: [(separator: [UInt8], child: IndexNodeRef)] = []
        var filler = IndexLeafFiller(capacity: tree.capacity, owner: owner)
        for position in 0..<count {
            var closed: IndexLeafFiller.Leaf? = nil
            withEntry(position) { closed = filler.add($0) }
            if let closed { leaves.append((closed.separator, try place(closed.node))) }
        }
        if let last = filler.finish() { leaves.append((last.separator, try place(last.node))) }
        return leaves
    }

    /// The big-endian word of `bytes[offset ..< offset + 8]`, zero-padded past the end.
    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        // Safe: the load reads offset ..< offset + 8, checked to lie within the buffer.
        if bytes.count >= offset &+ 8 {
            return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        var word: UInt64 = 0
        var index = offset
        while index < bytes.count {
            word |= UInt64(bytes[index]) << (8 &* UInt64(7 &- (index &- offset)))
            index &+= 1
        }
        return word
    }
}
