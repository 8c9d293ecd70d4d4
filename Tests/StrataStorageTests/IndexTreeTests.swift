import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// One index tree driven directly: many inserts and deletes under transaction tags (splits, merges,
/// rotations through parents, root growth and collapse), checkpoints to pages, and a full invariant check
/// against a sorted model after every batch.
@Suite struct IndexTreeTests {
    final class Harness {
        let pageSize: Int
        let pages: PageStore
        let tree: IndexTree
        var root: IndexNodeRef?
        var model = Set<[UInt8]>()
        var tag: UInt64 = 1
        private var nextPage: UInt64 = 1
        private var generation: UInt64 = 0

        init(pageSize: Int) throws {
            self.pageSize = pageSize
            let fileSystem = InMemoryFileSystem()
            let file = try fileSystem.openFile(at: "/pages", mode: .createNew)
            try file.write([UInt8](repeating: 0, count: pageSize), at: 0)
            pages = PageStore(file: file, pageSize: pageSize, salt: 0x5EED, cacheCapacity: 16, durablePageCount: 1)
            tree = IndexTree(pages: pages)
        }

        func insert(_ entry: [UInt8]) throws {
            let (newRoot, inserted) = try tree.insert(root, entry, owner: tag)
            #expect(inserted == !model.contains(entry))
            root = newRoot
            model.insert(entry)
        }

        func remove(_ entry: [UInt8]) throws {
            let (newRoot, removed) = try tree.remove(root, entry, owner: tag)
            #expect(removed == model.contains(entry))
            root = newRoot
            model.remove(entry)
        }

        /// Removes `entries` (sorted, distinct) a leaf at a time, as a transaction's deferred removals are applied.
        func remove(sorted entries: [[UInt8]]) throws {
            let (newRoot, removed) = try tree.remove(root, sorted: IndexEntries(entries), owner: tag)
            #expect(removed == entries.filter(model.contains).count)
            root = newRoot
            for entry in entries { model.remove(entry) }
        }

        func checkpoint() throws {
            tag += 1
            generation += 1
            var writer = CheckpointWriter(pages: pages, startPage: nextPage, generation: generation)
            let (page, _) = try writer.writeIndexTree(root)
            try writer.flush()
            nextPage = writer.nextPage
            pages.setPageCount(nextPage)
            root = page == PageFormat.noPage ? nil : .page(page)
        }

        /// Every invariant, and the entries against the model in both directions.
        func check(_ context: String) throws {
            let capacity = PageFormat.bodyCapacity(pageSize: pageSize)
            var entries: [[UInt8]] = []
            func walk(_ ref: IndexNodeRef, level: Int?, lower: [UInt8]?, upper: [UInt8]?, isRoot: Bool) throws {
                let node = try tree.resolve(ref, level: level)
                #expect(node.bodySize == IndexNode.bodySize(level: node.level, keys: node.keys[...]), "\(context)")
                #expect(node.encodedSize <= capacity, "\(context): node of \(node.encodedSize) bytes")
                #expect(node.count >= (node.isLeaf ? 1 : 2), "\(context): node of \(node.count)")
                if node.isLeaf {
                    for (position, entry) in node.keys.enumerated() {
                        #expect(lower.map { IndexKey.compare(entry, $0) >= 0 } ?? true, "\(context)")
                        #expect(upper.map { IndexKey.compare(entry, $0) < 0 } ?? true, "\(context)")
                        if position > 0 { #expect(IndexKey.compare(node.keys[position - 1], entry) < 0) }
                        entries.append(entry)
                    }
                    return
                }
                for position in node.children.indices {
                    let childLower = position == 0 ? lower : node.keys[position]
                    let childUpper = position + 1 < node.count ? node.keys[position + 1] : upper
                    try walk(
                        node.children[position], level: node.level - 1, lower: childLower, upper: childUpper,
                        isRoot: false)
                }
            }
            if let root { try walk(root, level: nil, lower: nil, upper: nil, isRoot: true) }
            let sorted = model.sorted { IndexKey.compare($0, $1) < 0 }
            #expect(entries == sorted, "\(context): \(entries.count) entries, model \(sorted.count)")
            var reversed: [[UInt8]] = []
            try tree.forEach(root, from: nil, below: nil, reverse: true) {
                reversed.append(Array($0)); return true
            }
            #expect(reversed == sorted.reversed(), "\(context)")
        }

        var height: Int {
            guard let root, let node = try? tree.resolve(root, level: nil) else { return 0 }
            return node.level + 1
        }
    }

