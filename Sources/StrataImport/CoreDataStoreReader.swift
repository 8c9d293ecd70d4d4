import Foundation

/// A Core Data SQLite store opened for reading: its tables, `Z_METADATA`'s property list and `Z_PRIMARYKEY`.
///
/// The source is never written. Without a `-wal` or `-journal` file beside it, the file is opened where it lies,
/// read-only. With one (a store whose last writer did not checkpoint, or crashed), the file and that companion are
/// copied to a private temporary directory and the copy is opened: SQLite applies the WAL (or rolls the hot
/// journal back) there as it would for any reader, and nothing is created beside the source (a reader of a WAL
/// database creates a `-shm` index file).
final class CoreDataStoreReader {
    /// The store's path, as given.
    let path: String
    let connection: SQLiteConnection
    /// The file's tables (`sqlite_` tables included).
    let tables: [String]
    let metadata: CoreDataStoreMetadata
    let entityTable: CoreDataEntityTable
    /// The folder external binary values live in: `.<name>_SUPPORT/_EXTERNAL_DATA` beside the store, `<name>`
    /// being the file's name without its extension.
    let externalDataDirectory: URL
    /// Whether the store had a `-wal` (or `-journal`) file beside it, read through a private copy.
    let readThroughCopy: Bool
    private let copyDirectory: URL?
    private var columnCache: [String: [String]] = [:]

    /// Opens the store at `path`.
    ///
    /// - Throws: ``ImportError/notADatabase(path:reason:)``, ``ImportError/missingTable(_:)`` (`Z_METADATA`,
    ///   `Z_PRIMARYKEY`), ``ImportError/invalidMetadata(reason:)``.
    init(path: String) throws(ImportError) {
        self.path = path
        let url = URL(fileURLWithPath: path)
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .notADatabase(path: path, reason: "no such file")
        }
        let companions = ["-wal", "-journal"].filter { files.fileExists(atPath: path + $0) }
        var openPath = path
        var copyDirectory: URL?
        if !companions.isEmpty {
            let directory = files.temporaryDirectory.appendingPathComponent("strata-import-\(UUID().uuidString)")
            let copy = directory.appendingPathComponent(url.lastPathComponent).path
            do {
                try files.createDirectory(at: directory, withIntermediateDirectories: true)
                try files.copyItem(atPath: path, toPath: copy)
                for suffix in companions { try files.copyItem(atPath: path + suffix, toPath: copy + suffix) }
            } catch {
                try? files.removeItem(at: directory)
                throw .notADatabase(path: path, reason: "cannot copy it and its \(companions[0]) file: \(error)")
            }
            openPath = copy
            copyDirectory = directory
        }
        self.copyDirectory = copyDirectory
        readThroughCopy = copyDirectory != nil
        do {
            connection = try SQLiteConnection(path: openPath)
            tables = try connection.tableNames()
            let names = Set(tables)
            metadata = try CoreDataStoreMetadata(connection: connection, tables: names)
            entityTable = try CoreDataEntityTable(connection: connection, tables: names)
        } catch {
            if let copyDirectory { try? files.removeItem(at: copyDirectory) }
            if case .notADatabase(_, let reason) = error { throw .notADatabase(path: path, reason: reason) }
            throw error
        }
        externalDataDirectory = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT")
            .appendingPathComponent("_EXTERNAL_DATA")
    }

    deinit {
        if let copyDirectory { try? FileManager.default.removeItem(at: copyDirectory) }
    }

    /// The names of a table's columns, in order.
    func columns(of table: String) throws(ImportError) -> [String] {
        if let cached = columnCache[table] { return cached }
        let names = try connection.columns(of: table).map(\.name)
        columnCache[table] = names
        return names
    }

    /// How many rows a table has.
    func rowCount(of table: String) throws(ImportError) -> Int {
        var count: Int64 = 0
        try connection.query("SELECT COUNT(*) FROM \(SQLiteConnection.quote(table))") { row throws(ImportError) in
            if case .integer(let value) = row[0] { count = value }
        }
        return Int(count)
    }
}
