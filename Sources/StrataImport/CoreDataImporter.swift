import Foundation
import Strata

/// Imports a Core Data SQLite store into a new Strata store: the same objects (each Core Data row's `Z_PK` becomes
/// its Strata row ID, its `Z_OPT` its row version), attribute values exactly as stored (``CoreDataValueDecoder``),
/// to-ones, ordered and unordered to-manys, many-to-manys, and external binary values.
///
/// For example:
///
///     let importer = try CoreDataImporter(modelAt: "Shop.xcdatamodeld")
///     let report = try importer.importStore(at: "Shop.sqlite", into: "Shop.strata")
///     print(report.objects, report.sourceVersion, report.warnings)
///
/// The steps:
///
/// 1. Open the SQLite file read-only (a copy when a `-wal` file is beside it, ``CoreDataStoreReader``); read
///    `Z_METADATA`'s property list and `Z_PRIMARYKEY`.
/// 2. Choose the model version: the one asked for; else, given the compiled model's hashes
///    (``compiledVersionHashes``), the version whose hashes are the store's `NSStoreModelVersionHashes`; else the
///    versions whose entities are the store's (the hashes' names) and whose tables and columns are exactly the
///    file's (``CoreDataLayout``): one, or the current one among several. Core Data's hashes cannot be computed
///    from a model's source here (the algorithm is Core Data's own and unpublished), so without the compiled
///    model the match is by structure and the report says so. The chosen version's layout must fit the file in
///    every case.
/// 3. Write a Strata store in `<destination>.importing` through ``StrataStore/save(_:)``, in batches: each row
///    with its `Z_PK` as row ID, `Z_OPT` as version and its to-ones; then the links of ordered to-manys and
///    many-to-manys. Every value and reference is checked on the way; the first problem stops the import.
/// 4. When the version is not the model's current one, migrate the new store to it (lightweight migration,
///    ``MigrationOptions``). The migration copies objects through the object graph, so transformable values need
///    their transformers registered (``StoredBytesTransformer/registerWhereMissing(for:in:)`` carries the stored
///    bytes over when the app's types are not at hand), and the migrated rows get new row IDs and versions.
/// 5. Rename `<destination>.importing` to `<destination>`. A failure anywhere removes the partial store.
///
/// ## Topics
/// - ``init(modelAt:)``
/// - ``init(versions:currentVersion:)``
/// - ``importStore(at:into:)``
public struct CoreDataImporter {
    /// The model's versions, by name.
    public var versions: [(name: String, model: ManagedObjectModel)]
    /// The name of the version the imported store ends at.
    public var currentVersion: String
    /// The version the SQLite store was written with, when known (`--version`); nil to find it.
    public var requestedVersion: String?
    /// Core Data's own version hashes of each version (version name to entity name to hash), from the compiled
    /// model's `VersionInfo.plist` (``compiledVersionHashes(at:)``): when set, the version is chosen by comparing
    /// them with the store's `NSStoreModelVersionHashes`, exactly as Core Data does.
    public var compiledVersionHashes: [String: [String: Data]]?
    /// Objects (or relationship sources) per Strata save.
    public var batchSize = 1000
    /// How the Strata store is opened.
    public var configuration = StrataStoreConfiguration()
    /// Called as the import goes, on the calling thread.
    public var progress: ((ImportProgress) -> Void)?

    /// An importer for the versions of a model.
    ///
    /// - Parameters:
    ///   - versions: each version's name and model.
    ///   - currentVersion: the name of the version the imported store ends at.
    public init(versions: [(name: String, model: ManagedObjectModel)], currentVersion: String) {
        self.versions = versions
        self.currentVersion = currentVersion
    }

