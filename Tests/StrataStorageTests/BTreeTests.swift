import StrataFormat
import StrataTestSupport
import Testing

@testable import StrataStorage

/// The copy-on-write B+tree: splits and merges at every size, in every order, with small, large and
/// overflow-size values, across transactions and checkpoints; checked after every step against a
/// dictionary and by the engine's own verifier.
@Suite struct BTreeTests {
    /// Records the first problems of a step and reports whether there were none.
    private func check(
        _ harness: TreeHarness,
        _ context: @autoclosure () -> String,
        checkLookups: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let problems = harness.problems(checkLookups: checkLookups)
        guard !problems.isEmpty else { return true }
        Issue.record(
            Comment(rawValue: "\(context()): " + problems.prefix(5).joined(separator: "; ")),
            sourceLocation: sourceLocation
        )
        return false
    }

    /// Inserting keys one at a time: after insert number N the tree is the tree of N keys inserted in
    /// that order, so one run checks every size from 1 to `count`.
    @Test(arguments: [512, 4096], [KeyOrder.increasing, .decreasing, .random, .outsideIn])
    func insertingKeepsTheTreeValidAtEverySize(pageSize: Int, order: KeyOrder) throws {
        for sizes in ValueSizes.allCases {
            let seed = UInt64(pageSize) &* 31 &+ UInt64(order.hashValue & 0xFF) &+ (sizes == .small ? 0 : 7)
            var random = RepeatableRandomNumberGenerator(seed: seed)
            let harness = try TreeHarness(pageSize: pageSize)
            let count = sizes == .small ? 700 : 400
            let keys = order.arrange((1...UInt64(count)).map { $0 * 3 }, using: &random)
            #expect(check(harness, "empty tree"))
            for (step, key) in keys.enumerated() {
                try harness.put(key, sizes.value(for: key, pageSize: pageSize, using: &random))
                if Int.random(in: 0..<4, using: &random) == 0 { harness.commit() }
                if Int.random(in: 0..<60, using: &random) == 0 { try harness.checkpoint() }
                let context = "seed \(seed) \(sizes) page \(pageSize) \(order) after \(step + 1) inserts"
                // Every size up to 300 is checked in full; beyond, every tenth.
                guard step < 300 || step % 10 == 0 else { continue }
                guard check(harness, context, checkLookups: step < 100 || step % 20 == 0) else { return }
            }
            try harness.checkpoint()
            #expect(check(harness, "seed \(seed) after the final checkpoint"))
            var scanRandom = random.fork()
            #expect(harness.scanProblems(scans: 200, using: &scanRandom) == [])
            #expect(try harness.height() >= 2, "\(count) keys should not fit one leaf")
        }
    }

    /// Deleting rows from leaves of rows of a few dozen bytes never splits one (FORMAT.md §4.2): a full leaf of dense
    /// row IDs that loses a row from its middle keeps its row IDs as a bitmap, a bit a row ID, narrower than the row
    /// it lost. Lookups and scans read leaves of every form (dense, bitmap, deltas) after each checkpoint.
    @Test(arguments: [512, 4096])
    func deletingRowsSplitsNoLeaf(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(pageSize) &+ 0xB17)
        let harness = try TreeHarness(pageSize: pageSize)
        let count: UInt64 = pageSize == 512 ? 2_000 : 10_000
        for key in 1...count { try harness.put(key, random.bytes(Int.random(in: 20...40, using: &random))) }
        harness.commit()
        try harness.checkpoint()
        #expect(check(harness, "page \(pageSize): \(count) dense keys"))
        var leaves = try harness.leafCount()
        // A row in ten at random, checkpointed in four rounds: every leaf loses rows from its middle, again and again.
        var keys = Array((1...count).shuffled(using: &random).prefix(Int(count) / 10))
        while !keys.isEmpty {
            for key in keys.suffix(keys.count / 4 + 1) { #expect(try harness.delete(key)) }
            keys.removeLast(keys.count / 4 + 1)
            harness.commit()
            try harness.checkpoint()
            #expect(check(harness, "page \(pageSize) after deleting down to \(harness.model.count) rows"))
            let now = try harness.leafCount()
            #expect(now <= leaves, "a delete split a leaf: \(leaves) leaves before, \(now) after")
            leaves = now
        }
        // Rows 2^40 apart in the middle: leaves of 8-byte deltas beside the bitmaps, read by the same checks.
        for key in stride(from: count / 2, to: count / 2 + 20, by: 1) { try harness.put(key &* (1 << 40), [1]) }
        harness.commit()
        try harness.checkpoint()
        #expect(check(harness, "page \(pageSize) with spread rows"))
    }

