import StrataStorage
import Testing

/// What a store should hold, kept by the simplest code possible: tables by name, each a dictionary of
/// rows and the row ID its next insert gets. Tests apply every committed operation to a model and to
/// the store and compare (the reference-model style of collections' and LevelDB's randomized tests).
public struct ReferenceModel: Sendable, Equatable, CustomStringConvertible {
    /// One table: its ID, rows by row ID and the row ID of the next insert.
    public struct Table: Sendable, Equatable {
        /// The ID the store must have given the table.
        public var id: TableID
        /// The table's rows: value bytes by raw row ID.
        public var rows: [UInt64: [UInt8]]
        /// The row ID the next insert gets; it only grows, even when rows are deleted.
        public var nextRowID: UInt64

        /// Creates a table entry, empty and starting at row ID 1 by default.
        ///
        /// - Parameters:
        ///   - id: the table's ID in the store.
        ///   - rows: the table's rows by raw row ID.
        ///   - nextRowID: the row ID the next insert gets.
        public init(id: TableID, rows: [UInt64: [UInt8]] = [:], nextRowID: UInt64 = 1) {
            self.id = id
            self.rows = rows
            self.nextRowID = nextRowID
        }
    }

    /// Tables by name.
    public var tables: [String: Table] = [:]
    /// The ID the next created table gets (IDs are never reused).
    public var nextTableID: UInt32 = 1

    /// Creates the model of an empty store: no tables, and the first table will get ID 1.
    public init() {}

    /// Every table in name order with its ID, row count and next row ID, e.g.
    /// `[person#1: 3 rows, next 4]`.
    public var description: String {
        let parts = tables.keys.sorted().map { name in
            let table = tables[name]!
            return "\(name)#\(table.id.rawValue): \(table.rows.count) rows, next \(table.nextRowID)"
        }
        return "[" + parts.joined(separator: "; ") + "]"
    }

    // MARK: - Changes, mirroring WriteTransaction

    /// Creates a table; returns the ID the store must give it.
    @discardableResult
    public mutating func createTable(named name: String) -> TableID {
        precondition(tables[name] == nil, "model: table \(name) exists")
        let id = TableID(nextTableID)
        nextTableID += 1
        tables[name] = Table(id: id)
        return id
    }

    /// Drops a table and its rows. Its ID is not given to any later table.
    ///
    /// A missing table is a precondition failure (the test's own mistake).
    public mutating func dropTable(named name: String) {
        precondition(tables.removeValue(forKey: name) != nil, "model: no table \(name)")
    }

    /// Inserts a row; returns the row ID the store must give it.
    @discardableResult
    public mutating func insert(_ value: [UInt8], into name: String) -> RowID {
        let row = tables[name]!.nextRowID
        tables[name]!.rows[row] = value
        tables[name]!.nextRowID += 1
        return RowID(row)
    }

    /// Replaces the value of an existing row. A missing table or row is a precondition failure.
    public mutating func update(_ row: RowID, in name: String, to value: [UInt8]) {
        precondition(tables[name]!.rows[row.rawValue] != nil, "model: no row \(row) in \(name)")
        tables[name]!.rows[row.rawValue] = value
    }

    /// Deletes an existing row; its ID is not reused. A missing table or row is a precondition failure.
    public mutating func delete(_ row: RowID, from name: String) {
        precondition(tables[name]!.rows.removeValue(forKey: row.rawValue) != nil, "model: no row \(row) in \(name)")
    }

    /// The sorted row IDs of a table.
    public func rowIDs(of name: String) -> [UInt64] { tables[name]!.rows.keys.sorted() }

    // MARK: - Comparing with a store

    /// Reads everything a snapshot holds into a model's tables (`nextTableID` is not visible to
    /// snapshots and stays 1). Rows are read with a forward scan.
    ///
    /// - Throws: ``ModelMismatch`` when a listed table cannot be found; the snapshot's `StorageError`
    ///   when a table cannot be read.
    public static func capture(_ snapshot: Snapshot) throws -> ReferenceModel {
        var model = ReferenceModel()
        for name in snapshot.tableNames {
            guard let id = snapshot.table(named: name) else {
                throw ModelMismatch("table \(name) listed but not found")
            }
            var table = Table(id: id, nextRowID: try snapshot.nextRowID(in: id).rawValue)
            try snapshot.forEachRow(in: id) { row, bytes in
                table.rows[row.rawValue] = Array(bytes)
                return true
            }
            model.tables[name] = table
        }
        return model
    }

