import Foundation

/// Reads or trims the persistent history of a coordinator's stores (Core Data's
/// `NSPersistentHistoryChangeRequest`); run it with ``ManagedObjectContext/execute(_:)-(PersistentHistoryChangeRequest)``.
///
/// For example:
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// request.author = "importer"
/// for transaction in try context.execute(request).transactions {
///     try ManagedObjectContext.mergeChanges(fromRemoteContextSave: transaction.objectIDNotification(), into: [context])
///     lastToken = transaction.token
/// }
/// ```
public final class PersistentHistoryChangeRequest {
    enum Kind {
        case fetchAfterToken(PersistentHistoryToken?)
        case fetchAfterDate(Date)
        case deleteBeforeToken(PersistentHistoryToken)
        case deleteBeforeDate(Date)
    }

    let kind: Kind
    /// For a fetch: only transactions of this author (nil: every author). Core Data filters with a fetch
    /// request on the transaction entity; this is the common case.
    public var author: String?
    /// The stores to read or trim (nil: every store of the coordinator that records history).
    public var affectedStores: [any PersistentStore]?

    init(_ kind: Kind) {
        self.kind = kind
    }

    /// Every transaction after `token` (after none: all of them), oldest first.
    ///
    /// - Parameter token: a token from an earlier transaction, or nil.
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.fetchAfterToken(token))
    }

    /// Every transaction committed after `date`, oldest first.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.fetchAfterDate(date))
    }

    /// Deletes the transactions before `token`'s (not that one).
    public static func deleteHistory(before token: PersistentHistoryToken) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.deleteBeforeToken(token))
    }

    /// Deletes the transactions committed before `date`.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.deleteBeforeDate(date))
    }
}

/// What a ``PersistentHistoryChangeRequest`` returns (Core Data's `NSPersistentHistoryResult`).
public struct PersistentHistoryResult: Sendable {
    /// For a fetch: the transactions, oldest first, store by store.
    public var transactions: [PersistentHistoryTransaction] = []
    /// For a delete: how many transactions were deleted.
    public var deletedCount = 0
}
