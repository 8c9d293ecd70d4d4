import Foundation

/// Persistent history in the in-memory store: the records themselves, numbered from 1.
extension InMemoryStore {
    /// Whether saves record persistent history (``InMemoryStore/init(model:recordsPersistentHistory:)``).
    public var recordsPersistentHistory: Bool { recordsHistory }

    /// The tombstones of rows about to be deleted.
    static func tombstones(of deletes: [StoreChanges.Delete], in state: State) -> [[String: AttributeValue]] {
        deletes.map { delete in
            guard let row = state.tables[key(delete.entity)]?.rows[delete.rowID] else { return [:] }
            return HistoryRecord.tombstone(of: row.entity, values: row.values)
        }
    }

    /// The recorded transactions the query wants, oldest first.
    ///
    /// - Throws: never.
    public func fetchHistory(_ query: HistoryQuery) throws -> [PersistentHistoryTransaction] {
        state.withLock { state in
            state.history.filter { query.matches($0.record, number: $0.number) }.map {
                $0.record.transaction(store: identifier, number: $0.number)
            }
        }
    }

    /// Forgets the transactions numbered below `number`, or committed before `date`.
    ///
    /// - Returns: how many were forgotten.
    /// - Throws: never.
    public func deleteHistory(beforeNumber number: UInt64?, beforeDate date: Date?) throws -> Int {
        state.withLock { state in
            let before = state.history.count
            state.history.removeAll { entry in
                if let number { return entry.number < number }
                if let date { return entry.record.timestamp < date }
                return false
            }
            return before - state.history.count
        }
    }

    /// The token of the newest transaction, nil when there is none.
    ///
    /// - Throws: never.
    public func currentHistoryToken() throws -> PersistentHistoryToken? {
        state.withLock { state in
            state.history.last.map { PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: $0.number) }
        }
    }
}
