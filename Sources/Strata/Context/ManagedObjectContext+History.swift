import Foundation

extension ManagedObject {
    /// The names of the persistent properties changed since the last fetch or save (attributes, then
    /// relationships, in model order): what persistent history records of an update.
    var changedKeys: [String] {
        // From the change sets (ascending, so model order), not filters over every property: one array.
        let (attributes, relationships) = (entity.attributes, entity.relationships)
        var keys: [String] = []
        for index in changedIndexes where !attributes[index].isTransient { keys.append(attributes[index].name) }
        for index in changedRelationships { keys.append(relationships[index].name) }
        return keys
    }
}

extension ManagedObjectContext {
    /// Reads or trims persistent history (Core Data's `execute(_:)` of an `NSPersistentHistoryChangeRequest`):
    /// the stores that record history answer, each in its own order, store after store.
    ///
    /// For example:
    /// ```swift
    /// let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
    /// for transaction in result.transactions where transaction.author != "app" { ... }
    /// ```
    ///
    /// - Parameter request: what to fetch or delete.
    /// - Returns: the transactions (fetch) or how many were deleted (delete).
    /// - Throws: ``ObjectGraphError/storage(_:)`` when a store's history cannot be read or written.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        let stores = (request.affectedStores ?? coordinator.persistentStores).filter(\.recordsPersistentHistory)
        var result = PersistentHistoryResult()
        for store in stores {
            switch request.kind {
            case .fetchAfterToken(let token):
                // A token of another store says nothing of this one: its whole history.
                let after = token.flatMap { $0.storeIdentifier == store.identifier ? $0.transactionNumber : nil }
                result.transactions += try store.fetchHistory(
                    HistoryQuery(afterNumber: after ?? 0, author: request.author))
            case .fetchAfterDate(let date):
                result.transactions += try store.fetchHistory(HistoryQuery(afterDate: date, author: request.author))
            case .deleteBeforeToken(let token):
                guard token.storeIdentifier == store.identifier else { continue }
                result.deletedCount += try store.deleteHistory(beforeNumber: token.transactionNumber, beforeDate: nil)
            case .deleteBeforeDate(let date):
                result.deletedCount += try store.deleteHistory(beforeNumber: nil, beforeDate: date)
            }
        }
        return result
    }
}

extension PersistentStoreCoordinator {
    /// The token of the newest history transaction of the stores (Core Data's
    /// `currentPersistentHistoryToken(fromStores:)`): of the first store, or of the one given, that has history.
    ///
    /// - Parameter stores: the stores to look at (nil: every store).
    /// - Throws: ``ObjectGraphError/storage(_:)``.
    public func currentPersistentHistoryToken(
        fromStores stores: [any PersistentStore]? = nil
    ) throws
        -> PersistentHistoryToken?
    {
        for store in stores ?? persistentStores where store.recordsPersistentHistory {
            if let token = try store.currentHistoryToken() { return token }
        }
        return nil
    }
}
