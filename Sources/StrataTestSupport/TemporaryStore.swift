import Foundation
import Logging
import StrataFormat
import StrataIO
import StrataStorage

/// Places for a test's store: an in-memory file system (the default: fast, and crash images are free)
/// or a unique POSIX temporary directory removed afterwards.
public enum TemporaryStore {
    /// The store directory used on in-memory file systems.
    public static let directory = "/db"

    /// A new in-memory file system holding an empty `/db` directory whose creation is durable.
    public static func makeFileSystem() -> InMemoryFileSystem {
        let fileSystem = InMemoryFileSystem()
        // Cannot fail on a new file system: the root exists and is a directory.
        try! fileSystem.createDirectory(at: directory)
        try! fileSystem.syncDirectory(at: "/")
        return fileSystem
    }

    /// Runs `body` with the path of a new, empty POSIX temporary directory, removed afterwards.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: Foundation's error when the directory cannot be created, or what `body` throws.
    public static func withPosixDirectory<R>(_ body: (String) throws -> R) throws -> R {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-storage-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }

    /// The path of the store's page file in `directory`.
    public static func pageFile(in directory: String = directory) -> String {
        StoreFileNames.path(directory, StoreFileNames.pageFile)
    }

    /// The path of the store's log in `directory`.
    public static func wal(in directory: String = directory) -> String {
        StoreFileNames.path(directory, StoreFileNames.wal)
    }
}

extension StoreConfiguration {
    /// A configuration for tests: no automatic checkpoint unless asked, and a logger that drops
    /// everything (recovery logs at info level on every open, and tests reopen thousands of times).
    ///
    /// Each parameter is the ``StoreConfiguration`` setting of the same name; the blob settings keep their
    /// defaults.
    public static func testing(
        pageSize: Int = 4096,
        durability: Durability = .full,
        checkpointThresholdBytes: UInt64 = .max,
        createIfMissing: Bool = true,
        pageCacheCapacity: Int = 16384
    ) -> StoreConfiguration {
        StoreConfiguration(
            createIfMissing: createIfMissing,
            durability: durability,
            pageSize: pageSize,
            checkpointThresholdBytes: checkpointThresholdBytes,
            pageCacheCapacity: pageCacheCapacity,
            logger: Logger(label: "strata.tests", factory: { _ in SwiftLogNoOpLogHandler() })
        )
    }
}

extension Store {
    /// Opens (creating by default) the store in `directory` of `fileSystem`, `/db` and
    /// ``StoreConfiguration/testing(pageSize:durability:checkpointThresholdBytes:createIfMissing:pageCacheCapacity:)``
    /// unless told otherwise.
    ///
    /// - Throws: what ``Store/open(at:configuration:fileSystem:)`` throws.
    public static func openForTesting(
        _ fileSystem: any FileSystem,
        directory: String = TemporaryStore.directory,
        configuration: StoreConfiguration = .testing()
    ) throws -> Store {
        try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
    }
}
