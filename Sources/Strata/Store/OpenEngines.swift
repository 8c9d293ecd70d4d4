import Foundation
import StrataIO
import StrataLock
import StrataStorage

/// The storage engines Strata stores have open in this process, by directory: a second coordinator that adds a
/// store already open shares its engine (and so its write lock and its snapshots) instead of failing to take
/// the directory's lock, as several Core Data coordinators can open one SQLite file. The engine closes when the
/// last store on it closes.
///
/// The engine keeps the configuration of the store that opened it; later stores' configurations are not
/// applied. Stores on one engine also share a ``RowCacheGroup``.
final class OpenEngines: Sendable {
    static let shared = OpenEngines()

    private struct Entry {
        weak var engine: Store?
        var stores: Int
        let group: RowCacheGroup
    }

    private let entries = Lock<[String: Entry]>([:])

    /// The key of a directory: its absolute, standardized path with symbolic links resolved; on a file system other
    /// than POSIX's (an in-memory one in tests), that file system's identity and the path.
    private static func key(_ directory: String, _ fileSystem: any FileSystem) -> String {
        guard fileSystem is PosixFileSystem else { return "\(ObjectIdentifier(fileSystem as AnyObject)):\(directory)" }
        return URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The engine open for `directory`, or a newly opened one, with the directory's cache group; counts one
    /// more store on it.
    ///
    /// - Throws: what `Store.open(at:configuration:)` throws.
    func open(
        _ directory: String, configuration: StoreConfiguration, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> (Store, RowCacheGroup) {
        let key = Self.key(directory, fileSystem)
        return try entries.withLock { entries in
            if var entry = entries[key], let engine = entry.engine {
                entry.stores += 1
                entries[key] = entry
                return (engine, entry.group)
            }
            // Opened while the lock is held, so that two coordinators opening at once share one engine.
            let engine = try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem)
            let group = RowCacheGroup()
            entries[key] = Entry(engine: engine, stores: 1, group: group)
            return (engine, group)
        }
    }

    /// Counts one store fewer on `engine`; closes it when it was the last.
    ///
    /// - Throws: what `Store.close()` throws.
    func close(_ engine: Store, directory: String, fileSystem: any FileSystem = PosixFileSystem()) throws {
        let key = Self.key(directory, fileSystem)
        let last = entries.withLock { entries -> Bool in
            guard var entry = entries[key], entry.engine === engine else { return true }
            entry.stores -= 1
            if entry.stores > 0 {
                entries[key] = entry
                return false
            }
            entries[key] = nil
            return true
        }
        if last { try engine.close() }
    }
}
