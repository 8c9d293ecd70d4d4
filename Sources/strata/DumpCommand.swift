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
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a store's rows and blobs as JSON Lines, or its pages and log as annotated hex.",
        discussion: """
            Without a selector, prints every table's rows as JSON Lines (row ID, length, the bytes in base64, and \
            the decoded row record when the bytes are one), then every blob in base64 (skip them with \
            --no-blobs). --table NAME prints one table's rows. --pages lists the page file's pages; --page N and \
            --wal print annotated hex (file offsets, bytes, meaning), as FORMAT.md describes the bytes. The state \
            shown is the one recovery would produce; nothing is written.

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

    func run() throws {
        options.bootstrap()
        let store: ReadOnlyStore
        do { store = try ReadOnlyStore.open(at: options.store) } catch {
            Output.error("strata dump: \(Output.describe(error, store: options.store))")
            throw StoreExitCode.of(error).exitCode
        }
        defer { store.close() }
        do {
            if pages {
                let listing = try store.pageListing()
                if options.json { try Output.printJSON(listing) } else { listing.forEach { print($0) } }
            } else if wal {
                try printSpans(try store.annotatedLog())
            } else if let page {
                try printSpans(try store.annotatedPage(page))
            } else {
                try dumpRows(store)
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            Output.error("strata dump: \(Output.describe(error, store: options.store))")
            throw StoreExitCode.of(error).exitCode
        }
    }

    private func printSpans(_ spans: [AnnotatedSpan]) throws {
        if options.json {
            try Output.printJSON(
                spans.map { span in
                    SpanLine(
                        offset: span.offset, hex: span.bytes.map { String(format: "%02x", $0) }.joined(),
                        note: span.note)
                })
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
                Output.error("strata dump: no table '\(name)' (tables: \(snapshot.tableNames.joined(separator: ", ")))")
                throw StoreExitCode.operationalError.exitCode
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
