import Foundation
import StrataFormat
import StrataIO
import StrataStorage

/// FuzzStoreOpen: a whole store directory built from the input (``StoreImage``), opened read-only
/// (`ReadOnlyStore.open`, `verify`, every row and blob read) and then for writing (`Store.open`, which recovers,
/// replays and checkpoints; `verify`; every row and blob read). With mode bit 4, a store that verifies clean is
/// also written to, checkpointed, closed, reopened and verified again.
///
/// The files are laid out on the real file system (a directory under /dev/shm, removed after the input) and read
/// through `PosixFileSystem`, so that committed pages are read in place through the page map (FORMAT.md §4.10:
/// first-touch verification, the validation bits, the in-place views, regions growing after a checkpoint). With
/// mode bit 5 they are laid out in an `InMemoryFileSystem` instead, which cannot map: pages are then read into
/// buffers of exactly one page, so that AddressSanitizer sees a read past a page's end (it cannot in a mapping).
///
/// Checks: nothing traps (ASan, Swift runtime traps, preconditions); every error thrown is a `StorageError`;
/// when `verify()` reports a clean store, reading every row and blob succeeds; a clean store stays clean
/// after a write, a checkpoint and a reopen, and keeps what was written.
public func fuzzStoreOpen(_ data: UnsafeRawBufferPointer) {
    var image = StoreImage(decoding: data)
    image.reseal()
    let exerciseWrites = image.mode & 16 != 0
    if image.mode & 32 != 0 {
        let fileSystem = InMemoryFileSystem()
        let directory = "/store"
        do {
            try fileSystem.createDirectory(at: directory)
            for (name, bytes) in image.files { try fileSystem.setContents(bytes, of: directory + "/" + name) }
        } catch { fuzzFail("could not lay out the store: \(error)") }
        openReadOnly(directory, fileSystem)
        openForWriting(directory, fileSystem, exerciseWrites: exerciseWrites)
    } else {
        let directory = ScratchDirectory.path("store")
        defer { ScratchDirectory.remove(directory) }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            for (name, bytes) in image.files {
                try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
            }
        } catch { fuzzFail("could not lay out the store in \(directory): \(error)") }
        openReadOnly(directory, PosixFileSystem())
        openForWriting(directory, PosixFileSystem(), exerciseWrites: exerciseWrites)
    }
}

/// Runs `body`; a `StorageError` is an expected outcome of bad input (returns nil), anything else a finding.
func expectingStorageErrors<T>(_ what: String, _ body: () throws -> T) -> T? {
    do { return try body() } catch is StorageError { return nil } catch {
        fuzzFail("\(what) threw \(type(of: error)), not a StorageError: \(error)")
    }
}

/// Reads every row of every table and every blob of a snapshot, within limits. Returns whether all reads
/// succeeded and gave consistent answers (rows in order, blobs of their listed length); a `StorageError` says
/// the data is damaged, anything else is a finding. A damaged store may give inconsistent answers: the
/// callers hold it against the store only when verification called it clean.
@discardableResult
func readEverything(_ snapshot: Snapshot) -> Bool {
    var consistent = true
    let read =
        expectingStorageErrors("reading a snapshot") { () throws -> Bool in
            var rows = 0
            for name in snapshot.tableNames {
                guard let table = snapshot.table(named: name) else { fuzzFail("listed table \(name) not found") }
                _ = try snapshot.rowCount(in: table)
                _ = try snapshot.nextRowID(in: table)
                var previous: RowID?
                try snapshot.forEachRow(in: table) { row, _ in
                    if let previous, previous >= row { consistent = false }
                    previous = row
                    rows += 1
                    return rows < 20_000
                }
                if let previous { _ = try snapshot.row(previous, in: table) }
            }
            var blobs: [(BlobID, UInt64)] = []
            try snapshot.forEachBlob { blob, length in
                blobs.append((blob, length))
                return blobs.count < 64
            }
            for (blob, length) in blobs {
                if let bytes = try snapshot.readBlob(blob), UInt64(bytes.count) != length { consistent = false }
            }
            return true
        } ?? false
    return read && consistent
}

func openReadOnly(_ directory: String, _ fileSystem: any FileSystem) {
    guard
        let store = expectingStorageErrors(
            "ReadOnlyStore.open", { try ReadOnlyStore.open(at: directory, fileSystem: fileSystem) })
    else { return }
    let report = store.verify()
    let readable = readEverything(store.snapshot())
    fuzzCheck(
        !report.isClean || readable, "ReadOnlyStore.verify() is clean but a read failed or was inconsistent: \(report)")
    store.close()
}

func openForWriting(_ directory: String, _ fileSystem: any FileSystem, exerciseWrites: Bool) {
    let configuration = StoreConfiguration(
        createIfMissing: false, durability: .full, pageSize: 4096, pageCacheCapacity: 8, logger: quietLogger)
    guard
        let store = expectingStorageErrors(
            "Store.open", { try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem) })
    else { return }
    defer { _ = expectingStorageErrors("Store.close") { try store.close() } }
    guard let report = expectingStorageErrors("Store.verify", { try store.verify() }) else { return }
    let readable = readEverything(store.snapshot())
    fuzzCheck(!report.isClean || readable, "Store.verify() is clean but a read failed or was inconsistent: \(report)")
    guard exerciseWrites, report.isClean else { return }

    // A clean store must take a write, a checkpoint and a reopen, and stay clean.
    let value: [UInt8] = Array("written by FuzzStoreOpen".utf8)
    let blobBytes = [UInt8](repeating: 0x5A, count: 300)
    guard
        let (table, row, blob) = expectingStorageErrors(
            "writing to a clean store",
            {
                try store.write { txn -> (TableID, RowID, BlobID) in
                    let table = try txn.table(named: "fuzz_extra") ?? txn.createTable(named: "fuzz_extra")
                    return (table, try txn.insert(value, into: table), try txn.storeBlob(blobBytes))
                }
            })
    else { return }
    guard expectingStorageErrors("checkpoint", { try store.checkpoint() }) != nil,
        expectingStorageErrors("close", { try store.close() }) != nil
    else { return }
    let reopened: Store
    do { reopened = try Store.open(at: directory, configuration: configuration, fileSystem: fileSystem) } catch {
        fuzzFail("a clean store does not reopen after a write and a checkpoint: \(error)")
    }
    defer { _ = expectingStorageErrors("Store.close") { try reopened.close() } }
    do {
        let again = try reopened.verify()
        fuzzCheck(again.isClean, "a clean store is no longer clean after a write, a checkpoint and a reopen: \(again)")
        let snapshot = reopened.snapshot()
        let readRow = try snapshot.row(row, in: table)
        let readBlob = try snapshot.readBlob(blob)
        fuzzCheck(readRow == value, "the row written is lost")
        fuzzCheck(readBlob == blobBytes, "the blob written is lost")
    } catch { fuzzFail("reading back a clean store failed: \(error)") }
}
