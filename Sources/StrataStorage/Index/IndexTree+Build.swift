import StrataFormat

extension IndexTree {
    /// A new tree holding `entries`, built bottom up: leaves filled in order as far as a page holds them (with the
    /// prefix their first and last entries share stored once, §4.6), then each level of internal nodes over the
    /// one below, separated by the shortest separators, until one node is left. What inserting the same sorted
    /// entries one by one gives on the right edge (full leaves), without a descent per entry.
    ///
    /// - Parameters:
    ///   - entries: strictly increasing (a precondition), each at most ``maximumEntry`` bytes.
    ///   - owner: the tag of the write transaction the new nodes belong to.
    /// - Returns: the root, or nil for no entries.
    func build(_ entries: [[UInt8]], owner: UInt64) -> IndexNodeRef? {
        var packed = PackedIndexEntries()
        for entry in entries {
            precondition(entry.count <= maximumEntry, "index entry longer than the tree allows")
            packed.append(entry, tag: 0)
        }
        let sorted = packed.sorted(inRowOrder: false)
        for position in sorted.indices {
            precondition(
                Int(sorted[position].entry) == position
                    && (position == 0 || !packed.same(sorted[position - 1], sorted[position])),
                "index entries to build must strictly increase")
        }
        return packed.build(sorted, tree: self, owner: owner)
    }

    /// The internal levels over a level of leaves (each after the separator that divides it from the one before; in
    /// memory, or written by a large transaction), bottom up until one node is left: the root. The one builder of
    /// internal index nodes, for every bottom-up build (``build(_:owner:)``, recovery's ``PackedIndexEntries``).
    func buildLevels(above leaves: [(separator: [UInt8], child: IndexNodeRef)], owner: UInt64) -> IndexNodeRef {
        var level = leaves
        var height = 0
        while level.count > 1 {
            height += 1
            // Children `bounds[g] ..< bounds[g + 1]` go to parent g: as many as a page holds.
            var bounds = [0]
            var size = PageFormat.internalFirstChildSize
            for child in level.indices.dropFirst() {
                let cost = PageFormat.indexInternalEntryOverhead + level[child].separator.count
                if child > bounds[bounds.count - 1], size + cost > capacity {
                    bounds.append(child)
                    size = PageFormat.internalFirstChildSize
                } else {
                    size += cost
                }
            }
            bounds.append(level.count)
            // Every internal node has two children or more: a last parent with one takes one from the one before
            // when that one keeps two, else the two become one (three children: separators take at most a
            // quarter of a page each, so they fit).
            var groups = bounds.count - 1
            if groups > 1, bounds[groups] - bounds[groups - 1] == 1 {
                if bounds[groups - 1] - bounds[groups - 2] >= 3 {
                    bounds[groups - 1] -= 1
                } else {
                    bounds.remove(at: groups - 1)
                    groups -= 1
                }
            }
            var parents: [(separator: [UInt8], child: IndexNodeRef)] = []
            for group in 0..<groups {
                let children = level[bounds[group]..<bounds[group + 1]]
                let keys = [[]] + children.dropFirst().map(\.separator)
                let parent = IndexNode(
                    level: height, keys: keys, children: children.map(\.child), owner: owner,
                    bodySize: IndexInternalPage.bodySize(separatorLengths: keys.dropFirst().lazy.map(\.count)))
                parents.append((children.first!.separator, .node(parent)))
            }
            level = parents
        }
        return level[0].child
    }
}
