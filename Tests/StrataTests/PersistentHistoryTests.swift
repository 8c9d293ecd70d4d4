import Foundation
import Strata
import Testing

/// Persistent history on both stores: what saves and batch requests record, fetching and trimming it, tokens
/// across reopening, merging a transaction into a context.
@Suite struct PersistentHistoryTests {
    static let model: ManagedObjectModel = {
        try! ManagedObjectModel(entities: [
            Entity("HistFolder") {
                Attribute("title", .string)
                Relationship.toMany("items", "HistItem", inverse: "folder")
            },
            Entity("HistItem") {
                Attribute("name", .string).preservesValueInHistory()
                Attribute("note", .string)
                Attribute("count", .integer64, default: .integer(0))
                Relationship.toOne("folder", "HistFolder", inverse: "items")
            },
        ])
    }()

    static func stack(_ kind: StoreKind, history: Bool = true) throws -> TestStack {
        try TestStack(kind, model: model, recordsHistory: history)
    }

    static func item(_ context: ManagedObjectContext, _ name: String, count: Int64 = 0) throws -> ManagedObject {
        let item = ManagedObject(entity: model.entity(named: "HistItem")!, insertInto: context)
        try item.setValue(name, forKey: "name")
        try item.setValue("about \(name)", forKey: "note")
        try item.setValue(count, forKey: "count")
        return item
    }

