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
/// 3. Commit: create `<dir>.migration-complete` holding the destination's version hash and a newline, sync it,
///    then sync the parent directory. From here on the migration is finished even if the process dies: recovery
///    completes the swap. A marker without its newline was never synced whole, so recovery takes it as no commit.
/// 4. Swap: rename `<dir>` to `<dir>.premigration`, `<dir>.migration` to `<dir>`, sync the parent directory.
/// 5. Clean up: remove `<dir>.premigration` and the marker, sync the parent directory.
///
/// A failure in step 2 (a mapping that the data does not fit, a validation error, an I/O error) removes
/// `<dir>.migration` and leaves the old store untouched. Every file operation goes through the configuration's
/// file system (``StrataStoreConfiguration/fileSystem``), so `MigrationCrashTests` enumerates the crash points
/// of a whole migration on an in-memory one and fails each of its operations with `ENOSPC` and `EIO`.
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
    /// commit. Cheap when there is nothing to do (three `stat`s). A marker whose bytes are not all there was never
    /// synced, so the migration did not commit.
    static func recover(directory: String, fileSystem: any FileSystem = PosixFileSystem()) throws {
        do {
            try recoverThrowingIO(directory: directory, fileSystem: fileSystem)
        } catch {
            throw ObjectGraphError.storage(.io(error))
        }
    }

    private static func recoverThrowingIO(directory: String, fileSystem files: any FileSystem) throws(IOError) {
        let (migration, marker, previous) = (migrationPath(directory), markerPath(directory), previousPath(directory))
        guard files.exists(at: marker), try isComplete(marker: marker, files) else {
            if files.exists(at: migration) { try removeTree(migration, files) }
            if files.exists(at: marker) { try files.removeFile(at: marker) }
            // Only step 4 makes `previous`, after the commit; without the marker it can only be a leftover.
            if !files.exists(at: directory), files.exists(at: previous) {
                try files.rename(from: previous, to: directory)
                try files.syncDirectory(at: parent(of: directory))
            }
            return
        }
        if files.exists(at: migration) {
            if files.exists(at: directory) { try files.rename(from: directory, to: previous) }
            try files.rename(from: migration, to: directory)
            try files.syncDirectory(at: parent(of: directory))
        }
        if files.exists(at: previous) { try removeTree(previous, files) }
        try files.removeFile(at: marker)
        try files.syncDirectory(at: parent(of: directory))
    }

    /// Runs steps 1 to 5.
    ///
    /// - Parameter progress: called with the fraction done, 0...1.
    func migrate(progress: ((Double) -> Void)? = nil) throws {
        let files = configuration.fileSystem
        try Self.requireSoleUse(of: directory, fileSystem: files)
        try Self.recover(directory: directory, fileSystem: files)
        let migration = Self.migrationPath(directory)
        do {
            try copy(into: migration, progress: progress)
            try stopAfter?(.copied)
        } catch {
            if files.exists(at: migration) { try? Self.removeTree(migration, files) }
            throw error
        }
        do {
            let marker = Self.markerPath(directory)
            let file = try files.openFile(at: marker, mode: .truncate)
            do {
                try file.write(Array(Self.markerContents(destination).utf8), at: 0)
                try file.sync()
                try file.close()
            } catch {
                try? file.close()
                throw error
            }
            try files.syncDirectory(at: Self.parent(of: directory))
            try stopAfter?(.committed)
            try files.rename(from: directory, to: Self.previousPath(directory))
            try stopAfter?(.renamedOld)
            try files.rename(from: Self.migrationPath(directory), to: directory)
            try files.syncDirectory(at: Self.parent(of: directory))
            try stopAfter?(.renamedNew)
        } catch let error as IOError {
            throw ObjectGraphError.storage(.io(error))
        }
        try Self.recover(directory: directory, fileSystem: files)
        try stopAfter?(.cleanedUp)
        progress?(1)
    }

    /// A migration replaces the store's directory: an open of the store elsewhere (another process, or another
    /// coordinator of this one) would go on with the old directory and lose what it writes. Refuses, naming the
    /// processes, when the store's lock is held (FORMAT.md §11.1).
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` wrapping `StorageError.storeInUse(path:processes:)`.
    static func requireSoleUse(of directory: String, fileSystem: any FileSystem) throws {
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

    /// The marker's bytes: the destination's version hash and a newline.
    private static func markerContents(_ model: ManagedObjectModel) -> String { "\(model.versionHash)\n" }

    /// Whether the marker holds a version hash and its newline (all of it was synced).
    private static func isComplete(marker: String, _ files: any FileSystem) throws(IOError) -> Bool {
        let file = try files.openFileForReading(at: marker)
        defer { try? file.close() }
        let size = try file.size()
        guard size > 1, size < 1024 else { return false }
        let bytes: [UInt8] = try file.read(count: Int(size), at: 0)
        let newline = UInt8(ascii: "\n")
        guard bytes.count == Int(size), bytes.last == newline else { return false }
        return bytes.firstIndex(of: newline) == bytes.count - 1
    }

    /// Removes a directory and everything in it (not durable until its parent is synced).
    private static func removeTree(_ path: String, _ files: any FileSystem) throws(IOError) {
        for name in try files.contentsOfDirectory(at: path) {
            let child = path + "/" + name
            do {
                try files.removeFile(at: child)
            } catch {
                guard error.code == .isADirectory else { throw error }
                try removeTree(child, files)
            }
        }
        try files.removeDirectory(at: path)
    }

    /// The directory that holds `path`.
    static func parent(of path: String) -> String {
        URL(fileURLWithPath: path).deletingLastPathComponent().path
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
        let files = configuration.fileSystem
        do {
            (engine, _) = try OpenEngines.shared.open(
                directory, configuration: configuration.storage, fileSystem: files)
        } catch let
            error as StorageError
        {
            throw ObjectGraphError.storage(error)
        }
        defer { try? OpenEngines.shared.close(engine, directory: directory, fileSystem: files) }
        try rows.copy(
            from: engine, into: migration, configuration: configuration.storage, fileSystem: files,
            progress: progress)
        try StrataStore(directory: migration, model: destination, configuration: configuration).close()
    }
}
