import StrataFormat
import StrataIO

/// Why a storage operation failed.
///
/// Bad input from disk is ``corruption(file:offset:reason:)`` naming the file and byte offset;
/// failures of the operating system are ``io(_:)``; misuse by the caller is one of the specific cases.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file-system operation failed (full disk, I/O error, permissions...).
    case io(IOError)
    /// Bytes on disk are damaged or not what the format allows.
    case corruption(file: String, offset: UInt64, reason: String)
    /// No store at this path, and the configuration did not ask to create one.
    case storeNotFound(path: String)
    /// The store was written by a format version or with features this code does not support.
    case unsupportedFormat(path: String, reason: String)
    /// The store is being compacted (or destroyed): its lock is held exclusive, and it cannot be opened until that
    /// ends.
    case storeLocked(path: String)
    /// The store is open (in these processes, when the system can tell; this one among them, perhaps), and what was
    /// asked (compaction, destruction) needs it to itself.
    case storeInUse(path: String, processes: [Int32])
    /// The store was closed.
    case storeClosed
    /// An earlier write or sync failed in a way that leaves the log's state unknown; the store
    /// refuses further writes until it is closed and reopened (which recovers from the log).
    case storeFailed(reason: String)
    /// A table with this name already exists (``WriteTransaction/createTable(named:)``).
    case tableExists(name: String)
    /// No such table (it never existed or was dropped); the string identifies it, usually by ID (`table#7`).
    case noSuchTable(String)
    /// The row does not exist in the table: the operation required an existing row.
    case rowNotFound(table: TableID, row: RowID)
    /// An argument is outside what the engine accepts (an empty table name, a value too large...).
    case invalidArgument(String)
    /// An index with this name already exists (``WriteTransaction/createIndex(named:on:fields:entityIDs:)``).
    case indexExists(name: String)
    /// No such secondary index (it never existed or was dropped); the string identifies it (`index#3`).
    case noSuchIndex(String)

    /// A one-line description of the failure, naming the file, path, table or row involved.
    public var description: String {
        switch self {
        case .io(let error): "I/O error: \(error)"
        case .corruption(let file, let offset, let reason): "corruption in \(file) at offset \(offset): \(reason)"
        case .storeNotFound(let path): "no store at \(path)"
        case .unsupportedFormat(let path, let reason): "unsupported store format at \(path): \(reason)"
        case .storeLocked(let path): "the store at \(path) is being compacted or destroyed elsewhere (locked)"
        case .storeInUse(let path, let processes):
            processes.isEmpty
                ? "the store at \(path) is open, and this needs it to itself"
                : "the store at \(path) is open in process\(processes.count == 1 ? "" : "es") "
                    + processes.map(String.init).joined(separator: ", ") + ", and this needs it to itself"
        case .storeClosed: "the store is closed"
        case .storeFailed(let reason):
            "the store stopped accepting writes after a failure: \(reason); reopen it to recover"
        case .tableExists(let name): "table '\(name)' exists"
        case .noSuchTable(let name): "no table \(name)"
        case .rowNotFound(let table, let row): "no row \(row.rawValue) in table \(table.rawValue)"
        case .invalidArgument(let reason): "invalid argument: \(reason)"
        case .indexExists(let name): "index '\(name)' exists"
        case .noSuchIndex(let name): "no index \(name)"
        }
    }

    /// The store has read-only-compatible feature bits this version does not know (FORMAT.md §2): it may be
    /// read (``ReadOnlyStore``) but not written.
    static func readOnlyFeatures(path: String, features: UInt32) -> StorageError {
        .unsupportedFormat(
            path: path,
            reason: "read-only-compatible features 0x\(String(features, radix: 16)) are unknown to this version: "
                + "it may read the store but not write it")
    }

    static func corrupt(_ file: String, at offset: UInt64, _ error: FormatError) -> StorageError {
        .corruption(file: file, offset: offset, reason: error.description)
    }

    static func corrupt(_ file: String, at offset: UInt64, _ reason: String) -> StorageError {
        .corruption(file: file, offset: offset, reason: reason)
    }
}

extension StorageError {
    /// ``storeInUse(path:processes:)`` for the store in `directory`, naming the processes that hold its lock.
    static func inUse(_ directory: String, fileSystem: any FileSystem) -> StorageError {
        let holders = fileSystem.lockHolders(ofFileAt: StoreFileNames.path(directory, StoreFileNames.lock)) ?? []
        return .storeInUse(path: directory, processes: holders)
    }
}
