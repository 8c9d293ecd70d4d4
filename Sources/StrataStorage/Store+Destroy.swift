import StrataFormat
import StrataIO

extension Store {
    /// Whether `directory` holds a Strata store (its page file, which carries the store header).
    public static func exists(at directory: String, fileSystem: any FileSystem = PosixFileSystem()) -> Bool {
        fileSystem.exists(at: StoreFileNames.path(directory, StoreFileNames.pageFile))
    }

    /// Whether `name` is the name of a file a store's directory may hold (FORMAT.md §1): the page file, the
    /// log, the lock, a blob segment, or a leftover of an interrupted checkpoint, creation or compaction.
    public static func isStoreFileName(_ name: String) -> Bool {
        [
            StoreFileNames.pageFile, StoreFileNames.pageFileTemporary, StoreFileNames.pageFileCompacted,
            StoreFileNames.wal, StoreFileNames.walTemporary, StoreFileNames.lock,
        ].contains(name) || BlobSegmentFormat.segmentID(fileName: name) != nil
    }

    /// Deletes the files of the store in `directory` (and nothing else in it), like LevelDB's `DestroyDB`.
    ///
    /// - Throws: ``StorageError/storeInUse(path:processes:)`` when the store is open (here or in another process),
    ///   ``StorageError/io(_:)`` when a file cannot be removed.
    public static func destroy(at directory: String, fileSystem: any FileSystem = PosixFileSystem()) throws {
        guard fileSystem.exists(at: directory) else { return }
        let lockPath = StoreFileNames.path(directory, StoreFileNames.lock)
        let lock: any FileLock
        do { lock = try fileSystem.lockFile(at: lockPath) } catch {
            if error.code == .wouldBlock { throw StorageError.inUse(directory, fileSystem: fileSystem) }
            throw StorageError.io(error)
        }
        defer { lock.unlock() }
        // The page file first: without it the directory no longer holds a store, whatever else remains.
        let names = [
            StoreFileNames.pageFile, StoreFileNames.pageFileTemporary, StoreFileNames.pageFileCompacted,
            StoreFileNames.wal, StoreFileNames.walTemporary, StoreFileNames.lock,
        ]
        do {
            let segments = try fileSystem.contentsOfDirectory(at: directory).filter {
                BlobSegmentFormat.segmentID(fileName: $0) != nil
            }
            for name in names + segments {
                let path = StoreFileNames.path(directory, name)
                if fileSystem.exists(at: path) { try fileSystem.removeFile(at: path) }
            }
            try fileSystem.syncDirectory(at: directory)
        } catch { throw StorageError.io(error) }
    }
}
