import StrataFormat
import StrataStorage

/// Checks the relationships of a Strata store from a snapshot of its engine and the ``RelationshipLayout``
/// recorded in its metadata: no model is needed, so `strata fsck` can run it on any store.
///
/// 1. Read the store's metadata (row 1 of `store.metadata`) and the layout in it. A store without a
///    `store.metadata` table is not an object store: there is nothing to check. A store without a layout
///    was written before layouts were recorded: say so and check nothing.
/// 2. Scan every entity table the layout names, once, in row-ID order: record each row's entity ID (from
///    its header alone) and, for the rows that have a to-one, its foreign key and entity ID fields. A field
///    that is neither a reference nor null is a problem.
/// 3. Each non-null foreign key must name an existing row of the destination table whose entity ID is in
///    the destination hierarchy, and equal to the recorded entity ID field when there is one. A missing row
///    is a note when the model allows it (no inverse, or an inverse whose delete rule is "no action"),
///    else a problem.
/// 4. Each one-to-one pair must point back: when row A names row B, B's inverse names A.
/// 5. Scan every join table: each link's source and member rows must exist with the entity IDs the link
///    records and that the layout allows. A link naming a missing row is an *orphan link*, fixed by
///    deleting it (``removeOrphanLinks(in:progress:)``); a note when the model leaves such links by design.
/// 6. A column backed by a to-one (the members of an ordered one-to-many): each link must agree with the
///    member's foreign key, each member has at most one link, and each foreign key naming an existing row
///    has its link.
///
/// A table whose pages cannot be read is checked as far as it reads; rows past the damage are not taken
/// as missing (the engine's verification reports the damage).
///
/// For example:
/// ```swift
/// let store = try ReadOnlyStore.open(at: path)
/// if let report = RelationshipVerifier.verify(store.snapshot()) {
///     print(report)
/// }
/// ```
///
/// ## Topics
/// - ``verify(_:progress:)``
/// - ``removeOrphanLinks(in:progress:)``
public enum RelationshipVerifier {
    /// Checks every relationship of the store in `snapshot`.
    ///
    /// - Parameters:
    ///   - snapshot: a snapshot of the store's engine (``ReadOnlyStore/snapshot()`` or ``Store/snapshot()``).
    ///   - progress: called now and then with the rows read so far.
    /// - Returns: the report, or nil when the store is not an object store (it has no `store.metadata`).
    ///   Nothing is thrown: read errors are in the report.
    public static func verify(_ snapshot: Snapshot, progress: ProgressHandler? = nil) -> RelationshipReport? {
        check(snapshot, progress: progress)?.report
    }

    /// Deletes every orphan link (a join-table row naming a row that no longer exists), in transactions of
    /// at most 10,000 deletes; nothing else is changed. `strata fsck --repair` calls it.
    ///
    /// - Returns: the number of link rows deleted.
    /// - Throws: `StorageError` when the store cannot be read or written.
    public static func removeOrphanLinks(in store: Store, progress: ProgressHandler? = nil) throws -> Int {
        guard let outcome = check(store.snapshot(), progress: progress) else { return 0 }
        var removed = 0
        for (tableName, rows) in outcome.orphanLinks.sorted(by: { $0.key < $1.key }) {
            var start = 0
            while start < rows.count {
                let batch = rows[start..<min(rows.count, start + 10_000)]
                removed += try store.write { txn -> Int in
                    guard let table = txn.table(named: tableName) else { return 0 }
                    var deleted = 0
                    for row in batch where try txn.delete(RowID(row), from: table) { deleted += 1 }
                    return deleted
                }
                start += batch.count
            }
        }
        return removed
    }

    // MARK: - Checking

    struct Outcome {
        var report = RelationshipReport()
        /// The orphan links' rows, by join table.
        var orphanLinks: [String: [UInt64]] = [:]
    }

    /// A non-null foreign key: the row that holds it, the row it names, the entity ID field.
    struct ForeignKey {
        var row: UInt64
        var target: UInt64
        var entityID: Int64?
    }

    /// The rows of one table: each row's entity ID; `complete` is false when a page could not be read.
    struct TableRows {
        var entityIDs: [UInt64: UInt16] = [:]
        var complete = true

        /// Whether `row` is missing for sure (not merely unread past damage).
        func isMissing(_ row: UInt64) -> Bool { complete && entityIDs[row] == nil }
    }

