import StrataLock
import StrataStorage

/// A store's metadata, which ``PersistentStoreCoordinator/setMetadata(_:for:)`` may change while any thread
/// reads it.
package final class StoreMetadata: Sendable {
    private let values: Lock<[String: String]>

    package init(_ values: [String: String]) {
        self.values = Lock(values)
    }

    package var current: [String: String] { values.withLock { $0 } }

    /// The metadata after the application sets `metadata`: the store's own keys
    /// (``PersistentStoreMetadataKey/isStoreKey(_:)``) keep their values, every other key is `metadata`'s.
    /// - Throws: ``ObjectGraphError/storage(_:)`` with `StorageError.invalidArgument` for a key or value longer
    ///   than the metadata row takes (65,535 UTF-8 bytes, FORMAT.md §6.7), on every store alike.
    package func replacing(with metadata: [String: String]) throws -> [String: String] {
        var merged = current.filter { PersistentStoreMetadataKey.isStoreKey($0.key) }
        for (key, value) in metadata where !PersistentStoreMetadataKey.isStoreKey(key) {
            guard key.utf8.count <= Int(UInt16.max), value.utf8.count <= Int(UInt16.max) else {
                throw ObjectGraphError.storage(
                    .invalidArgument("metadata key \(key.prefix(40)) or its value is longer than 65,535 bytes"))
            }
            merged[key] = value
        }
        return merged
    }

    package func set(_ metadata: [String: String]) {
        values.withLock { $0 = metadata }
    }
}

extension PersistentStoreMetadataKey {
    /// Whether the store keeps `key` itself (its type, UUID, model version hash and history, relationship layout): the
    /// application's metadata cannot change or remove it.
    public static func isStoreKey(_ key: String) -> Bool {
        key == storeType || key == storeUUID || key == modelVersionHash || key == modelVersionHistory
            || key.hasPrefix("RelationshipLayout")
    }
}

extension PersistentStoreCoordinator {
    /// Replaces the application's metadata of a store (Core Data's `setMetadata(_:for:)`): the store's own keys
    /// (``PersistentStoreMetadataKey/isStoreKey(_:)``) keep their values whatever `metadata` says, every other
    /// key is removed or set as `metadata` says. A Strata store writes it at once, in a transaction of its own
    /// (Core Data writes it with the next save).
    ///
    /// For example:
    /// ```swift
    /// var metadata = coordinator.metadata(for: store)
    /// metadata["LastImport"] = "2026-11-25"
    /// try coordinator.setMetadata(metadata, for: store)
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the metadata cannot be written (`StorageError.invalidArgument`
    ///   for a key or value longer than 65,535 UTF-8 bytes).
    public func setMetadata(_ metadata: [String: String], for store: any PersistentStore) throws {
        try store.setMetadata(metadata)
    }
}
