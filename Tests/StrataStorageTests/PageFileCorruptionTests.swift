import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Every single-byte flip anywhere in a small store's page file is either detected (a typed error when
/// opening or reading, and a problem in `verify()`) or harmless (a page no current tree or root record
/// references): never silently wrong data.
@Suite struct PageFileCorruptionTests {
    private let pagePath = TemporaryStore.pageFile()
    private let pageSize = 512

    /// A closed store of three checkpoints (so that the file holds superseded trees and root records), with
    /// overflow chains, a multi-level tree, an emptied table and a dropped one.
    private func makeStore() throws -> (InMemoryFileSystem, ReferenceModel) {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize))
        var model = ReferenceModel()
        var random = RepeatableRandomNumberGenerator(seed: 0xF11B)
        try store.write { txn in
            for name in ["a", "b", "c", "gone"] { model.createTable(named: name); try txn.createTable(named: name) }
            for index in 0..<60 {
                let value = random.bytes(index % 20 == 0 ? 700 : Int.random(in: 0...40, using: &random))
                try txn.insert(value, into: txn.table(named: "a")!)
                model.insert(value, into: "a")
            }
            try txn.insert([1], into: txn.table(named: "gone")!)
            model.insert([1], into: "gone")
        }
        try store.checkpoint()
        try store.write { txn in
            let b = txn.table(named: "b")!
            for _ in 0..<5 {
                let value = random.bytes(30)
                try txn.insert(value, into: b)
                model.insert(value, into: "b")
            }
            try txn.update(RowID(2), in: txn.table(named: "a")!, to: [2, 2])
            model.update(RowID(2), in: "a", to: [2, 2])
        }
        try store.checkpoint()
        try store.write { txn in
            try txn.dropTable(txn.table(named: "gone")!)
            model.dropTable(named: "gone")
            let a = txn.table(named: "a")!
            for row in stride(from: 3, through: 60, by: 4) {
                try txn.delete(RowID(UInt64(row)), from: a)
                model.delete(RowID(UInt64(row)), from: "a")
            }
            let c = txn.table(named: "c")!
            try txn.insert(random.bytes(1_200), into: c)
            model.insert(try txn.row(RowID(1), in: c)!, into: "c")
        }
        try store.close()
        return (fileSystem, model)
    }

    private enum Outcome: Hashable {
        case openFailed, readFailed, harmless
    }

    @Test func everyByteFlipOfEveryPageIsDetectedOrHarmless() throws {
        let (original, model) = try makeStore()
        let pages = try original.contentsOfFile(at: pagePath)
        let log = try original.contentsOfFile(at: TemporaryStore.wal())
        let pageCount = pages.count / pageSize
        var outcomes: [Outcome: Int] = [:]
        var errorKinds: [String: Int] = [:]
        var outcomesByPage: [Int: Set<Outcome>] = [:]
        var failures = 0
        for offset in 0..<pages.count where failures < 10 {
            let page = offset / pageSize
            let context = "flip of byte \(offset) (page \(page), offset \(offset % pageSize))"
            var damaged = pages
            damaged[offset] ^= 1 << UInt8(offset % 8)
            let fileSystem = TemporaryStore.makeFileSystem()
            try fileSystem.setContents(damaged, of: pagePath)
            try fileSystem.setContents(log, of: TemporaryStore.wal())
            let outcome = try open(
                fileSystem,
                expecting: model,
                damagedPage: UInt64(page * pageSize),
                context: context,
                failures: &failures,
                errorKinds: &errorKinds
            )
            outcomes[outcome, default: 0] += 1
            outcomesByPage[page, default: []].insert(outcome)
        }
        // A page is checked whole or not at all: a referenced page rejects a flip of any of its bytes.
        for (page, seen) in outcomesByPage where page > 0 && seen.count > 1 && seen.contains(.harmless) {
            Issue.record("page \(page): some flips were harmless and others detected: \(seen)")
        }
        #expect(
            outcomesByPage[0] == [.openFailed, .harmless],
            "page 0: the header is checked, the padding is not used"
        )
        print(
            "PageFileCorruptionTests: \(pages.count) flips over \(pageCount) pages: "
                + "open failed \(outcomes[.openFailed] ?? 0), read failed \(outcomes[.readFailed] ?? 0), "
                + "harmless \(outcomes[.harmless] ?? 0); errors \(errorKinds)"
        )
        #expect((outcomes[.readFailed] ?? 0) > 0 && (outcomes[.openFailed] ?? 0) > 0 && (outcomes[.harmless] ?? 0) > 0)
    }

    /// Opens a damaged store and reads everything: the outcome, with any wrong data or missed damage
    /// recorded as an issue.
    private func open(
        _ fileSystem: InMemoryFileSystem,
        expecting model: ReferenceModel,
        damagedPage pageOffset: UInt64,
        context: String,
        failures: inout Int,
        errorKinds: inout [String: Int]
    ) throws -> Outcome {
        let store: Store
        do { store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize)) } catch let error
            as StorageError
        {
            errorKinds[kind(of: error), default: 0] += 1
            return .openFailed
        }
        defer { try? store.close() }
        do {
            let state = try ReferenceModel.capture(store.snapshot())
            if state.tables != model.tables {
                Issue.record("\(context): the store returned wrong data")
                failures += 1
            }
            let report = try store.verify()
            if !report.isClean {
                Issue.record("\(context): reads are right but verify reports \(report)")
                failures += 1
            }
            return .harmless
        } catch let error as StorageError {
            errorKinds[kind(of: error), default: 0] += 1
            // The error names the damaged page: the page file and the page's first byte.
            if case .corruption(let file, let offset, _) = error, file != pagePath || offset != pageOffset {
                Issue.record("\(context): the error names \(file) at \(offset), not the damaged page at \(pageOffset)")
                failures += 1
            }
            let report = try store.verify()
            if !report.problems.contains(where: { $0.file == pagePath && $0.offset == pageOffset }) {
                Issue.record("\(context): reading failed (\(error)) but verify does not report the page: \(report)")
                failures += 1
            }
            return .readFailed
        }
    }

    private func kind(of error: StorageError) -> String {
        switch error {
        case .corruption(let file, _, _): "corruption in \(file.split(separator: "/").last ?? "?")"
        case .unsupportedFormat: "unsupportedFormat"
        default: "\(error)"
        }
    }

    /// `verify()` reads every reachable page from disk, not from the page cache: damage done under an open
    /// store whose pages are all cached is still reported, at the damaged page's offset.
    @Test func verifyReadsPagesFromDiskAndNamesTheDamagedPage() throws {
        let (fileSystem, model) = try makeStore()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize))
        // Read everything once: every tree page is now cached.
        #expect(try ReferenceModel.capture(store.snapshot()).tables == model.tables)
        #expect(try store.verify().isClean)
        let pageCount = try fileSystem.sizeOfFile(at: pagePath) / UInt64(pageSize)
        var reported = 0
        for page in 1..<(pageCount - 1) {
            let offset = page * UInt64(pageSize) + 100
            try fileSystem.flipByte(at: offset, in: pagePath, mask: 0x10)
            let report = try store.verify()
            if !report.isClean {
                reported += 1
                #expect(
                    report.problems.contains { $0.file == pagePath && $0.offset == page * UInt64(pageSize) },
                    "page \(page): \(report.problems)"
                )
            }
            try fileSystem.flipByte(at: offset, in: pagePath, mask: 0x10)
            #expect(try store.verify().isClean, "page \(page) repaired")
        }
        #expect(reported > 5)
        try store.close()
    }

    /// A page file cut by whole pages loses its newest root record: the older checkpoint it falls back to
    /// does not match the log, so opening fails rather than showing old data.
    @Test func pageFileCutByWholePagesIsDetected() throws {
        let (original, model) = try makeStore()
        let pages = try original.contentsOfFile(at: pagePath)
        // Cut whole pages off the end, one at a time: the newest root record goes first, then its trees.
        var seen: [String: Int] = [:]
        for count in 1..<(pages.count / pageSize) {
            let fileSystem = original.crashImage()
            try fileSystem.replaceContentsOfFile(at: pagePath, with: Array(pages[0..<(pages.count - count * pageSize)]))
            do {
                let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: pageSize))
                let state = try ReferenceModel.capture(store.snapshot())
                #expect(state.tables == model.tables, "\(count) pages cut: wrong data")
                seen["opened", default: 0] += 1
                try store.close()
            } catch let error as StorageError {
                seen[kind(of: error), default: 0] += 1
            }
        }
        #expect(seen["opened"] == nil, "a page file missing its newest checkpoint opened: \(seen)")
    }
}
