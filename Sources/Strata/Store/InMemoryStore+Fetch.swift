import Foundation
import StrataQuery

/// Reads the rows of an in-memory store as they were when the query started (the state is copied, which
/// copies nothing until the store changes).
final class InMemoryRowReader: StoreQueryReader {
    typealias Row = StoredRow

    let storeIdentity: StoreIdentity
    let state: InMemoryStore.State

    init(storeIdentifier: UUID, state: InMemoryStore.State) {
        storeIdentity = StoreIdentity.interned(storeIdentifier)
        self.state = state
    }

    func row(_ reference: StoredReference) throws -> StoredRow? {
        state.tables[InMemoryStore.key(reference.entity)]?.rows[reference.rowID]
    }

    func value(of attribute: AttributeDescription, in row: StoredRow) throws -> AttributeValue? {
        row.values[attribute.storageIndex!]
    }

    func toOne(_ relationship: RelationshipDescription, in row: StoredRow) throws -> StoredReference? {
        row.references[relationship.toOneIndex!]
    }

    func toMany(_ relationship: RelationshipDescription, of reference: StoredReference) throws -> [StoredReference] {
        InMemoryStore.relatedObjects(through: relationship, of: reference, in: state)
    }

    func version(of row: StoredRow) throws -> UInt64 { row.version }

    func decode(_ row: StoredRow, _ reference: StoredReference) throws -> StoredRow { row }
}

extension InMemoryStore {
    /// Answers a query by evaluating the predicate on each row of the hierarchy (or on the rows the request
    /// names), in row-ID order, with the same evaluation the Strata store and pending objects use.
    /// Counts the rows returned in ``rowReads``.
    ///
    /// - Throws: `PredicateEvaluationError` when the predicate cannot be evaluated on a row;
    ///   `CancellationError`.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        let snapshot = state.withLock { $0 }
        let reader = InMemoryRowReader(storeIdentifier: identifier, state: snapshot)
        let table = snapshot.tables[Self.key(request.entity)]?.rows ?? [:]
        let rowIDs = request.rowIDs.map { Array(Set($0)).sorted() } ?? table.keys.sorted()
        let result = try StoreQuery(reader: reader, request: request).run { body in
            for rowID in rowIDs {
                guard let row = table[rowID], request.includes(row.entity) else { continue }
                guard try body(StoredReference(entity: row.entity, rowID: rowID), row) else { break }
            }
        }
        if request.resultKind == .rows { state.withLock { $0.rowReads += result.rows.count } }
        return result
    }
}