    /// A leaf's row IDs cost what their spread needs (FORMAT.md §4.2): a full leaf of dense row IDs with values of a
    /// byte or none grows when it loses a row from its middle (its bitmap takes more than the row did), and must
    /// split on a delete; small values under row IDs spread over 2^40 overflow a leaf by several pages' worth at one
    /// insert, and must split into several leaves.
    @Test(arguments: [512, 4096])
    func leavesWhoseRowIDsSpreadSplitOnDeleteAndIntoSeveralLeaves(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(pageSize) &+ 0xDE17A)
        let harness = try TreeHarness(pageSize: pageSize)
        let count: UInt64 = pageSize == 512 ? 2_000 : 6_000
        // Dense appends of empty and one-byte values: full leaves of dense row IDs.
        for key in 1...count { try harness.put(key, key % 3 == 0 ? [] : [UInt8(truncatingIfNeeded: key)]) }
        harness.commit()
        try harness.checkpoint()
        #expect(check(harness, "page \(pageSize): \(count) dense keys"))
        let leavesBefore = try harness.leafCount()
        // Removing every 7th row makes every leaf's row IDs cost a bit each: leaves split on delete.
        for (step, key) in stride(from: 4, through: count, by: 7).enumerated() {
            #expect(try harness.delete(key))
            if step % 50 == 0 {
                harness.commit()
                guard check(harness, "page \(pageSize) after deleting row \(key)", checkLookups: false) else { return }
            }
        }
        harness.commit()
        try harness.checkpoint()
        #expect(check(harness, "page \(pageSize) after the deletes"))
        #expect(try harness.leafCount() > leavesBefore, "the deletes made leaves grow and split")
        // Row IDs 2^40 apart between the dense ones: a leaf overflows by far more than one row at once.
        for key in (1...count).shuffled(using: &random).prefix(Int(count) / 4) {
            try harness.put(key &* (1 << 40), [1])
            if Int.random(in: 0..<20, using: &random) == 0 {
                harness.commit()
                guard check(harness, "page \(pageSize) after a spread insert", checkLookups: false) else { return }
            }
        }
        try harness.checkpoint()
        #expect(check(harness, "page \(pageSize) after the spread inserts"))
        // And back down to nothing, in random order.
        for key in harness.model.keys.shuffled(using: &random) { #expect(try harness.delete(key)) }
        try harness.checkpoint()
        #expect(check(harness, "page \(pageSize) emptied"))
    }

    /// Neighbouring leaves whose rows overlap (pages that each verify, from damage the page checks cannot see) are
    /// reported as corruption when a delete would join them, not joined into a leaf no page can encode.
    @Test func overlappingLeavesAreCorruptionNotATrap() throws {
        let harness = try TreeHarness(pageSize: 512)
        func leaf(_ keys: [UInt64]) -> BTreeNode {
            let values = keys.map { LeafValue.bytes([UInt8($0)]) }
            return BTreeNode(
                level: 0, keys: keys, values: LeafValues(values), children: [], owner: 1,
                bodySize: values.reduce(0) { $0 + harness.tree.limits.cellSize($1) })
        }
        let root = BTreeNode(
            level: 1, keys: [0, 13], values: [], children: [.node(leaf([10, 11, 12])), .node(leaf([5, 13]))], owner: 1,
            bodySize: BTreeLimits.internalBodySize(childCount: 2))
        #expect(throws: StorageError.self) { try harness.tree.delete(.node(root), key: 13, owner: 1) }
    }

