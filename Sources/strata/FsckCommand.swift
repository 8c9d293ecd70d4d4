import ArgumentParser
import Foundation
import Strata
import StrataStorage

/// `strata fsck STORE [--json] [--repair | --salvage OUT]`: checks a store without changing it, and
/// optionally repairs what can be repaired without losing committed data, or copies what is readable
/// into a new store.
///
/// 1. Open the store read-only (``ReadOnlyStore``): nothing is written, not even the lock file; what
///    recovery would replay is replayed in memory and reported.
/// 2. Verify everything (``ReadOnlyStore/verify(checkBlobContents:progress:)``): header, log, every
///    reachable page and tree invariant, page accounting, every blob. Then, for an object store, its
///    relationships (``RelationshipVerifier``, from the layout its metadata records): dangling foreign keys,
///    one-to-one pairs, join-table links and their agreement with to-ones; and every row record of its
///    entity and join tables, decoded field by field by FORMAT.md §6.2 (``RowRecordVerifier``). Print each
///    problem with its location (file and byte offset; table, row and field), then a summary.
/// 3. `--repair`: if a problem is a torn log tail or a transaction without its commit record, open the
///    store for writing (recovery cuts the tail; committed transactions are replayed and checkpointed);
///    if a secondary index is damaged or disagrees with its table, rebuild it from the table;
///    if a join table has links naming rows that no longer exist, delete those links (and nothing else);
///    if there is dead blob space or a leftover of an interrupted compaction, and no damage, compact.
///    Verify again. Damage with no repair (a damaged page, blob or the middle of the log) is left for
///    `--salvage`.
/// 4. `--salvage OUT`: copy every readable row and blob into a new store at OUT
///    (``Store/salvage(from:to:configuration:fileSystem:progress:)``); the damaged store is not touched.
///
/// Whether each field's kind suits its attribute is not checked: fsck has no model, only the relationship
/// layout the store records. A store this version may not write (unknown read-only-compatible features) is
/// checked, but `--repair` refuses it (8); so does a store it cannot write to (a read-only mount, no
/// permission), saying so, with nothing changed.
struct FsckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsck",
        abstract: "Check a store without changing it; optionally repair it or salvage what is readable.",
        discussion: """
            Checks the store header and lock, every log record and what recovery would replay, every page's \
            checksum and each B+tree's invariants (key order, key ranges between levels, page types, \
            references in bounds, no page reachable twice, row counts), page accounting, every blob's records \
            and content checksum and the segments' live and orphaned bytes. In a store of the object graph, \
            checks relationships from the layout the store's metadata records: every foreign key names an \
            existing row of the destination's entities (references left dangling by design, with no inverse \
            or a "no action" inverse, are notes), one-to-one pairs point back at each other, every join-table \
            link names existing rows of the recorded entities and agrees with the to-one backing it; and every \
            row record of its entity and join tables decodes field by field (FORMAT.md §6.2). Each \
            problem is printed with its location (file and byte offset, or table, row and field). Nothing is \
            written unless --repair or --salvage is given.

            --repair fixes what can be fixed without losing committed data: a torn log tail is cut and \
            committed transactions replayed (recovery); a secondary index that disagrees with its table is \
            rebuilt; join-table links naming rows that no longer exist are deleted; orphaned blob bytes and \
            leftovers of an interrupted compaction are dropped (compaction, only when nothing is damaged). \
            Dangling foreign keys are reported, never changed. --repair refuses a store this version may not \
            write (unknown read-only-compatible features) and says so when it cannot write to the store (a \
            read-only mount, no permission). Checking needs read access only. --salvage OUT copies every \
            readable row and blob of a damaged store into a new store at OUT.

            \(StoreExitCode.help)
            """
    )

    @OptionGroup var options: StoreCommandOptions

    @Flag(name: .long, help: "Repair what can be repaired without losing committed data.")
    var repair = false

    @Option(
        name: .long,
        help: ArgumentHelp("Copy every readable row and blob into a new store at this path.", valueName: "out"))
    var salvage: String?

    func validate() throws {
        if repair, salvage != nil { throw ValidationError("--repair and --salvage exclude each other") }
    }

    /// What `--json` prints.
    struct Result: Encodable {
        var store: String
        var exitCode: Int32
        var clean: Bool
        var report: VerificationReport
        /// The relationships' report; nil for a store that is not an object store.
        var relationships: RelationshipReport?
        /// The row records' report (FORMAT.md §6.2); nil for a store that is not an object store.
        var rows: RowRecordReport?
        /// Why --repair or --salvage stopped, when one did.
        var error: Failure.Details?
        /// What --repair did, in order.
        var repairs: [String] = []
        /// The reports after repairs, when any was made.
        var afterRepair: VerificationReport?
        var relationshipsAfterRepair: RelationshipReport?
        var rowsAfterRepair: RowRecordReport?
        var salvage: SalvageReport?
        var salvageDestination: String?
        var compaction: CompactionReport?
    }

    func run() throws {
        options.bootstrap()
        let bar = ProgressBar()
        defer { bar.finish() }
        let findings: StoreFindings
        do {
            findings = try check(bar)
        } catch {
            bar.finish()
            throw Output.fail("fsck", error, store: options.store, json: options.json, outcome: .operationalError)
        }
        var result = Result(
            store: options.store, exitCode: 0, clean: findings.isClean, report: findings.report,
            relationships: findings.relationships, rows: findings.rows)
        var outcome: StoreExitCode = findings.isClean ? .clean : .problemsLeft

        if repair {
            do {
                outcome = try runRepairs(&result, checked: findings, bar: bar)
            } catch {
                bar.finish()
                outcome = max(outcome, StoreExitCode.of(error))
                var details = Failure.details(of: error, store: options.store)
                if details.kind == "notWritable" {
                    details.message =
                        "cannot repair: the store at \(options.store) cannot be written (\(details.message)); it "
                        + "was checked read-only and nothing was changed"
                } else {
                    details.message = "repair failed: " + details.message
                }
                Output.error("strata fsck: \(details.message)")
                result.error = details
            }
        }
        if let destination = salvage {
            do {
                result.salvage = try Store.salvage(
                    from: options.store, to: destination, configuration: options.configuration, progress: bar.handler)
                result.salvageDestination = destination
            } catch {
                bar.finish()
                var details = Failure.details(of: error, store: destination)
                details.message = "salvage failed: " + details.message
                Output.error("strata fsck: \(details.message)")
                result.error = details
                outcome = .operationalError
            }
        }
        bar.finish()
        result.exitCode = outcome.rawValue
        if options.json {
            try Output.printJSON(result)
        } else {
            printText(result, outcome: outcome)
        }
        if outcome != .clean { throw outcome.exitCode }
    }

    /// Verifies the store read-only, then its relationships and row records in the same state; a header too
    /// damaged to open is reported as a problem.
    private func check(_ bar: ProgressBar) throws -> StoreFindings {
        do {
            let store = try ReadOnlyStore.open(at: options.store)
            defer { store.close() }
            return StoreFindings.check(store, progress: bar.handler)
        } catch StorageError.corruption(let file, let offset, let reason) {
            var report = VerificationReport()
            report.problems.append(.init(file: file, offset: offset, message: reason))
            return StoreFindings(report: report)
        }
    }

    /// Step 3: recovery, then rebuilding damaged secondary indexes, then compaction, each only when a finding
    /// calls for it; then verifies again.
    private func runRepairs(_ result: inout Result, checked: StoreFindings, bar: ProgressBar) throws -> StoreExitCode {
        let report = result.report
        if report.lockHeldElsewhere {
            let message = "the store at \(options.store) is open in another process; not repairing it"
            Output.error("strata fsck: \(message)")
            result.error = Failure.Details(kind: "locked", message: message, path: options.store)
            return .operationalError
        }
        if !checked.isWritable {
            let features = report.header.map { "0x" + String($0.readOnlyCompatibleFeatures, radix: 16) } ?? "?"
            let message =
                "not repairing: the store has read-only-compatible features (\(features)) this version does not "
                + "know; it may read the store but not write it"
            Output.error("strata fsck: \(message)")
            result.error = Failure.Details(kind: "readOnlyStore", message: message, path: options.store)
            return .operationalError
        }
        let findings = report.problems + report.notes
        let unrepairable = report.problems.filter { $0.remedy == nil }
        var repaired = false
        if findings.contains(where: { $0.remedy == .recovery }),
            !unrepairable.contains(where: { $0.file.hasSuffix("strata.wal") })
        {
            let store = try Store.open(at: options.store, configuration: options.configuration)
            let recovery = store.recoveryReport
            try store.close()
            result.repairs.append(
                "recovery: replayed \(recovery.replayedTransactions) transactions, discarded "
                    + "\(recovery.discardedRecords) uncommitted records and \(recovery.discardedLogBytes) log bytes")
            repaired = true
        }
        if findings.contains(where: { $0.remedy == .indexRebuild }) {
            let store = try Store.open(at: options.store, configuration: options.configuration)
            let rebuilt = try store.repairIndexes()
            try store.close()
            result.repairs.append("indexes rebuilt from their tables: \(rebuilt.joined(separator: ", "))")
            repaired = !rebuilt.isEmpty || repaired
        }
        if let relationships = result.relationships, relationships.orphanLinks > 0 {
            let store = try Store.open(at: options.store, configuration: options.configuration)
            let removed: Int
            do {
                removed = try RelationshipVerifier.removeOrphanLinks(in: store, progress: bar.handler)
                bar.finish()
            } catch {
                try? store.close()
                throw error
            }
            try store.close()
            result.repairs.append("orphan links removed from join tables: \(Output.count(removed))")
            repaired = removed > 0 || repaired
        }
        if findings.contains(where: { $0.remedy == .compaction }), unrepairable.isEmpty {
            let compaction = try Store.compact(
                at: options.store, configuration: options.configuration, progress: bar.handler)
            bar.finish()
            result.compaction = compaction
            result.repairs.append(
                "compaction: \(Output.count(compaction.bytesReclaimed)) bytes reclaimed (orphaned blob bytes and dead pages dropped)"
            )
            repaired = true
        }
        guard repaired else { return checked.isClean ? .clean : .problemsLeft }
        let after = try check(bar)
        result.afterRepair = after.report
        result.relationshipsAfterRepair = after.relationships
        result.rowsAfterRepair = after.rows
        result.clean = after.isClean
        return after.isClean ? .repaired : .problemsLeft
    }

    private func printText(_ result: Result, outcome: StoreExitCode) {
        print("strata fsck \(options.store)")
        Self.printSummary(result.report, relationships: result.relationships, rows: result.rows)
        for problem in result.report.problems { print("problem: \(problem)") }
        Self.printFindings(result.relationships, notes: false)
        Self.printFindings(result.rows)
        for note in result.report.notes { print("note: \(note)") }
        Self.printFindings(result.relationships, notes: true)
        for repair in result.repairs { print("repaired: \(repair)") }
        if let after = result.afterRepair {
            print("after repair:")
            Self.printSummary(after, relationships: result.relationshipsAfterRepair, rows: result.rowsAfterRepair)
            for problem in after.problems { print("problem: \(problem)") }
            Self.printFindings(result.relationshipsAfterRepair, notes: false)
            Self.printFindings(result.rowsAfterRepair)
        }
        if let salvage = result.salvage, let destination = result.salvageDestination {
            print(
                "salvaged into \(destination): \(Output.count(salvage.rowsCopied)) rows in \(salvage.tables.count) tables, "
                    + "\(salvage.blobsCopied) blobs; skipped \(salvage.pagesSkipped) pages, \(salvage.valuesSkipped) values, "
                    + "\(salvage.blobsSkipped) blobs; \(salvage.logTransactionsApplied) log transactions applied"
                    + (salvage.headerRebuilt ? "; store header rebuilt" : ""))
            for table in salvage.tables {
                print(
                    "  \(table.name): \(Output.count(table.rowsCopied)) of \(Output.count(table.rowsExpected)) rows"
                        + (table.pagesSkipped > 0 ? ", \(table.pagesSkipped) pages skipped" : "")
                        + (table.generation != salvage.checkpointGeneration
                            ? ", from checkpoint \(table.generation)" : ""))
            }
            for problem in salvage.problems.prefix(20) { print("  skipped: \(problem)") }
        }
        let verdict: String
        switch outcome {
        case .clean: verdict = "clean"
        case .repaired: verdict = "problems repaired; the store is clean"
        case .problemsLeft:
            let repaired = result.afterRepair != nil
            let count =
                (result.afterRepair ?? result.report).problems.count
                + ((repaired ? result.relationshipsAfterRepair : result.relationships)?.problemCount ?? 0)
                + ((repaired ? result.rowsAfterRepair : result.rows)?.problemCount ?? 0)
            verdict = "\(count) problem\(count == 1 ? "" : "s") left"
        case .operationalError: verdict = "operational error"
        case .usage: verdict = "usage error"
        }
        print("result: \(verdict) (exit \(outcome.rawValue))")
    }

    /// The relationship problems (or notes), and how many more there are than the report keeps.
    static func printFindings(_ report: RelationshipReport?, notes: Bool) {
        guard let report else { return }
        let kind = notes ? "note" : "problem"
        let findings = notes ? report.notes : report.problems
        for finding in findings { print("\(kind): \(finding)") }
        let more = (notes ? report.noteCount : report.problemCount) - findings.count
        if more > 0 { print("\(kind): ... and \(Output.count(more)) more relationship \(kind)s") }
    }

    /// The row-record problems, and how many more there are than the report keeps.
    static func printFindings(_ report: RowRecordReport?) {
        guard let report else { return }
        for finding in report.problems { print("problem: \(finding)") }
        let more = report.problemCount - report.problems.count
        if more > 0 { print("problem: ... and \(Output.count(more)) more row-record problems") }
    }

    static func printSummary(_ report: VerificationReport, relationships: RelationshipReport?, rows: RowRecordReport?) {
        if let header = report.header {
            print("store: format \(header.formatVersion), page size \(header.pageSize), store ID \(header.storeID)")
        }
        print(
            "checkpoint: generation \(report.checkpointGeneration), LSN \(report.checkpointLSN)"
                + (report.log.map { log in
                    "; log: \(log.records) records, \(log.transactionsToReplay) transactions to replay"
                        + (log.discardedBytes > 0 ? ", \(log.discardedBytes) bytes recovery would discard" : "")
                } ?? ""))
        print(
            "tables: \(report.tableCount), rows \(Output.count(report.rowCount)); pages: \(Output.count(report.reachablePages)) "
                + "reachable of \(Output.count(report.pageFilePages)) (\(Output.count(report.unreferencedPages)) unreferenced)"
        )
        print(
            "blobs: \(report.blobCount) (\(Output.count(report.blobBytes)) bytes) in \(report.segments.count) segments, "
                + "\(Output.count(report.orphanedBlobBytes)) orphaned bytes")
        if !report.indexes.isEmpty {
            let entries = report.indexes.reduce(UInt64(0)) { $0 + $1.entryCount }
            print("indexes: \(report.indexes.count), \(Output.count(entries)) entries")
        }
        if let relationships { print("relationships: \(relationships.summary)") }
        if let rows { print("row records: \(rows)") }
    }
}
