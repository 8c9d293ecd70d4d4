import Foundation
import Strata
import StrataGraphWriter
import StrataLock
import Testing

/// Saves made in another process (FORMAT.md §11): this process hears of them (remote-change observers, polling),
/// merges them through persistent history as a Core Data app does, refreshes objects from the rows they wrote (not
/// from this process's row cache), and catches conflicts with them through optimistic locking, as between contexts.
/// The other process is `StrataGraphWriter` (Tests/StrataGraphWriter).
@Suite(.serialized) struct RemoteChangeTests {
    @Test func savesOfAnotherProcessAreHeardMergedRefreshedAndConflictChecked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-remote-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let coordinator = PersistentStoreCoordinator(model: RemoteNotes.model)
        let store = try #require(
            try coordinator.addPersistentStore(
                .strata(directory: directory, configuration: RemoteNotes.configuration(pollingEvery: .milliseconds(20)))
            )
                as? StrataStore)
        let heard = Lock<[PersistentStoreRemoteChange]>([])
        store.addRemoteChangeObserver { change in heard.withLock { $0.append(change) } }

        let viewer = ManagedObjectContext(coordinator: coordinator)
        let note = ManagedObject(entity: RemoteNotes.model.entity(named: "RemoteNote")!, insertInto: viewer)
        try note.setValue("shared", forKey: "name")
        try viewer.save()
        let other = ManagedObjectContext(coordinator: coordinator)
        let otherNote = try #require(try RemoteNotes.note(named: "shared", in: other))
        #expect(try otherNote.value(forKey: "counter") as? Int64 == 0)
        let token = try #require(try coordinator.currentPersistentHistoryToken())

        // Three saves in another process; the poller hears of them without this process reading.
        try Self.runWriter(directory, name: "shared", count: 3)
        let deadline = Date().addingTimeInterval(10)
        while heard.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let change = try #require(heard.withLock { $0.last }, "no remote change was heard within 10 s")
        #expect(change.storeIdentifier == store.identifier)
        #expect(change.historyToken.map { $0 > token } == true)

        // A new context's fault fires from the row the other process wrote, not from the row this coordinator still
        // caches for the viewer's object.
        let third = ManagedObjectContext(coordinator: coordinator)
        #expect(try third.object(with: note.objectID).value(forKey: "counter") as? Int64 == 3)

        // Merged through history, as a Core Data app does.
        let transactions = try viewer.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author == "writer" })
        for transaction in transactions {
            try ManagedObjectContext.mergeChanges(
                fromRemoteContextSave: transaction.objectIDNotification(), into: [viewer])
        }
        #expect(try note.value(forKey: "counter") as? Int64 == 3)
        try other.refresh(otherNote, mergeChanges: false)
        #expect(try otherNote.value(forKey: "counter") as? Int64 == 3)

        // A change here on top of a row another process changed since: the save finds the conflict.
        try note.setValue("mine", forKey: "title")
        try Self.runWriter(directory, name: "shared", count: 1)
        #expect {
            try viewer.save()
        } throws: { error in
            guard case ObjectGraphError.mergeConflicts(let conflicts) = error else { return false }
            return conflicts.map(\.objectID) == [note.objectID]
        }
        viewer.mergePolicy = .mergeByPropertyObjectTrump
        try viewer.save()
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let saved = try #require(try RemoteNotes.note(named: "shared", in: fresh))
        #expect(try saved.value(forKey: "counter") as? Int64 == 4)
        #expect(try saved.value(forKey: "title") as? String == "mine")
        try store.close()
    }

    /// A store whose coordinator lets it go while another coordinator's store keeps their engine open: it is freed (the
    /// engine's report handler does not hold it, and holds no weak reference to it either), and the engine's reports of
    /// another process's saves go on reaching the store that stays, through the relay of the one that went too.
    @Test func aStoreLetGoOnASharedEngineIsFreedWhileTheOtherHearsRemoteChanges() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-remote-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let staying = PersistentStoreCoordinator(model: RemoteNotes.model)
        let store = try #require(
            try staying.addPersistentStore(
                .strata(directory: directory, configuration: RemoteNotes.configuration(pollingEvery: .milliseconds(20)))
            )
                as? StrataStore)
        let heard = Lock<[PersistentStoreRemoteChange]>([])
        store.addRemoteChangeObserver { change in heard.withLock { $0.append(change) } }
        let context = ManagedObjectContext(coordinator: staying)
        let note = ManagedObject(entity: RemoteNotes.model.entity(named: "RemoteNote")!, insertInto: context)
        try note.setValue("shared", forKey: "name")
        try context.save()

        weak var gone: StrataStore?
        do {
            let leaving = PersistentStoreCoordinator(model: RemoteNotes.model)
            let other = try #require(
                try leaving.addPersistentStore(
                    .strata(directory: directory, configuration: RemoteNotes.configuration())) as? StrataStore)
            #expect(other.engine === store.engine)
            gone = other
            let reader = ManagedObjectContext(coordinator: leaving)
            #expect(try RemoteNotes.note(named: "shared", in: reader) != nil)
            try leaving.removePersistentStore(other)
        }
        #expect(gone == nil, "the store let go is still alive")

        try Self.runWriter(directory, name: "shared", count: 2)
        let deadline = Date().addingTimeInterval(10)
        while heard.withLock({ $0.isEmpty }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(
            heard.withLock { $0.last?.storeIdentifier } == store.identifier, "no remote change was heard within 10 s")
        let fresh = ManagedObjectContext(coordinator: staying)
        #expect(try fresh.object(with: note.objectID).value(forKey: "counter") as? Int64 == 2)
        try store.close()
    }

    /// Runs `StrataGraphWriter directory name count` to its end.
    static func runWriter(_ directory: String, name: String, count: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locateWriter())
        process.arguments = [directory, name, String(count)]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "StrataGraphWriter: \(message)")
    }

    /// `StrataGraphWriter`, built next to the test binary (a dependency of StrataTests).
    static func locateWriter() throws -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("StrataGraphWriter").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw ObjectGraphError.noStoreURL
    }
}