    /// An importer for the model file at `path`: a `.xcdatamodeld` bundle (every version, its current one
    /// current) or a single `.xcdatamodel`.
    ///
    /// - Throws: ``ImportError/model(_:)`` when the model file cannot be read.
    public init(modelAt path: String) throws(ImportError) {
        do {
            if URL(fileURLWithPath: path).pathExtension == "xcdatamodeld" {
                let bundle = try ModelBundle(path: path)
                var versions: [(name: String, model: ManagedObjectModel)] = []
                for name in bundle.versionNames { versions.append((name, try bundle.model(named: name))) }
                self.init(versions: versions, currentVersion: bundle.currentVersionName)
            } else {
                let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
                self.init(
                    versions: [(name, try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path)))],
                    currentVersion: name)
            }
        } catch {
            throw .model("\(path): \(error)")
        }
    }

    /// Imports the Core Data SQLite store at `sqlitePath` into a new Strata store at `destination`.
    ///
    /// - Parameters:
    ///   - sqlitePath: the store file (its `-wal` and `_EXTERNAL_DATA` folder are found beside it).
    ///   - destination: the new Strata store's directory; it must not exist.
    /// - Returns: what was imported, and how the model version was chosen.
    /// - Throws: an ``ImportError`` naming the table, column and row at fault; nothing is left at `destination`.
    public func importStore(at sqlitePath: String, into destination: String) throws(ImportError) -> ImportReport {
        let files = FileManager.default
        guard !files.fileExists(atPath: destination) else { throw .destinationExists(destination) }
        let reader = try CoreDataStoreReader(path: sqlitePath)
        let choice = try chooseVersion(reader)
        let temporary = destination + ".importing"
        try? files.removeItem(atPath: temporary)
        var report = ImportReport(
            sourceVersion: choice.name, destinationVersion: choice.name, migrated: false, match: choice.match,
            storeVersionHashes: reader.metadata.base64VersionHashes, storeUUID: reader.metadata.storeUUID,
            objectsByEntity: [:], links: 0, externalValues: 0, skippedTables: choice.layout.skippedTables,
            readThroughCopy: reader.readThroughCopy, warnings: choice.warnings)
        do {
            let store: StrataStore
            do {
                store = try StrataStore(directory: temporary, model: choice.model, configuration: configuration)
            } catch {
                throw ImportError.writeFailed(reason: "\(error)")
            }
            do {
                var writer = RowWriter(
                    reader: reader, layout: choice.layout, store: store, batchSize: max(1, batchSize),
                    progress: progress)
                try writer.run()
                report.objectsByEntity = writer.objectsByEntity
                report.links = writer.links
                report.externalValues = writer.externalValues
                var metadata = [
                    "CoreDataImportSource": sqlitePath, "CoreDataModelVersion": choice.name,
                ]
                if let uuid = reader.metadata.storeUUID { metadata["CoreDataStoreUUID"] = uuid }
                do { try store.setMetadata(metadata) } catch { throw ImportError.writeFailed(reason: "\(error)") }
            } catch {
                try? store.close()
                throw error
            }
            do { try store.close() } catch { throw ImportError.writeFailed(reason: "\(error)") }
            if choice.name != currentVersion {
                try migrate(temporary, from: choice.name)
                report.destinationVersion = currentVersion
                report.migrated = true
                report.warnings.append(
                    "migrated from \(choice.name) to \(currentVersion): the migration copies objects through the "
                        + "object graph, so row IDs and row versions are the migration's, not Core Data's Z_PK and Z_OPT"
                )
            }
            do {
                try files.moveItem(atPath: temporary, toPath: destination)
                try Self.syncDirectory(containing: destination)
            } catch {
                throw ImportError.writeFailed(reason: "renaming \(temporary) to \(destination): \(error)")
            }
        } catch let error as ImportError {
            try? files.removeItem(atPath: temporary)
            throw error
        } catch {
            try? files.removeItem(atPath: temporary)
            throw .writeFailed(reason: "\(error)")
        }
        return report
    }

    /// Reads Core Data's version hashes from a compiled model: a `.momd` directory (an app bundle holds one per
    /// model) or its `VersionInfo.plist`, whose `NSManagedObjectModel_VersionHashes` maps each version's name to
    /// its entities' hashes.
    ///
    /// - Parameter path: the `.momd` directory or the property list.
    /// - Returns: version name to entity name to hash.
    /// - Throws: ``ImportError/model(_:)`` when the file is missing or holds no such dictionary.
    public static func compiledVersionHashes(at path: String) throws(ImportError) -> [String: [String: Data]] {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        let plist =
            isDirectory.boolValue ? URL(fileURLWithPath: path).appendingPathComponent("VersionInfo.plist").path : path
        guard let data = FileManager.default.contents(atPath: plist) else {
            throw .model("\(plist): no such file")
        }
        guard let object = try? PropertyListSerialization.propertyList(from: data, format: nil),
            let dictionary = object as? [String: Any],
            let versions = dictionary["NSManagedObjectModel_VersionHashes"] as? [String: Any]
        else { throw .model("\(plist): no NSManagedObjectModel_VersionHashes dictionary") }
        var result: [String: [String: Data]] = [:]
        for (version, value) in versions {
            guard let hashes = value as? [String: Data] else {
                throw .model("\(plist): the hashes of version \(version) are not a dictionary of data")
            }
            result[version] = hashes
        }
        return result
    }

    // MARK: - Choosing the version

    struct Choice {
        var name: String
        var model: ManagedObjectModel
        var layout: CoreDataLayout
        var match: ImportReport.VersionMatch
        var warnings: [String]
    }

    /// Step 2 of ``importStore(at:into:)``.
    func chooseVersion(_ reader: CoreDataStoreReader) throws(ImportError) -> Choice {
        let hashes = reader.metadata.base64VersionHashes
        let storeEntities = Set(reader.metadata.versionHashes.keys)
        func layout(of model: ManagedObjectModel) throws(ImportError) -> CoreDataLayout {
            let modelEntities = Set(model.entities.map(\.name))
            guard storeEntities == modelEntities else {
                let extra = storeEntities.subtracting(modelEntities).sorted()
                let missing = modelEntities.subtracting(storeEntities).sorted()
                throw .entityMismatch(
                    reason:
                        "NSStoreModelVersionHashes names \(extra.isEmpty ? "no other entity" : extra.joined(separator: ", "))"
                        + " and lacks \(missing.isEmpty ? "none" : missing.joined(separator: ", "))")
            }
            return try CoreDataLayout(
                model: model, entityTable: reader.entityTable, fileTables: reader.tables,
                columnsOf: { table throws(ImportError) in try reader.columns(of: table) })
        }
        let note =
            "Core Data's version hashes cannot be computed from a model's source (Core Data's algorithm is "
            + "unpublished): the version was matched by the store's entities, tables and columns"
        if let requested = requestedVersion {
            guard let version = versions.first(where: { $0.name == requested }) else {
                throw .unknownVersion(requested, available: versions.map(\.name))
            }
            return Choice(
                name: requested, model: version.model, layout: try layout(of: version.model), match: .requested,
                warnings: [])
        }
        if let compiled = compiledVersionHashes {
            let matching = versions.filter { compiled[$0.name] == reader.metadata.versionHashes }
            // Versions that differ only in what Core Data does not hash share hashes: the current one wins.
            guard let version = matching.first(where: { $0.name == currentVersion }) ?? matching.first else {
                throw .noMatchingVersion(
                    hashes: hashes,
                    reasons: versions.map { version in
                        guard let known = compiled[version.name] else {
                            return "\(version.name): the compiled model has no hashes for it"
                        }
                        let differing = Set(known.keys).union(storeEntities).filter {
                            known[$0] != reader.metadata.versionHashes[$0]
                        }
                        return "\(version.name): hashes differ for \(differing.sorted().joined(separator: ", "))"
                    })
            }
            return Choice(
                name: version.name, model: version.model, layout: try layout(of: version.model), match: .versionHashes,
                warnings: [])
        }
        var fits: [(name: String, model: ManagedObjectModel, layout: CoreDataLayout)] = []
        var reasons: [String] = []
        for version in versions {
            do { fits.append((version.name, version.model, try layout(of: version.model))) } catch {
                reasons.append("\(version.name): \(error)")
            }
        }
        if fits.count == 1 {
            return Choice(
                name: fits[0].name, model: fits[0].model, layout: fits[0].layout, match: .tableStructure,
                warnings: ["\(note) (\(fits[0].name))"])
        }
        if let current = fits.first(where: { $0.name == currentVersion }) {
            return Choice(
                name: current.name, model: current.model, layout: current.layout, match: .tableStructure,
                warnings: [
                    "\(note); versions \(fits.map(\.name).joined(separator: ", ")) all fit, the current one "
                        + "(\(current.name)) was used"
                ])
        }
        if fits.isEmpty { throw .noMatchingVersion(hashes: hashes, reasons: reasons) }
        throw .ambiguousVersion(candidates: fits.map(\.name), hashes: hashes)
    }

    // MARK: - Migrating

    /// Step 4: migrates the imported store at `directory` from version `source` to the current version.
    private func migrate(_ directory: String, from source: String) throws(ImportError) {
        guard let destination = versions.first(where: { $0.name == currentVersion })?.model else {
            throw .unknownVersion(currentVersion, available: versions.map(\.name))
        }
        let reporter = ProgressForwarder(progress)
        var migrating = configuration
        migrating.migration = MigrationOptions(
            shouldMigrateStoreAutomatically: true, shouldInferMappingModelAutomatically: true,
            sourceModels: versions.map(\.model),
            progress: { fraction in
                reporter.report(ImportProgress(phase: "migrating", completed: Int(fraction * 1000), total: 1000))
            })
        let coordinator = PersistentStoreCoordinator(model: destination)
        do {
            let store = try coordinator.addPersistentStore(.strata(directory: directory, configuration: migrating))
            try coordinator.removePersistentStore(store)
        } catch {
            throw .migrationFailed(reason: "from \(source) to \(currentVersion): \(error)")
        }
    }

    private static func syncDirectory(containing path: String) throws {
        let handle = try FileHandle(
            forReadingFrom: URL(fileURLWithPath: path).deletingLastPathComponent())
        defer { try? handle.close() }
        try handle.synchronize()
    }
}

/// Hands the migration's progress to the importer's closure. `@unchecked Sendable`: a migration reports on the
/// thread that opens the store, the importer's.
private final class ProgressForwarder: @unchecked Sendable {
    let progress: ((ImportProgress) -> Void)?
    init(_ progress: ((ImportProgress) -> Void)?) { self.progress = progress }
    func report(_ value: ImportProgress) { progress?(value) }
}
