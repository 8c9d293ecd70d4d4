import Foundation
import StrataFormat
import StrataIO
import StrataLock
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataStorage

/// Committed blobs read in place through their segment's mapping (FORMAT.md §5.5): only POSIX stores map, so these
/// tests run there (the in-memory file system of `BlobStoreTests` reads through positional reads). Each blob is
/// read twice in an open: the first read verifies every checksum, the second is the trusted one.
@Suite struct MappedBlobReadTests {
    private static let chunkSize = BlobSegmentFormat.chunkSize

    static func open(_ directory: String, segmentLimit: UInt64? = nil) throws -> Store {
        var configuration = StoreConfiguration.testing()
        if let segmentLimit { configuration.blobSegmentSizeLimit = segmentLimit }
        return try Store.openForTesting(PosixFileSystem(), directory: directory, configuration: configuration)
    }

    static func segmentPath(_ id: UInt32, in directory: String) -> String {
        StoreFileNames.path(directory, BlobSegmentFormat.fileName(segment: id))
    }

    /// Text-like bytes (LZ4 records) in even chunks, seeded random bytes (raw records) in odd ones.
    static func mixedBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        BlobStoreTests.mixedBytes(count, seed: seed)
    }

    /// Reads `blob` twice (verifying, then trusted), whole and streamed, and compares with `expected`.
    static func expectBlobTwice(
        _ blob: BlobID, in snapshot: Snapshot, equals expected: [UInt8], _ context: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for pass in ["first read", "second read"] {
            try BlobStoreTests.expectBlob(
                blob, in: snapshot, equals: expected, "\(context) \(pass)", sourceLocation: sourceLocation)
        }
    }

    /// Rewrites bytes of a file behind the store's back.
    static func patch(_ path: String, at offset: UInt64, _ change: (inout [UInt8]) -> Void, count: Int = 1) throws {
        let handle = try PosixFileSystem().openFile(at: path, mode: .existing)
        defer { try? handle.close() }
        var bytes = try handle.read(count: count, at: offset)
        change(&bytes)
        try handle.write(bytes, at: offset)
    }

    static func isCorruption(_ error: any Error, naming blob: BlobID) -> Bool {
        guard case StorageError.corruption(_, _, let reason) = error else { return false }
        return reason.contains("\(blob)")
    }

    // MARK: - Sizes

    /// Every size edge of a chunk (empty, one byte, around a record header's size, around one and two chunks) and
    /// a blob of many chunks read back through the mapping, twice in an open and again after a reopen.
    @Test func everyChunkSizeEdgeAndAManyChunkBlobReadThroughTheMapping() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let sizes = [
                0, 1, 27, 28, 29, 4_095, 4_096, Self.chunkSize - 1, Self.chunkSize, Self.chunkSize + 1,
                2 * Self.chunkSize,
                9 * Self.chunkSize + 17,
            ]
            var store = try Self.open(directory)
            var blobs: [(BlobID, [UInt8])] = []
            for (index, size) in sizes.enumerated() {
                // Even indexes are text (LZ4 records), odd ones random (raw records), in their first chunk.
                let bytes =
                    index % 2 == 0
                    ? Self.mixedBytes(size, seed: UInt64(index))
                    : BlobStoreTests.randomBytes(size, seed: UInt64(index))
                blobs.append((try store.write { try $0.storeBlob(bytes) }, bytes))
            }
            let segment = try store.blobs.map(for: 1)
            #expect(segment.isAvailable, "a POSIX segment maps")
            for (id, bytes) in blobs { try Self.expectBlobTwice(id, in: store.snapshot(), equals: bytes, "size") }
            // A write transaction reads (its own and committed blobs) with positional reads, every checksum checked.
            try store.write { txn throws in
                for (id, bytes) in blobs {
                    let got = try txn.readBlob(id)
                    #expect(got == bytes, "in a transaction, \(id)")
                }
            }
            try store.close()
            store = try Self.open(directory)
            for (id, bytes) in blobs { try Self.expectBlobTwice(id, in: store.snapshot(), equals: bytes, "reopened") }
            #expect(try store.verify().isClean)
            try store.close()
        }
    }

    // MARK: - Damage

    /// A flipped payload byte in the second chunk of a blob, or a record length pointing past the segment, is a
    /// corruption error naming the blob when read through the mapping; other blobs read as before; nothing traps.
    @Test func damagedChunksAreCorruptionThroughTheMapping() throws {
        try TemporaryStore.withPosixDirectory { directory in
            var store = try Self.open(directory)
            let damaged = Self.mixedBytes(2 * Self.chunkSize + 100, seed: 5)
            let intact = Self.mixedBytes(3_000, seed: 6)
            let damagedID = try store.write { try $0.storeBlob(damaged) }
            let intactID = try store.write { try $0.storeBlob(intact) }
            try store.close()
            let path = Self.segmentPath(1, in: directory)
            // The second record follows the first: its stored length is at bytes 24..<28 of the first.
            let header = BlobSegmentFormat.headerSize
            let recordHeader = BlobSegmentFormat.recordHeaderSize
            let pristine = try PosixFileSystem().openFileForReading(at: path).read(count: 4 << 20, at: 0)
            let firstStored = pristine[(header + 24)..<(header + 28)].withUnsafeBytes {
                $0.loadUnaligned(as: UInt32.self)
            }
            let second = UInt64(header + recordHeader) + UInt64(UInt32(littleEndian: firstStored))
            let cases: [(String, UInt64, (inout [UInt8]) -> Void)] = [
                ("payload byte of chunk 1", second + UInt64(recordHeader) + 100, { $0[0] ^= 0x10 }),
                ("stored length of chunk 1 past the segment", second + 26, { $0[0] = 0x7F }),
                ("raw length of chunk 1 above a chunk", second + 22, { $0[0] = 0x20 }),
            ]
            for (name, offset, change) in cases {
                try Self.patch(path, at: offset, change)
                store = try Self.open(directory)
                let snapshot = store.snapshot()
                for pass in 0..<2 {
                    #expect("\(name), read \(pass)") { try snapshot.readBlob(damagedID) } throws: { error in
                        Self.isCorruption(error, naming: damagedID)
                    }
                    #expect(try snapshot.readBlob(intactID) == intact, "\(name)")
                }
                #expect(!(try store.verify()).isClean, "\(name)")
                try store.close()
                let handle = try PosixFileSystem().openFile(at: path, mode: .existing)
                try handle.write(pristine, at: 0)
                try handle.close()
            }
            store = try Self.open(directory)
            try Self.expectBlobTwice(damagedID, in: store.snapshot(), equals: damaged, "restored")
            try store.close()
        }
    }

    /// A segment cut short behind the store's back after its blobs were mapped and verified: blobs past the cut are
    /// corruption errors (the read is bounded by the file's size taken before it, so no SIGBUS), blobs before it
    /// still read, and a segment grown back reads again.
    @Test func aSegmentTruncatedAfterItWasMappedIsAnErrorNotACrash() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let store = try Self.open(directory)
            let first = Self.mixedBytes(5_000, seed: 1)
            let second = Self.mixedBytes(Self.chunkSize + 70_000, seed: 2)
            let firstID = try store.write { try $0.storeBlob(first) }
            let secondID = try store.write { try $0.storeBlob(second) }
            let snapshot = store.snapshot()
            try Self.expectBlobTwice(firstID, in: snapshot, equals: first)
            try Self.expectBlobTwice(secondID, in: snapshot, equals: second)
            let path = Self.segmentPath(1, in: directory)
            let handle = try PosixFileSystem().openFile(at: path, mode: .existing)
            let size = try handle.size()
            let pristine = try handle.read(count: Int(size), at: 0)
            // Cut inside the second blob's last record, then inside its first record's header, then to nothing.
            for cut in [size - 1, size - 40_000, UInt64(BlobSegmentFormat.headerSize) + 10_000, 0] {
                try handle.truncate(to: cut)
                #expect("cut to \(cut)") { try snapshot.readBlob(secondID) } throws: { error in
                    guard case StorageError.corruption = error else { return false }
                    return true
                }
                let streamed = try #require(try snapshot.blobReader(secondID))
                #expect("cut to \(cut), streamed") { while try streamed.next() != nil {} } throws: { _ in true }
                // The first blob's one record (at most its 5,000 bytes and a header) lies before the cut.
                if cut >= UInt64(BlobSegmentFormat.headerSize + BlobSegmentFormat.recordHeaderSize + 5_000) {
                    #expect(try snapshot.readBlob(firstID) == first, "cut to \(cut)")
                }
                #expect(!(try store.verify()).isClean, "cut to \(cut)")
            }
            try handle.write(pristine, at: 0)
            try handle.close()
            try Self.expectBlobTwice(secondID, in: snapshot, equals: second, "grown back")
            try store.close()
        }
    }

    /// A blob is verified on its first read in an open and trusted later (its bytes are not checked again), but
    /// verify() checks every record and content checksum again, a transaction's read checks them, and so does the
    /// first read after a reopen: damage that appears on disk after a read is still found.
    @Test func verifyChecksEveryBlobAgainEvenAfterReadsInPlace() throws {
        try TemporaryStore.withPosixDirectory { directory in
            var store = try Self.open(directory)
            let bytes = Self.mixedBytes(50_000, seed: 9)
            let id = try store.write { try $0.storeBlob(bytes) }
            try Self.expectBlobTwice(id, in: store.snapshot(), equals: bytes)
            #expect(try store.verify().isClean)
            let segment = try store.blobs.map(for: 1)
            let snapshot = store.snapshot()
            let entry = try #require(try BlobCatalog.lookup(id, in: snapshot.state, tree: snapshot.tree))
            #expect(segment.isVerified(blobAt: entry.offset, contentChecksum: entry.contentChecksum))
            #expect(!segment.isVerified(blobAt: entry.offset, contentChecksum: entry.contentChecksum ^ 1))
            let payload = UInt64(BlobSegmentFormat.headerSize + BlobSegmentFormat.recordHeaderSize) + 300
            try Self.patch(Self.segmentPath(1, in: directory), at: payload) { $0[0] ^= 0x01 }
            let report = try store.verify()
            #expect(report.problems.contains { $0.message.contains("\(id)") }, "\(report)")
            #expect(throws: StorageError.self) { try store.write { txn in _ = try txn.readBlob(id) } }
            try store.close()
            store = try Self.open(directory)
            #expect { try store.snapshot().readBlob(id) } throws: { Self.isCorruption($0, naming: id) }
            try store.close()
        }
    }

    // MARK: - Concurrency

    /// Readers on other threads read committed blobs through the mapping while the writer appends to the same
    /// (active) segment, past the length first mapped, so that the segment is mapped again under them.
    @Test func readersReadWhileTheWriterAppendsToTheActiveSegment() throws {
        try TemporaryStore.withPosixDirectory { directory in
            // A 1 MiB limit: the first mapping is 1 MiB, and blobs of up to 3 MiB grow the segment past it.
            let store = try Self.open(directory, segmentLimit: 1 << 20)
            @Sendable func bytes(_ index: Int) -> [UInt8] {
                Self.mixedBytes(index % 4 == 3 ? 3 * Self.chunkSize - index : 20_000 + 977 * index, seed: UInt64(index))
            }
            let committed = Lock<[(BlobID, Int)]>([])
            let first = try store.write { try $0.storeBlob(bytes(0)) }
            committed.withLock { $0.append((first, 0)) }
            let stop = Atomic<Bool>(false)
            let failures = Lock<[String]>([])
            let reads = Atomic<Int>(0)
            runOnThreads(3) { thread in
                do {
                    if thread == 0 {
                        defer { stop.store(true, ordering: .releasing) }
                        for index in 1..<24 {
                            let id = try store.write { try $0.storeBlob(bytes(index)) }
                            committed.withLock { $0.append((id, index)) }
                        }
                        return
                    }
                    var round = thread
                    while !stop.load(ordering: .acquiring) || round < 6 {
                        // The blobs known before the snapshot is taken: each was committed before it, so the snapshot
                        // has it (read after, the list could name a blob committed since, which the snapshot rightly
                        // does not have).
                        let known = committed.withLock { $0 }
                        let snapshot = store.snapshot()
                        // The newest blob (the one most likely past the mapped length) and an older one.
                        for (id, index) in [known[known.count - 1], known[round % known.count]] {
                            let read = try snapshot.readBlob(id)
                            if read != bytes(index) {
                                let what = read == nil ? "is missing" : "differs"
                                failures.withLock { $0.append("thread \(thread): \(id) \(what)") }
                            }
                            reads.add(1, ordering: .relaxed)
                        }
                        round += 1
                    }
                } catch {
                    failures.withLock { $0.append("thread \(thread): \(error)") }
                    stop.store(true, ordering: .releasing)
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(reads.load(ordering: .relaxed) > 0)
            let segments = try store.blobs.segmentIDs()
            #expect(segments.count > 1, "the segment rolled over")
            #expect(try store.blobs.map(for: 1).mappingCount > 1, "the first segment was mapped again as it grew")
            for (id, index) in committed.withLock({ $0 }) {
                #expect(try store.snapshot().readBlob(id) == bytes(index), "\(id) after the writer")
            }
            #expect(try store.verify().isClean)
            try store.close()
        }
    }

    /// A snapshot kept past close goes on reading its blobs on other threads while compaction writes new segments
    /// and deletes the old ones: its mappings hold the old files (their inodes live until unmapped), so it neither
    /// crashes nor sees the new files; the compacted store reads every live blob.
    @Test func readersReadWhileCompactionReplacesSegments() throws {
        try TemporaryStore.withPosixDirectory { directory in
            let store = try Self.open(directory, segmentLimit: 1 << 20)
            var blobs: [(BlobID, [UInt8])] = []
            for index in 0..<12 {
                let bytes = Self.mixedBytes(150_000 + 1_001 * index, seed: UInt64(40 + index))
                blobs.append((try store.write { try $0.storeBlob(bytes) }, bytes))
            }
            try store.write { txn in for (id, _) in blobs where id.rawValue % 3 == 0 { try txn.deleteBlob(id) } }
            let before = store.snapshot()
            let kept = blobs
            // Read everything once: every segment is mapped (and its blobs verified) before the files go.
            for (id, bytes) in blobs where id.rawValue % 3 != 0 {
                #expect(try before.readBlob(id) == bytes)
            }
            let oldSegments = try store.blobs.segmentIDs()
            try store.close()
            let stop = Atomic<Bool>(false)
            let failures = Lock<[String]>([])
            let reads = Atomic<Int>(0)
            runOnThreads(3) { thread in
                if thread == 0 {
                    defer { stop.store(true, ordering: .releasing) }
                    do {
                        var configuration = StoreConfiguration.testing()
                        configuration.blobSegmentSizeLimit = 1 << 20
                        _ = try Store.compact(
                            at: directory, configuration: configuration, fileSystem: PosixFileSystem())
                    } catch { failures.withLock { $0.append("compaction: \(error)") } }
                    return
                }
                var round = 0
                while !stop.load(ordering: .acquiring) || round < 3 {
                    for (id, bytes) in kept where id.rawValue % 3 != 0 {
                        do {
                            if try before.readBlob(id) != bytes { failures.withLock { $0.append("\(id) differs") } }
                        } catch { failures.withLock { $0.append("\(id): \(error)") } }
                        reads.add(1, ordering: .relaxed)
                    }
                    round += 1
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(reads.load(ordering: .relaxed) > 0)
            let reopened = try Self.open(directory)
            let newSegments = try reopened.blobs.segmentIDs()
            #expect(Set(newSegments).isDisjoint(with: oldSegments), "compaction replaced every segment")
            for (id, bytes) in blobs {
                let expected = id.rawValue % 3 == 0 ? nil : bytes
                #expect(try reopened.snapshot().readBlob(id) == expected, "\(id) after compaction")
                #expect(try before.readBlob(id) == expected, "\(id) in the old snapshot after compaction")
            }
            #expect(try reopened.verify().isClean)
            try reopened.close()
        }
    }
}
