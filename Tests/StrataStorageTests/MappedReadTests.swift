import Foundation
import StrataFormat
import StrataIO
import StrataLock
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataStorage

/// Committed pages read in place through the page file's mapping (FORMAT.md §4.10): only POSIX stores map, so
/// these tests run there (the in-memory file system of most tests reads through positional reads).
@Suite struct MappedReadTests {
    /// Snapshots taken between commits and checkpoints keep their state while the file grows past mapping after
    /// mapping, at both page sizes, and after the store closes.
    @Test(arguments: [512, 4096])
    func snapshotsMatchTheModelAcrossGrowingMappings(pageSize: Int) throws {
        try TemporaryStore.withPosixDirectory { directory in
            let store = try Store.openForTesting(
                PosixFileSystem(), directory: directory, configuration: .testing(pageSize: pageSize))
            var workload = RandomWorkload(seed: 0x3A9 + UInt64(pageSize), pageSize: pageSize)
            workload.weights = (create: 1, drop: 0, insert: 20, update: 5, delete: 4)
            var random = RepeatableRandomNumberGenerator(seed: 0x3AA)
            var kept: [(Snapshot, ReferenceModel)] = []
            for step in 0..<400 {
                try workload.runTransaction(on: store, maximumOperations: 12)
                if step % 25 == 0 { kept.append((store.snapshot(), workload.model)) }
                if step % 20 == 19 {
                    try store.checkpoint()
                    let problems = workload.model.rangeScanDifferences(store.snapshot(), scans: 5, using: &random)
                    #expect(problems == [], "step \(step)")
                }
            }
            try store.checkpoint()
            // The mappings grew: more than one region of the page map was made over the run.
            #expect(
                try PosixFileSystem().openFile(at: TemporaryStore.pageFile(in: directory), mode: .existing).size()
                    > UInt64(1024 * pageSize))
            for (index, (snapshot, model)) in kept.enumerated() { model.assertMatches(snapshot, "snapshot \(index)") }
            try store.close()
            for (index, (snapshot, model)) in kept.enumerated() {
                model.assertMatches(snapshot, "snapshot \(index) after close")
            }
        }
    }

    /// Rows read by ID from mapped pages, where a seek hints the leaves of the keys ahead, are exactly the rows one
    /// lookup each reads: keys a leaf apart, in the same leaf, across parents, with gaps and absent rows, after
    /// deletes (guesses from the parent's separators are then off) and with overflow values.
    @Test(arguments: [512, 4096])
    func rowsByIDThroughHintedLeavesMatchOneLookupEach(pageSize: Int) throws {
        try TemporaryStore.withPosixDirectory { directory in
            let store = try Store.openForTesting(
                PosixFileSystem(), directory: directory, configuration: .testing(pageSize: pageSize))
            var random = RepeatableRandomNumberGenerator(seed: 0x3B0 + UInt64(pageSize))
            let table = try store.write { try $0.createTable(named: "t") }
            try store.write { txn in
                for row in 1...20_000 {
                    let length = row % 997 == 0 ? 3 * pageSize : Int.random(in: 0...90, using: &random)
                    try txn.insert(random.bytes(length), into: table)
                }
            }
            try store.checkpoint()
            try store.write { txn in
                for _ in 0..<2_000 {
                    _ = try txn.delete(RowID(UInt64.random(in: 1...20_000, using: &random)), from: table)
                }
            }
            try store.checkpoint()
            let snapshot = store.snapshot()
            for stride in [1, 3, 37, 100, 1_000] {
                let rows = Swift.stride(from: 1 + stride / 2, through: 20_100, by: stride).map { RowID(UInt64($0)) }
                try snapshot.expectRowsByIDMatchLookups(rows, in: table, "stride \(stride)")
            }
            try store.close()
        }
    }

    /// The children a seek found for the keys it hinted are given back by position while kept, and only then.
    @Test func hintedLeavesKeepTheChildrenOfTheLastKeys() {
        var hinted = BTree.HintedLeaves(from: 5)
        #expect(hinted.child(at: 5) == nil)
        #expect(hinted.last == nil)
        for position in 5..<20 { hinted.append(position * 10) }
        #expect(hinted.end == 20)
        #expect(hinted.last == 190)
        for position in 12..<20 { #expect(hinted.child(at: position) == position * 10) }
        #expect(hinted.child(at: 11) == nil)  // more than the kept children ago
        #expect(hinted.child(at: 20) == nil)  // not hinted yet
        #expect(BTree.leavesHintedAhead <= BTree.HintedLeaves.kept)
        // From the first key: nothing before it.
        var fromStart = BTree.HintedLeaves(from: 0)
        #expect(fromStart.last == nil)
        #expect(fromStart.child(at: -1) == nil)
        fromStart.append(7)
        #expect(fromStart.last == 7)
        #expect(fromStart.child(at: -1) == nil)
    }

    /// Readers on other threads read committed rows in place while a writer commits and checkpoints (the file
    /// grows and is mapped again under them).
    @Test func readersReadInPlaceWhileTheWriterCheckpoints() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let store = try Store.openForTesting(
                PosixFileSystem(), directory: directory, configuration: .testing(pageSize: 512))
            let table = try store.write { try $0.createTable(named: "t") }
            @Sendable func value(_ row: UInt64) -> [UInt8] {
                (0..<Int(row % 90 + 8)).map { UInt8(truncatingIfNeeded: row &* 31 &+ UInt64($0)) }
            }
            try store.write { txn in for row in 1...2_000 { try txn.insert(value(UInt64(row)), into: table) } }
            try store.checkpoint()
            let stop = Atomic<Bool>(false)
            let failures = Lock<[String]>([])
            let reads = Atomic<Int>(0)
            runOnThreads(3) { thread in
                do {
                    try readOrWrite(thread)
                } catch {
                    failures.withLock { $0.append("thread \(thread): \(error)") }
                    stop.store(true, ordering: .releasing)
                }
            }
            @Sendable func readOrWrite(_ thread: Int) throws {
                if thread == 0 {
                    defer { stop.store(true, ordering: .releasing) }
                    for round in 0..<40 {
                        try store.write { txn in
                            for row in 1...100 { try txn.insert(value(UInt64(2_000 + round * 100 + row)), into: table) }
                        }
                        try store.checkpoint()
                    }
                    return
                }
                var random = RepeatableRandomNumberGenerator(seed: UInt64(thread))
                while !stop.load(ordering: .acquiring) {
                    let snapshot = store.snapshot()
                    let count = try snapshot.rowCount(in: table)
                    for _ in 0..<200 {
                        let row = UInt64.random(in: 1...UInt64(count), using: &random)
                        let matches = try snapshot.withRow(RowID(row), in: table) { Array($0) == value(row) }
                        if matches != true {
                            failures.withLock { $0.append("row \(row): \(String(describing: matches))") }
                        }
                    }
                    var scanned = 0
                    try snapshot.forEachRow(in: table) { id, bytes in
                        scanned += 1
                        if Array(bytes) != value(id.rawValue) { failures.withLock { $0.append("scan row \(id)") } }
                        return true
                    }
                    if scanned != count { failures.withLock { $0.append("scan saw \(scanned) of \(count)") } }
                    reads.add(1, ordering: .relaxed)
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(reads.load(ordering: .relaxed) > 0)
            try store.close()
        }
    }

    /// A snapshot kept past close reads the old file after compaction renamed a new one over it: its mapping
    /// holds the old file, so it neither crashes nor sees the new one.
    @Test func aSnapshotReadsTheOldFileAfterCompactionReplacedIt() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let configuration = StoreConfiguration.testing(pageSize: 512)
            let store = try Store.openForTesting(PosixFileSystem(), directory: directory, configuration: configuration)
            let table = try store.write { try $0.createTable(named: "t") }
            try store.write { txn in for row in 1...3_000 { try txn.insert([UInt8(row % 251), 1, 2, 3], into: table) } }
            try store.checkpoint()
            try store.write { txn in
                for row in stride(from: 2, through: 3_000, by: 2) { try txn.delete(RowID(UInt64(row)), from: table) }
            }
            let before = store.snapshot()
            try store.close()
            _ = try Store.compact(at: directory, configuration: configuration, fileSystem: PosixFileSystem())
            var seen = 0
            try before.forEachRow(in: table) { id, bytes in
                #expect(Array(bytes) == [UInt8(id.rawValue % 251), 1, 2, 3])
                seen += 1
                return true
            }
            #expect(seen == 1_500)
            #expect(try before.withRow(RowID(2_999), in: table) { Array($0) } == [UInt8(2_999 % 251), 1, 2, 3])
            let reopened = try Store.openForTesting(
                PosixFileSystem(), directory: directory, configuration: configuration)
            #expect(try reopened.snapshot().rowCount(in: table) == 1_500)
            try reopened.close()
        }
    }

    /// A leaf whose checksum was recomputed over broken slots is refused as corruption on its first read through
    /// the mapping (its structure is validated then), for lookups and scans alike; nothing traps.
    @Test func aResealedBrokenLeafIsCorruptionNotATrap() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let configuration = StoreConfiguration.testing(pageSize: 512)
            let store = try Store.openForTesting(PosixFileSystem(), directory: directory, configuration: configuration)
            let table = try store.write { try $0.createTable(named: "t") }
            try store.write { txn in for row in 1...200 { try txn.insert([UInt8(row), 7, 7, 7, 7], into: table) } }
            try store.close()
            // Page 1 is the first leaf the checkpoint wrote. Point its second value's end past the page's end and
            // reseal (the ends follow the first row ID and the row-ID deltas, FORMAT.md §4.2).
            let path = TemporaryStore.pageFile(in: directory)
            let file = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            var page = Array(file[512..<1024])
            let salt = try file.withUnsafeBytes { (bytes) throws(FormatError) in try StoreHeader.decode(bytes) }
                .checksumSalt
            #expect(page[4] == PageType.leaf.rawValue)
            let count = Int(page[6]) | Int(page[7]) << 8
            let end1 = 32 + 8 + Int(page[5]) * count + 2
            page[end1] = 0xF0
            page[end1 + 1] = 0x01
            page.withUnsafeMutableBytes { bytes in
                let header = try! PageHeader.read(UnsafeRawBufferPointer(bytes), expectedPageNumber: 1)
                header.seal(bytes, salt: salt)
            }
            let handle = try PosixFileSystem().openFile(at: path, mode: .existing)
            try handle.write(page, at: 512)
            try handle.close()
            let reopened = try Store.openForTesting(
                PosixFileSystem(), directory: directory, configuration: configuration)
            defer { try? reopened.close() }
            let snapshot = reopened.snapshot()
            #expect(throws: StorageError.self) { try snapshot.withRow(RowID(1), in: table) { Array($0) } }
            #expect(throws: StorageError.self) { try snapshot.forEachRow(in: table) { _, _ in true } }
            #expect(!(try reopened.verify()).isClean)
        }
    }

    /// verify() checks every page's checksum again, even pages this process already read (and whose first-touch
    /// check it remembers): damage that appears on disk after a read is still found.
    @Test func verifyChecksEveryPageAgainEvenAfterReadsInPlace() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let store = try Store.openForTesting(
                PosixFileSystem(), directory: directory, configuration: .testing(pageSize: 512))
            let table = try store.write { try $0.createTable(named: "t") }
            try store.write { txn in for row in 1...300 { try txn.insert([UInt8(row % 200), 9, 9], into: table) } }
            try store.checkpoint()
            try store.snapshot().forEachRow(in: table) { _, _ in true }
            #expect(try store.verify().isClean)
            // Flip a byte of the first leaf's value area (page 1) behind the store's back.
            let handle = try PosixFileSystem().openFile(at: TemporaryStore.pageFile(in: directory), mode: .existing)
            var byte = try handle.read(count: 1, at: 512 + 400)
            byte[0] ^= 0x40
            try handle.write(byte, at: 512 + 400)
            try handle.close()
            let report = try store.verify()
            #expect(!report.isClean)
            #expect(report.problems.contains { $0.message.contains("checksum") })
            try store.close()
        }
    }
}
