#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataQuery

extension PostgresStore {
    /// Answers a query: the predicate is translated to SQL where it has an SQL form
    /// (``PostgresPredicateTranslator``) and the database returns only the rows that may match; unless the
    /// translation was exact, every row is then checked with StrataQuery's own evaluation, so that this store,
    /// the others and unsaved objects agree on every operator.
    ///
    /// When the whole predicate translated exactly (or there is none), the database also counts, sorts (when every
    /// sort key has an SQL order that agrees with ``SortKey``'s, ``sqlOrder(_:entity:)``) and applies the
    /// window (`LIMIT`, `OFFSET`): only the rows of the result leave it. Otherwise sorting and the window are
    /// applied here to the matching rows, and a note is logged for the parts evaluated in memory.
    ///
    /// - Throws: ``PostgresStoreError``; `PredicateEvaluationError`; `CancellationError`.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        try request.checkCancellation()
        // Groups and aggregates in the server when it computes exactly what StoreQuery would; else rows are read
        // and grouped here as every store does.
        if case .groups(let keys, let aggregates) = request.resultKind, request.rowIDs == nil,
            let groups = try groups(of: request, keys: keys, aggregates: aggregates)
        {
            var result = StoreFetchResult()
            result.groups = groups
            result.count = groups.count
            return result
        }
        var statement = PostgresStatement()
        var conditions = [entityCondition(request.entity, includesSubentities: request.includesSubentities)]
        if let rowIDs = request.rowIDs {
            conditions.append(
                "t.strata_row_id = ANY(\(statement.bind(Array(Set(rowIDs)).map { Int64(bitPattern: $0) })))")
        }
        var exact = true
        if let predicate = request.predicate {
            var translator = PostgresPredicateTranslator(
                schema: schema, entity: request.entity, storeIdentifier: identifier, statement: statement)
            let translated = translator.translate(predicate)
            statement = translator.statement
            if let translated { conditions.append(translated.sql) }
            exact = translated?.exact ?? false
            if !exact {
                logger.notice(
                    "PostgreSQL: part of the predicate is evaluated in memory on the fetched rows",
                    metadata: ["entity": "\(request.entity.name)", "predicate": "\(predicate)"])
            }
        }
        let table = schema.table(of: request.entity)
        let whereClause = conditions.joined(separator: " AND ")
        var window = ""
        if request.fetchLimit > 0 { window += " LIMIT \(request.fetchLimit)" }
        if request.fetchOffset > 0 { window += " OFFSET \(request.fetchOffset)" }
        // The database does it all: counts (the order does not change a count), and sorted windows.
        if exact, request.resultKind == .count {
            let sql = "SELECT count(*) FROM (SELECT 1 FROM \(table) t WHERE \(whereClause)\(window)) AS matches"
            let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
            var answer = StoreFetchResult()
            answer.count = Int(try result.rows[0].decode(Int64.self))
            return answer
        }
        let order = exact ? sqlOrder(request.sortKeys, entity: request.entity) : nil
        // Whether the database orders (by the sort keys, or by row ID without any) and applies the window.
        let windowsInSQL = exact && (request.sortKeys.isEmpty || order != nil)
        if exact, !windowsInSQL {
            logger.notice(
                "PostgreSQL: sort keys without an SQL order that agrees with Strata's are applied in memory",
                metadata: ["entity": "\(request.entity.name)", "sortKeys": "\(request.sortKeys)"])
        }
        var sql =
            "SELECT \(selectLists[ObjectIdentifier(request.entity.rootEntity)]!.sql) FROM \(table) t "
            + "WHERE \(whereClause) ORDER BY " + ((order.map { $0 + ", " } ?? "") + "t.strata_row_id")
        var windowed = request
        // An exact translation has decided already: the rows are not checked again.
        if exact { windowed.predicate = nil }
        if windowsInSQL {
            sql += window
            windowed.sortKeys = []
            windowed.fetchLimit = 0
            windowed.fetchOffset = 0
        }
        let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
        received.add(result.rows.count, ordering: .relaxed)
        let candidates = try decodeRows(
            result, root: request.entity.rootEntity, wanted: request.entity,
            includesSubentities: request.includesSubentities, countsReads: false)
        let reader = PostgresRowReader(store: self)
        reader.remember(candidates)
        var answer = try StoreQuery(reader: reader, request: windowed).run { body in
            for (rowID, row) in candidates {
                guard try body(StoredReference(entity: row.entity, rowID: rowID), row) else { break }
            }
        }
        if windowsInSQL, request.returnsSortValues, !request.sortKeys.isEmpty {
            // Sorted by the database: every candidate is a result, in order; the context still wants the values.
            let read = reader.valuesReader(for: request.sortKeys.map(\.keyPath), entity: request.entity)
            answer.sortValues = try candidates.map { rowID, row in
                try read(StoredReference(entity: row.entity, rowID: rowID), row)
            }
        }
        if request.resultKind == .rows { reads.add(answer.rows.count, ordering: .relaxed) }
        return answer
    }

    /// The `ORDER BY` items (before the row-ID tiebreak) that sort as ``SortKey`` does, or nil when a key has
    /// none.
    ///
    /// A key has one when it compares with ``SortKey/Comparison/standard`` an attribute of the entity or of a
    /// to-one's destination (a scalar subquery; a missing related row sorts as nil), of a type whose SQL order
    /// is Strata's: numbers, dates (seconds as doubles), Booleans (false first), UUIDs and binaries (by bytes,
    /// shorter first on a common prefix, as `bytea` and `uuid` compare) and strings and URIs (by Unicode scalar
    /// values of their normalization form C, as Swift compares strings: `normalize(…, NFC) COLLATE "C"`, UTF-8
    /// byte order being code point order; a database collation such as en_US would order "a" < "B" < "b", which
    /// Swift does not). nil comes first ascending and last descending, as ``SortKey`` places it. Folding and
    /// localized comparisons have no SQL form here (PostgreSQL's `lower()` is not Unicode case folding, see
    /// ``PostgresPredicateTranslator/foldedCondition(_:column:_:_:options:)``) and are sorted in memory. A NaN
    /// double is unordered in Strata (equal to every number); PostgreSQL puts it last.
    func sqlOrder(_ keys: [SortKey], entity: EntityDescription) -> String? {
        guard !keys.isEmpty else { return nil }
        var items: [String] = []
        for key in keys {
            guard key.comparison == .standard else { return nil }
            let names = key.keyPath.components.compactMap { component -> String? in
                if case .key(let name) = component { name } else { nil }
            }
            guard names.count == key.keyPath.components.count, (1...2).contains(names.count) else { return nil }
            var owner = entity
            var relationship: RelationshipDescription?
            if names.count == 2 {
                guard let toOne = entity.relationshipsByName[names[0]], !toOne.isToMany else { return nil }
                relationship = toOne
                owner = toOne.destinationEntity
            }
            guard let attribute = owner.attributesByName[names.last!], attribute.storageIndex != nil,
                !PostgresSchema.isExternal(attribute), attribute.type != .transformable,
                attribute.type != .undefined
            else { return nil }
            let alias = relationship == nil ? "t" : "o"
            var value = "\(alias).\(schema.column(attribute))"
            if attribute.type == .string || attribute.type == .uri { value = "normalize(\(value), NFC) COLLATE \"C\"" }
            if let relationship {
                let (id, _) = schema.columns(relationship)
                value =
                    "(SELECT \(value) FROM \(schema.table(of: owner)) o WHERE o.strata_row_id = t.\(id))"
            }
            items.append(value + (key.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST"))
        }
        return items.joined(separator: ", ")
    }
}
#endif
