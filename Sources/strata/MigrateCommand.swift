import ArgumentParser
import Foundation
import Strata
import StrataStorage

/// `strata migrate STORE --model NEW [--dry-run]`: lightweight migration of a Strata store to a model version
/// (``MappingModel/inferredMappingModel(forSourceModel:destinationModel:)``, ``MigrationOptions``): prints the
/// inferred mapping, then performs it crash-safely, with a progress bar.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a Strata store to another version of its Core Data model (lightweight migration).",
        discussion: """
            MODEL is a .xcdatamodeld bundle: the store's model is the version whose hash the store records, the \
            destination its current version (or --model-version). Prints the store's model history and the \
            inferred mapping (one line per destination entity: each property and the source property it takes \
            its values from), then migrates: the new store is written beside the old one and swapped in by \
            renames, so a crash leaves the old store or the new one. A mapping that cannot be inferred is \
            refused before anything is written. --dry-run stops after printing.

            Exit codes: 0 migrated (or nothing to do); 4 the data does not fit the new model (nothing changed); \
            8 the store or model cannot be read, the store's model is none of the bundle's versions, or the \
            mapping cannot be inferred (nothing changed); 64 usage error.
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Option(name: .long, help: "The model: a .xcdatamodeld bundle (or one .xcdatamodel, the destination).")
    var model: String

    @Option(name: .customLong("model-version"), help: "The destination version (default: the bundle's current one).")
    var modelVersion: String?

    @Flag(name: .long, help: "Print the mapping and change nothing.")
    var dryRun = false

    func run() throws {
        let metadata: [String: String]
        do { metadata = try StrataStore.metadataForPersistentStore(at: store) } catch { fail("\(store): \(error)") }
        guard let storeHash = metadata[PersistentStoreMetadataKey.modelVersionHash] else {
            fail("\(store) holds no object graph (no model version hash in its metadata)")
        }
        var versions: [(name: String, model: ManagedObjectModel)] = []
        let destination: ManagedObjectModel
        do {
            if URL(fileURLWithPath: model).pathExtension == "xcdatamodeld" {
                let bundle = try ModelBundle(path: model)
                for name in bundle.versionNames { versions.append((name, try bundle.model(named: name))) }
                let target = modelVersion ?? bundle.currentVersionName
                guard let found = versions.first(where: { $0.name == target }) else {
                    fail("\(model) has no version \(target)")
                }
                destination = found.model
            } else {
                destination = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: model))
                versions.append((URL(fileURLWithPath: model).deletingPathExtension().lastPathComponent, destination))
            }
        } catch {
            fail("\(model): \(error)")
        }
        let history = metadata[PersistentStoreMetadataKey.modelVersionHistory]?.split(separator: ",").map(String.init)
        print("store model: \(storeHash)\(name(of: storeHash, in: versions))")
        for earlier in history ?? [] { print("  earlier: \(earlier)\(name(of: earlier, in: versions))") }
        print("destination: \(destination.versionHash)\(name(of: destination.versionHash, in: versions))")
        if storeHash == destination.versionHash {
            print("nothing to migrate")
            return
        }
        guard let source = versions.first(where: { $0.model.versionHash == storeHash })?.model else {
            fail("the store's model \(storeHash) is none of the versions of \(model)")
        }
        let mapping: MappingModel
        do {
            mapping = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        } catch {
            fail("\(error); nothing was changed")
        }
        print("mapping:")
        for line in mapping.description.split(separator: "\n") { print("  \(line)") }
        if dryRun { return }
        let bar = ProgressBar()
        let reporter = ProgressReporter(bar: bar)
        var configuration = StrataStoreConfiguration()
        configuration.migration = MigrationOptions(
            shouldMigrateStoreAutomatically: true, shouldInferMappingModelAutomatically: true,
            sourceModels: versions.map(\.model), progress: { reporter.report($0) })
        let coordinator = PersistentStoreCoordinator(model: destination)
        do {
            let opened = try coordinator.addPersistentStore(.strata(directory: store, configuration: configuration))
            try coordinator.removePersistentStore(opened)
        } catch let error as MigrationError {
            bar.finish()
            if case .dataDoesNotFit = error { fail("\(error); nothing was changed", code: .problemsLeft) }
            fail("\(error); nothing was changed")
        } catch {
            bar.finish()
            fail("\(error)")
        }
        bar.finish()
        print("migrated \(store) to \(destination.versionHash)")
    }

    private func name(of hash: String, in versions: [(name: String, model: ManagedObjectModel)]) -> String {
        versions.first { $0.model.versionHash == hash }.map { " (\($0.name))" } ?? ""
    }

    private func fail(_ message: String, code: StoreExitCode = .operationalError) -> Never {
        FileHandle.standardError.write(Data("strata migrate: \(message)\n".utf8))
        Self.exit(withError: code.exitCode)
    }
}

/// Hands the migration's fraction done to the progress bar. `@unchecked Sendable`: the migration reports on the
/// thread that runs the command, the only one that touches the bar.
private final class ProgressReporter: @unchecked Sendable {
    let bar: ProgressBar
    init(bar: ProgressBar) { self.bar = bar }
    func report(_ fraction: Double) {
        bar.update(OperationProgress(phase: "migrating", completed: UInt64(fraction * 1000), total: 1000))
    }
}
