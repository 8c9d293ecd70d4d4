#if Postgres
import Foundation
import Strata
import StrataQuery

/// Reads what a predicate or sort key walks from a ``PostgresStore`` (related rows, to-many members, external
/// values), each at most once per query.
final class PostgresRowReader: StoreQueryReader {
    typealias Row = StoredRow

    private struct RowKey: Hashable {
        let table: ObjectIdentifier
        let rowID: UInt64
    }

    private struct MembersKey: Hashable {
        let relationship: ObjectIdentifier
        let rowID: UInt64
    }

    let store: PostgresStore
    private var rows: [RowKey: StoredRow?] = [:]
    private var members: [MembersKey: [StoredReference]] = [:]

    let storeIdentity: StoreIdentity

    init(store: PostgresStore) {
        self.store = store
        storeIdentity = StoreIdentity.interned(store.identifier)
    }

    /// Rows a query already read, so that reading them again (the window of a sort done here) costs no
    /// round trip.
    func remember(_ candidates: [(rowID: UInt64, row: StoredRow)]) {
        for (rowID, row) in candidates {
            rows[RowKey(table: ObjectIdentifier(row.entity.rootEntity), rowID: rowID)] = row
        }
    }

    func row(_ reference: StoredReference) throws -> StoredRow? {
        let key = RowKey(table: ObjectIdentifier(reference.entity.rootEntity), rowID: reference.rowID)
        if let row = rows[key] { return row }
        let row = try store.row(reference.rowID, of: reference.entity.rootEntity)
        rows[key] = row
        return row
    }

    func value(of attribute: AttributeDescription, in row: StoredRow) throws -> AttributeValue? {
        let index = attribute.storageIndex!
        if let external = row.externalReferences[index] { return .data(try store.externalData(external)) }
        return row.values[index]
    }

    func toOne(_ relationship: RelationshipDescription, in row: StoredRow) throws -> StoredReference? {
        row.references[relationship.toOneIndex!]
    }

    func toMany(_ relationship: RelationshipDescription, of reference: StoredReference) throws -> [StoredReference] {
        let key = MembersKey(relationship: ObjectIdentifier(relationship), rowID: reference.rowID)
        if let found = members[key] { return found }
        let found = try store.relatedObjects(through: relationship, of: reference)
        members[key] = found
        return found
    }

    func version(of row: StoredRow) throws -> UInt64 { row.version }

    func decode(_ row: StoredRow, _ reference: StoredReference) throws -> StoredRow { row }
}
#endif
