#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataQuery

extension PostgresStore {
    /// Groups and aggregates in the server (`GROUP BY`): one row per group leaves it.
    ///
    /// Answered only when the result is exactly the context's own grouping (StrataQuery's collection operators):
    /// the predicate translates exactly; each group key is an attribute (not external, not transformable) or a
    /// to-one of the entity; `count` of rows or of an attribute's or to-one's values; `min` and `max` of
    /// integers, decimals and dates; `sum` of integers (exact while no partial sum can overflow: count ×
    /// largest magnitude below 2^63, checked per group in the same query) and `average` of integers (as a double
    /// sum divided by the count, as `avg(… :: float8)` computes it: exact while partial sums stay below 2^53,
    /// checked likewise). Anything else (doubles and decimals summed or averaged, whose rounding depends on the
    /// rows' order; strings' minimum, whose form may differ from the stored one) returns nil, and the context
    /// groups the rows itself.
    ///
    /// - Throws: ``PostgresStoreError``.
    func groups(
        of request: StoreFetchRequest, keys groupPaths: [QueryKeyPath], aggregates: [StoreFetchRequest.Aggregate]
    ) throws -> [StoreFetchResult.Group]? {
        var statement = PostgresStatement()
        var conditions = [entityCondition(request.entity, includesSubentities: request.includesSubentities)]
        if let predicate = request.predicate {
            var translator = PostgresPredicateTranslator(
                schema: schema, entity: request.entity, storeIdentifier: identifier, statement: statement)
            guard let translated = translator.translate(predicate), translated.exact else { return nil }
            statement = translator.statement
            conditions.append(translated.sql)
        }
        enum Key {
            case attribute(AttributeDescription)
            case toOne(RelationshipDescription)
        }
        func key(_ path: QueryKeyPath?) -> Key? {
            guard let name = path?.singleKey else { return nil }
            if let attribute = request.entity.attributesByName[name] {
                guard attribute.storageIndex != nil, !PostgresSchema.isExternal(attribute),
                    attribute.type != .transformable, attribute.type != .undefined
                else { return nil }
                return .attribute(attribute)
            }
            if let relationship = request.entity.relationshipsByName[name], !relationship.isToMany {
                return .toOne(relationship)
            }
            return nil
        }
        var selects: [String] = []
        var groupBy: [String] = []
        var keys: [Key] = []
        for path in groupPaths {
            guard let found = key(path) else { return nil }
            keys.append(found)
            switch found {
            case .attribute(let attribute):
                let column = "t.\(schema.column(attribute))"
                selects.append(column)
                groupBy.append(column)
            case .toOne(let relationship):
                let (id, entity) = schema.columns(relationship)
                selects += ["t.\(id)", "t.\(entity)"]
                groupBy += ["t.\(id)", "t.\(entity)"]
            }
        }
        // The group's row count, then per aggregate its expression, and a guard that must hold for the answer to be
        // exact.
        selects.append("count(*)")
        var guards: [String] = []
        var attributes: [AttributeDescription?] = []
        for aggregate in aggregates {
            if aggregate.function == .count {
                switch key(aggregate.keyPath) {
                case .attribute(let attribute)?: selects.append("count(t.\(schema.column(attribute)))")
                case .toOne(let relationship)?: selects.append("count(t.\(schema.columns(relationship).id))")
                case nil: return nil
                }
                attributes.append(nil)
                continue
            }
            guard case .attribute(let attribute)? = key(aggregate.keyPath) else { return nil }
            let isInteger = [.integer16, .integer32, .integer64].contains(attribute.type)
            let column = "t.\(schema.column(attribute))"
            let bound = "count(\(column)) * max(abs(\(column)::numeric))"
            switch aggregate.function {
            case .min, .max:
                guard isInteger || attribute.type == .decimal || attribute.type == .date else { return nil }
                selects.append("\(aggregate.function == .min ? "min" : "max")(\(column))")
            case .sum:
                guard isInteger else { return nil }
                selects.append("COALESCE(sum(\(column)), 0)::text")
                if attribute.type == .integer64 { guards.append("COALESCE(\(bound) < 9223372036854775808, TRUE)") }
            case .avg:
                guard isInteger else { return nil }
                selects.append("avg(\(column)::float8)")
                if attribute.type != .integer16 { guards.append("COALESCE(\(bound) < 9007199254740992, TRUE)") }
            default:
                return nil
            }
            attributes.append(attribute)
        }
        let guardColumn = guards.isEmpty ? "TRUE" : guards.joined(separator: " AND ")
        var sql =
            "SELECT \(selects.joined(separator: ", ")), \(guardColumn) FROM \(schema.table(of: request.entity)) t "
            + "WHERE \(conditions.joined(separator: " AND "))"
        // Groups in the order their first rows come in row order, as every store returns them.
        if !groupBy.isEmpty {
            sql += " GROUP BY \(groupBy.joined(separator: ", ")) ORDER BY min(t.strata_row_id)"
        }
        let result = try withConnection { try $0.run(sql, statement.binds, logger: logger) }
        let table = schema.tableName(of: request.entity)
        var groups: [StoreFetchResult.Group] = []
        for row in result.rows {
            let cells = row.makeRandomAccess()
            guard try cells[cells.count - 1].decode(Bool.self) else { return nil }
            var values: [QueryValue] = []
            var index = 0
            for found in keys {
                switch found {
                case .attribute(let attribute):
                    values.append(
                        try cells[index].attributeValue(of: attribute, table: table, rowID: 0)?.queryValue ?? .null)
                    index += 1
                case .toOne(let relationship):
                    let rowID = try cells[index].decode(Int64?.self)
                    let entityID = try cells[index + 1].decode(Int16?.self)
                    index += 2
                    guard let rowID, let entityID else {
                        values.append(.null)
                        continue
                    }
                    guard let entity = entitiesByID[UInt16(truncatingIfNeeded: entityID)],
                        entity.isKind(of: relationship.destinationEntity)
                    else {
                        throw PostgresStoreError.corruptRow(
                            table: table, rowID: 0,
                            reason: "\(relationship.name): entity \(entityID) is not its destination")
                    }
                    values.append(
                        .identity(
                            ObjectIdentity(
                                ManagedObjectID(entity: entity, storeIdentifier: identifier, rowID: UInt64(rowID)))))
                }
            }
            let rowCount = Int(try cells[index].decode(Int64.self))
            index += 1
            var folded: [QueryValue] = []
            for (aggregate, attribute) in zip(aggregates, attributes) {
                let cell = cells[index]
                index += 1
                switch aggregate.function {
                case .count:
                    folded.append(.int(try cell.decode(Int64.self)))
                case .sum:
                    guard let sum = Int64(try cell.decode(String.self)) else { return nil }
                    folded.append(.int(sum))
                case .avg:
                    folded.append(try cell.decode(Double?.self).map(QueryValue.double) ?? .null)
                default:
                    folded.append(try cell.attributeValue(of: attribute!, table: table, rowID: 0)?.queryValue ?? .null)
                }
            }
            groups.append(StoreFetchResult.Group(keys: values, rowCount: rowCount, aggregates: folded))
        }
        return groups
    }
}
#endif
