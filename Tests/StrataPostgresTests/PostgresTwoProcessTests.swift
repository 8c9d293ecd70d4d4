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

    /// What a note holds: its title, counter and tag.
    struct NoteState: Equatable, CustomStringConvertible {
        var title: String
        var counter: Int64
        var tag: String

        init(title: String, counter: Int64, tag: String) {
            self.title = title
            self.counter = counter
            self.tag = tag
        }

        init(_ note: ManagedObject) throws {
            title = try note.value(forKey: "title") as? String ?? "?"
            counter = try note.value(forKey: "counter") as? Int64 ?? -1
            tag = try note.value(forKey: "tag") as? String ?? "?"
        }

        var description: String { "(\(title), \(counter), \(tag))" }
    }

    /// Every merge policy against a save of another process: this context changed the title and the counter of
    /// a note, the other process the counter and the tag (MergePolicy's table: changed here only, in the store
    /// only, in both).
    @Test(arguments: MergePolicyType.allCases)
    func everyMergePolicyResolvesAConflictWithAnotherProcessSave(_ policy: MergePolicyType) throws {
        let cluster = try PostgresTestCluster.shared()
        let schema = freshSchema()
        let configuration = PostgresNotes.configuration(
            port: cluster.port, user: cluster.user, database: cluster.database, schema: schema)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let coordinator = PersistentStoreCoordinator(model: PostgresNotes.model)
        _ = try coordinator.addPersistentStore(.postgres(configuration))
        let context = ManagedObjectContext(coordinator: coordinator)
        let note = ManagedObject(entity: PostgresNotes.model.entity(named: "PGNote")!, insertInto: context)
        try note.setValue("p", forKey: "name")
        try note.setValue("old", forKey: "title")
        try context.save()

        try note.setValue("mine", forKey: "title")
        try note.setValue(Int64(100), forKey: "counter")
        try Self.runWriter(cluster, schema: schema, name: "p", count: 1, tag: "theirs")
        context.mergePolicy = MergePolicy(merge: policy)
        let expected: NoteState
        switch policy {
        case .error:
            #expect {
                try context.save()
            } throws: { error in
                guard case ObjectGraphError.mergeConflicts(let conflicts) = error else { return false }
                return conflicts.map(\.objectID) == [note.objectID]
            }
            expected = NoteState(title: "old", counter: 1, tag: "theirs")
        case .mergeByPropertyStoreTrump:
            try context.save()
            expected = NoteState(title: "mine", counter: 1, tag: "theirs")
        case .mergeByPropertyObjectTrump:
            try context.save()
            expected = NoteState(title: "mine", counter: 100, tag: "theirs")
        case .overwrite:
            try context.save()
            expected = NoteState(title: "mine", counter: 100, tag: "")
        case .rollback:
            try context.save()
            expected = NoteState(title: "old", counter: 1, tag: "theirs")
        }
        // In the database, as a new coordinator (its own connections, an empty cache) reads it.
        let reader = PersistentStoreCoordinator(model: PostgresNotes.model)
        _ = try reader.addPersistentStore(.postgres(configuration))
        let readerContext = ManagedObjectContext(coordinator: reader)
        let stored = try #require(try PostgresNotes.note(named: "p", in: readerContext))
        #expect(try NoteState(stored) == expected, "\(policy)")
        // And in the context that saved (the error policy leaves its changes in place).
        if policy != .error { #expect(try NoteState(note) == expected, "\(policy) in the context") }
    }

    /// Every merge policy when this context deleted a note that another process updated meanwhile.
    @Test(arguments: MergePolicyType.allCases)
    func everyMergePolicyResolvesADeleteOfARowAnotherProcessUpdated(_ policy: MergePolicyType) throws {
        let cluster = try PostgresTestCluster.shared()
        let schema = freshSchema()
        let configuration = PostgresNotes.configuration(
            port: cluster.port, user: cluster.user, database: cluster.database, schema: schema)
        defer { try? PostgresStore.destroyPersistentStore(configuration: configuration) }
        let coordinator = PersistentStoreCoordinator(model: PostgresNotes.model)
        _ = try coordinator.addPersistentStore(.postgres(configuration))
        let context = ManagedObjectContext(coordinator: coordinator)
        let note = ManagedObject(entity: PostgresNotes.model.entity(named: "PGNote")!, insertInto: context)
        try note.setValue("d", forKey: "name")
        try context.save()
        context.delete(note)
        try Self.runWriter(cluster, schema: schema, name: "d", count: 1, tag: "theirs")
        context.mergePolicy = MergePolicy(merge: policy)
        let survives: Bool
        switch policy {
        case .error:
            #expect(throws: ObjectGraphError.self) { try context.save() }
            survives = true
        case .mergeByPropertyStoreTrump, .rollback:
            try context.save()
            survives = true  // the deletion is dropped: the object takes the row
        case .mergeByPropertyObjectTrump, .overwrite:
            try context.save()
            survives = false
        }
        let reader = PersistentStoreCoordinator(model: PostgresNotes.model)
        _ = try reader.addPersistentStore(.postgres(configuration))
        let readerContext = ManagedObjectContext(coordinator: reader)
        let stored = try PostgresNotes.note(named: "d", in: readerContext)
        #expect((stored != nil) == survives, "\(policy)")
        if survives { #expect(try stored.map(NoteState.init)?.counter == 1) }
    }

    /// Runs `StrataPostgresWriter` to its end.
    static func runWriter(
        _ cluster: PostgresTestCluster, schema: String, name: String, count: Int, tag: String? = nil
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locateWriter())
        process.arguments =
            [String(cluster.port), cluster.user, cluster.database, schema, name, String(count)]
            + (tag.map { [$0] } ?? [])
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
