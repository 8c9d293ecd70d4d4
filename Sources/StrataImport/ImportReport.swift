/// What an import did.
public struct ImportReport: Sendable {
    /// How the model version was chosen.
    public enum VersionMatch: Sendable, Equatable {
        /// The version asked for (it fits the store's tables).
        case requested
        /// The only version (or the current one among several) whose entities and tables are the store's.
        case tableStructure
        /// The version whose hashes in the compiled model's `VersionInfo.plist` (Core Data's own, written by
        /// `momc`) are the store's `NSStoreModelVersionHashes`, entity for entity.
        case versionHashes
    }

    /// The model version the store was written with (the one the rows were read with).
    public var sourceVersion: String
    /// The model version of the new Strata store: the source version, or the current one after a migration.
    public var destinationVersion: String
    /// Whether the store was migrated from ``sourceVersion`` to ``destinationVersion`` on the way in.
    public var migrated: Bool
    /// How ``sourceVersion`` was chosen.
    public var match: VersionMatch
    /// The store's `NSStoreModelVersionHashes`, entity name to base64.
    public var storeVersionHashes: [String: String]
    /// The store's `NSStoreUUID`.
    public var storeUUID: String?
    /// Objects imported, by entity name.
    public var objectsByEntity: [String: Int]
    /// Join-table links and ordered-relationship memberships written.
    public var links: Int
    /// External binary values read from the `_EXTERNAL_DATA` folder.
    public var externalValues: Int
    /// Core Data's own tables that were skipped (persistent history, CloudKit mirroring, the model cache).
    public var skippedTables: [String]
    /// Whether a `-wal` (or `-journal`) file was beside the store (then a private copy was read).
    public var readThroughCopy: Bool
    /// What the user should know: how the version was matched, what a migration did to row IDs and versions.
    public var warnings: [String]

    /// Objects imported in all.
    public var objects: Int { objectsByEntity.values.reduce(0, +) }
}
