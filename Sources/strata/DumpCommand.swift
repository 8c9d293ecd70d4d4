import ArgumentParser
import Foundation
import StrataStorage

/// `strata dump STORE [--pages | --wal | --page N | --table NAME] [--no-blobs]`: a store's contents, read
/// without changing it (``ReadOnlyStore``).
///
/// - Rows (the default, or one table with `--table`): JSON Lines, one row a line, in table then row-ID order:
///   `{"length":45,"record":{...},"row":1,"table":"person","value":"<base64>"}`; `record` is there when the
///   bytes decode as a row record (FORMAT.md §6). Then the blobs, `{"blob":3,"data":"<base64>","length":…}`,
///   unless `--no-blobs` (or `--table`).
/// - `--pages`: one line per page of the page file: its type and header fields, or why it does not verify.
/// - `--page N`, `--wal`: annotated hex in the style of Pebble's `binfmt`, one field a line, with file
///   offsets: `48-51: x 1f8b0c2d # LSN 1: checksum (masked CRC-32C of the salt and the record)`.
///
/// Before printing anything, the store is checked as `strata fsck` checks it (``StoreFindings``; blob contents
/// only when the blobs are printed): dump never presents a state recovery would refuse as if it were sound.
/// On a damaged store it warns on standard error, prints what it can, and exits 4; with `--json`, a last line
/// (rows) or the document's `problems` says so too. `--page N` past the end of the page file is a usage error
/// (64).
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a store's rows and blobs as JSON Lines, or its pages and log as annotated hex.",
        discussion: """
            Without a selector, prints every table's rows as JSON Lines (row ID, length, the bytes in base64, and \
            the decoded row record when the bytes are one), then every blob in base64 (skip them with \
            --no-blobs). --table NAME prints one table's rows. --pages lists the page file's pages; --page N and \
            --wal print annotated hex (file offsets, bytes, meaning), as FORMAT.md describes the bytes. The state \
            shown is the one recovery would produce; nothing is written. The store is checked first, as fsck \
            checks it: when it has problems, dump warns, prints what it can and exits 4. With --json, --pages, \
            --page and --wal print one document {"store", "exitCode", "problems", "pages" or "spans"}, and \
            rows end with a {"problems", "exitCode", ...} line when the store is damaged.

            \(StoreExitCode.help)
            """
    )

    @OptionGroup var options: StoreCommandOptions

    @Flag(name: .long, help: "List every page of the page file with its header fields.")
    var pages = false

    @Flag(name: .long, help: "Print the write-ahead log as annotated hex, record by record.")
    var wal = false

    @Option(name: .long, help: ArgumentHelp("Print one page as annotated hex.", valueName: "n"))
    var page: UInt64?

    @Option(name: .long, help: ArgumentHelp("Print only this table's rows.", valueName: "name"))
    var table: String?

    @Flag(name: .long, help: "Do not print blobs.")
    var noBlobs = false

    func validate() throws {
        let selectors = [pages, wal, page != nil, table != nil].filter { $0 }.count
        if selectors > 1 { throw ValidationError("--pages, --wal, --page and --table exclude each other") }
    }

    struct RowLine: Encodable {
        var table: String
        var row: UInt64
        var length: Int
        var value: String
        var record: RowDescription?
    }

    struct BlobLine: Encodable {
        var blob: UInt64
        var length: Int
        var data: String
    }

    struct SpanLine: Encodable {
        var offset: UInt64
        var hex: String
        var note: String
    }

    /// The `--json` document of `--pages`, `--page` and `--wal`.
    struct Listing<Item: Encodable>: Encodable {
        var store: String
        var exitCode: Int32
        /// The first problems the check found (all reports), as text.
        var problems: [String]
        var pages: [Item]?
        var spans: [Item]?
    }

    /// The last line of rows printed with `--json` from a damaged store.
    struct ProblemsLine: Encodable {
        var store: String
        var exitCode: Int32
        var problemCount: Int
        var problems: [String]
        var warning: String
    }

    func run() throws {
        options.bootstrap()
        let store: ReadOnlyStore
        do { store = try ReadOnlyStore.open(at: options.store) } catch {
            throw Output.fail("dump", error, store: options.store, json: options.json)
        }
        defer { store.close() }
        // `--page N` past the end is a usage error, found before any work.
        if let page {
            do { _ = try store.annotatedPage(page) } catch StorageError.invalidArgument(let reason) {
                let details = Failure.Details(kind: "usage", message: "--page \(page): \(reason)", path: options.store)
                throw Output.fail("dump", details, json: options.json, code: .usage)
            } catch {}
        }
        // The same check as fsck, so that a damaged store is never shown as if it were sound.
        let findings = StoreFindings.check(
            store, blobContents: !pages && !wal && page == nil && table == nil && !noBlobs, progress: nil)
        let outcome: StoreExitCode = findings.isClean ? .clean : .problemsLeft
        var problems: [String] = []
        if !findings.isClean {
            problems =
                findings.report.problems.map(\.description)
                + (findings.relationships?.problems.map(\.description) ?? [])
                + (findings.rows?.problems.map(\.description) ?? [])
            Output.error(
                "strata dump: warning: the store has \(findings.problemCount) problem"
                    + "\(findings.problemCount == 1 ? "" : "s") (\(findings.firstProblem ?? "")): what follows is what "
                    + "can be read, not a state recovery would accept; run `strata fsck`")
        }
        do {
            if pages {
                let listing = try store.pageListing()
                if options.json {
                    try Output.printJSON(
                        Listing(
                            store: options.store, exitCode: outcome.rawValue, problems: Array(problems.prefix(100)),
                            pages: listing, spans: nil))
                } else {
                    listing.forEach { print($0) }
                }
            } else if wal {
                try printSpans(try store.annotatedLog(), outcome: outcome, problems: problems)
            } else if let page {
                try printSpans(try store.annotatedPage(page), outcome: outcome, problems: problems)
            } else {
                try dumpRows(store)
                if options.json, outcome != .clean {
                    print(
                        try Output.jsonLine(
                            ProblemsLine(
                                store: options.store, exitCode: outcome.rawValue, problemCount: findings.problemCount,
                                problems: Array(problems.prefix(100)),
                                warning: "what precedes is what can be read, not a state recovery would accept")))
                }
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw Output.fail(
                "dump", error, store: options.store, json: options.json, outcome: max(outcome, StoreExitCode.of(error)))
        }
        if outcome != .clean { throw outcome.exitCode }
    }

    private func printSpans(_ spans: [AnnotatedSpan], outcome: StoreExitCode, problems: [String]) throws {
        if options.json {
            let lines = spans.map { span in
                SpanLine(
                    offset: span.offset, hex: span.bytes.map { String(format: "%02x", $0) }.joined(), note: span.note)
            }
            try Output.printJSON(
                Listing(
                    store: options.store, exitCode: outcome.rawValue, problems: Array(problems.prefix(100)),
                    pages: nil, spans: lines))
        } else {
            spans.forEach { print($0) }
        }
    }

    private func dumpRows(_ store: ReadOnlyStore) throws {
        let snapshot = store.snapshot()
        let names = table.map { [$0] } ?? snapshot.tableNames
        var lines = 0
        for name in names {
            guard let id = snapshot.table(named: name) else {
                let details = Failure.Details(
                    kind: "notFound",
                    message: "no table '\(name)' (tables: \(snapshot.tableNames.joined(separator: ", ")))",
                    path: options.store)
                throw Output.fail("dump", details, json: options.json, code: .operationalError)
            }
            var failure: Error?
            try snapshot.forEachRow(in: id) { row, bytes in
                let value = Array(bytes)
                do {
                    print(
                        try Output.jsonLine(
                            RowLine(
                                table: name, row: row.rawValue, length: value.count,
                                value: Data(value).base64EncodedString(), record: ReadOnlyStore.describeRow(value))))
                } catch {
                    failure = error
                    return false
                }
                lines += 1
                return true
            }
            if let failure { throw failure }
        }
        guard table == nil, !noBlobs else { return }
        try snapshot.forEachBlob { blob, length in
            let data = try snapshot.readBlob(blob) ?? []
            print(
                try Output.jsonLine(
                    BlobLine(blob: blob.rawValue, length: Int(length), data: Data(data).base64EncodedString())))
            return true
        }
    }
}
