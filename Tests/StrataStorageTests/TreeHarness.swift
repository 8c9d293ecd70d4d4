import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// One B+tree driven directly (below the store): puts and deletes under transaction tags, checkpoints
/// through the engine's `CheckpointWriter` into an in-memory page file, and a full check against a
/// dictionary after any step.
///
/// The page cache is kept at its minimum so that reads after a checkpoint really decode pages.
final class TreeHarness {
    let pageSize: Int
    let pages: PageStore
    let tree: BTree
    private(set) var root: NodeRef?
    private(set) var model: [UInt64: [UInt8]] = [:]
    /// The tag of the current "transaction"; ``commit()`` starts the next, after which every node the
    /// previous one made must be copied before it changes.
    private(set) var tag: UInt64 = 1
    private var nextPage: UInt64 = 1
    private var generation: UInt64 = 0
    private(set) var checkpoints = 0

    init(pageSize: Int) throws {
        self.pageSize = pageSize
        let fileSystem = InMemoryFileSystem()
        let file = try fileSystem.openFile(at: "/pages", mode: .createNew)
        try file.write([UInt8](repeating: 0, count: pageSize), at: 0)
        pages = PageStore(file: file, pageSize: pageSize, salt: 0x5EED_5EED, cacheCapacity: 16, durablePageCount: 1)
        tree = BTree(pages: pages)
    }

    var maximumInline: Int { PageFormat.maximumInlineValue(pageSize: pageSize) }

    /// Stores a value (insert or replace) and mirrors it in the model.
    func put(_ key: UInt64, _ value: [UInt8]) throws {
        let (newRoot, replaced) = try tree.put(root, key: key, value: .bytes(value), owner: tag)
        // The put hands back the value it replaced (index maintenance reads the old row from it).
        #expect(
            try replaced.map { try pages.bytes(of: $0) } == model[key],
            "put \(key): replaced \(String(describing: replaced))")
        root = newRoot
        model[key] = value
    }

    /// Deletes a key and mirrors it in the model.
    @discardableResult
    func delete(_ key: UInt64) throws -> Bool {
        let (newRoot, deleted) = try tree.delete(root, key: key, owner: tag)
        #expect(try deleted.map { try pages.bytes(of: $0) } == model[key], "delete \(key): the value removed")
        root = newRoot
        model[key] = nil
        return deleted != nil
    }

    /// Ends the current transaction: its nodes are now shared and must not change.
    func commit() { tag += 1 }

    /// Writes every in-memory node to the page file as a checkpoint does; the root becomes a page.
    func checkpoint() throws {
        commit()
        generation += 1
        var writer = CheckpointWriter(pages: pages, startPage: nextPage, generation: generation)
        let (page, height) = try writer.writeTree(root)
        try writer.flush()
        nextPage = writer.nextPage
        pages.setPageCount(nextPage)
        root = page == PageFormat.noPage ? nil : .page(page)
        #expect((height == 0) == model.isEmpty)
        checkpoints += 1
    }

    /// A row-ID allocator above every key (UInt64.max when the tree holds UInt64.max, which no store
    /// allocator can pass; the verifier's allocator check is then skipped).
    private var allocator: UInt64 {
        let top = model.keys.max() ?? 0
        return top == .max ? .max : top + 1
    }

    /// The tree as a one-table store state, for the engine's verifier.
    private var state: StoreState {
        var state = StoreState()
        let id = TableID(1)
        state.tables[id] = TableState(
            id: id,
            name: "t",
            nextRowID: allocator,
            rowCount: UInt64(model.count),
            root: root
        )
        state.tableIDs["t"] = id
        state.nextTableID = 2
        return state
    }

    /// Everything wrong with the tree: the engine verifier's problems, then any difference from the model
    /// in full forward and backward scans and, when `checkLookups`, in lookups of every key (and of absent
    /// neighbours) and in the bytes of overflow values.
    func problems(checkLookups: Bool = true) -> [String] {
        var verifier = StoreVerifier(pages: pages)
        verifier.verifyTables(state, rootRecordPages: 0)
        var found = verifier.report.problems.map(\.description)
        if model[.max] != nil { found.removeAll { $0.contains("would allocate") } }
        do {
            let keys = model.keys.sorted()
            var forward: [UInt64] = []
            try tree.forEach(root, from: 0, through: .max, reverse: false) { key, value in
                forward.append(key)
                // Overflow chains are read back only on full checks (they cost page reads and checksums).
                if case .bytes(let bytes) = value, bytes != model[key] { found.append("scan: wrong value for \(key)") }
                if checkLookups, case .overflow = value, try pages.bytes(of: value) != model[key] {
                    found.append("scan: wrong overflow value for \(key)")
                }
                return true
            }
            if forward != keys { found.append("forward scan gives \(forward.count) keys, expected \(keys.count)") }
            var backward: [UInt64] = []
            try tree.forEach(root, from: 0, through: .max, reverse: true) { key, _ in
                backward.append(key)
                return true
            }
            if backward != keys.reversed() { found.append("backward scan differs") }
            if checkLookups {
                for key in keys {
                    guard let value = try tree.get(root, key) else {
                        found.append("get \(key): missing")
                        continue
                    }
                    if try pages.bytes(of: value) != model[key] { found.append("get \(key): wrong value") }
                    if key < .max, model[key + 1] == nil, try tree.get(root, key + 1) != nil {
                        found.append("get \(key + 1): present")
                    }
                }
                if model[0] == nil, try tree.get(root, 0) != nil { found.append("get 0: present") }
            }
        } catch {
            found.append("reading threw \(error)")
        }
        return found
    }

    /// Range scans with random bounds against the model.
    func scanProblems(scans: Int, using random: inout RepeatableRandomNumberGenerator) -> [String] {
        let keys = model.keys.sorted()
        let top = (keys.last ?? 0) + 2
        var found: [String] = []
        do {
            for _ in 0..<scans {
                func bound() -> UInt64 {
                    if !keys.isEmpty, Bool.random(using: &random) { return keys.randomElement(using: &random)! }
                    return UInt64.random(in: 0...top, using: &random)
                }
                let lower = bound()
                let upper = bound()
                let reverse = Bool.random(using: &random)
                var expected = keys.filter { $0 >= lower && $0 <= upper }
                if reverse { expected.reverse() }
                var got: [UInt64] = []
                try tree.forEach(root, from: lower, through: upper, reverse: reverse) { key, _ in
                    got.append(key)
                    return true
                }
                if got != expected {
                    found.append(
                        "scan \(lower)...\(upper)\(reverse ? " reversed" : ""): "
                            + "\(got.count) keys, expected \(expected.count)"
                    )
                }
            }
        } catch {
            found.append("scan threw \(error)")
        }
        return found
    }

    /// The height of the tree (0 when empty).
    func height() throws -> Int {
        guard let root else { return 0 }
        return try tree.resolve(root, level: nil).level + 1
    }

    /// The number of leaves in the tree.
    func leafCount() throws -> Int {
        func count(_ ref: NodeRef) throws -> Int {
            let node = try tree.resolve(ref, level: nil)
            return node.isLeaf ? 1 : try node.children.reduce(0) { $0 + (try count($1)) }
        }
        return try root.map(count) ?? 0
    }
}

