import Foundation
import StrataFormat
import StrataIO
import StrataStorage

/// Lightweight migration of a Strata store directory, crash-safe: the migrated store is built beside the old one
/// and swapped in by renames, so that a crash at any instant leaves the old store (openable with the old model)
/// or the migrated one, never a mixture.
///
/// 1. ``recover(directory:)``: finish or discard an earlier migration a crash interrupted.
/// 2. Copy into a new store in `<dir>.migration`. When the mapping needs no objects (``RowMigrator``: every
///    lightweight mapping whose relationships keep their storage), rows are rewritten field by field and the new
///    store is written bottom-up, as compaction writes one. Otherwise open the old store with the source model and
///    the new one with the destination model; copy every object's attributes (converted as the mapping says), then
///    every relationship, saving in batches (each save validates against the destination model and computes
///    derived attributes). Either way the new store's metadata records the old store's model version hashes.
/// 3. Commit: create and sync `<dir>.migration-complete` and the parent directory. From here on the migration
///    is finished even if the process dies: recovery completes the swap.
/// 4. Swap: rename `<dir>` to `<dir>.premigration`, `<dir>.migration` to `<dir>`, sync the parent directory.
/// 5. Clean up: remove `<dir>.premigration` and the marker, sync the parent directory.
///
/// A failure in step 2 (a mapping that the data does not fit, a validation error, an I/O error) removes
/// `<dir>.migration` and leaves the old store untouched.
struct StoreMigrator {
    /// The steps a test can stop the migration after (a simulated crash).
    enum Step: String, CaseIterable, Sendable {
        case copied, committed, renamedOld, renamedNew, cleanedUp
    }

    let directory: String
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let mapping: MappingModel
    let configuration: StrataStoreConfiguration
    /// Called after each step; throwing stops there, as a crash would (tests).
    var stopAfter: ((Step) throws -> Void)?
    /// Whether step 2 streams rows when the mapping allows it (``RowMigrator``); tests turn it off to compare the
    /// two paths.
    var streamsRows = true

    static func migrationPath(_ directory: String) -> String { directory + ".migration" }
    static func markerPath(_ directory: String) -> String { directory + ".migration-complete" }
    static func previousPath(_ directory: String) -> String { directory + ".premigration" }

    /// Finishes a migration that committed (step 3) but did not swap or clean up, or discards one that did not
    /// commit. Cheap when there is nothing to do (three `stat`s).
    static func recover(directory: String) throws {
        let files = FileManager.default
        let (migration, marker, previous) = (migrationPath(directory), markerPath(directory), previousPath(directory))
        guard files.fileExists(atPath: marker) else {
            if files.fileExists(atPath: migration) { try files.removeItem(atPath: migration) }
            // Only step 4 makes `previous`, after the commit; without the marker it can only be a leftover.
            if !files.fileExists(atPath: directory), files.fileExists(atPath: previous) {
                try files.moveItem(atPath: previous, toPath: directory)
            }
            return
        }
        if files.fileExists(atPath: migration) {
            if files.fileExists(atPath: directory) { try files.moveItem(atPath: directory, toPath: previous) }
            try files.moveItem(atPath: migration, toPath: directory)
            try syncDirectory(containing: directory)
        }
        if files.fileExists(atPath: previous) { try files.removeItem(atPath: previous) }
        try files.removeItem(atPath: marker)
        try syncDirectory(containing: directory)
    }

    /// Runs steps 1 to 5.
    ///
    /// - Parameter progress: called with the fraction done, 0...1.
    func migrate(progress: ((Double) -> Void)? = nil) throws {
        try Self.requireSoleUse(of: directory)
        try Self.recover(directory: directory)
        let migration = Self.migrationPath(directory)
        do {
            try copy(into: migration, progress: progress)
            try stopAfter?(.copied)
        } catch {
            try? FileManager.default.removeItem(atPath: migration)
            throw error
        }
        let marker = Self.markerPath(directory)
        try Data("\(destination.versionHash)\n".utf8).write(to: URL(fileURLWithPath: marker))
        try Self.sync(marker)
        try Self.syncDirectory(containing: directory)
        try stopAfter?(.committed)
        try FileManager.default.moveItem(atPath: directory, toPath: Self.previousPath(directory))
        try stopAfter?(.renamedOld)
        try FileManager.default.moveItem(atPath: migration, toPath: directory)
        try Self.syncDirectory(containing: directory)
        try stopAfter?(.renamedNew)
        try Self.recover(directory: directory)
        try stopAfter?(.cleanedUp)
        progress?(1)
    }

    /// A migration replaces the store's directory: an open of the store elsewhere (another process, or another
    /// coordinator of this one) would go on with the old directory and lose what it writes. Refuses, naming the
    /// processes, when the store's lock is held (FORMAT.md §11.1).
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` wrapping `StorageError.storeInUse(path:processes:)`.
    static func requireSoleUse(of directory: String) throws {
        let fileSystem = PosixFileSystem()
        let path = StoreFileNames.path(directory, StoreFileNames.lock)
        guard fileSystem.exists(at: path) else { return }
        do {
            try fileSystem.lockFile(at: path, mode: .exclusive, waiting: false).unlock()
        } catch {
            guard error.code == .wouldBlock else { throw ObjectGraphError.storage(.io(error)) }
            throw ObjectGraphError.storage(
                .storeInUse(path: directory, processes: fileSystem.lockHolders(ofFileAt: path) ?? []))
        }
    }

    // MARK: - Copying

    private func copy(into migration: String, progress: ((Double) -> Void)?) throws {
        var plain = configuration
        plain.migration = MigrationOptions()
        if streamsRows, let rows = RowMigrator(mapping: mapping) {
            try copyRows(rows, into: migration, configuration: plain, progress: progress)
            return
        }
        let old = PersistentStoreCoordinator(model: source)
        let oldStore = try old.addPersistentStore(.strata(directory: directory, configuration: plain))
        defer { try? old.removePersistentStore(oldStore) }
        let new = PersistentStoreCoordinator(model: destination)
        let newStore = try new.addPersistentStore(.strata(directory: migration, configuration: plain))
        defer { try? new.removePersistentStore(newStore) }
        try ObjectCopier(from: old, to: new, mapping: mapping).copy(progress: progress)
        // The store remembers every model it was written with.
        if let strata = newStore as? StrataStore {
            let history =
                (oldStore.metadata[PersistentStoreMetadataKey.modelVersionHistory].map { [$0] } ?? [])
                + [source.versionHash]
            try strata.recordModelVersionHistory(history.joined(separator: ","))
        }
    }

    /// Step 2 without objects (``RowMigrator``), then one open of the new store with the destination model, which
    /// records its relationship layout and checks that it opens.
    private func copyRows(
        _ rows: RowMigrator, into migration: String, configuration: StrataStoreConfiguration,
        progress: ((Double) -> Void)?
    ) throws {
        let engine: Store
        do { (engine, _) = try OpenEngines.shared.open(directory, configuration: configuration.storage) } catch let
            error as StorageError
        {
            throw ObjectGraphError.storage(error)
        }
        defer { try? OpenEngines.shared.close(engine, directory: directory) }
        try rows.copy(
            from: engine, into: migration, configuration: configuration.storage, fileSystem: PosixFileSystem(),
            progress: progress)
        try StrataStore(directory: migration, model: destination, configuration: configuration).close()
    }

    // MARK: - Syncing

    private static func sync(_ path: String) throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// Syncs the directory that holds `path`, so that renames and creations in it are durable.
    static func syncDirectory(containing path: String) throws {
        try sync(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}