    /// Every difference between the model and a snapshot: table names and IDs, row counts, next row
    /// IDs, each row read by lookup and by a forward and a backward scan. At most `limit` are listed.
    ///
    /// - Parameters:
    ///   - snapshot: the store's state to compare.
    ///   - limit: the most differences to list.
    /// - Returns: one sentence per difference, empty when the snapshot matches; an error reading the
    ///   snapshot is listed as a difference.
    public func differences(from snapshot: Snapshot, limit: Int = 10) -> [String] {
        var found: [String] = []
        func note(_ text: String) { if found.count < limit { found.append(text) } }
        do {
            if snapshot.tableNames != tables.keys.sorted() {
                note("tables \(snapshot.tableNames), expected \(tables.keys.sorted())")
            }
            for name in tables.keys.sorted() {
                let table = tables[name]!
                guard let id = snapshot.table(named: name) else { continue }
                if id != table.id { note("table \(name) has ID \(id.rawValue), expected \(table.id.rawValue)") }
                let count = try snapshot.rowCount(in: id)
                if count != table.rows.count {
                    note("table \(name) counts \(count) rows, expected \(table.rows.count)")
                }
                let next = try snapshot.nextRowID(in: id).rawValue
                if next != table.nextRowID { note("table \(name) next row ID \(next), expected \(table.nextRowID)") }
                let expectedIDs = table.rows.keys.sorted()
                var forward: [UInt64] = []
                try snapshot.forEachRow(in: id) { row, bytes in
                    forward.append(row.rawValue)
                    if let expected = table.rows[row.rawValue], !expected.elementsEqual(bytes) {
                        note(
                            "table \(name) row \(row.rawValue): scan gives \(bytes.count) bytes "
                                + "differing from the expected \(expected.count)"
                        )
                    }
                    return true
                }
                if forward != expectedIDs {
                    note(
                        "table \(name) forward scan gives \(Self.summary(forward)), "
                            + "expected \(Self.summary(expectedIDs))"
                    )
                }
                var backward: [UInt64] = []
                try snapshot.forEachRow(in: id, reverse: true) { row, _ in
                    backward.append(row.rawValue)
                    return true
                }
                if backward != expectedIDs.reversed() {
                    note(
                        "table \(name) backward scan gives \(Self.summary(backward)), "
                            + "expected the reverse of \(Self.summary(expectedIDs))"
                    )
                }
                for (row, value) in table.rows where try snapshot.row(RowID(row), in: id) != value {
                    note("table \(name) row \(row): lookup differs from the expected \(value.count) bytes")
                }
                // A row ID the table never had, or had and lost, reads as nothing.
                for row in [0, table.nextRowID, table.nextRowID + 1] where try snapshot.row(RowID(row), in: id) != nil {
                    note("table \(name) row \(row) exists but should not")
                }
            }
        } catch {
            note("reading the snapshot threw \(error)")
        }
        return found
    }

    /// Records an issue listing the differences between the model and the snapshot, if any.
    ///
    /// - Parameters:
    ///   - snapshot: the store's state to compare.
    ///   - context: words that open the issue's message (e.g. the step of the test).
    ///   - sourceLocation: where the issue is reported; the caller's location by default.
    /// - Returns: whether they match.
    @discardableResult
    public func assertMatches(
        _ snapshot: Snapshot,
        _ context: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let found = differences(from: snapshot)
        guard !found.isEmpty else { return true }
        let prefix = context().isEmpty ? "" : context() + ": "
        let message = prefix + "store differs from the model:\n" + found.joined(separator: "\n")
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        return false
    }

    /// Checks range scans with random bounds, forward and backward, against the model, including walks
    /// stopped early by the body. Bounds are drawn around and between existing row IDs.
    ///
    /// - Parameters:
    ///   - snapshot: the store's state to compare.
    ///   - scans: how many random scans to run per table.
    ///   - random: the generator the bounds, directions and stops are drawn from.
    /// - Returns: the differences found (empty when they match); the scans stop after the fifth.
    public func rangeScanDifferences(
        _ snapshot: Snapshot,
        scans: Int,
        using random: inout RepeatableRandomNumberGenerator
    ) -> [String] {
        var found: [String] = []
        do {
            for name in tables.keys.sorted() {
                let table = tables[name]!
                guard let id = snapshot.table(named: name) else { return ["no table \(name)"] }
                let keys = table.rows.keys.sorted()
                let top = (keys.last ?? 0) + 2
                func bound() -> UInt64? {
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: return nil
                    case 1, 2: return keys.isEmpty ? 0 : keys.randomElement(using: &random)!
                    default: return UInt64.random(in: 0...top, using: &random)
                    }
                }
                for _ in 0..<scans {
                    let lower = bound()
                    let upper = bound()
                    let reverse = Bool.random(using: &random)
                    let stopAfter =
                        Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 1...5, using: &random) : Int.max
                    var expected = keys.filter { ($0 >= (lower ?? 0)) && ($0 <= (upper ?? .max)) }
                    if reverse { expected.reverse() }
                    if expected.count > stopAfter { expected = Array(expected.prefix(stopAfter)) }
                    var got: [UInt64] = []
                    var wrongBytes = false
                    try snapshot.forEachRow(
                        in: id,
                        from: lower.map(RowID.init),
                        through: upper.map(RowID.init),
                        reverse: reverse
                    ) { row, bytes in
                        got.append(row.rawValue)
                        if table.rows[row.rawValue].map({ !$0.elementsEqual(bytes) }) ?? true { wrongBytes = true }
                        return got.count < stopAfter
                    }
                    if got != expected || wrongBytes {
                        found.append(
                            "table \(name) scan \(lower.map(String.init) ?? "-")...\(upper.map(String.init) ?? "-")"
                                + (reverse ? " reversed" : "")
                                + (stopAfter == .max ? "" : " stopping after \(stopAfter)")
                                + " gives \(Self.summary(got)), expected \(Self.summary(expected))"
                                + (wrongBytes ? " (with wrong bytes)" : "")
                        )
                        if found.count >= 5 { return found }
                    }
                }
            }
        } catch {
            found.append("scanning threw \(error)")
        }
        return found
    }

    private static func summary(_ keys: [UInt64]) -> String {
        keys.count <= 12 ? "\(keys)" : "\(keys.count) rows \(Array(keys.prefix(6)))...\(Array(keys.suffix(3)))"
    }
}

/// A difference between a store and what a test expected, as a thrown error.
public struct ModelMismatch: Error, CustomStringConvertible {
    /// What differs, in words.
    public var description: String
    /// Creates a mismatch error that says what differs.
    public init(_ description: String) { self.description = description }
}
