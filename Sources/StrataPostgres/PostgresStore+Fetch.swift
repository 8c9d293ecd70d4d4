#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataQuery

extension PostgresStore {
    /// Answers a query: the predicate is translated to SQL where it has an SQL form
    /// (``PostgresPredicateTranslator``) and the database returns only the rows that may match; unless the
    /// translation was exact, every row is then checked with StrataQuery's own evaluation, so that this store,
    /// the others and unsaved objects agree on every operator. A predicate translated exactly (no part left to memory) with no sort keys is counted and
    /// windowed by the database; otherwise sorting and the window are applied to the matching rows here, and a
    /// note is logged for the parts evaluated in memory.
    ///
    /// - Throws: ``PostgresStoreError``; `PredicateEvaluationError`; `CancellationError`.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        try request.checkCancellation()
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
        // The database does it all: counts, and windows without sort keys.
        if exact, request.sortKeys.isEmpty {
            if request.resultKind == .count {
                var sql = "SELECT count(*) FROM (SELECT 1 FROM \(table) t WHERE \(whereClause)"
                if request.fetchLimit > 0 { sql += " LIMIT \(request.fetchLimit)" }
                if request.fetchOffset > 0 { sql += " OFFSET \(request.fetchOffset)" }
                sql += ") AS matches"
                let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
                var answer = StoreFetchResult()
                answer.count = Int(try result.rows[0].decode(Int64.self))
                return answer
            }
        }
        var sql =
            "SELECT \(selectLists[ObjectIdentifier(request.entity.rootEntity)]!.sql) FROM \(table) t "
            + "WHERE \(whereClause) ORDER BY t.strata_row_id"
        var windowed = request
        // An exact translation has decided already: the rows are not checked again.
        if exact { windowed.predicate = nil }
        if exact, request.sortKeys.isEmpty {
            if request.fetchLimit > 0 { sql += " LIMIT \(request.fetchLimit)" }
            if request.fetchOffset > 0 { sql += " OFFSET \(request.fetchOffset)" }
            windowed.fetchLimit = 0
            windowed.fetchOffset = 0
        }
        let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
        let candidates = try decodeRows(
            result, root: request.entity.rootEntity, wanted: request.entity,
            includesSubentities: request.includesSubentities, countsReads: false)
        let reader = PostgresRowReader(store: self)
        let answer = try StoreQuery(reader: reader, request: windowed).run { body in
            for (rowID, row) in candidates {
                guard try body(StoredReference(entity: row.entity, rowID: rowID), row) else { break }
            }
        }
        if request.resultKind == .rows { reads.add(answer.rows.count, ordering: .relaxed) }
        return answer
    }
}
#endif