    static func entry(_ random: inout RepeatableRandomNumberGenerator, maximum: Int) -> [UInt8] {
        // Mostly short keys sharing prefixes, some as long as the page allows.
        let length = Int.random(in: 0..<10, using: &random) == 0 ? maximum - 9 : Int.random(in: 1...24, using: &random)
        let key = (0..<length).map { _ in UInt8.random(in: 0...3, using: &random) }
        return IndexKey.entry(key: [5] + key, rowID: UInt64.random(in: 1...1000, using: &random))
    }

    @Test(arguments: [512, 4096])
    func manyInsertsAndDeletesKeepEveryInvariant(pageSize: Int) throws {
        let seed = 0x7EE5 &+ UInt64(pageSize)
        var random = RepeatableRandomNumberGenerator(seed: seed)
        let harness = try Harness(pageSize: pageSize)
        let maximum = PageFormat.maximumIndexEntry(pageSize: pageSize)
        let rounds = pageSize == 512 ? 12 : 6
        var tallest = 0
        for round in 0..<rounds {
            // Grow, then shrink to a fraction, with commits and checkpoints in between.
            for _ in 0..<(pageSize == 512 ? 800 : 6000) { try harness.insert(Self.entry(&random, maximum: maximum)) }
            tallest = max(tallest, harness.height)
            try harness.check("seed \(seed) round \(round) after inserts")
            if round % 2 == 0 { try harness.checkpoint() } else { harness.tag += 1 }
            let victims = harness.model.shuffled(using: &random).prefix(harness.model.count * 3 / 4)
            for victim in victims { try harness.remove(victim) }
            try harness.remove(Self.entry(&random, maximum: maximum))  // mostly absent
            try harness.check("seed \(seed) round \(round) after deletes")
            if round % 3 == 0 { try harness.checkpoint() }
        }
        #expect(tallest >= 3, "the tree never grew past \(tallest) levels")
        for victim in Array(harness.model) { try harness.remove(victim) }
        #expect(harness.root == nil)
    }

    /// Leaves full of one key's run share a long prefix (FORMAT.md §4.6): an entry of another key landing in one
    /// shortens the prefix of every entry at once, so the leaf overflows by several pages' worth and must split
    /// into more than two; the tree stays valid through it, a checkpoint and the removal of everything.
    @Test(arguments: [512, 4096])
    func anEntryThatShortensAFullLeafsPrefixSplitsItIntoSeveral(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: 0x9E1F &+ UInt64(pageSize))
        let harness = try Harness(pageSize: pageSize)
        let runKeys = [IndexKey.encode([.reference(7)]), IndexKey.encode([.reference(9)])]
        for (offset, key) in runKeys.enumerated() {
            for row in 0..<UInt64(pageSize == 512 ? 600 : 5000) {
                try harness.insert(IndexKey.entry(key: key, rowID: 1_000_000 + 2 * row + UInt64(offset)))
            }
        }
        try harness.check("page \(pageSize): two runs")
        try harness.checkpoint()
        // Entries of other keys and far row IDs inside the runs' leaves.
        for _ in 0..<(pageSize == 512 ? 200 : 600) {
            let key = IndexKey.encode([.reference(UInt64.random(in: 6...10, using: &random))])
            try harness.insert(IndexKey.entry(key: key, rowID: UInt64.random(in: 0...(1 << 50), using: &random)))
        }
        try harness.check("page \(pageSize): runs broken up")
        try harness.checkpoint()
        try harness.check("page \(pageSize): after a checkpoint")
        for victim in harness.model.shuffled(using: &random) { try harness.remove(victim) }
        #expect(harness.root == nil)
    }

