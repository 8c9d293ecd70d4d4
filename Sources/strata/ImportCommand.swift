import ArgumentParser
import Foundation
import Logging
import StrataImport
import StrataStorage

/// `strata import SQLITE_FILE --model MODEL [--version NAME] STORE`: a Core Data SQLite store into a new Strata
/// store (``CoreDataImporter``), with a progress bar.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a Core Data SQLite store into a new Strata store.",
        discussion: """
            SQLITE_FILE is the store Core Data wrote (its -wal file and its .<name>_SUPPORT/_EXTERNAL_DATA folder \
            are read beside it; the file is never written, a -wal is applied to a private copy). MODEL is the \
            app's .xcdatamodeld bundle (or one .xcdatamodel). The store's model version is --version; else, with \
            --compiled-model (the app's .momd, whose VersionInfo.plist holds Core Data's own hashes), the version \
            whose hashes are the store's NSStoreModelVersionHashes; else the one whose entities, tables and columns \
            are the file's (Core Data's hashes cannot be computed from a model's source: the match is by \
            structure, and a warning says so). When it is not the \
            bundle's current version, the new store is migrated to it. Every object keeps its Z_PK as its row ID \
            and its Z_OPT as its row version (unless migrated), every value its stored bytes (a transformable's \
            too: the CLI has none of the app's value transformers). Anything the \
            importer does not understand (an unknown table or column, a value of the wrong type, a dangling key) \
            stops it, naming the table, column and row, and nothing is left at STORE.

            Exit codes: 0 imported; 4 the file holds rows or metadata the importer refuses (a value of the wrong \
            type or range, a dangling key, a missing external file, a damaged Z_METADATA); 8 operational error \
            (not a database, tables or columns no version of the model has, no or several fitting versions, an \
            unreadable model, STORE exists, a write failed); 64 usage error.
            """
    )

    @Argument(help: "The Core Data SQLite store file.")
    var sqliteFile: String

    @Option(name: .long, help: "The model: a .xcdatamodeld bundle (or one .xcdatamodel).")
    var model: String

    @Option(name: .long, help: "The model version the SQLite store was written with (default: found by structure).")
    var version: String?

    @Option(
        name: .customLong("compiled-model"),
        help: "The app's compiled model (.momd, or its VersionInfo.plist): match the version by Core Data's own hashes."
    )
    var compiledModel: String?

    @Argument(help: "The new Strata store's directory (must not exist).")
    var store: String

    @Flag(name: .long, help: "Print one JSON document instead of text.")
    var json = false

    @Flag(name: .shortAndLong, help: "Log the engine's messages (store creation, checkpoints) to standard error.")
    var verbose = false

    func run() throws {
        let level: Logger.Level = verbose ? .debug : .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var importer: CoreDataImporter
        do { importer = try CoreDataImporter(modelAt: model) } catch { fail(error) }
        importer.requestedVersion = version
        if let compiledModel {
            do { importer.compiledVersionHashes = try CoreDataImporter.compiledVersionHashes(at: compiledModel) } catch
            {
                fail(error)
            }
        }
        // The CLI has none of the app's types: transformable values are carried as their stored bytes (which is
        // what the import writes anyway; this lets a migration on the way in copy them too).
        StoredBytesTransformer.registerWhereMissing(for: importer.versions.map(\.model))
        let bar = ProgressBar()
        importer.progress = { progress in
            bar.update(
                OperationProgress(
                    phase: progress.phase, completed: UInt64(progress.completed), total: UInt64(progress.total)))
        }
        let report: ImportReport
        do {
            report = try importer.importStore(at: sqliteFile, into: store)
        } catch {
            bar.finish()
            fail(error)
        }
        bar.finish()
        if json {
            try Output.printJSON(ImportSummary(report, source: sqliteFile, store: store))
            return
        }
        print("imported \(sqliteFile) into \(store)")
        if let uuid = report.storeUUID { print("  Core Data store UUID: \(uuid)") }
        if report.readThroughCopy { print("  a -wal (or -journal) file was beside it: read through a private copy") }
        let how =
            switch report.match {
            case .requested: "as asked"
            case .versionHashes: "matched by the compiled model's version hashes"
            case .tableStructure: "matched by entities, tables and columns"
            }
        print("  model version: \(report.sourceVersion) (\(how))")
        if report.migrated { print("  migrated to: \(report.destinationVersion)") }
        let counts = report.objectsByEntity.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        print("  objects: \(report.objects) (\(counts.joined(separator: ", ")))")
        print("  relationship links: \(report.links); external binary values: \(report.externalValues)")
        if !report.skippedTables.isEmpty {
            print("  skipped Core Data tables: \(report.skippedTables.joined(separator: ", "))")
        }
        for warning in report.warnings { Output.error("strata import: warning: \(warning)") }
    }

    private func fail(_ error: Error) -> Never {
        let code: StoreExitCode
        switch error as? ImportError {
        case .wrongType, .invalidValue, .unknownEntity, .danglingReference, .missingExternalData, .invalidMetadata:
            code = .problemsLeft
        default:
            code = .operationalError
        }
        let details = Failure.Details(kind: Self.kind(of: error), message: "\(error)", path: sqliteFile)
        Self.exit(withError: Output.fail("import", details, json: json, code: code))
    }

    /// The error's case name, for `--json`.
    private static func kind(of error: Error) -> String {
        guard let error = error as? ImportError else { return "error" }
        let mirror = Mirror(reflecting: error)
        return mirror.children.first?.label ?? "\(error)"
    }
}

/// What `strata import --json` prints.
private struct ImportSummary: Encodable {
    var source: String
    var store: String
    var storeUUID: String?
    var sourceVersion: String
    var destinationVersion: String
    var migrated: Bool
    var matchedBy: String
    var storeVersionHashes: [String: String]
    var objects: Int
    var objectsByEntity: [String: Int]
    var links: Int
    var externalValues: Int
    var skippedTables: [String]
    var readThroughCopy: Bool
    var warnings: [String]

    init(_ report: ImportReport, source: String, store: String) {
        self.source = source
        self.store = store
        storeUUID = report.storeUUID
        sourceVersion = report.sourceVersion
        destinationVersion = report.destinationVersion
        migrated = report.migrated
        matchedBy =
            switch report.match {
            case .requested: "requested"
            case .versionHashes: "versionHashes"
            case .tableStructure: "tableStructure"
            }
        storeVersionHashes = report.storeVersionHashes
        objects = report.objects
        objectsByEntity = report.objectsByEntity
        links = report.links
        externalValues = report.externalValues
        skippedTables = report.skippedTables
        readThroughCopy = report.readThroughCopy
        warnings = report.warnings
    }
}
