import Foundation
import Strata
import StrataFormat
import StrataIO
import StrataStorage

/// The seed corpora, made from real encoded data: a real store written by the engine (in an
/// `InMemoryFileSystem`), its WAL, pages and blob segment; rows from Strata's `RowCoder`; chunk records and
/// catalog entries from their encoders; operation scripts in the FuzzEngineOperations format.
/// `FuzzSeeds` writes them to Corpus/TARGET/ (see README.md).
public enum SeedCorpus {
    /// Every seed: target name → (file name, bytes).
    public static func make() throws -> [String: [(name: String, bytes: [UInt8])]] {
        let store = try SeedStore.build()
        return [
            "FuzzWALRecord": walSeeds(store),
            "FuzzPage": try pageSeeds(store) + indexPageSeeds(),
            "FuzzRowRecord": try rowSeeds(),
            "FuzzBlobSegment": try blobSeeds(store),
            "FuzzStoreOpen": storeSeeds(store),
            "FuzzEngineOperations": scriptSeeds(),
            "FuzzIndexKey": indexKeySeeds(),
        ]
    }

    static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    // MARK: - WAL

    static func walSeeds(_ store: SeedStore) -> [(name: String, bytes: [UInt8])] {
        [
            ("wal-every-operation", [0] + store.walWithEveryOperation),
            ("wal-every-operation-resealed", [3] + store.walWithEveryOperation),
            ("wal-after-checkpoint", [0] + store.walAfterCheckpoint),
        ]
    }

    // MARK: - Pages

    static func pageSeeds(_ store: SeedStore) throws -> [(name: String, bytes: [UInt8])] {
        let pageFile = store.crashed.files.first { $0.name == StoreFileNames.pageFile }!.bytes
        let header = try pageFile.withUnsafeBytes { try StoreHeader.decode($0) }
        let size = header.pageSize
        var seeds: [(name: String, bytes: [UInt8])] = []
        var seen: Set<UInt8> = []
        for number in 1..<(pageFile.count / size) {
            let page = Array(pageFile[(number * size)..<((number + 1) * size)])
            guard
                let decoded = page.withUnsafeBytes({
                    try? PageHeader.decode($0, expectedPageNumber: UInt64(number), salt: header.checksumSalt)
                }), seen.insert(decoded.type.rawValue).inserted
            else { continue }
            let selector = UInt8(size.trailingZeroBitCount - 9)
            let prefix = [selector, 0] + le(header.checksumSalt) + le(UInt64(number))
            seeds.append(("page-\(decoded.type)", prefix + page))
            seeds.append(
                ("page-\(decoded.type)-resealed", [selector, 1] + le(header.checksumSalt) + le(UInt64(number)) + page))
        }
        guard seen.count == 4 else { throw SeedError("the seed store lacks a page type: \(seen)") }
        return seeds
    }

    /// Index leaf and internal pages of a store of its own (the seed store's rows are not row records), so
    /// that the other targets' seeds stay as they were.
    static func indexPageSeeds() throws -> [(name: String, bytes: [UInt8])] {
        let configuration = StoreConfiguration(durability: .full, pageSize: 512, logger: quietLogger)
        let fileSystem = InMemoryFileSystem()
        let store = try Store.open(at: "/indexed", configuration: configuration, fileSystem: fileSystem)
        try store.write { txn in
            let table = try txn.createTable(named: "person")
            for number in 0..<60 {
                let fields: [RowRecord.Field] = [.string("name \(number % 7)"), .int64(Int64(number) - 20), .null]
                try txn.insert(RowRecord.encode(entityID: 1, rowVersion: 1, fields: fields), into: table)
            }
            try txn.createIndex(named: "person.name,age", on: table, fields: [0, 1])
        }
        try store.close()
        let pageFile = fileSystem.contents(of: "/indexed/" + StoreFileNames.pageFile)!
        let header = try pageFile.withUnsafeBytes { try StoreHeader.decode($0) }
        var seeds: [(name: String, bytes: [UInt8])] = []
        for number in 1..<(pageFile.count / 512) {
            let page = Array(pageFile[(number * 512)..<((number + 1) * 512)])
            guard
                let decoded = page.withUnsafeBytes({
                    try? PageHeader.decode($0, expectedPageNumber: UInt64(number), salt: header.checksumSalt)
                }), decoded.type == .indexLeaf || decoded.type == .indexInternal,
                !seeds.contains(where: { $0.name == "page-\(decoded.type)" })
            else { continue }
            for (mode, suffix) in [(UInt8(0), ""), (1, "-resealed")] {
                seeds.append(
                    ("page-\(decoded.type)\(suffix)", [0, mode] + le(header.checksumSalt) + le(UInt64(number)) + page))
            }
        }
        guard seeds.count == 4 else { throw SeedError("the index seed store lacks an index page type") }
        return seeds
    }

