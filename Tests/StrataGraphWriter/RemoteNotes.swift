import Foundation
import Strata

/// The model the remote-change tests share with their writer process: notes with a title and a counter.
package enum RemoteNotes {
    package static let model: ManagedObjectModel = {
        try! ManagedObjectModel(entities: [
            Entity("RemoteNote") {
                Attribute("name", .string)
                Attribute("title", .string, default: .string(""))
                Attribute("counter", .integer64, default: .integer(0))
            }
        ])
    }()

    /// The store configuration both processes use: persistent history on, durable commits.
    package static func configuration(pollingEvery interval: Duration? = nil) -> StrataStoreConfiguration {
        var configuration = StrataStoreConfiguration()
        configuration.recordsPersistentHistory = true
        configuration.remoteChangePollingInterval = interval
        return configuration
    }

    /// The note named `name`, fetched in `context`.
    package static func note(named name: String, in context: ManagedObjectContext) throws -> ManagedObject? {
        let request = FetchRequest<ManagedObject>(entityName: "RemoteNote")
        try request.setPredicate(format: "name == %@", name)
        return try context.fetch(request).first
    }
}
