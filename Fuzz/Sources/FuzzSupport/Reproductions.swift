import StrataFormat
import StrataIO
import StrataStorage

/// Current-format reproductions of crashers whose inputs are stores of an older format (FailCases/FuzzStoreOpen/):
/// such a store stops at the store header's version check, so the original input no longer reaches the code that
/// trapped. Each original stays (it still must not crash), as do the reproductions of earlier formats; the
/// reproduction in the current format N, `<original>-formatN`, is made here so that it can be made again after the
/// next format change: `swift run --scratch-path .build/seeds FuzzSeeds reproductions FailCases`.
///
/// - `logverifier-commit-operation-count`, `lsn-near-max-write`: their page files hold only the store header and
///   (the second) a root record, whose bytes have not changed since format 1: the original with the version set to
///   the current one and the header's checksum fixed.
/// - `root-record-wal-lsn-max`: the seed store after a checkpoint and a crash (written by the engine)
///   with its root record's walLSN set to `UInt64.max`, every checksum fixed (mode 0x1F).
/// - `row-zero-row-count-equals-next-row-id`: a store written by the engine whose checkpointed table holds rows
///   0, 1 and 2 (row count = next row ID = 3); mode 0x10, so FuzzStoreOpen also writes, checkpoints and reopens.
public enum Reproductions {
    /// The reproductions: file name → bytes. `original` gives the bytes of an original input by file name.
    public static func make(original: (String) throws -> [UInt8]) throws -> [(name: String, bytes: [UInt8])] {
        var result: [(name: String, bytes: [UInt8])] = []
        let suffix = "-format\(StoreHeader.currentVersion)"
        for name in ["logverifier-commit-operation-count", "lsn-near-max-write"] {
            var image = try original(name).withUnsafeBytes { StoreImage(decoding: $0) }
            guard let index = image.files.firstIndex(where: { $0.name == StoreFileNames.pageFile }),
                image.files[index].bytes.count >= StoreHeader.encodedSize
            else { throw SeedError("\(name) has no page file") }
            Reseal.store(StoreHeader.currentVersion, into: &image.files[index].bytes, at: 8)
            Reseal.storeHeader(&image.files[index].bytes)
            result.append((name + suffix, image.encoded()))
        }
        result.append(("root-record-wal-lsn-max" + suffix, try rootRecordWALLSNMax()))
        result.append(("row-zero-row-count-equals-next-row-id" + suffix, try rowZero()))
        return result
    }

    static func rootRecordWALLSNMax() throws -> [UInt8] {
        var image = try SeedStore.build().crashed
        image.mode = 0x1F
        guard let index = image.files.firstIndex(where: { $0.name == StoreFileNames.pageFile }),
            let pageSize = Reseal.pageSize(pageFile: image.files[index].bytes)
        else { throw SeedError("the seed store has no page file") }
        // The newest root record: the last page of type 4 (its walLSN is the first u64 of its body).
        let pages = image.files[index].bytes
        guard
            let root = (1..<(pages.count / pageSize)).last(where: {
                pages[$0 * pageSize + 4] == PageType.rootRecord.rawValue
            })
        else { throw SeedError("the seed store has no root record") }
        let start = root * pageSize + PageFormat.headerSize
        for offset in 0..<8 { image.files[index].bytes[start + offset] = 0xFF }
        return image.encoded()
    }

    static func rowZero() throws -> [UInt8] {
        let fileSystem = InMemoryFileSystem()
        let configuration = StoreConfiguration(durability: .full, pageSize: 512, logger: quietLogger)
        let store = try Store.open(at: "/store", configuration: configuration, fileSystem: fileSystem)
        try store.write { txn in
            let table = try txn.createTable(named: "t")
            try txn.insert([0], into: table, at: RowID(0))
            try txn.insert([1], into: table)
            try txn.insert([2], into: table)
        }
        try store.checkpoint()
        try store.close()
        return StoreImage.capture(fileSystem, directory: "/store", mode: 0x10).encoded()
    }
}
