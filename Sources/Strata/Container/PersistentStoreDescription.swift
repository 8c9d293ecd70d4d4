import Foundation
import StrataStorage

/// How a ``PersistentContainer`` adds one store (Core Data's `NSPersistentStoreDescription`): its type,
/// where it lives and its options.
///
/// A value, not a class as in Core Data: change the container's descriptions in place
/// (`container.persistentStoreDescriptions[0].setOption(...)`) before ``PersistentContainer/loadPersistentStores(completionHandler:)``.
///
/// For example:
/// ```swift
/// var description = PersistentStoreDescription(url: URL(fileURLWithPath: "/var/lib/app/Company"))
/// description.storeConfiguration.storage.durability = .normal(maxDelayMilliseconds: 10)
/// ```
public struct PersistentStoreDescription: Sendable {
    /// The kind of store: ``PersistentStoreType/strata`` (the default) or ``PersistentStoreType/inMemory``.
    public var type: PersistentStoreType
    /// The Strata store's directory (nil for an in-memory store).
    public var url: URL?
    /// Whether a store written with an older model is migrated on load (Core Data's
    /// `shouldMigrateStoreAutomatically`; default true). The models it may have been written with, and any custom
    /// mappings, are `storeConfiguration.migration`'s (``MigrationOptions``); these flags override its own.
    public var shouldMigrateStoreAutomatically = true
    /// Whether the mapping model is inferred for such a migration (default true); see
    /// ``shouldMigrateStoreAutomatically``.
    public var shouldInferMappingModelAutomatically = true
    /// Whether ``PersistentContainer/loadPersistentStores(completionHandler:)`` may add the store on another
    /// thread (default false). Strata adds stores in order on the calling thread either way.
    public var shouldAddStoreAsynchronously = false
    /// The storage engine's settings for a Strata store: durability, page size, thresholds.
    public var storeConfiguration = StrataStoreConfiguration()
    /// Options by key (``PersistentStoreOptionKey``), as ``setOption(_:forKey:)`` sets them.
    public private(set) var options: [String: any Sendable] = [:]

    /// A description of a Strata store in a directory.
    ///
    /// - Parameter url: the store's directory (created when missing).
    public init(url: URL) {
        self.type = .strata
        self.url = url
    }

    /// A description of a store of a type: for ``PersistentStoreType/inMemory`` no URL is needed.
    ///
    /// - Parameters:
    ///   - type: the kind of store.
    ///   - url: the Strata store's directory.
    public init(type: PersistentStoreType, url: URL? = nil) {
        self.type = type
        self.url = url
    }

    /// Sets an option (Core Data's `setOption(_:forKey:)`); nil removes it.
    ///
    /// - Parameters:
    ///   - option: the value.
    ///   - key: the option's key.
    public mutating func setOption(_ option: (any Sendable)?, forKey key: String) {
        options[key] = option
    }

    /// The value of a Bool option, false when unset.
    func flag(_ key: String) -> Bool { (options[key] as? Bool) ?? false }
}

/// Keys of ``PersistentStoreDescription/options``.
public enum PersistentStoreOptionKey {
    /// `Bool`: record persistent history for every save (Core Data's `NSPersistentHistoryTrackingKey`).
    public static let persistentHistoryTracking = "NSPersistentHistoryTrackingKey"
}