    static func check(_ snapshot: Snapshot, progress: ProgressHandler?) -> Outcome? {
        var outcome = Outcome()
        let layout: RelationshipLayout
        do {
            guard let metadata = try RelationshipLayout.storeMetadata(in: snapshot) else { return nil }
            guard let decoded = try RelationshipLayout.decode(fromMetadata: metadata) else {
                outcome.report.note(
                    .init(
                        table: StrataStore.metadataTable, row: 1,
                        message: "no relationship layout recorded (the store was last opened by a Strata that did "
                            + "not record one): relationships are not checked"))
                return outcome
            }
            layout = decoded
        } catch {
            outcome.report.problem(
                .init(table: StrataStore.metadataTable, row: 1, message: "relationships not checked: \(error)"))
            return outcome
        }
        outcome.report.layoutFound = true
        var checker = Checker(snapshot: snapshot, layout: layout, outcome: outcome, progress: progress)
        checker.run()
        return checker.outcome
    }

    /// Steps 2 to 6 for one snapshot and layout.
    struct Checker {
        let snapshot: Snapshot
        let layout: RelationshipLayout
        var outcome: Outcome
        let progress: ProgressHandler?
        var tables: [String: TableRows] = [:]
        /// The foreign keys of each to-one (by its index in the layout), in row order.
        var foreignKeys: [[ForeignKey]]
        var completed: UInt64 = 0
        var reported: UInt64 = 0
        var total: UInt64 = 0

        init(snapshot: Snapshot, layout: RelationshipLayout, outcome: Outcome, progress: ProgressHandler?) {
            self.snapshot = snapshot
            self.layout = layout
            self.outcome = outcome
            self.progress = progress
            self.foreignKeys = Array(repeating: [], count: layout.toOnes.count)
        }

        var report: RelationshipReport {
            get { outcome.report }
            set { outcome.report = newValue }
        }

        mutating func run() {
            var names = Set<String>()
            for toOne in layout.toOnes { names.formUnion([toOne.table, toOne.destinationTable]) }
            for join in layout.joinTables { names.formUnion([join.source.table, join.member.table]) }
            for name in names.union(layout.joinTables.map(\.table)) {
                if let table = snapshot.table(named: name) { total += UInt64((try? snapshot.rowCount(in: table)) ?? 0) }
            }
            report.toOneRelationships = layout.toOnes.count
            report.joinTables = layout.joinTables.count
            advance(by: 0)
            for name in names.sorted() { scanEntityTable(name) }
            for index in layout.toOnes.indices { checkForeignKeys(of: index) }
            for join in layout.joinTables { checkJoinTable(join) }
        }

        mutating func advance(by rows: UInt64) {
            completed += rows
            guard let progress, completed == 0 || completed - reported >= max(1, total / 200) || completed >= total
            else { return }
            reported = completed
            progress(OperationProgress(phase: "checking relationships", completed: completed, total: total))
        }

        // MARK: Step 2

        mutating func scanEntityTable(_ name: String) {
            var rows = TableRows()
            guard let table = snapshot.table(named: name) else {
                report.problem(.init(table: name, message: "the table is missing"))
                tables[name] = rows
                return
            }
            let declared = layout.toOnes.indices.filter { layout.toOnes[$0].table == name }
            let entityIDs = declared.map { Set(layout.toOnes[$0].entityIDs) }
            var found = Array(repeating: [ForeignKey](), count: declared.count)
            var findings: [RelationshipReport.Finding] = []
            var count: UInt64 = 0
            do {
                try snapshot.forEachRow(in: table) { id, bytes in
                    count += 1
                    let row = id.rawValue
                    let header: RowRecord.Header
                    do { header = try RowRecord.Header.decode(bytes) } catch {
                        findings.append(.init(table: name, row: row, message: "the row does not decode: \(error)"))
                        return true
                    }
                    rows.entityIDs[row] = header.entityID
                    for (slot, index) in declared.enumerated() where entityIDs[slot].contains(header.entityID) {
                        let toOne = layout.toOnes[index]
                        guard toOne.field >= 0, toOne.field + 1 < header.fieldCount else {
                            findings.append(
                                .init(
                                    table: name, row: row, field: toOne.field, relationship: toOne.name,
                                    message: "the row has \(header.fieldCount) fields: no room for the foreign key"))
                            continue
                        }
                        let reference: RowRecord.Field
                        let entity: RowRecord.Field
                        do {
                            reference = try RowRecord.field(at: toOne.field, in: bytes)
                            entity = try RowRecord.field(at: toOne.field + 1, in: bytes)
                        } catch {
                            findings.append(
                                .init(
                                    table: name, row: row, field: toOne.field, relationship: toOne.name,
                                    message: "the foreign key does not decode: \(error)"))
                            continue
                        }
                        switch (reference, entity) {
                        case (.null, .null):
                            continue
                        case (.reference(let target), .null):
                            found[slot].append(ForeignKey(row: row, target: target, entityID: nil))
                        case (.reference(let target), .int64(let entityID)):
                            found[slot].append(ForeignKey(row: row, target: target, entityID: entityID))
                        default:
                            findings.append(
                                .init(
                                    table: name, row: row, field: toOne.field, relationship: toOne.name,
                                    message: "the foreign key fields hold \(reference) and \(entity), not a reference "
                                        + "and an entity ID or null"))
                        }
                    }
                    return true
                }
            } catch {
                rows.complete = false
                report.note(
                    .init(
                        table: name,
                        message: "relationships checked only up to the first unreadable page: \(error) "
                            + "(the engine's verification reports the damage)"))
            }
            for finding in findings { report.problem(finding) }
            for (slot, index) in declared.enumerated() { foreignKeys[index] = found[slot] }
            report.rowsRead += Int(count)
            tables[name] = rows
            advance(by: count)
        }