    /// Removals applied a leaf at a time (sorted runs, some entries absent) leave what removing them one by one
    /// leaves, through merges and root collapse, in committed and in-memory trees.
    @Test(arguments: [512, 4096])
    func sortedRunsOfRemovalsMatchTheModel(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: 0x5017 &+ UInt64(pageSize))
        let harness = try Harness(pageSize: pageSize)
        let maximum = harness.tree.maximumEntry
        for _ in 0..<3_000 { try harness.insert(Self.entry(&random, maximum: maximum)) }
        try harness.check("page \(pageSize): loaded")
        for round in 0..<8 {
            if round % 2 == 0 { try harness.checkpoint() }
            // About a third of what is there, in clusters and scattered, plus entries that are not there.
            let present = harness.model.sorted { IndexKey.compare($0, $1) < 0 }
            var run = Set<[UInt8]>()
            let start = Int.random(in: 0..<max(present.count, 1), using: &random)
            for entry in present.dropFirst(start).prefix(present.count / 6) { run.insert(entry) }
            for entry in present where Int.random(in: 0..<6, using: &random) == 0 { run.insert(entry) }
            for _ in 0..<20 { run.insert(Self.entry(&random, maximum: maximum)) }
            try harness.remove(sorted: run.sorted { IndexKey.compare($0, $1) < 0 })
            try harness.check("page \(pageSize): round \(round)")
            for _ in 0..<300 { try harness.insert(Self.entry(&random, maximum: maximum)) }
        }
        try harness.remove(sorted: harness.model.sorted { IndexKey.compare($0, $1) < 0 })
        #expect(harness.root == nil)
        #expect(harness.model.isEmpty)
    }

    /// Neighbouring index leaves whose entries overlap are reported as corruption when a removal would join them.
    /// A tree built bottom up from sorted entries (an index's creation) holds every invariant, for any count of
    /// entries and with keys as long as the page allows; it survives a checkpoint and takes inserts and deletes.
    @Test(arguments: [512, 4096])
    func aTreeBuiltFromSortedEntriesKeepsEveryInvariant(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: 0xB0_11D &+ UInt64(pageSize))
        let maximum = PageFormat.maximumIndexEntry(pageSize: pageSize)
        for count in [0, 1, 2, 3, 40, 700, 6000] {
            let harness = try Harness(pageSize: pageSize)
            var entries = Set<[UInt8]>()
            while entries.count < count { entries.insert(Self.entry(&random, maximum: maximum)) }
            harness.model = entries
            harness.root = harness.tree.build(entries.sorted { IndexKey.compare($0, $1) < 0 }, owner: harness.tag)
            try harness.check("\(count) entries built")
            if count >= 700 { #expect(harness.height >= 2) }
            try harness.checkpoint()
            try harness.check("\(count) entries built, checkpointed")
            for _ in 0..<200 { try harness.insert(Self.entry(&random, maximum: maximum)) }
            for victim in harness.model.shuffled(using: &random).prefix(harness.model.count / 2) {
                try harness.remove(victim)
            }
            try harness.check("\(count) entries built, then changed")
        }
        // Only the longest keys: internal nodes of few children each, and a last one that must not keep one.
        for count in [2, 5, 9, 17, 33, 65] {
            let harness = try Harness(pageSize: pageSize)
            let entries = (0..<count).map {
                IndexKey.entry(key: [5] + [UInt8](repeating: 1, count: maximum - 10), rowID: UInt64($0))
            }
            harness.model = Set(entries)
            harness.root = harness.tree.build(entries, owner: harness.tag)
            try harness.check("\(count) longest entries built")
        }
    }

    @Test func overlappingLeavesAreCorruptionNotATrap() throws {
        let harness = try Harness(pageSize: 512)
        func entry(_ row: UInt64) -> [UInt8] { IndexKey.entry(key: IndexKey.encode([.int64(1)]), rowID: row) }
        func leaf(_ rows: [UInt64]) -> IndexNode {
            let keys = rows.map(entry)
            return IndexNode(
                level: 0, keys: keys, children: [], owner: 1, bodySize: IndexNode.bodySize(level: 0, keys: keys[...]))
        }
        let separator = entry(13)
        let root = IndexNode(
            level: 1, keys: [[], separator], children: [.node(leaf([10, 11, 12])), .node(leaf([5, 13]))], owner: 1,
            bodySize: IndexInternalPage.bodySize(separatorLengths: [separator.count]))
        #expect(throws: StorageError.self) { try harness.tree.remove(.node(root), entry(13), owner: 1) }
    }

    @Test(arguments: [512, 4096])
    func increasingInsertsFillWholeLeaves(pageSize: Int) throws {
        let harness = try Harness(pageSize: pageSize)
        for number in 0..<5000 {
            try harness.insert(IndexKey.entry(key: IndexKey.encode([.int64(Int64(number))]), rowID: 1))
        }
        try harness.check("increasing")
        try harness.checkpoint()
        var leaves = 0
        func count(_ ref: IndexNodeRef) throws {
            let node = try harness.tree.resolve(ref, level: nil)
            if node.isLeaf { leaves += 1 } else { for child in node.children { try count(child) } }
        }
        try count(harness.root!)
        let perLeaf = PageFormat.bodyCapacity(pageSize: pageSize) / (2 + 17)
        #expect(leaves <= 5000 / perLeaf + 1, "\(leaves) leaves for \(perLeaf) entries each")
    }
}
