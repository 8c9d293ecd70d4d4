/// One value SQLite holds, by its storage class (SQLite's `sqlite3_column_type`): what the importer checks against
/// the type each Core Data column must have.
public enum SQLiteValue: Sendable, Equatable, CustomStringConvertible {
    /// `NULL`.
    case null
    /// An `INTEGER`.
    case integer(Int64)
    /// A `REAL`.
    case real(Double)
    /// `TEXT`, as UTF-8.
    case text(String)
    /// A `BLOB`.
    case blob([UInt8])

    /// The storage class's name as SQLite spells it: `NULL`, `INTEGER`, `REAL`, `TEXT` or `BLOB`.
    public var storageClass: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }

    /// The value in a short form for error messages: numbers as they are, text quoted (at most 40 characters),
    /// blobs as their length.
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): "\(value)"
        case .real(let value): "\(value)"
        case .text(let value): "'\(value.count > 40 ? String(value.prefix(40)) + "..." : value)'"
        case .blob(let bytes): "<\(bytes.count)-byte blob>"
        }
    }
}
