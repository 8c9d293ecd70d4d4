import CSQLite
import Foundation

/// A read-only connection to an SQLite file: the only type of the importer that calls SQLite.
///
/// The file is opened with `SQLITE_OPEN_READONLY` through a `file:` URI with `mode=ro`, so nothing is ever written
/// to it. A store left with a `-wal` file beside it is not opened in place (a reader of a WAL database may create
/// the `-shm` index beside it): ``CoreDataStoreReader`` copies the file and its `-wal` to a private directory and
/// opens the copy, where SQLite applies the WAL as any reader does.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// The path given to ``init(path:)``.
    let path: String

    /// Opens `path` read-only and checks that it is an SQLite database (reading its schema).
    ///
    /// - Throws: ``ImportError/notADatabase(path:reason:)`` when SQLite cannot open or read it.
    init(path: String) throws(ImportError) {
        self.path = path
        var components = URLComponents()
        components.scheme = "file"
        components.path = path
        components.queryItems = [URLQueryItem(name: "mode", value: "ro")]
        let uri = components.string ?? "file:\(path)?mode=ro"
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(uri, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil)
        handle = opened
        guard status == SQLITE_OK else {
            let reason = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "sqlite3_open_v2 returned \(status)"
            sqlite3_close(opened)
            handle = nil
            throw .notADatabase(path: path, reason: reason)
        }
        // Opening is lazy: the first read of the schema is what finds out whether the file is a database.
        do {
            _ = try tableNames()
        } catch {
            sqlite3_close(handle)
            handle = nil
            throw .notADatabase(path: path, reason: Self.reason(of: error))
        }
    }

    deinit {
        sqlite3_close(handle)
    }

    private static func reason(of error: ImportError) -> String {
        if case .sqlite(_, let message) = error { return message }
        return "\(error)"
    }

    /// The names of the database's tables, `sqlite_` tables included, sorted.
    func tableNames() throws(ImportError) -> [String] {
        var names: [String] = []
        try query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { row throws(ImportError) in
            if case .text(let name) = row[0] { names.append(name) }
        }
        return names
    }

    /// The columns of a table, in their order: each name and declared type (uppercased).
    func columns(of table: String) throws(ImportError) -> [(name: String, type: String)] {
        var columns: [(name: String, type: String)] = []
        try query("PRAGMA table_info(\(Self.quote(table)))") { row throws(ImportError) in
            guard case .text(let name) = row[1] else { return }
            var type = ""
            if case .text(let declared) = row[2] { type = declared.uppercased() }
            columns.append((name, type))
        }
        return columns
    }

    /// An identifier quoted for SQL (`"` doubled).
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Runs a statement and hands each result row to `body` (values by column index).
    ///
    /// - Parameters:
    ///   - sql: one SQL statement.
    ///   - arguments: values bound to `?1`, `?2`, ... (integers and text only).
    ///   - body: called once per row.
    /// - Throws: ``ImportError/sqlite(operation:message:)`` when SQLite fails; what `body` throws.
    func query(
        _ sql: String, _ arguments: [SQLiteValue] = [], _ body: ([SQLiteValue]) throws(ImportError) -> Void
    ) throws(ImportError) {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw .sqlite(operation: sql, message: lastMessage)
        }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            switch argument {
            case .integer(let value): sqlite3_bind_int64(statement, position, value)
            case .text(let value): sqlite3_bind_text(statement, position, value, -1, Self.transient)
            default: sqlite3_bind_null(statement, position)
            }
        }
        let count = sqlite3_column_count(statement)
        var row: [SQLiteValue] = []
        row.reserveCapacity(Int(count))
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return }
            guard step == SQLITE_ROW else { throw .sqlite(operation: sql, message: lastMessage) }
            row.removeAll(keepingCapacity: true)
            for column in 0..<count { row.append(Self.value(of: statement, column: column)) }
            try body(row)
        }
    }

    private static func value(of statement: OpaquePointer?, column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let length = Int(sqlite3_column_bytes(statement, column))
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite3_column_bytes(statement, column))
            guard length > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
        default: return .null
        }
    }

    private var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// SQLite's `SQLITE_TRANSIENT`: SQLite copies the bound text.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