    // MARK: - Index keys

    static func indexKeySeeds() -> [(name: String, bytes: [UInt8])] {
        let decimal = RowRecord.DecimalBits(exponent: -2, isNegative: true, isCompact: true, mantissa: [12345])
        let keys: [(String, [RowRecord.Field])] = [
            ("key-null-int", [.null, .int64(-36)]),
            ("key-string-escaped", [.string("a\u{0}b"), .uri("https://x/"), .bytes([0, 0xFF, 1])]),
            ("key-floating", [.double(-1.5), .float(.infinity), .date(secondsSinceReferenceDate: 7e8)]),
            ("key-decimal", [.decimal(decimal), .boolean(true)]),
            ("key-ids", [.uuid(0x0123_4567_89AB_CDEF_0123_4567_89AB_CDEF), .reference(9), .blobReference(3)]),
        ]
        var seeds = keys.map { ($0.0, IndexKey.encode($0.1)) }
        seeds.append(("entry", IndexKey.entry(key: IndexKey.encode([.string("Ada"), .int64(36)]), rowID: 7)))
        return seeds
    }

    // MARK: - Rows

    static func rowSeeds() throws -> [(name: String, bytes: [UInt8])] {
        let values: [AttributeValue?] = [
            .integer(-5), .integer(70_000), .integer(Int64.min), .decimal(Decimal(string: "123.45")!), .double(-0.0),
            .float(1.5), .string("héllo"), .boolean(true), .date(Date(timeIntervalSinceReferenceDate: 12_345.5)),
            .data(Data([1, 2, 3])), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri(URL(string: "https://example.com/a?b=c")!), .object(AnyHashableSendable(["x", "y"])),
        ]
        let full = try RowFuzzModel.coder.encode(values, rowVersion: 7)
        let nulls = try RowFuzzModel.coder.encode(Array(repeating: nil, count: values.count), rowVersion: 1)
        let other = RowRecord.encode(
            entityID: 9, rowVersion: 2,
            fields: [
                .null, .bytes([0xFF, 0]), .blobReference(42), .reference(7), .uri("file:///tmp"),
                .decimal(RowRecord.DecimalBits(exponent: -2, isNegative: true, isCompact: true, mantissa: [1, 2])),
            ])
        return [("row-every-type", [3] + full), ("row-nulls", [0] + nulls), ("row-other-fields", [200] + other)]
    }

    // MARK: - Blob segments

