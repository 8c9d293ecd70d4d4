#if Postgres
import Foundation
import PostgresNIO
import Strata

/// Migrates a store's PostgreSQL schema, written with an earlier model, to the current one: the same lightweight
/// inference and custom mappings as a Strata store (``MappingModel``), step by step.
///
/// Each step:
/// 1. Opens the schema with the step's source model (nothing written: its tables exist).
/// 2. On a connection of its own, begins the transaction that will end the step and takes, in it, an advisory lock
///    on the schema's name (one migrator at a time) and `EXCLUSIVE` locks on every table of the schema: other
///    processes may still read, and their saves wait (and fail once the tables are gone) rather than be lost.
/// 3. Drops any `<schema>_migrating` left by a migration that crashed, and makes it anew with the destination
///    model; copies every object into it through ``ObjectCopier`` (the Strata store's copier: attributes converted,
///    relationships set through the new objects, every save validated), committed there as it goes.
/// 4. In the transaction of step 2: drops the old schema and renames `<schema>_migrating` to its name, then
///    commits. PostgreSQL's DDL is transactional: a crash anywhere before that commit leaves the old schema whole
///    (and a leftover copy, dropped by the next try); after it, the new one.
///
/// Not an `ALTER TABLE` in place: the copy costs a write of every row, but serves every change the inference and
/// custom mappings cover (renames, type changes, entities moved in their hierarchy, relationships made to-many or
/// ordered, computed values and policies) with one mechanism, as the Strata store's migration does. Objects get
/// new object IDs (new rows, a new store UUID), as in a Core Data migration to a new store.
struct PostgresSchemaMigrator {
    let configuration: PostgresStoreConfiguration
    let model: ManagedObjectModel
    let options: MigrationOptions

    /// Migrates the schema, written with the model of hash `storeHash`, to ``model``.
    ///
    /// - Throws: ``MigrationError`` (before anything is written when no step applies or a mapping cannot be
    ///   inferred); ``PostgresStoreError``; what a save of the copy throws.
    func migrate(storeHash: String) throws {
        try options.forEachStep(from: storeHash, to: model) { source, mapping in
            try step(from: source, mapping: mapping)
        }
    }

    /// The schema the copy is made in.
    var copySchema: String { PostgresSchema.identifier(configuration.schema + "_migrating") }

    private func step(from source: ManagedObjectModel, mapping: MappingModel) throws {
        let logger = configuration.logger
        var quiet = configuration
        quiet.observesRemoteChanges = false
        quiet.migration = MigrationOptions()
        let old = PersistentStoreCoordinator(model: source)
        let oldStore = try old.addPersistentStore(.postgres(quiet))
        var oldClosed = false
        defer { if !oldClosed { try? old.removePersistentStore(oldStore) } }

        let pool = PostgresConnectionPool(configuration: quiet)
        defer { pool.close() }
        let lock = try pool.connect()
        defer { try? lock.close().wait() }
        let name = PostgresSchema.quote(configuration.schema)
        let copy = PostgresSchema.quote(copySchema)
        try lock.run("BEGIN", logger: logger)
        var statement = PostgresStatement()
        let key = statement.bind("strata-migration:" + configuration.schema)
        try lock.run("SELECT pg_advisory_xact_lock(hashtext(\(key)))", statement.binds, logger: logger)
        var tables = PostgresStatement()
        let schemaName = tables.bind(configuration.schema)
        let names = try lock.run(
            "SELECT tablename FROM pg_tables WHERE schemaname = \(schemaName) ORDER BY tablename", tables.binds,
            logger: logger
        ).rows.map { try $0.decode(String.self) }
        if !names.isEmpty {
            let list = names.map { name + "." + PostgresSchema.quote($0) }.joined(separator: ", ")
            try lock.run("LOCK TABLE \(list) IN EXCLUSIVE MODE", logger: logger)
        }
        logger.notice(
            "PostgreSQL: migrating schema \(configuration.schema)",
            metadata: ["from": "\(source.versionHash)", "to": "\(mapping.destinationVersionHash)"])

        _ = try pool.withConnection { try $0.run("DROP SCHEMA IF EXISTS \(copy) CASCADE", logger: logger) }
        var target = quiet
        target.schema = copySchema
        let new = PersistentStoreCoordinator(model: mapping.destinationModel)
        let newStore = try new.addPersistentStore(.postgres(target))
        do {
            try ObjectCopier(from: old, to: new, mapping: mapping).copy(progress: options.progress)
            try new.removePersistentStore(newStore)
            try old.removePersistentStore(oldStore)
            oldClosed = true
            try lock.run("DROP SCHEMA \(name) CASCADE", logger: logger)
            try lock.run("ALTER SCHEMA \(copy) RENAME TO \(name)", logger: logger)
            try lock.run("COMMIT", logger: logger)
        } catch {
            try? new.removePersistentStore(newStore)
            _ = try? lock.run("ROLLBACK", logger: logger)
            _ = try? pool.withConnection { try $0.run("DROP SCHEMA IF EXISTS \(copy) CASCADE", logger: logger) }
            throw error
        }
        options.progress?(1)
    }
}
#endif
