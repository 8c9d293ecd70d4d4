import ArgumentParser
import Foundation
import Strata
import StrataStorage

/// `strata info STORE [--json]`: what a store holds and how its space is used, read without changing it
/// (``ReadOnlyStore``; blobs are accounted, not read). Exits 4 when what it read has problems (after printing
/// everything), as `fsck` would.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a store's format, tables, space, log and blob segments, without changing it.",
        discussion: """
            Prints the store header (format version, feature flags, page size, store ID), the newest checkpoint \
            (generation, LSN), the page file's live and dead space, each table (rows, next row ID, tree height, \
            pages, bytes, leaf fill), the object store's persistent history (transactions, bytes), each secondary index (table, fields, entity filter, entries, pages), the log (size, LSNs, what recovery would replay) and each blob segment \
            (live and dead bytes, compression ratio). Reads every tree page (checksums included) but no blob \
            contents: run `strata fsck` for a full check.

            \(StoreExitCode.help)
            """
    )

    @OptionGroup var options: StoreCommandOptions

    struct Info: Encodable {
        struct PageFile: Encodable {
            var bytes: UInt64
            var pages: UInt64
            var reachablePages: UInt64
            var unreferencedPages: UInt64
            var tailPages: UInt64
            var liveBytes: UInt64
            var deadBytes: UInt64
        }
        struct Table: Encodable {
            var name: String
            var tableID: UInt32
            var engineTable: Bool
            var rows: UInt64
            var nextRowID: UInt64
            var height: Int
            var leafPages: Int
            var internalPages: Int
            var overflowPages: Int
            var bytes: UInt64
            /// Cell bytes over leaf page capacity, 0...1.
            var leafFill: Double
            var unwrittenNodes: Int
        }
        struct Index: Encodable {
            var name: String
            var indexID: UInt32
            /// The table it indexes.
            var table: String
            /// The row-record fields of its key.
            var fields: [Int]
            /// The entity IDs whose rows it holds; nil: every row.
            var entityIDs: [UInt16]?
            var entries: UInt64
            var height: Int
            var leafPages: Int
            var internalPages: Int
            var bytes: UInt64
            var unwrittenNodes: Int
        }
        struct History: Encodable {
            var transactions: UInt64
            var bytes: UInt64
        }
        struct Model: Encodable {
            /// The version hash of the model the store's objects follow.
            var versionHash: String
            /// The hashes of the models it was written with before, oldest first (one per migration).
            var earlierVersionHashes: [String]
        }
        struct Segment: Encodable {
            var segmentID: UInt32
            var fileBytes: UInt64
            var liveBytes: UInt64
            var deadBytes: UInt64
            var liveBlobs: Int
            var rawBytes: UInt64
            /// Raw bytes over stored bytes of the live blobs (1 when nothing compressed or no blob).
            var compressionRatio: Double
            var headerIsValid: Bool
        }
        var store: String
        var header: VerificationReport.HeaderSummary?
        var checkpointGeneration: UInt64
        var checkpointLSN: UInt64
        var pageFile: PageFile
        var tables: [Table]
        /// The object store's persistent history (table `store.history`, FORMAT.md §6.8), when it has one.
        var persistentHistory: History?
        var indexes: [Index]
        var wal: VerificationReport.LogSummary?
        var blobCount: Int
        var blobBytes: UInt64
        var orphanedBlobBytes: UInt64
        var segments: [Segment]
        var lockHeldElsewhere: Bool
        /// The object graph's model versions, for a store a `StrataStore` wrote (nil for an engine-only store).
        var model: Model?
        var problems: Int
        var notes: [String]
        /// The exit code: 0, or 4 when ``problems`` is not 0.
        var exitCode: Int32 = 0
    }

    func run() throws {
        options.bootstrap()
        let bar = ProgressBar()
        let report: VerificationReport
        do {
            let store = try ReadOnlyStore.open(at: options.store)
            report = store.verify(checkBlobContents: false, progress: bar.handler)
            store.close()
            bar.finish()
        } catch {
            bar.finish()
            let outcome = StoreExitCode.of(error)
            throw Output.fail(
                "info", error, store: options.store, json: options.json,
                suffix: outcome == .problemsLeft ? "; run `strata fsck --salvage` to copy what is readable" : "")
        }
        var info = Self.info(report, store: options.store)
        if let metadata = try? StrataStore.metadataForPersistentStore(at: options.store),
            let hash = metadata[PersistentStoreMetadataKey.modelVersionHash]
        {
            let history = metadata[PersistentStoreMetadataKey.modelVersionHistory] ?? ""
            info.model = Info.Model(
                versionHash: hash, earlierVersionHashes: history.split(separator: ",").map(String.init))
        }
        let outcome: StoreExitCode = info.problems > 0 ? .problemsLeft : .clean
        info.exitCode = outcome.rawValue
        if options.json {
            try Output.printJSON(info)
        } else {
            Self.printText(info)
        }
        if outcome != .clean { throw outcome.exitCode }
    }

    /// The table of an object store's persistent history (FORMAT.md §6.8).
    static let historyTable = "store.history"

    static func info(_ report: VerificationReport, store: String) -> Info {
        let pageSize = UInt64(report.header?.pageSize ?? 4096)
        let bodyCapacity = Double(pageSize) - 32
        let tables = report.tables.map { table in
            Info.Table(
                name: table.name, tableID: table.tableID, engineTable: table.isEngineTable, rows: table.rowCount,
                nextRowID: table.nextRowID, height: table.height, leafPages: table.leafPages,
                internalPages: table.internalPages, overflowPages: table.overflowPages,
                bytes: UInt64(table.leafPages + table.internalPages + table.overflowPages) * pageSize,
                leafFill: table.leafPages == 0 ? 0 : Double(table.leafBytes) / (Double(table.leafPages) * bodyCapacity),
                unwrittenNodes: table.unwrittenNodes)
        }
        let indexes = report.indexes.map { index in
            Info.Index(
                name: index.name, indexID: index.indexID, table: index.table, fields: index.fields,
                entityIDs: index.entityIDs, entries: index.entryCount, height: index.height,
                leafPages: index.leafPages, internalPages: index.internalPages,
                bytes: UInt64(index.leafPages + index.internalPages) * pageSize, unwrittenNodes: index.unwrittenNodes)
        }
        let segments = report.segments.map { segment in
            Info.Segment(
                segmentID: segment.segmentID, fileBytes: segment.fileBytes, liveBytes: segment.liveBytes,
                deadBytes: segment.deadBytes, liveBlobs: segment.liveBlobs, rawBytes: segment.rawBytes,
                compressionRatio: segment.liveBytes == 0 ? 1 : Double(segment.rawBytes) / Double(segment.liveBytes),
                headerIsValid: segment.headerIsValid)
        }
        let pages = report.pageFileBytes / pageSize
        let live = report.reachablePages * pageSize
        return Info(
            store: store, header: report.header, checkpointGeneration: report.checkpointGeneration,
            checkpointLSN: report.checkpointLSN,
            pageFile: Info.PageFile(
                bytes: report.pageFileBytes, pages: pages, reachablePages: report.reachablePages,
                unreferencedPages: report.unreferencedPages, tailPages: report.tailPages, liveBytes: live,
                deadBytes: report.pageFileBytes > live ? report.pageFileBytes - live : 0),
            tables: tables,
            persistentHistory: tables.first { $0.name == historyTable }.map {
                Info.History(transactions: $0.rows, bytes: $0.bytes)
            },
            indexes: indexes, wal: report.log, blobCount: report.blobCount, blobBytes: report.blobBytes,
            orphanedBlobBytes: report.orphanedBlobBytes, segments: segments,
            lockHeldElsewhere: report.lockHeldElsewhere, model: nil,
            problems: report.problems.count, notes: report.notes.map(\.description))
    }

    static func printText(_ info: Info) {
        print("store: \(info.store)")
        if let header = info.header {
            print(
                "format version \(header.formatVersion), page size \(header.pageSize), checksum type \(header.checksumType) "
                    + "(CRC-32C), features compat 0x\(String(header.compatibleFeatures, radix: 16)) read-only-compat "
                    + "0x\(String(header.readOnlyCompatibleFeatures, radix: 16)) incompat 0x\(String(header.incompatibleFeatures, radix: 16))"
            )
            print("store ID \(header.storeID)")
        }
        print("checkpoint: generation \(info.checkpointGeneration), LSN \(info.checkpointLSN)")
        let file = info.pageFile
        print(
            "page file: \(Output.count(file.bytes)) bytes, \(Output.count(file.pages)) pages: \(Output.count(file.reachablePages)) "
                + "live (\(Output.count(file.liveBytes)) bytes), \(Output.count(file.unreferencedPages)) dead"
                + (file.tailPages > 0 ? ", \(file.tailPages) after the newest root record" : ""))
        print("tables:")
        for table in info.tables {
            print(
                "  \(table.name) (#\(table.tableID)\(table.engineTable ? ", engine" : "")): \(Output.count(table.rows)) rows, "
                    + "next row ID \(table.nextRowID), height \(table.height), \(table.leafPages) leaf + \(table.internalPages) "
                    + "internal + \(table.overflowPages) overflow pages (\(Output.count(table.bytes)) bytes), "
                    + String(format: "leaf fill %.0f%%", table.leafFill * 100)
                    + (table.unwrittenNodes > 0 ? ", \(table.unwrittenNodes) nodes only in the log" : ""))
        }
        if let history = info.persistentHistory {
            print(
                "persistent history: \(Output.count(history.transactions)) transactions "
                    + "(\(Output.count(history.bytes)) bytes)")
        }
        if !info.indexes.isEmpty { print("indexes:") }
        for index in info.indexes {
            let fields = index.fields.map(String.init).joined(separator: ", ")
            let entities = index.entityIDs.map { " for entities \($0.map(String.init).joined(separator: ", "))" } ?? ""
            print(
                "  \(index.name) (#\(index.indexID)) on \(index.table) fields [\(fields)]\(entities): "
                    + "\(Output.count(index.entries)) entries, height \(index.height), \(index.leafPages) leaf + "
                    + "\(index.internalPages) internal pages (\(Output.count(index.bytes)) bytes)"
                    + (index.unwrittenNodes > 0 ? ", \(index.unwrittenNodes) nodes only in the log" : ""))
        }
        if let wal = info.wal {
            print(
                "log: \(Output.count(wal.fileBytes)) bytes"
                    + (wal.reservedBytes > 0 ? " (\(Output.count(wal.reservedBytes)) reserved)" : "") + ", "
                    + (wal.records == 0 ? "empty (next LSN \(wal.startLSN))" : "LSN \(wal.startLSN)...\(wal.lastLSN)")
                    + ", \(wal.records) records "
                    + "(\(wal.coveredRecords) checkpointed), \(wal.transactionsToReplay) transactions to replay"
                    + (wal.discardedBytes > 0 ? ", \(wal.discardedBytes) bytes recovery would discard" : ""))
        }
        print(
            "blobs: \(info.blobCount) (\(Output.count(info.blobBytes)) bytes), \(Output.count(info.orphanedBlobBytes)) "
                + "orphaned bytes in \(info.segments.count) segments")
        for segment in info.segments {
            print(
                "  segment \(segment.segmentID): \(Output.count(segment.fileBytes)) bytes, \(Output.count(segment.liveBytes)) "
                    + "live (\(segment.liveBlobs) blobs), \(Output.count(segment.deadBytes)) dead, "
                    + String(format: "compression %.2fx", segment.compressionRatio)
                    + (segment.headerIsValid ? "" : ", header damaged"))
        }
        if let model = info.model {
            print("model version: \(model.versionHash)")
            if !model.earlierVersionHashes.isEmpty {
                print("earlier model versions: \(model.earlierVersionHashes.joined(separator: ", "))")
            }
        }
        if info.lockHeldElsewhere { print("the store is open in another process") }
        if info.problems > 0 { print("\(info.problems) problems found: run `strata fsck`") }
        for note in info.notes { print("note: \(note)") }
    }
}