    static func blobSeeds(_ store: SeedStore) throws -> [(name: String, bytes: [UInt8])] {
        let salt = store.salt
        let segment = store.crashed.files.first { $0.name == BlobSegmentFormat.fileName(segment: 1) }!.bytes
        // The catalog entry of the segment's first blob, rebuilt from its records.
        let entry = try segment.withUnsafeBytes { bytes -> BlobCatalogEntry in
            let first = try BlobChunkRecord.decodeHeader(UnsafeRawBufferPointer(rebasing: bytes[48...]))
            let raw = try first.decodePayload(UnsafeRawBufferPointer(rebasing: bytes[48...]), salt: salt)
            return BlobCatalogEntry(
                segmentID: 1, offset: 48, rawLength: UInt64(raw.count), storedBytes: UInt64(first.encodedSize),
                chunkCount: raw.isEmpty ? 0 : 1, contentChecksum: CRC32C.mask(CRC32C.checksum(raw)))
        }
        // A segment of our own: one raw and one LZ4 chunk.
        var synthetic = BlobSegmentHeader(storeID: Array(repeating: 7, count: 16), segmentID: 2).encoded()
        var random = FuzzRandom(seed: 1)
        for (index, chunk) in [random.bytes(40), random.bytes(200, compressible: true)].enumerated() {
            synthetic += chunk.withUnsafeBytes {
                BlobChunkRecord.encode(chunk: $0, blobID: 5, chunkIndex: UInt32(index), salt: salt)
            }
        }
        let syntheticEntry = BlobCatalogEntry(
            segmentID: 2, offset: 48, rawLength: 240, storedBytes: UInt64(synthetic.count - 48), chunkCount: 1,
            contentChecksum: 0)
        return [
            ("segment-from-store", [0] + le(salt) + entry.encoded() + segment),
            ("segment-raw-and-lz4", [0] + le(salt) + syntheticEntry.encoded() + synthetic),
            ("segment-raw-and-lz4-resealed", [3] + le(salt) + syntheticEntry.encoded() + synthetic),
        ]
    }

    // MARK: - Stores

    static func storeSeeds(_ store: SeedStore) -> [(name: String, bytes: [UInt8])] {
        var resealed = store.crashed
        resealed.mode = 0x1F
        var inMemory = store.crashed
        inMemory.mode = 0x3F
        return [
            ("store-checkpoint-and-log", store.crashed.encoded()),
            ("store-checkpoint-and-log-resealed-writes", resealed.encoded()),
            ("store-checkpoint-and-log-in-memory", inMemory.encoded()),
            ("store-log-only", store.fresh.encoded()),
            ("store-closed-clean", store.closed.encoded()),
        ]
    }

    // MARK: - Operation scripts

    static func script(pageSize: UInt8, settings: UInt8, _ steps: [(EngineOp, [UInt8])]) -> [UInt8] {
        var bytes = [pageSize, settings]
        for (op, operands) in steps { bytes += [op.rawValue] + operands }
        return bytes
    }

    static func scriptSeeds() -> [(name: String, bytes: [UInt8])] {
        // Operands, per EngineHarness: table (index into a...f), value (length selector, seed), row selector.
        let basic = script(
            pageSize: 0, settings: 0,
            [
                (.createTable, [0]), (.insert, [0, 3, 1]), (.insert, [0, 8, 2]), (.insert, [0, 12, 3]),
                (.update, [0, 1, 9, 4]), (.delete, [0, 0]), (.storeBlob, [2, 5]), (.storeBlob, [4, 6]),
                (.checkpoint, []), (.insert, [0, 4, 7]), (.crash, [0, 0]), (.verify, []), (.createTable, [1]),
                (.reserveAndInsert, [1, 2, 5, 8]), (.deleteBlob, [0]), (.reopen, []), (.compare, []),
            ])
        let crashes = script(
            pageSize: 1, settings: 4,
            [
                (.createTable, [2]), (.transaction, [2, 3, 0, 0, 7, 1, 0, 0, 8, 2, 0, 0, 9, 3]),
                (.holdSnapshot, []), (.transaction, [2, 0x82, 0, 0, 5, 5, 2, 0]), (.update, [2, 0, 10, 1]),
                (.crash, [1, 17]), (.storeBlob, [6, 3]), (.crash, [2, 99]), (.dropTable, [2]), (.createTable, [2]),
                (.insert, [2, 7, 7]), (.compact, []), (.verify, []),
            ])
        let graph = script(
            pageSize: 3, settings: 26,
            [
                (.createTable, [3]), (.insert, [3, 2, 2]), (.graph, [0, 0x41]), (.graph, [1, 3]), (.graph, [3, 0]),
                (.checkpoint, []), (.compare, []),
            ])
        // The same scripts on the real file system (settings / 27 odd): pages read through the page map.
        func posix(_ script: [UInt8]) -> [UInt8] { [script[0], script[1] + 27] + script.dropFirst(2) }
        return [
            ("script-basic", basic), ("script-crashes", crashes), ("script-object-graph", graph),
            ("script-basic-posix", posix(basic)), ("script-crashes-posix", posix(crashes)),
        ]
    }
}

