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
///    one-to-one pairs, join-table links and their agreement with to-ones. Print each problem with its
///    location (file and byte offset; table, row and field), then a summary.
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
/// Whether every attribute decodes against the model is not checked: fsck has no model, only the
/// relationship layout the store records.
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
            link names existing rows of the recorded entities and agrees with the to-one backing it. Each \
            problem is printed with its location (file and byte offset, or table, row and field). Nothing is \
            written unless --repair or --salvage is given.

            --repair fixes what can be fixed without losing committed data: a torn log tail is cut and \
            committed transactions replayed (recovery); a secondary index that disagrees with its table is \
            rebuilt; join-table links naming rows that no longer exist are deleted; orphaned blob bytes and \
            leftovers of an interrupted compaction are dropped (compaction, only when nothing is damaged). \
            Dangling foreign keys are reported, never changed. --salvage OUT copies every readable row and \
            blob of a damaged store into a new store at OUT.

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
        /// What --repair did, in order.
        var repairs: [String] = []
        /// The reports after repairs, when any was made.
        var afterRepair: VerificationReport?
        var relationshipsAfterRepair: RelationshipReport?
        var salvage: SalvageReport?
        var salvageDestination: String?
        var compaction: CompactionReport?
    }

    func run() throws {
        options.bootstrap()
        let bar = ProgressBar()
        defer { bar.finish() }
        let findings: Findings
        do {
            findings = try check(bar)
        } catch {
            bar.finish()
            Output.error("strata fsck: \(Output.describe(error, store: options.store))")
            throw StoreExitCode.operationalError.exitCode
        }
        var result = Result(
            store: options.store, exitCode: 0, clean: findings.isClean, report: findings.report,
            relationships: findings.relationships)
        var outcome: StoreExitCode = findings.isClean ? .clean : .problemsLeft

        if repair {
            do {
                outcome = try runRepairs(&result, bar: bar)
            } catch {
                bar.finish()
                Output.error("strata fsck: repair failed: \(Output.describe(error, store: options.store))")
                outcome = StoreExitCode.of(error)
            }
        }
        if let destination = salvage {
            do {
                result.salvage = try Store.salvage(
                    from: options.store, to: destination, configuration: options.configuration, progress: bar.handler)
                result.salvageDestination = destination
            } catch {
                bar.finish()
                Output.error("strata fsck: salvage failed: \(Output.describe(error, store: options.store))")
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

    /// What one check found: the engine's report and, for an object store, the relationships'.
    struct Findings {
        var report: VerificationReport
        var relationships: RelationshipReport?

        var isClean: Bool { report.isClean && relationships?.isClean != false }
    }

    /// Verifies the store read-only, then its relationships in the same state; a header too damaged to open
    /// is reported as a problem.
    private func check(_ bar: ProgressBar) throws -> Findings {
        do {
            let store = try ReadOnlyStore.open(at: options.store)
            defer { store.close() }
            let report = store.verify(progress: bar.handler)
            let relationships = RelationshipVerifier.verify(store.snapshot(), progress: bar.handler)
            return Findings(report: report, relationships: relationships)
        } catch StorageError.corruption(let file, let offset, let reason) {
            var report = VerificationReport()
            report.problems.append(.init(file: file, offset: offset, message: reason))
            return Findings(report: report)
        }
    }

    /// Step 3: recovery, then rebuilding damaged secondary indexes, then compaction, each only when a finding
    /// calls for it; then verifies again.
    private func runRepairs(_ result: inout Result, bar: ProgressBar) throws -> StoreExitCode {
        let report = result.report
        if report.lockHeldElsewhere {
            Output.error("strata fsck: the store at \(options.store) is open in another process; not repairing it")
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
        let relationshipsClean = result.relationships?.isClean != false
        guard repaired else { return report.isClean && relationshipsClean ? .clean : .problemsLeft }
        let after = try check(bar)
        result.afterRepair = after.report
        result.relationshipsAfterRepair = after.relationships
        result.clean = after.isClean
        return after.isClean ? .repaired : .problemsLeft
    }

    private func printText(_ result: Result, outcome: StoreExitCode) {
        print("strata fsck \(options.store)")
        Self.printSummary(result.report, relationships: result.relationships)
        for problem in result.report.problems { print("problem: \(problem)") }
        Self.printFindings(result.relationships, notes: false)
        for note in result.report.notes { print("note: \(note)") }
        Self.printFindings(result.relationships, notes: true)
        for repair in result.repairs { print("repaired: \(repair)") }
        if let after = result.afterRepair {
            print("after repair:")
            Self.printSummary(after, relationships: result.relationshipsAfterRepair)
            for problem in after.problems { print("problem: \(problem)") }
            Self.printFindings(result.relationshipsAfterRepair, notes: false)
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
            let count =
                (result.afterRepair ?? result.report).problems.count
                + ((result.afterRepair != nil ? result.relationshipsAfterRepair : result.relationships)?.problemCount
                    ?? 0)
            verdict = "\(count) problem\(count == 1 ? "" : "s") left"
        case .operationalError: verdict = "operational error"
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

    static func printSummary(_ report: VerificationReport, relationships: RelationshipReport?) {
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
    }
}
