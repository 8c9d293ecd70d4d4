#if Postgres
import Foundation
import Strata
import StrataLock
import StrataPostgres
import StrataPostgresWriter
import StrataTestSupport
import Testing

/// Two processes saving and merging through one database: another process (`StrataPostgresWriter`, with its
/// own coordinator and connections) saves; this one hears of it through LISTEN/NOTIFY, merges it through
/// persistent history as a Core Data app does, reads the rows it wrote, and catches a conflict with it through
/// the row versions; a merge policy then resolves the conflict.
@Suite struct PostgresTwoProcessTests {
    @Test func savesOfAnotherProcessAreHeardMergedAndConflictChecked() throws {
        let cluster = try PostgresTestCluster.shared()
        let schema = freshSchema()
        let configuration = PostgresNotes.configuration(
            port: cluster.port, user: cluster.user, database: cluster.database, schema: schema)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let coordinator = PersistentStoreCoordinator(model: PostgresNotes.model)
        let store = try coordinator.addPersistentStore(.postgres(configuration))
        let heard = Lock<[PersistentStoreRemoteChange]>([])
        store.addRemoteChangeObserver { change in heard.withLock { $0.append(change) } }

        let viewer = ManagedObjectContext(coordinator: coordinator)
        let note = ManagedObject(entity: PostgresNotes.model.entity(named: "PGNote")!, insertInto: viewer)
        try note.setValue("shared", forKey: "name")
        try viewer.save()
        let token = try #require(try coordinator.currentPersistentHistoryToken())

        try Self.runWriter(cluster, schema: schema, name: "shared", count: 3)
        try PostgresStoreTests.waitUntil {
            heard.withLock { $0.last?.historyToken.map { $0.transactionNumber >= token.transactionNumber + 3 } }
                == true
        }
        #expect(heard.withLock { $0.allSatisfy { $0.storeIdentifier == store.identifier } })

        // A new context reads the row the other process wrote, not this coordinator's cached one.
        let third = ManagedObjectContext(coordinator: coordinator)
        #expect(try third.object(with: note.objectID).value(forKey: "counter") as? Int64 == 3)

        let transactions = try viewer.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
            .transactions
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author == "writer" })
        for transaction in transactions {
            try ManagedObjectContext.mergeChanges(
                fromRemoteContextSave: transaction.objectIDNotification(), into: [viewer])
        }
        #expect(try note.value(forKey: "counter") as? Int64 == 3)

        // A change here on top of a row the other process changed since: the save finds the conflict.
        try note.setValue("mine", forKey: "title")
        try Self.runWriter(cluster, schema: schema, name: "shared", count: 1)
        #expect {
            try viewer.save()
        } throws: { error in
            guard case ObjectGraphError.mergeConflicts(let conflicts) = error else { return false }
            return conflicts.map(\.objectID) == [note.objectID]
        }
        viewer.mergePolicy = .mergeByPropertyObjectTrump
        try viewer.save()
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let saved = try #require(try PostgresNotes.note(named: "shared", in: fresh))
        #expect(try saved.value(forKey: "counter") as? Int64 == 4)
        #expect(try saved.value(forKey: "title") as? String == "mine")
    }

    /// Runs `StrataPostgresWriter` to its end.
    static func runWriter(_ cluster: PostgresTestCluster, schema: String, name: String, count: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locateWriter())
        process.arguments = [
            String(cluster.port), cluster.user, cluster.database, schema, name, String(count),
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try #require(process.terminationStatus == 0, "StrataPostgresWriter: \(message)")
    }

    /// `StrataPostgresWriter`, built next to the test binary (a dependency of StrataPostgresTests).
    static func locateWriter() throws -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("StrataPostgresWriter").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw ObjectGraphError.noStoreURL
    }
}
#endif