    /// A leaf finds a key of consecutive row IDs without reading its keys (``BTreeNode/search(_:)``): after every
    /// kind of change to its keys, a search answers as a linear look at them does, and its spread is theirs.
    @Test func aLeafsSearchFollowsEveryChangeToItsRowIDs() {
        let node = BTreeNode(level: 0, keys: Array(100..<164), values: [], children: [], owner: 1, bodySize: 0)
        func expectSearchesAgree(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let keys = node.keys
            for probe in UInt64(0)..<UInt64(260) {
                let index = keys.firstIndex { $0 >= probe } ?? keys.count
                let expected = (index: index, found: index < keys.count && keys[index] == probe)
                let found = node.search(probe)
                guard found == expected else {
                    Issue.record(
                        "\(step): key \(probe) found \(found), expected \(expected)", sourceLocation: sourceLocation)
                    return
                }
            }
            let spread = node.leafSpread
            #expect(spread?.count == keys.first.map { _ in keys.count }, "\(step)", sourceLocation: sourceLocation)
            #expect(spread?.first == keys.first && spread?.last == keys.last, "\(step)", sourceLocation: sourceLocation)
        }
        expectSearchesAgree("consecutive")
        node.keys.remove(at: 20)
        expectSearchesAgree("a gap in the middle")
        node.keys.insert(120, at: 20)
        expectSearchesAgree("the gap filled again")
        node.keys.removeFirst()
        expectSearchesAgree("the first removed")
        node.keys.append(200)
        expectSearchesAgree("a row ID past a gap appended")
        node.keys.removeLast()
        node.keys.append(164)
        expectSearchesAgree("the next row ID appended")
        node.keys.removeSubrange(10..<30)
        expectSearchesAgree("a run removed")
        node.keys.withUnsafeMutableBufferPointer { keys in
            for index in keys.indices { keys[index] = 50 + UInt64(index) }
        }
        expectSearchesAgree("rewritten in place")
        node.keys = [7]
        expectSearchesAgree("one row")
        node.keys.removeAll()
        expectSearchesAgree("empty")
        let copy = BTreeNode(level: 0, keys: [3, 4, 5, 9], values: [], children: [], owner: 1, bodySize: 0)
        #expect(copy.search(9) == (3, true) && copy.search(6) == (3, false))
    }

    /// For every size N from 0 to 300: build a tree of N keys (in an order that varies with N, sometimes
    /// checkpointed), then delete every key in another order, checking after each delete.
    @Test(arguments: [512, 4096], ValueSizes.allCases)
    func deletingDownToEmptyFromEverySizeKeepsTheTreeValid(pageSize: Int, sizes: ValueSizes) throws {
        let orders = KeyOrder.allCases
        for count in 0...300 {
            let seed = UInt64(count) &* 1_000_003 &+ UInt64(pageSize) &+ (sizes == .small ? 0 : 1)
            var random = RepeatableRandomNumberGenerator(seed: seed)
            let insertOrder = orders[count % orders.count]
            let deleteOrder = orders[(count / orders.count) % orders.count]
            let harness = try TreeHarness(pageSize: pageSize)
            let keys = (0..<UInt64(count)).map { $0 * 2 + 1 }
            for key in insertOrder.arrange(keys, using: &random) {
                try harness.put(key, sizes.value(for: key, pageSize: pageSize, using: &random))
                if Int.random(in: 0..<8, using: &random) == 0 { harness.commit() }
            }
            if count % 3 != 0 { try harness.checkpoint() } else { harness.commit() }
            let context =
                "seed \(seed) \(sizes) page \(pageSize) N \(count) inserted \(insertOrder) deleted \(deleteOrder)"
            guard check(harness, "\(context), before deleting") else { return }
            for (step, key) in deleteOrder.arrange(keys, using: &random).enumerated() {
                #expect(try harness.delete(key))
                if Int.random(in: 0..<5, using: &random) == 0 { harness.commit() }
                if Int.random(in: 0..<40, using: &random) == 0 { try harness.checkpoint() }
                // Every delete is checked while N <= 48 and for every tenth N; for the other sizes, every
                // eighth delete and the last eight (the merges down to one leaf), to keep the run short.
                let remaining = count - step - 1
                guard count <= 48 || count % 10 == 0 || step % 8 == 0 || remaining < 8 else {
                    #expect(try harness.tree.get(harness.root, key) == nil, "\(context): key \(key) still found")
                    continue
                }
                let lookups = count <= 48 || step % 16 == 0 || remaining < 4
                guard check(harness, "\(context), after \(step + 1) deletes (key \(key))", checkLookups: lookups) else {
                    return
                }
                if step % 25 == 0 {
                    var scanRandom = random.fork()
                    let problems = harness.scanProblems(scans: 10, using: &scanRandom)
                    guard problems.isEmpty else {
                        Issue.record("\(context), after \(step + 1) deletes: \(problems.prefix(3))")
                        return
                    }
                }
            }
            #expect(harness.root == nil, "\(context): an emptied tree keeps a root")
            #expect(try !harness.delete(1), "\(context): deleting from an empty tree")
        }
    }

