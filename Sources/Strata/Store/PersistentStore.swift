import Foundation

/// Where a coordinator keeps rows: the Strata store (a directory, on the storage engine) or an
/// in-memory store. The coordinator and contexts never know which one they talk to.
///
/// Stores are shared by every context of a coordinator, from any thread: implementations are
/// thread-safe. Every method names rows by their hierarchy's table (the root entity) and row ID.
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's identity, part of every permanent object ID it hands out.
    var identifier: UUID { get }
    /// What kind of store this is.
    var type: PersistentStoreType { get }
    /// Metadata kept with the store (the model's version hash among it).
    var metadata: [String: String] { get }

    /// The row, or nil when it does not exist (or belongs to an entity outside `entity`'s hierarchy).
    func row(_ rowID: UInt64, of entity: EntityDescription) throws -> StoredRow?

    /// Every row of `entity` (and of its subentities when asked), in row-ID order.
    func rows(of entity: EntityDescription, includesSubentities: Bool) throws -> [(rowID: UInt64, row: StoredRow)]

    /// Reserves `count` row IDs in `entity`'s table for objects that get permanent IDs before their save.
    func allocateRowIDs(for entity: EntityDescription, count: Int) throws -> [UInt64]

    /// Checks that every update and delete still finds the row version it expects, without writing.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)``.
    func checkConflicts(_ changes: StoreChanges) throws

    /// Applies one save atomically: all of it or, when it throws, none of it.
    /// - Throws: ``ObjectGraphError/optimisticLockingConflict(_:)`` when a row's version is not the expected one.
    func save(_ changes: StoreChanges) throws -> StoreSaveResult

    /// Rows read from the underlying storage so far (the row cache's misses land here): a test hook.
    var rowReads: Int { get }

    /// Releases the store's resources; the coordinator calls it when the store is removed.
    func close() throws
}

/// The kinds of persistent store.
public enum PersistentStoreType: Sendable, Equatable, CustomStringConvertible {
    /// A Strata store: a directory on disk, crash-safe, on the StrataStorage engine.
    case strata
    /// Rows in memory only, gone when the store is removed.
    case inMemory

    public var description: String {
        switch self {
        case .strata: "Strata"
        case .inMemory: "InMemory"
        }
    }
}

/// Metadata keys every store records.
public enum PersistentStoreMetadataKey {
    public static let storeType = "StoreType"
    public static let storeUUID = "StoreUUID"
    public static let modelVersionHash = "ModelVersionHash"
}
