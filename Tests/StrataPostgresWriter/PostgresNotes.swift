import Foundation
import Strata

#if Postgres
import StrataPostgres
#endif

/// The model the PostgreSQL store's two-process test shares with its writer process: notes with a title and a
/// counter and a tag.
package enum PostgresNotes {
    package static let model: ManagedObjectModel = {
        try! ManagedObjectModel(entities: [
            Entity("PGNote") {
                Attribute("name", .string)
                Attribute("title", .string, default: .string(""))
                Attribute("counter", .integer64, default: .integer(0))
                Attribute("tag", .string, default: .string(""))
            }
        ])
    }()

    #if Postgres
    /// The store settings both processes use: persistent history on.
    package static func configuration(
        port: Int, user: String, database: String, schema: String
    )
        -> PostgresStoreConfiguration
    {
        var configuration = PostgresStoreConfiguration(
            host: "127.0.0.1", port: port, username: user, database: database)
        configuration.schema = schema
        configuration.poolSize = 2
        configuration.recordsPersistentHistory = true
        configuration.logger.logLevel = .warning
        return configuration
    }
    #endif

    /// The note named `name`, fetched in `context`.
    package static func note(named name: String, in context: ManagedObjectContext) throws -> ManagedObject? {
        let request = FetchRequest<ManagedObject>(entityName: "PGNote")
        try request.setPredicate(format: "name == %@", name)
        return try context.fetch(request).first
    }
}