    /// Replacing values with longer and shorter ones (inline to overflow size and back) splits and
    /// merges leaves without inserting or deleting keys.
    @Test(arguments: [512, 4096])
    func replacingValuesWithOtherSizesKeepsTheTreeValid(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: 0xA11CE + UInt64(pageSize))
        let harness = try TreeHarness(pageSize: pageSize)
        let maximumInline = harness.maximumInline
        for key in 1...UInt64(200) { try harness.put(key, [UInt8](repeating: UInt8(key & 0xFF), count: 4)) }
        try harness.checkpoint()
        for step in 0..<1_500 {
            let key = UInt64.random(in: 1...200, using: &random)
            let length = [
                0, 1, maximumInline - 1, maximumInline, maximumInline + 1, 2 * pageSize,
                Int.random(in: 0...maximumInline, using: &random),
            ]
            .randomElement(using: &random)!
            try harness.put(key, random.bytes(length))
            if Int.random(in: 0..<3, using: &random) == 0 { harness.commit() }
            if Int.random(in: 0..<100, using: &random) == 0 { try harness.checkpoint() }
            guard step % 3 == 0 else { continue }
            guard
                check(
                    harness,
                    "page \(pageSize) step \(step) key \(key) length \(length)",
                    checkLookups: step % 30 == 0
                )
            else { return }
        }
    }

    /// Random inserts, replacements and deletes on a tree of a few thousand keys, with checkpoints.
    @Test(arguments: [512, 4096])
    func randomChurnOnALargerTreeKeepsItValid(pageSize: Int) throws {
        try TestEnvironment.forEachSeed(base: 0xB7EE + UInt64(pageSize), count: 2) { seed in
            var random = RepeatableRandomNumberGenerator(seed: seed)
            let harness = try TreeHarness(pageSize: pageSize)
            for step in 0..<6_000 {
                let key = UInt64.random(in: 1...3_000, using: &random)
                if harness.model[key] != nil, Int.random(in: 0..<5, using: &random) < 2 {
                    try harness.delete(key)
                } else {
                    try harness.put(key, ValueSizes.mixed.value(for: key, pageSize: pageSize, using: &random))
                }
                if Int.random(in: 0..<10, using: &random) == 0 { harness.commit() }
                if Int.random(in: 0..<700, using: &random) == 0 { try harness.checkpoint() }
                if step % 250 == 0 {
                    guard check(harness, "seed \(seed) page \(pageSize) step \(step)") else { return }
                }
            }
            // Then delete everything.
            for key in harness.model.keys.sorted().shuffled(using: &random) { try harness.delete(key) }
            #expect(harness.root == nil, "seed \(seed)")
            #expect(check(harness, "seed \(seed) emptied"))
        }
    }

    /// Trees committed earlier never change: every node a later transaction alters is copied first.
    @Test(arguments: [512, 4096])
    func committedTreesAreNeverModifiedByLaterTransactions(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: 0xC0DE + UInt64(pageSize))
        let harness = try TreeHarness(pageSize: pageSize)
        var kept: [(root: NodeRef?, model: [UInt64: [UInt8]])] = []
        for step in 0..<1_200 {
            let key = UInt64.random(in: 1...400, using: &random)
            if harness.model[key] != nil, Bool.random(using: &random) {
                try harness.delete(key)
            } else {
                try harness.put(key, ValueSizes.mixed.value(for: key, pageSize: pageSize, using: &random))
            }
            if step % 10 == 9 {
                harness.commit()
                if step % 40 == 39 { kept.append((harness.root, harness.model)) }
            }
            if step % 300 == 299 { try harness.checkpoint() }
        }
        for (index, snapshot) in kept.enumerated() {
            var contents: [UInt64: [UInt8]] = [:]
            try harness.tree.forEach(snapshot.root, from: 0, through: .max, reverse: false) { key, value in
                contents[key] = try harness.pages.bytes(of: value)
                return true
            }
            #expect(contents == snapshot.model, "tree kept after commit \(index) changed")
        }
    }

    /// Tens of thousands of keys: a 4 KiB-page tree three levels high, built in increasing order (as row IDs
    /// are allocated), then thinned out and emptied.
    @Test func threeLevelTreeOfLargePagesSplitsAndMerges() throws {
        var random = RepeatableRandomNumberGenerator(seed: 0x3_1EE1)
        let harness = try TreeHarness(pageSize: 4096)
        let count: UInt64 = 60_000
        for key in 1...count {
            // 16-byte values under dense row IDs, 18 bytes a row: appends fill leaves (223 rows each), 254 leaves
            // under a root: three levels past ~56,600.
            try harness.put(key, (0..<16).map { UInt8(truncatingIfNeeded: key >> (8 * ($0 % 8))) })
            if key % 500 == 0 { harness.commit() }
            if key % 10_000 == 0 { try harness.checkpoint() }
        }
        #expect(try harness.height() == 3)
        #expect(check(harness, "\(count) keys", checkLookups: false))
        // Delete four keys in five at random, then everything else in decreasing order.
        let doomed = (1...count).filter { $0 % 5 != 0 }.shuffled(using: &random)
        for (step, key) in doomed.enumerated() {
            try harness.delete(key)
            if step % 1_000 == 999 { harness.commit() }
            if step % 6_000 == 5_999 {
                try harness.checkpoint()
                guard check(harness, "after \(step + 1) deletes", checkLookups: false) else { return }
            }
        }
        #expect(check(harness, "one key in five left"))
        for key in harness.model.keys.sorted().reversed() { try harness.delete(key) }
        #expect(harness.root == nil)
    }

    /// Keys at the ends of the UInt64 range are stored and scanned like any other.
    @Test func extremeKeysAreOrderedAndScanned() throws {
        let harness = try TreeHarness(pageSize: 512)
        let keys: [UInt64] = [0, 1, 2, .max, .max - 1, 1 << 63, (1 << 63) - 1] + (100..<200).map { UInt64($0) << 40 }
        for key in keys { try harness.put(key, Array("k\(key)".utf8)) }
        #expect(check(harness, "extreme keys"))
        try harness.checkpoint()
        #expect(check(harness, "extreme keys after a checkpoint"))
        var got: [UInt64] = []
        try harness.tree.forEach(harness.root, from: .max - 1, through: .max, reverse: true) { key, _ in
            got.append(key)
            return true
        }
        #expect(got == [.max, .max - 1])
        got = []
        try harness.tree.forEach(harness.root, from: 5, through: 4, reverse: false) { key, _ in
            got.append(key)
            return true
        }
        #expect(got.isEmpty, "an empty range yields nothing")
        for key in keys { try harness.delete(key) }
        #expect(harness.root == nil)
    }

    /// A walk stops as soon as its body returns false, in both directions, across leaves.
    @Test func walkStopsWhenTheBodySaysSo() throws {
        let harness = try TreeHarness(pageSize: 512)
        for key in 1...UInt64(500) { try harness.put(key, [1, 2, 3]) }
        try harness.checkpoint()
        for reverse in [false, true] {
            var seen: [UInt64] = []
            let finished = try harness.tree.forEach(harness.root, from: 100, through: 400, reverse: reverse) { key, _ in
                seen.append(key)
                return seen.count < 150
            }
            #expect(!finished)
            #expect(seen == (reverse ? Array((251...400).reversed()) : Array(100..<250)))
        }
    }
}
