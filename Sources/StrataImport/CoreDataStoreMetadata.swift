import Foundation

/// What `Z_METADATA`'s property list says about a Core Data SQLite store: its UUID, type and the model version
/// hashes it was written with (`NSStoreModelVersionHashes`: entity name to a 32-byte hash).
struct CoreDataStoreMetadata: Sendable, Equatable {
    /// `NSStoreUUID`.
    var storeUUID: String?
    /// `NSStoreType` (`SQLite` for a store Core Data's SQLite store wrote).
    var storeType: String?
    /// `NSStoreModelVersionHashes`: the version hash of each entity of the model that wrote the store.
    var versionHashes: [String: Data]
    /// `NSStoreModelVersionIdentifiers`, when the property list has them.
    var versionIdentifiers: [String]

    /// The hashes as base64, the way error messages and reports show them.
    var base64VersionHashes: [String: String] { versionHashes.mapValues { $0.base64EncodedString() } }

    /// Reads the property list of `Z_METADATA`'s row (the one with the highest `Z_VERSION`).
    ///
    /// - Throws: ``ImportError/missingTable(_:)`` without `Z_METADATA`; ``ImportError/invalidMetadata(reason:)``
    ///   for a missing row, a blob that is no property list, or a property list without a dictionary of
    ///   `NSStoreModelVersionHashes` (entity name to data).
    init(connection: SQLiteConnection, tables: Set<String>) throws(ImportError) {
        guard tables.contains("Z_METADATA") else { throw .missingTable("Z_METADATA") }
        var plist: SQLiteValue?
        try connection.query("SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION DESC LIMIT 1") {
            row throws(ImportError) in
            plist = row[0]
        }
        guard let plist else { throw .invalidMetadata(reason: "the table has no row") }
        guard case .blob(let bytes) = plist else {
            throw .invalidMetadata(reason: "Z_PLIST holds \(plist.storageClass), not the property list's blob")
        }
        let object: Any
        do { object = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil) } catch {
            throw .invalidMetadata(reason: "Z_PLIST is not a property list (\(bytes.count) bytes)")
        }
        guard let dictionary = object as? [String: Any] else {
            throw .invalidMetadata(reason: "Z_PLIST's property list is not a dictionary")
        }
        guard let hashes = dictionary["NSStoreModelVersionHashes"] as? [String: Any] else {
            throw .invalidMetadata(reason: "the property list has no NSStoreModelVersionHashes dictionary")
        }
        var versionHashes: [String: Data] = [:]
        for (entity, value) in hashes {
            guard let data = value as? Data else {
                throw .invalidMetadata(reason: "NSStoreModelVersionHashes[\(entity)] is not data")
            }
            versionHashes[entity] = data
        }
        self.versionHashes = versionHashes
        storeUUID = dictionary["NSStoreUUID"] as? String
        storeType = dictionary["NSStoreType"] as? String
        versionIdentifiers =
            (dictionary["NSStoreModelVersionIdentifiers"] as? [Any])?.compactMap { $0 as? String } ?? []
    }
}
