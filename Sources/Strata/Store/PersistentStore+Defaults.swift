import Foundation
import StrataStorage

/// What a store that keeps no persistent history and no writable metadata answers (a store of your own need
/// not implement them).
extension PersistentStore {
    /// False: saves record no history.
    public var recordsPersistentHistory: Bool { false }

    /// No transactions.
    public func fetchHistory(_ query: HistoryQuery) throws -> [PersistentHistoryTransaction] { [] }

    /// Nothing to delete.
    public func deleteHistory(beforeNumber number: UInt64?, beforeDate date: Date?) throws -> Int { 0 }

    /// No token.
    public func currentHistoryToken() throws -> PersistentHistoryToken? { nil }

    /// Refuses: the metadata is read-only.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` with `StorageError.invalidArgument`.
    public func setMetadata(_ metadata: [String: String]) throws {
        throw ObjectGraphError.storage(.invalidArgument("the metadata of this store cannot be changed"))
    }
}
