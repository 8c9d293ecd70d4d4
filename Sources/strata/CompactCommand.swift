import ArgumentParser
import Foundation
import StrataStorage

/// `strata compact STORE [--json]`: rewrites a store's live pages and blobs into new files and swaps them
/// in atomically (``Store/compact(at:configuration:fileSystem:progress:)``), then prints the sizes before
/// and after.
///
/// Compaction is offline: a store another process has open is refused (its lock is held), with exit code 8,
/// and so is a store this version may not write (unknown read-only-compatible features). It first checks the
/// store as `strata fsck` does: damage that nothing repairs without losing committed data (a damaged page or
/// blob, damage in the middle of the log, an invalid row an index cannot take) refuses it with exit code 4,
/// before anything is written: no file changes (run `strata fsck`).
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite a store without dead space: live pages and blobs into new files, swapped in atomically.",
        discussion: """
            First checks the store as fsck does and refuses (exit 4, nothing written) damage that nothing \
            repairs without losing committed data: a damaged page or blob, damage in the middle of the log. \
            Then checkpoints the store, writes its live rows as new, full B+trees into strata.pages.compact and its \
            live blobs into new segments, syncs them, renames the new page file over the old one and syncs the \
            directory (the commit point), then deletes the old segments. A crash at any moment leaves the old \
            store or the new one, both whole. Needs free space for a copy of the live data. Refuses a store that \
            another process has open, and one with features this version may read but not write.

            \(StoreExitCode.help)
            """
    )

    @OptionGroup var options: StoreCommandOptions

    func run() throws {
        options.bootstrap()
        let bar = ProgressBar()
        let report: CompactionReport
        do {
            report = try Store.compact(at: options.store, configuration: options.configuration, progress: bar.handler)
            bar.finish()
        } catch {
            bar.finish()
            let outcome = StoreExitCode.of(error)
            throw Output.fail(
                "compact", error, store: options.store, json: options.json,
                suffix: outcome == .problemsLeft ? "; the store is unchanged: run `strata fsck` on it" : "")
        }
        if options.json {
            try Output.printJSON(report)
            return
        }
        print("strata compact \(options.store)")
        print(
            "bytes before: \(Output.count(report.bytesBefore)), after: \(Output.count(report.bytesAfter)), "
                + "reclaimed: \(Output.count(report.bytesReclaimed))"
                + (report.bytesBefore > 0
                    ? String(format: " (%.1f%%)", Double(report.bytesReclaimed) * 100 / Double(report.bytesBefore))
                    : ""))
        print(
            "page file: \(Output.count(report.pageFileBytesBefore)) -> \(Output.count(report.pageFileBytesAfter)) bytes "
                + "(\(report.pagesWritten) pages: \(report.treePagesWritten) tree, \(report.overflowPagesWritten) overflow, "
                + "\(report.rootRecordPagesWritten) root record)")
        print(
            "blob segments: \(Output.count(report.segmentBytesBefore)) -> \(Output.count(report.segmentBytesAfter)) bytes "
                + "(\(report.blobsCopied) blobs, \(Output.count(report.blobBytesCopied)) bytes copied; segments "
                + "\(report.segmentsBefore.map(String.init).joined(separator: ",")) -> \(report.segmentsAfter.map(String.init).joined(separator: ",")))"
        )
        print(
            "tables: \(report.tableCount), rows: \(Output.count(report.rowCount)); generation \(report.generation); "
                + String(format: "%.3f s", report.seconds))
        if let failure = report.cleanupFailure {
            print("note: old blob segments could not be removed (\(failure)); the next compaction removes them")
        }
    }
}
