#if Postgres
import Strata

/// How to make a ``PostgresStore``: `coordinator.addPersistentStore(.postgres(configuration))`, beside the
/// coordinator's own `.strata(directory:)` and `.inMemory`.
///
/// For example:
/// ```swift
/// try coordinator.addPersistentStore(.postgres(PostgresStoreConfiguration(host: "db", username: "app")))
/// ```
public struct PostgresStoreDescription: Sendable {
    /// The server, role, database, schema and pool size.
    public var configuration: PostgresStoreConfiguration

    /// A PostgreSQL store with these settings.
    ///
    /// - Parameter configuration: the server, role, database, schema and pool size.
    /// - Returns: the description.
    public static func postgres(_ configuration: PostgresStoreConfiguration) -> PostgresStoreDescription {
        PostgresStoreDescription(configuration: configuration)
    }
}

extension PersistentStoreCoordinator {
    /// Opens a PostgreSQL store (creating its schema on first use) and adds it. A schema written with an earlier
    /// model is migrated first when ``PostgresStoreConfiguration/migration`` asks for it (``PostgresSchemaMigrator``).
    ///
    /// - Parameter description: `.postgres(configuration)`.
    /// - Returns: the store.
    /// - Throws: what ``PostgresStore/init(model:configuration:)`` throws; `MigrationError` and what a migration
    ///   throws.
    @discardableResult
    public func addPersistentStore(_ description: PostgresStoreDescription) throws -> PostgresStore {
        let configuration = description.configuration
        let store: PostgresStore
        do {
            store = try PostgresStore(model: model, configuration: configuration)
        } catch ObjectGraphError.incompatibleModel(let storeHash, _) where !configuration.migration.sourceModels.isEmpty
        {
            try PostgresSchemaMigrator(configuration: configuration, model: model, options: configuration.migration)
                .migrate(storeHash: storeHash)
            store = try PostgresStore(model: model, configuration: configuration)
        }
        addPersistentStore(store)
        return store
    }
}
#endif