/// Orders in which a test visits keys.
enum KeyOrder: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case increasing, decreasing, random, outsideIn

    var testDescription: String { rawValue }

    /// `keys` in this order.
    func arrange(_ keys: [UInt64], using random: inout RepeatableRandomNumberGenerator) -> [UInt64] {
        let sorted = keys.sorted()
        switch self {
        case .increasing: return sorted
        case .decreasing: return sorted.reversed()
        case .random: return sorted.shuffled(using: &random)
        case .outsideIn:
            var result: [UInt64] = []
            var low = 0
            var high = sorted.count - 1
            while low <= high {
                result.append(sorted[low])
                if low != high { result.append(sorted[high]) }
                low += 1
                high -= 1
            }
            return result
        }
    }
}

/// Sizes of the values a test stores.
enum ValueSizes: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// 0 to 24 bytes: many cells per leaf, deep trees.
    case small
    /// Anything up to the inline limit, and one value in eight long enough for an overflow chain of up
    /// to three pages.
    case mixed

    var testDescription: String { rawValue }

    func value(for key: UInt64, pageSize: Int, using random: inout RepeatableRandomNumberGenerator) -> [UInt8] {
        let maximumInline = PageFormat.maximumInlineValue(pageSize: pageSize)
        let length: Int
        switch self {
        case .small: length = Int.random(in: 0...24, using: &random)
        case .mixed:
            length =
                Int.random(in: 0..<8, using: &random) == 0
                ? Int.random(in: (maximumInline + 1)...(3 * pageSize), using: &random)
                : Int.random(in: 0...maximumInline, using: &random)
        }
        // The key in the first bytes, so that a value read under the wrong key shows.
        var bytes = random.bytes(length)
        for index in 0..<min(8, length) { bytes[index] = UInt8(truncatingIfNeeded: key >> (8 * UInt64(index))) }
        return bytes
    }
}
