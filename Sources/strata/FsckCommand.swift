import ArgumentParser
import Foundation
import StrataStorage

/// `strata fsck STORE [--json] [--repair | --salvage OUT]`: checks a store without changing it, and
/// optionally repairs what can be repaired without losing committed data, or copies what is readable
/// into a new store.
///
/// 1. Open the store read-only (``ReadOnlyStore``): nothing is written, not even the lock file; what
///    recovery would replay is replayed in memory and reported.
/// 2. Verify everything (``ReadOnlyStore/verify(checkBlobContents:progress:)``): header, log, every
///    reachable page and tree invariant, page accounting, every blob. Print each problem with its file
///    and byte offset, then a summary.
/// 3. `--repair`: if a problem is a torn log tail or a transaction without its commit record, open the
///    store for writing (recovery cuts the tail; committed transactions are replayed and checkpointed);
///    if a secondary index is damaged or disagrees with its table, rebuild it from the table;
///    if there is dead blob space or a leftover of an interrupted compaction, and no damage, compact.
///    Verify again. Damage with no repair (a damaged page, blob or the middle of the log) is left for
///    `--salvage`.
/// 4. `--salvage OUT`: copy every readable row and blob into a new store at OUT
///    (``Store/salvage(from:to:configuration:fileSystem:progress:)``); the damaged store is not touched.
///
/// Relationship integrity and whether rows decode against the model are the object graph's to check:
/// at this level a row is bytes.
struct FsckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsck",
        abstract: "Check a store without changing it; optionally repair it or salvage what is readable.",
        discussion: """
            Checks the store header and lock, every log record and what recovery would replay, every page's \
            checksum and each B+tree's invariants (key order, key ranges between levels, page types, \
            references in bounds, no page reachable twice, row counts), page accounting, every blob's records \
            and content checksum and the segments' live and orphaned bytes. Each problem is printed with its \
            file and byte offset. Nothing is written unless --repair or --salvage is given.

            --repair fixes what can be fixed without losing committed data: a torn log tail is cut and \
            committed transactions replayed (recovery); orphaned blob bytes and leftovers of an interrupted \
            compaction are dropped (compaction, only when nothing is damaged). --salvage OUT copies every \
            readable row and blob of a damaged store into a new store at OUT.

            Rows are checked as bytes: whether they decode against the model and relationship integrity \
            belong to the object graph.

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
        /// What --repair did, in order.
        var repairs: [String] = []
        /// The report after repairs, when any was made.
        var afterRepair: VerificationReport?
        var salvage: SalvageReport?
        var salvageDestination: String?
        var compaction: CompactionReport?
    }

    func run() throws {
        options.bootstrap()
        let bar = ProgressBar()
        defer { bar.finish() }
        var report: VerificationReport
        do {
            report = try check(bar)
        } catch {
            bar.finish()
            Output.error("strata fsck: \(Output.describe(error, store: options.store))")
            throw StoreExitCode.operationalError.exitCode
        }
        var result = Result(store: options.store, exitCode: 0, clean: report.isClean, report: report)
        var outcome: StoreExitCode = report.isClean ? .clean : .problemsLeft

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

    /// Verifies the store read-only; a header too damaged to open is reported as a problem.
    private func check(_ bar: ProgressBar) throws -> VerificationReport {
        do {
            let store = try ReadOnlyStore.open(at: options.store)
            defer { store.close() }
            return store.verify(progress: bar.handler)
        } catch StorageError.corruption(let file, let offset, let reason) {
            var report = VerificationReport()
            report.problems.append(.init(file: file, offset: offset, message: reason))
            return report
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
        guard repaired else { return report.isClean ? .clean : .problemsLeft }
        let after = try check(bar)
        result.afterRepair = after
        result.clean = after.isClean
        return after.isClean ? .repaired : .problemsLeft
    }

    private func printText(_ result: Result, outcome: StoreExitCode) {
        print("strata fsck \(options.store)")
        Self.printSummary(result.report)
        for problem in result.report.problems { print("problem: \(problem)") }
        for note in result.report.notes { print("note: \(note)") }
        for repair in result.repairs { print("repaired: \(repair)") }
        if let after = result.afterRepair {
            print("after repair:")
            Self.printSummary(after)
            for problem in after.problems { print("problem: \(problem)") }
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
            let count = (result.afterRepair ?? result.report).problems.count
            verdict = "\(count) problem\(count == 1 ? "" : "s") left"
        case .operationalError: verdict = "operational error"
        }
        print("result: \(verdict) (exit \(outcome.rawValue))")
    }

    static func printSummary(_ report: VerificationReport) {
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
    }
}
