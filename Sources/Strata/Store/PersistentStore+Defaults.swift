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

    /// The rows, from one ``fetch(_:)`` of `entity` naming them (``StoreFetchRequest/rowIDs``).
    ///
    /// - Throws: what ``fetch(_:)`` throws.
    public func rows(withIDs rowIDs: [UInt64], of entity: EntityDescription) throws -> [(rowID: UInt64, row: StoredRow)]
    {
        var request = StoreFetchRequest(entity: entity)
        request.rowIDs = rowIDs
        let result = try fetch(request)
        return zip(result.references, result.rows).map { (rowID: $0.rowID, row: $1) }.sorted { $0.rowID < $1.rowID }
    }

    /// The rows ``rows(withIDs:of:)`` returns, each handed to `body` with its position in `rowIDs`.
    ///
    /// - Throws: what ``rows(withIDs:of:)`` or `body` throws.
    public func forEachRow(
        withIDs rowIDs: [UInt64], of entity: EntityDescription,
        _ body: (_ position: Int, _ row: consuming StoredRow) throws -> Void
    ) throws {
        var position = 0
        for (rowID, row) in try rows(withIDs: rowIDs, of: entity) {
            while position < rowIDs.count, rowIDs[position] < rowID { position += 1 }
            guard position < rowIDs.count, rowIDs[position] == rowID else { continue }
            try body(position, row)
        }
    }

    /// No token.
    public func currentHistoryToken() throws -> PersistentHistoryToken? { nil }

    /// Refuses: the metadata is read-only.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` with `StorageError.invalidArgument`.
    public func setMetadata(_ metadata: [String: String]) throws {
        throw ObjectGraphError.storage(.invalidArgument("the metadata of this store cannot be changed"))
    }
}
