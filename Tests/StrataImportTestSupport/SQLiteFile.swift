import CSQLite
import Foundation
import StrataImport

/// A read-write SQLite connection for building test files the way Core Data lays them out (through the SQLite C
/// API, as the brief asks), and for reading them back to compare.
public final class SQLiteFile {
    /// A failed SQLite call.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private var handle: OpaquePointer?
    public let path: String

    /// Opens (or creates) the file at `path`.
    public init(path: String) throws {
        self.path = path
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            defer { sqlite3_close(handle) }
            throw Failure(description: "open \(path): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    deinit { close() }

    /// Closes the connection (SQLite checkpoints a WAL then, as the last connection).
    public func close() {
        sqlite3_close(handle)
        handle = nil
    }

    /// Runs SQL statements that return nothing.
    public func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw Failure(description: "\(sql): \(text)")
        }
    }

    /// Inserts one row.
    public func insert(_ table: String, _ values: KeyValuePairs<String, SQLiteValue>) throws {
        let columns = values.map(\.key).joined(separator: ", ")
        let marks = values.map { _ in "?" }.joined(separator: ", ")
        try run("INSERT INTO \(table) (\(columns)) VALUES (\(marks))", values.map(\.value))
    }

    /// Runs one statement with bound values and returns its rows.
    @discardableResult
    public func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            switch argument {
            case .null: sqlite3_bind_null(statement, position)
            case .integer(let value): sqlite3_bind_int64(statement, position, value)
            case .real(let value): sqlite3_bind_double(statement, position, value)
            case .text(let value): sqlite3_bind_text(statement, position, value, -1, transient)
            case .blob(let bytes):
                _ = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(
                        statement, position, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count),
                        transient)
                }
            }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else {
                throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
            var row: [SQLiteValue] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let bytes = sqlite3_column_blob(statement, column)
                    row.append(.blob(count == 0 ? [] : Array(UnsafeRawBufferPointer(start: bytes, count: count))))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
    }
}
