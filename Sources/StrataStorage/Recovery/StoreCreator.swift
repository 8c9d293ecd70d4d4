import StrataFormat
import StrataIO

/// Creates the files of a new store.
///
/// 1. Write the log (header only, first LSN 1) to a temporary file, sync it, rename it into place.
/// 2. Write page 0 (the store header, zero-padded to a page) to a temporary file, sync it, rename it
///    into place: the page file's appearance is the store's creation.
/// 3. Sync the directory.
/// A crash before step 2 completes leaves no page file, and the next open creates the store afresh.
struct StoreCreator {
    let directory: String
    let fileSystem: any FileSystem

    /// A new store's first bytes: page 0 (the store header, with a new random store ID) and the header of its
    /// first log, which starts at LSN 1. Shared by creation and by ``StoreBuilder``.
    static func firstFiles(pageSize: Int) -> (header: StoreHeader, page0: [UInt8], log: WALFileHeader) {
        var generator = SystemRandomNumberGenerator()
        let storeID = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let header = StoreHeader(pageSize: pageSize, storeID: storeID)
        var page0 = header.encoded()
        page0.append(contentsOf: repeatElement(0, count: pageSize - page0.count))
        let log = WALFileHeader(
            storeID: storeID, startLSN: 1, salt: UInt32.random(in: .min ... .max, using: &generator))
        return (header, page0, log)
    }

    func create(pageSize: Int) throws {
        let (_, page0, log) = Self.firstFiles(pageSize: pageSize)
        do {
            try writeDurably(log.encoded(), temporary: StoreFileNames.walTemporary, final: StoreFileNames.wal)
            try writeDurably(page0, temporary: StoreFileNames.pageFileTemporary, final: StoreFileNames.pageFile)
            try fileSystem.syncDirectory(at: directory)
        } catch { throw StorageError.io(error) }
    }

    private func writeDurably(_ bytes: [UInt8], temporary: String, final: String) throws(IOError) {
        let temporaryPath = StoreFileNames.path(directory, temporary)
        let file = try fileSystem.openFile(at: temporaryPath, mode: .truncate)
        do {
            try file.write(bytes, at: 0)
            try file.sync()
            try file.close()
        } catch {
            try? file.close()
            throw error
        }
        try fileSystem.rename(from: temporaryPath, to: StoreFileNames.path(directory, final))
    }
}