        // MARK: Steps 3 and 4

        mutating func checkForeignKeys(of index: Int) {
            let toOne = layout.toOnes[index]
            let destination = tables[toOne.destinationTable] ?? TableRows(complete: false)
            let allowed = Set(toOne.destinationEntityIDs)
            var inverseKeys: [UInt64: UInt64]?
            var inverseEntities = Set<UInt16>()
            if let inverse = toOne.inverse, inverse.kind == .toOne,
                let inverseIndex = layout.toOnes.firstIndex(where: { $0.name == inverse.name })
            {
                var keys: [UInt64: UInt64] = [:]
                for key in foreignKeys[inverseIndex] { keys[key.row] = key.target }
                inverseKeys = keys
                inverseEntities = Set(layout.toOnes[inverseIndex].entityIDs)
            }
            for key in foreignKeys[index] {
                report.foreignKeys += 1
                let finding = RelationshipReport.Finding(
                    table: toOne.table, row: key.row, field: toOne.field, relationship: toOne.name, message: "")
                func at(_ message: String) -> RelationshipReport.Finding {
                    var copy = finding
                    copy.message = message
                    return copy
                }
                guard let entityID = destination.entityIDs[key.target] else {
                    guard destination.complete else { continue }
                    let message = "names row \(key.target) of \(toOne.destinationTable), which does not exist"
                    if toOne.allowsDangling {
                        report.danglingByDesign += 1
                        report.note(
                            at(
                                message
                                    + " (left by design: the inverse's delete rule is no action, or there is no inverse)"
                            ))
                    } else {
                        report.problem(at(message))
                    }
                    continue
                }
                guard allowed.contains(entityID) else {
                    report.problem(
                        at(
                            "names row \(key.target) of \(toOne.destinationTable), of entity \(entityID), not of the "
                                + "destination's entities \(toOne.destinationEntityIDs)"))
                    continue
                }
                if let recorded = key.entityID, recorded != Int64(entityID) {
                    report.problem(
                        at("records entity \(recorded) for row \(key.target), whose entity is \(entityID)"))
                    continue
                }
                if let inverseKeys, let inverse = toOne.inverse, inverseEntities.contains(entityID) {
                    report.oneToOnePairs += 1
                    let back = inverseKeys[key.target]
                    if back != key.row {
                        report.problem(
                            at(
                                "names row \(key.target), whose \(inverse.name) names "
                                    + (back.map { "row \($0)" } ?? "nothing") + " instead of this row"))
                    }
                }
            }
        }

        // MARK: Steps 5 and 6

