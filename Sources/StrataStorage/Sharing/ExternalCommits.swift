import StrataFormat

/// Commits made through another open of the store (another process, usually) that this store took in when it
/// caught up with the shared log, and the rows they changed: what a cache of rows above the engine must forget.
///
/// Delivered to the handlers of ``Store/onExternalCommits(_:)``.
public struct ExternalCommits: Sendable, Equatable {
    /// The LSN of the last commit this store had seen before, and of the last one it has now.
    public var fromLSN: UInt64
    public var toLSN: UInt64
    /// The rows inserted, updated or deleted, by table.
    public var rows: [TableID: Set<RowID>]
    /// Whether ``rows`` lists every changed row. It does not when tables or indexes were created or dropped, or
    /// when part of the log was checkpointed away before this store read it: treat every row as possibly changed.
    public var isComplete: Bool

    /// Creates a description of external commits.
    public init(fromLSN: UInt64, toLSN: UInt64, rows: [TableID: Set<RowID>], isComplete: Bool) {
        self.fromLSN = fromLSN
        self.toLSN = toLSN
        self.rows = rows
        self.isComplete = isComplete
    }
}

/// The rows a run of logged operations changes, gathered while catching up.
struct ChangedRows {
    var rows: [TableID: Set<RowID>] = [:]
    /// A table or index was created or dropped: rows may have changed that no operation names.
    var catalogChanged = false

    var isEmpty: Bool { rows.isEmpty && !catalogChanged }

    mutating func note(_ operation: WALOperation) {
        switch operation {
        case .put(let table, let row, _), .delete(let table, let row): note(table: table, row: row)
        case .reserveRows: break
        case .createTable, .dropTable, .createIndex, .dropIndex: catalogChanged = true
        }
    }

    /// Notes a put or delete of `row`.
    mutating func note(table: UInt32, row: UInt64) {
        rows[TableID(table), default: []].insert(RowID(row))
    }

    mutating func merge(_ other: ChangedRows) {
        for (table, changed) in other.rows { rows[table, default: []].formUnion(changed) }
        catalogChanged = catalogChanged || other.catalogChanged
    }
}