    static func history(
        _ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil
    )
        throws -> [PersistentHistoryTransaction]
    {
        try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)).transactions
    }

    @Test(arguments: StoreKind.allCases)
    func eachSaveRecordsItsAuthorNameAndChanges(kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let context = stack.context()
        context.name = "editor"
        context.transactionAuthor = "app"
        #expect(stack.store.recordsPersistentHistory)
        let before = Date()
        let ada = try Self.item(context, "Ada")
        let bob = try Self.item(context, "Bob")
        try context.save()
        try ada.setValue(Int64(3), forKey: "count")
        let folder = ManagedObject(entity: Self.model.entity(named: "HistFolder")!, insertInto: context)
        try bob.setValue(folder, forKey: "folder")
        try context.save()
        context.transactionAuthor = nil
        context.delete(ada)
        try context.save()

        let transactions = try Self.history(context)
        #expect(transactions.count == 3)
        #expect(transactions.map(\.author) == ["app", "app", nil])
        #expect(transactions.allSatisfy { $0.contextName == "editor" })
        #expect(transactions.allSatisfy { $0.timestamp >= before.addingTimeInterval(-0.001) })
        #expect(transactions.map(\.token.transactionNumber) == transactions.map(\.token.transactionNumber).sorted())
        #expect(Set(transactions[0].changes.map(\.changedObjectID)) == [ada.objectID, bob.objectID])
        #expect(transactions[0].changes.allSatisfy { $0.changeType == .insert && $0.updatedProperties == nil })
        let updates = transactions[1].changes.filter { $0.changeType == .update }
        // The folder is inserted by that save: an insert, not an update.
        #expect(
            Dictionary(uniqueKeysWithValues: updates.map { ($0.changedObjectID, $0.updatedProperties ?? []) }) == [
                ada.objectID: ["count"], bob.objectID: ["folder"],
            ])
        #expect(transactions[1].changes.contains { $0.changeType == .insert && $0.changedObjectID == folder.objectID })
        let deletion = try #require(transactions[2].changes.first)
        #expect(transactions[2].changes.count == 1)
        #expect(deletion.changeType == .delete)
        // Only the attribute that preserves its value is in the tombstone.
        #expect(deletion.tombstone == ["name": .string("Ada")])
        #expect(try stack.coordinator.currentPersistentHistoryToken() == transactions[2].token)
    }

    @Test(arguments: StoreKind.allCases)
    func historyIsFetchedAfterATokenOrADateAndByAuthor(kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let context = stack.context()
        context.transactionAuthor = "importer"
        _ = try Self.item(context, "one")
        try context.save()
        let first = try #require(try Self.history(context).last).token
        context.transactionAuthor = "app"
        _ = try Self.item(context, "two")
        try context.save()
        let middle = try #require(try Self.history(context).last).timestamp
        while Date() <= middle {}  // the next save's timestamp is later, whatever the clock's resolution
        context.transactionAuthor = "importer"
        _ = try Self.item(context, "three")
        try context.save()

        #expect(try Self.history(context, after: first).count == 2)
        let request = PersistentHistoryChangeRequest.fetchHistory(after: nil)
        request.author = "importer"
        #expect(try context.execute(request).transactions.count == 2)
        let byDate = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: middle)).transactions
        #expect(byDate.count == 1)
        #expect(byDate.first?.author == "importer")
    }

    @Test(arguments: StoreKind.allCases)
    func historyIsDeletedBeforeATokenOrADate(kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let context = stack.context()
        for name in ["a", "b", "c", "d"] {
            _ = try Self.item(context, name)
            try context.save()
        }
        let all = try Self.history(context)
        let deleted = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: all[2].token))
        #expect(deleted.deletedCount == 2)
        #expect(try Self.history(context).map(\.token) == [all[2].token, all[3].token])
        let rest = try context.execute(
            PersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(1)))
        #expect(rest.deletedCount == 2)
        #expect(try Self.history(context).isEmpty)
        // Numbers are never reused.
        _ = try Self.item(context, "e")
        try context.save()
        #expect(try #require(try Self.history(context).first).token > all[3].token)
    }

    @Test func tokensSurviveReopeningTheStore() throws {
        let stack = try Self.stack(.strata)
        var context = stack.context()
        _ = try Self.item(context, "before")
        try context.save()
        _ = try Self.item(context, "before too")
        try context.save()
        let token = try #require(try stack.coordinator.currentPersistentHistoryToken())
        let encoded = try JSONEncoder().encode(token)
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: token))
        let reopened = try stack.reopened()
        #expect(reopened.store.recordsPersistentHistory)  // the store has history: it keeps recording it
        context = reopened.context()
        let kept = try JSONDecoder().decode(PersistentHistoryToken.self, from: encoded)
        #expect(try reopened.coordinator.currentPersistentHistoryToken() == kept)
        let item = try Self.item(context, "after")
        try context.save()
        let after = try Self.history(context, after: kept)
        #expect(after.count == 1)
        #expect(after.first?.changes.first?.changedObjectID == item.objectID)
        #expect(try #require(after.first).token > kept)
    }

    @Test(arguments: StoreKind.allCases)
    func batchRequestsRecordHistoryToo(kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let context = stack.context()
        context.transactionAuthor = "bulk"
        let inserted = BatchInsertRequest(entityName: "HistItem", objects: [["name": "x"], ["name": "y"]])
        inserted.resultType = .objectIDs
        let ids = try context.execute(inserted).objectIDs
        _ = try context.execute(
            BatchUpdateRequest(
                entityName: "HistItem", predicate: try ObjectPredicate(format: "name == %@", "x"),
                propertiesToUpdate: ["count": 7]))
        _ = try context.execute(
            BatchDeleteRequest(entityName: "HistItem", predicate: try ObjectPredicate(format: "name == %@", "y")))
        let transactions = try Self.history(context)
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author == "bulk" })
        #expect(Set(transactions[0].changes.map(\.changedObjectID)) == Set(ids))
        #expect(transactions[1].changes.map(\.changeType) == [.update])
        #expect(transactions[1].changes.first?.updatedProperties == ["count"])
        #expect(transactions[2].changes.map(\.changeType) == [.delete])
        #expect(transactions[2].changes.first?.tombstone == ["name": .string("y")])
    }

    @Test(arguments: StoreKind.allCases)
    func aTransactionMergesIntoAContext(kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let reader = stack.context()
        let writer = stack.context()
        let item = try Self.item(writer, "Ada")
        try writer.save()
        let shown = try reader.existingObject(with: item.objectID)
        #expect(try shown.value(forKey: "count") as? Int64 == 0)
        let token = try stack.coordinator.currentPersistentHistoryToken()
        try item.setValue(Int64(9), forKey: "count")
        _ = try Self.item(writer, "Bob")
        try writer.save()
        for transaction in try Self.history(reader, after: token) {
            try ManagedObjectContext.mergeChanges(
                fromRemoteContextSave: transaction.objectIDNotification(), into: [reader])
        }
        #expect(try shown.value(forKey: "count") as? Int64 == 9)
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "HistItem")) == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedSaveRecordsNothingAndStoresWithoutHistoryRecordNothing(kind: StoreKind) throws {
        let stack = try Self.stack(kind)
        let first = stack.context()
        let item = try Self.item(first, "Ada")
        try first.save()
        let second = stack.context()
        try second.existingObject(with: item.objectID).setValue(Int64(1), forKey: "count")
        try item.setValue(Int64(2), forKey: "count")
        try first.save()
        #expect(throws: ObjectGraphError.self) { try second.save() }  // a conflict: nothing written
        #expect(try Self.history(first).count == 2)

        let plain = try Self.stack(kind, history: false)
        let context = plain.context()
        _ = try Self.item(context, "Bob")
        try context.save()
        #expect(!plain.store.recordsPersistentHistory)
        #expect(try Self.history(context).isEmpty)
        #expect(try plain.coordinator.currentPersistentHistoryToken() == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func theContainerTurnsHistoryOnFromItsDescription(kind: StoreKind) throws {
        let container = PersistentContainer(name: "History", managedObjectModel: Self.model)
        var description =
            kind == .inMemory
            ? PersistentStoreDescription(type: .inMemory)
            : PersistentStoreDescription(url: URL(fileURLWithPath: temporaryStoreDirectory()))
        description.storeConfiguration = testStoreConfiguration()
        description.setOption(true, forKey: PersistentStoreOptionKey.persistentHistoryTracking)
        container.persistentStoreDescriptions = [description]
        var failure: (any Error)?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        defer { try? PersistentContainerTests.close(container) }
        #expect(container.persistentStoreCoordinator.persistentStores.first?.recordsPersistentHistory == true)
    }
}
