import Foundation
import GRDB
import GRDBSQLite
import StrataWorkload

/// The SQLite side: WORKLOAD.md's schema in WAL mode, opened with GRDB.
///
/// Settings, the same for every SQLite figure (README.md, "Settings"):
/// - `journal_mode=WAL`; `synchronous=FULL` (GRDB's WAL setup sets NORMAL; we set FULL after it and check it).
/// - `cache_size=-65536`: a 64 MiB page cache, the memory Strata's engine gets by default (16,384 pages of 4 KiB).
/// - foreign keys not enforced (SQLite's own default; GRDB turns them on), except in W8 and W8.graph, whose
///   cascade needs them (`foreign_keys=ON`). Strata's engine does not check references either. The schema's
///   `employee_department` index is kept, and Strata's engine keeps the same index (`StrataCompany.create`).
/// - `wal_autocheckpoint` left at SQLite's default (1,000 pages).
enum SQLiteCompany {
    static let schema = """
        CREATE TABLE department(id INTEGER PRIMARY KEY, name TEXT NOT NULL, budget REAL NOT NULL);
        CREATE TABLE employee(id INTEGER PRIMARY KEY, name TEXT NOT NULL, salary INTEGER NOT NULL, hired REAL NOT NULL,
                              departmentId INTEGER REFERENCES department(id) ON DELETE CASCADE);
        CREATE INDEX employee_department ON employee(departmentId);
        """

    static func configuration(foreignKeys: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.foreignKeysEnabled = foreignKeys
        return configuration
    }

    /// Applies and checks the settings on a connection.
    static func setUp(_ db: Database, synchronous: String = "FULL") throws {
        try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        try db.execute(sql: "PRAGMA cache_size = -65536")
        let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode")
        try check(mode == "wal", "SQLite journal_mode is \(mode ?? "nil"), not wal")
        let level = try Int.fetchOne(db, sql: "PRAGMA synchronous")
        let expected = ["OFF": 0, "NORMAL": 1, "FULL": 2][synchronous]
        try check(level == expected, "SQLite synchronous is \(level ?? -1), not \(synchronous)")
    }

    /// Opens a database queue (one connection) with the settings.
    static func open(_ path: String, synchronous: String = "FULL", foreignKeys: Bool = false) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path, configuration: configuration(foreignKeys: foreignKeys))
        try queue.writeWithoutTransaction { db in
            try setUp(db, synchronous: synchronous)
            let enforced = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys")
            try check(enforced == foreignKeys, "SQLite foreign_keys is \(enforced.map(String.init) ?? "nil")")
        }
        return queue
    }

    /// Creates an empty database with the schema.
    static func create(_ path: String, synchronous: String = "FULL") throws -> DatabaseQueue {
        removeDatabase(path)
        let queue = try open(path, synchronous: synchronous)
        try queue.write { try $0.execute(sql: schema) }
        return queue
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`: everything into the database file, an empty WAL.
    static func checkpoint(_ queue: DatabaseQueue) throws {
        try queue.writeWithoutTransaction { db in
            let result = try db.checkpoint(.truncate)
            try check(
                result.walFrameCount == 0 || result.walFrameCount == result.checkpointedFrameCount,
                "SQLite checkpoint left \(result.walFrameCount - result.checkpointedFrameCount) frames")
        }
    }

    static func totals(_ db: Database) throws -> (count: Int, salarySum: Int64) {
        let row = try Row.fetchOne(db, sql: "SELECT count(*), total(salary) FROM employee")!
        let count: Int = row[0]
        let sum: Double = row[1]
        return (count, Int64(sum))
    }

    static func insertDepartments(_ db: Database, _ departments: [Department]) throws {
        let insert = try RawStatement(db, "INSERT INTO department(name, budget) VALUES (?, ?)")
        for department in departments {
            try insert.text(1, department.name) {
                insert.double(2, department.budget)
                try insert.run()
            }
        }
    }

    /// Inserts employees through one prepared statement.
    static func insertEmployees(_ db: Database, _ employees: some Sequence<Employee>) throws {
        let insert = try RawStatement(
            db, "INSERT INTO employee(name, salary, hired, departmentId) VALUES (?, ?, ?, ?)")
        for employee in employees {
            try insert.text(1, employee.name) {
                insert.int64(2, employee.salary)
                insert.double(3, employee.hired)
                insert.int64(4, Int64(employee.department))
                try insert.run()
            }
        }
    }
}

/// A statement prepared by GRDB (`db.makeStatement`), bound and stepped through SQLite's C API: what a raw
/// prepared-statement user of SQLite does, with no boxing of arguments or rows.
struct RawStatement {
    let statement: Statement
    var handle: OpaquePointer { statement.sqliteStatement }

    init(_ db: Database, _ sql: String) throws {
        statement = try db.makeStatement(sql: sql)
    }

    @inline(__always) func int64(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    @inline(__always) func double(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }

    /// Binds a string for the duration of `body` (SQLITE_STATIC: no copy), which must step and reset.
    @inline(__always)
    func text<R>(_ index: Int32, _ value: String, _ body: () throws -> R) throws -> R {
        var value = value
        return try value.withUTF8 { bytes in
            sqlite3_bind_text(
                handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(bytes.count), nil)
            return try body()
        }
    }

    @inline(__always)
    func blob<R>(_ index: Int32, _ bytes: UnsafeRawBufferPointer, _ body: () throws -> R) throws -> R {
        sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), nil)
        return try body()
    }

    /// Steps a statement that returns no row, then resets it.
    @inline(__always)
    func run() throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw error(code) }
    }

    /// Steps once: true for a row, false at the end (then resets).
    @inline(__always)
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw error(code) }
        return false
    }

    @inline(__always) func reset() { sqlite3_reset(handle) }
    @inline(__always) func columnInt64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    @inline(__always) func columnDouble(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    @inline(__always)
    func columnText(_ index: Int32) -> String {
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, index))), as: UTF8.self)
    }

    @inline(__always)
    func columnBlob(_ index: Int32) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(
            start: sqlite3_column_blob(handle, index), count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// Rows changed by the last statement of the connection.
    var changes: Int32 { sqlite3_changes(sqlite3_db_handle(handle)) }

    private func error(_ code: Int32) -> BenchmarkFailure {
        BenchmarkFailure("SQLite error \(code): \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
    }
}