struct SeedError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A small real store (512-byte pages) written by the engine, captured at several moments.
struct SeedStore {
    var walWithEveryOperation: [UInt8] = []
    var walAfterCheckpoint: [UInt8] = []
    /// After a checkpoint and three more commits, as a crash would leave it.
    var crashed = StoreImage(mode: 0, files: [])
    /// A new store with one commit in its log and no checkpoint.
    var fresh = StoreImage(mode: 0x0F, files: [])
    /// The crashed store after a clean close.
    var closed = StoreImage(mode: 0x10, files: [])
    var salt: UInt64 = 0

    static func build() throws -> SeedStore {
        var seeds = SeedStore()
        let directory = "/store"
        let configuration = StoreConfiguration(durability: .full, pageSize: 512, logger: quietLogger)
        let fileSystem = InMemoryFileSystem()
        let store = try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
        var random = FuzzRandom(seed: 42)
        let (person, note) = try store.write { txn in
            let person = try txn.createTable(named: "person")
            let note = try txn.createTable(named: "note")
            for index in 0..<3 { try txn.insert(Array("person \(index)".utf8), into: person) }
            try txn.insert(random.bytes(300), into: note)  // longer than a 512-byte page's inline limit
            let reserved = try txn.reserveRowIDs(2, in: note)
            try txn.insert(Array("reserved".utf8), into: note, at: reserved)
            return (person, note)
        }
        seeds.fresh = StoreImage.capture(fileSystem.crashImage(), directory: directory, mode: 0x0F)
        try store.write { txn in
            try txn.dropTable(try txn.createTable(named: "scratch"))
            try txn.delete(RowID(2), from: person)
            try txn.update(RowID(1), in: person, to: Array("Ada".utf8))
            _ = try txn.storeBlob(random.bytes(300, compressible: true))
            _ = try txn.storeBlob(random.bytes(120))
        }
        seeds.walWithEveryOperation = fileSystem.contents(of: directory + "/" + StoreFileNames.wal)!
        try store.write { txn in
            for index in 0..<120 { try txn.insert(Array("p\(index)".utf8), into: person) }  // a tree of height 2
        }
        try store.checkpoint()
        try store.write { txn in
            try txn.update(RowID(3), in: person, to: Array("Grace".utf8))
            try txn.insert(Array("late".utf8), into: note)
        }
        try store.write { txn in _ = try txn.storeBlob(random.bytes(64, compressible: true)) }
        seeds.walAfterCheckpoint = fileSystem.contents(of: directory + "/" + StoreFileNames.wal)!
        let crashedFiles = fileSystem.crashImage()
        seeds.crashed = StoreImage.capture(crashedFiles, directory: directory, mode: 0)
        try store.close()
        seeds.closed = StoreImage.capture(fileSystem, directory: directory, mode: 0x10)
        let pageFile = seeds.crashed.files.first { $0.name == StoreFileNames.pageFile }!.bytes
        seeds.salt = try pageFile.withUnsafeBytes { try StoreHeader.decode($0) }.checksumSalt
        return seeds
    }
}