        mutating func checkJoinTable(_ join: RelationshipLayout.JoinTable) {
            guard let table = snapshot.table(named: join.table) else {
                report.problem(.init(table: join.table, message: "the join table is missing"))
                return
            }
            let columns = [join.source, join.member]
            let allowed = columns.map { Set($0.entityIDs) }
            // For each column backed by a to-one: that to-one's foreign keys by row, the pairs the links
            // make (this column's row -> the other's) and the rows seen in this column.
            var backing: [Int: (toOne: Int, keys: [UInt64: UInt64], pairs: [UInt64: UInt64])] = [:]
            for (position, column) in columns.enumerated() {
                guard let field = column.toOneField,
                    let toOne = layout.toOnes.firstIndex(where: { $0.table == column.table && $0.field == field })
                else { continue }
                var keys: [UInt64: UInt64] = [:]
                for key in foreignKeys[toOne] { keys[key.row] = key.target }
                backing[position] = (toOne, keys, [:])
            }
            var findings: [RelationshipReport.Finding] = []
            var notes: [RelationshipReport.Finding] = []
            var orphans: [UInt64] = []
            var count: UInt64 = 0
            var complete = true
            do {
                try snapshot.forEachRow(in: table) { id, bytes in
                    count += 1
                    let row = id.rawValue
                    func finding(
                        _ field: Int?, _ message: String, _ remedy: RelationshipReport.Remedy? = nil
                    )
                        -> RelationshipReport.Finding
                    {
                        .init(table: join.table, row: row, field: field, message: message, remedy: remedy)
                    }
                    let header: RowRecord.Header
                    do { header = try RowRecord.Header.decode(bytes) } catch {
                        findings.append(finding(nil, "the link row does not decode: \(error)"))
                        return true
                    }
                    guard header.fieldCount == JoinRow.fieldCount else {
                        findings.append(
                            finding(nil, "the link row has \(header.fieldCount) fields, not \(JoinRow.fieldCount)"))
                        return true
                    }
                    var rows: [UInt64] = []
                    for column in columns {
                        let reference = try? RowRecord.field(at: column.rowField, in: bytes)
                        let entity = try? RowRecord.field(at: column.entityField, in: bytes)
                        guard case .reference(let target) = reference, case .int64 = entity else {
                            findings.append(
                                finding(column.rowField, "the link does not hold a row ID and an entity ID here"))
                            return true
                        }
                        rows.append(target)
                    }
                    var missing: [String] = []
                    var allowsMissing = true
                    var intact = true
                    for (position, column) in columns.enumerated() {
                        let target = rows[position]
                        let rowsOfTable = tables[column.table] ?? TableRows(complete: false)
                        guard let entityID = rowsOfTable.entityIDs[target] else {
                            if rowsOfTable.complete {
                                missing.append("row \(target) of \(column.table)")
                                allowsMissing = allowsMissing && column.allowsMissing
                            }
                            intact = false
                            continue
                        }
                        guard case .int64(let recorded) = try? RowRecord.field(at: column.entityField, in: bytes)
                        else { continue }
                        if !allowed[position].contains(entityID) {
                            findings.append(
                                finding(
                                    column.rowField,
                                    "names row \(target) of \(column.table), of entity \(entityID), not one of "
                                        + "\(column.entityIDs)"))
                            intact = false
                        } else if recorded != Int64(entityID) {
                            findings.append(
                                finding(
                                    column.entityField,
                                    "records entity \(recorded) for row \(target) of \(column.table), whose entity "
                                        + "is \(entityID)"))
                            intact = false
                        }
                    }
                    if !missing.isEmpty {
                        orphans.append(row)
                        let message =
                            "an orphan link: it names " + missing.joined(separator: " and ")
                            + ", which does not exist"
                        if allowsMissing {
                            notes.append(finding(nil, message + " (left by design)", .orphanLinkRemoval))
                        } else {
                            findings.append(finding(nil, message, .orphanLinkRemoval))
                        }
                    }
                    guard intact else { return true }
                    for position in backing.keys.sorted() {
                        let column = columns[position]
                        let own = rows[position]
                        let other = rows[1 - position]
                        let name = layout.toOnes[backing[position]!.toOne].name
                        if let earlier = backing[position]!.pairs[own] {
                            findings.append(
                                finding(
                                    column.rowField,
                                    "row \(own) of \(column.table) has a second link (to row \(earlier) and row "
                                        + "\(other)), but its to-one \(name) holds one"))
                        }
                        backing[position]!.pairs[own] = other
                        let key = backing[position]!.keys[own]
                        if key != other {
                            findings.append(
                                finding(
                                    column.rowField,
                                    "links row \(own) of \(column.table) to row \(other), but its to-one \(name) names "
                                        + (key.map { "row \($0)" } ?? "nothing")))
                        }
                    }
                    return true
                }
            } catch {
                complete = false
                report.note(
                    .init(
                        table: join.table,
                        message: "links checked only up to the first unreadable page: \(error) "
                            + "(the engine's verification reports the damage)"))
            }
            report.links += Int(count)
            report.orphanLinks += orphans.count
            report.rowsRead += Int(count)
            for finding in findings { report.problem(finding) }
            for note in notes { report.note(note) }
            if !orphans.isEmpty { outcome.orphanLinks[join.table] = orphans }
            advance(by: count)
            // Step 6, the other way: every foreign key naming an existing row of the right entity has its link.
            guard complete else { return }
            for (position, backed) in backing.sorted(by: { $0.key < $1.key }) {
                let toOne = layout.toOnes[backed.toOne]
                let other = columns[1 - position]
                let targets = tables[other.table] ?? TableRows(complete: false)
                let otherAllowed = allowed[1 - position]
                // A row with another link was reported with that link.
                for key in foreignKeys[backed.toOne] where backed.pairs[key.row] == nil {
                    guard let entityID = targets.entityIDs[key.target], otherAllowed.contains(entityID) else {
                        continue
                    }
                    report.problem(
                        .init(
                            table: toOne.table, row: key.row, field: toOne.field, relationship: toOne.name,
                            message: "names row \(key.target) of \(other.table), but \(join.table) has no link "
                                + "between them"))
                }
            }
        }
    }
}
