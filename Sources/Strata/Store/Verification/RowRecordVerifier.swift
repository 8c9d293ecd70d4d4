import StrataFormat
import StrataStorage

/// Decodes every row record of a Strata store by FORMAT.md §6.2, from a snapshot of its engine: the engine's
/// verification sees rows as bytes (a row with a valid page checksum passes it whatever its bytes), so
/// `strata fsck` runs this too. No model is needed.
///
/// 1. Read the store's metadata (row 1 of `store.metadata`). A store without it is not an object store:
///    there is nothing to check (the result is nil).
/// 2. Decode every row of every entity table (`entity.<Root>`) and join table (`join.<Entity>.<relationship>`)
///    with ``RowRecord/decodeAll(_:)-(UnsafeRawBufferPointer)``: each reader rule of §6.2 (lengths, the
///    format version, the field-end table, every field's tag and payload) is checked for every field.
/// 3. Check what §6.7 fixes without the model: an entity row's entity ID is not 0 (entity IDs count from 1);
///    a link row has entity ID 0 and six fields of the kinds §6.7 gives (two references, two int64 entity
///    IDs, two int64-or-null positions).
///
/// Each row that breaks a rule is a problem naming its table, row and (when one field is at fault) field.
/// A table whose pages cannot be read is checked as far as it reads (the engine's verification reports the
/// damage). The model's own checks (a field's kind against its attribute's type) need the model and are
/// made when the application opens the store.
///
/// For example:
/// ```swift
/// let store = try ReadOnlyStore.open(at: path)
/// if let report = RowRecordVerifier.verify(store.snapshot()), !report.isClean {
///     report.problems.forEach { print($0) }
/// }
/// ```
///
/// ## Topics
/// - ``verify(_:progress:)``
/// - ``RowRecordReport``
public enum RowRecordVerifier {
    /// The prefix of the tables that hold the rows of an entity hierarchy.
    static let entityTablePrefix = "entity."
    /// The prefix of the join tables of to-many relationships.
    static let joinTablePrefix = "join."

    /// Decodes every row record of the store in `snapshot`.
    ///
    /// - Parameters:
    ///   - snapshot: a snapshot of the store's engine (``ReadOnlyStore/snapshot()`` or ``Store/snapshot()``).
    ///   - progress: called now and then with the rows decoded so far.
    /// - Returns: the report, or nil when the store is not an object store (it has no `store.metadata`).
    ///   Nothing is thrown: read errors are in the report.
    public static func verify(_ snapshot: Snapshot, progress: ProgressHandler? = nil) -> RowRecordReport? {
        do {
            guard try RelationshipLayout.storeMetadata(in: snapshot) != nil else { return nil }
        } catch {
            var report = RowRecordReport()
            report.add(
                .init(table: StrataStore.metadataTable, row: 1, message: "the metadata row is unreadable: \(error)"))
            return report
        }
        var report = RowRecordReport()
        let names = snapshot.tableNames.filter { $0.hasPrefix(entityTablePrefix) || $0.hasPrefix(joinTablePrefix) }
        var total: UInt64 = 0
        for name in names {
            if let table = snapshot.table(named: name) { total += UInt64((try? snapshot.rowCount(in: table)) ?? 0) }
        }
        var reported: UInt64 = 0
        for name in names.sorted() {
            guard let table = snapshot.table(named: name) else { continue }
            let isJoin = name.hasPrefix(joinTablePrefix)
            report.tablesChecked += 1
            do {
                try snapshot.forEachRow(in: table) { id, bytes in
                    report.rowsChecked += 1
                    if let finding = check(bytes, isJoin: isJoin) {
                        report.add(.init(table: name, row: id.rawValue, field: finding.field, message: finding.message))
                    }
                    if let progress, report.rowsChecked - reported >= max(1, total / 200) {
                        reported = report.rowsChecked
                        progress(OperationProgress(phase: "decoding rows", completed: reported, total: total))
                    }
                    return true
                }
            } catch {
                report.add(.init(table: name, message: "rows after \(report.rowsChecked) not decoded: \(error)"))
            }
        }
        return report
    }

    /// Steps 2 and 3 for one row: what is wrong with it, or nil.
    static func check(_ bytes: UnsafeRawBufferPointer, isJoin: Bool) -> (field: Int?, message: String)? {
        let decoded: (header: RowRecord.Header, fields: [RowRecord.Field])
        do { decoded = try RowRecord.decodeAll(bytes) } catch {
            return (nil, "breaks the row-record reader rules (FORMAT.md §6.2): \(error)")
        }
        let (header, fields) = decoded
        guard isJoin else {
            return header.entityID == 0 ? (nil, "entity ID 0 (entity IDs count from 1)") : nil
        }
        guard header.entityID == 0, fields.count == 6 else {
            return (
                nil,
                "a link row must have entity ID 0 and 6 fields (FORMAT.md §6.7); it has entity ID \(header.entityID) "
                    + "and \(fields.count) fields"
            )
        }
        for (index, field) in fields.enumerated() {
            let fits: Bool
            switch (index, field) {
            case (0...1, .reference): fits = true
            case (2...3, .int64): fits = true
            case (4...5, .int64), (4...5, .null): fits = true
            default: fits = false
            }
            if !fits { return (index, "a link row's field \(index) cannot be \(field) (FORMAT.md §6.7)") }
        }
        return nil
    }
}

/// What ``RowRecordVerifier`` found: how much it decoded, and each row that breaks the rules.
public struct RowRecordReport: Sendable, Equatable, Codable, CustomStringConvertible {
    /// A row that breaks a rule.
    public struct Finding: Sendable, Equatable, Codable, CustomStringConvertible {
        /// The engine table of the row.
        public var table: String
        /// The row, when the finding is about one.
        public var row: UInt64?
        /// The field at fault, when one is.
        public var field: Int?
        public var message: String

        public init(table: String, row: UInt64? = nil, field: Int? = nil, message: String) {
            self.table = table
            self.row = row
            self.field = field
            self.message = message
        }

        /// E.g. `entity.Employee row 3 field 1: breaks the row-record reader rules (FORMAT.md §6.2): …`.
        public var description: String {
            var text = table
            if let row { text += " row \(row)" }
            if let field { text += " field \(field)" }
            return text + ": " + message
        }
    }

    /// How many problems the list keeps; ``problemCount`` counts them all.
    public static let findingLimit = 1_000

    /// The entity and join tables decoded.
    public var tablesChecked = 0
    /// The rows decoded.
    public var rowsChecked: UInt64 = 0
    /// The first ``findingLimit`` problems.
    public var problems: [Finding] = []
    /// Every problem found.
    public var problemCount = 0

    public init() {}

    /// Whether every row decoded and follows the rules.
    public var isClean: Bool { problemCount == 0 }

    mutating func add(_ finding: Finding) {
        problemCount += 1
        if problems.count < Self.findingLimit { problems.append(finding) }
    }

    /// E.g. `12,000 rows in 3 tables decoded, 1 problem`.
    public var description: String {
        "\(rowsChecked) rows in \(tablesChecked) tables decoded, \(problemCount) problem\(problemCount == 1 ? "" : "s")"
    }
}
