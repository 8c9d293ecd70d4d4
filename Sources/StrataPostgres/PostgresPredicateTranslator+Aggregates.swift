#if Postgres
import Foundation
import Strata
import StrataQuery

extension PostgresPredicateTranslator {
    /// What an SQL expression of numbers holds: integers (exact, `bigint` or `numeric`) or doubles.
    enum NumberKind {
        case integer
        case double
    }

    /// `@count`, `@sum`, `@avg`, `@min` and `@max` of a to-many (`employees.@sum.salary`, possibly after to-ones:
    /// `department.employees.@count`) compared with a constant, as a correlated subquery.
    ///
    /// Each agrees with StrataQuery's arithmetic: `@count` always; `@min` and `@max` of integers, decimals, dates
    /// and strings (in normalization form C, by code point); `@sum` of integers, which StrataQuery adds as
    /// integers unless a partial sum overflows (then as doubles, in the elements' order): exact for 16- and 32-bit
    /// attributes (no overflow below 2^32 elements), and for 64-bit ones decided only where no partial sum can
    /// overflow (count × largest magnitude below 2^63); `@avg` of integers, which StrataQuery computes as a double
    /// sum divided by the count, as `avg(… :: float8)` does: exact while no partial sum reaches 2^53 (always for
    /// 16-bit attributes below 2^37 elements, otherwise checked per row like the 64-bit sum). Doubles, floats
    /// and decimals in `@sum` and `@avg` (rounding that depends on the elements' order), Booleans, UUIDs and
    /// binaries stay in memory.
    mutating func aggregateCondition(
        from row: Source, _ components: ArraySlice<QueryKeyPath.Component>, _ op: PredicateComparison.Operator,
        _ constant: QueryValue, options: ComparisonOptions
    ) -> Translation? {
        guard case .key(let key) = components.first, let relationship = row.entity.relationshipsByName[key] else {
            return nil
        }
        let rest = components.dropFirst()
        if !relationship.isToMany {
            // A missing to-one makes the aggregate nil, which meets only `== nil` and `!= value`.
            guard constant != .null, op != .notEqual else { return nil }
            let related = makeAlias()
            let (id, _) = schema.columns(relationship)
            guard
                let inner = aggregateCondition(
                    from: Source(alias: related, entity: relationship.destinationEntity), rest, op, constant,
                    options: options)
            else { return nil }
            return Translation(
                sql: """
                    EXISTS (SELECT 1 FROM \(schema.table(of: relationship.destinationEntity)) \(related) \
                    WHERE \(related).strata_row_id = \(row.alias).\(id) AND \(inner.sql))
                    """,
                exact: inner.exact)
        }
        guard case .collectionOperator(let aggregate) = rest.first else { return nil }
        let member = makeAlias()
        let (from, link) = members(of: relationship, owner: row.alias, alias: member)
        let afterOperator = rest.dropFirst()
        if aggregate == .count {
            guard afterOperator.isEmpty else { return nil }
            return numberCondition("(SELECT count(*) FROM \(from) WHERE \(link))", .integer, op, constant)
        }
        guard afterOperator.count == 1, case .key(let name) = afterOperator.first,
            let attribute = relationship.destinationEntity.attributesByName[name], attribute.storageIndex != nil,
            !PostgresSchema.isExternal(attribute)
        else { return nil }
        let column = "\(member).\(schema.column(attribute))"
        let isInteger = [.integer16, .integer32, .integer64].contains(attribute.type)
        switch aggregate {
        case .min, .max:
            guard isInteger || [.decimal, .date, .string].contains(attribute.type) else { return nil }
            let value = attribute.type == .string ? "normalize(\(column), NFC)" : column
            return attributeCondition(
                attribute, column: "(SELECT \(aggregate.rawValue)(\(value)) FROM \(from) WHERE \(link))", op, constant,
                options: options)
        case .sum:
            guard isInteger else { return nil }
            let sum = "(SELECT COALESCE(sum(\(column)), 0) FROM \(from) WHERE \(link))"
            guard let condition = numberCondition(sum, .integer, op, constant) else { return nil }
            if attribute.type != .integer64 { return condition }
            return guarded(condition, column: column, from: from, link: link, below: "9223372036854775808")
        case .avg:
            guard isInteger else { return nil }
            let average = "(SELECT avg(\(column)::float8) FROM \(from) WHERE \(link))"
            guard let condition = numberCondition(average, .double, op, constant) else { return nil }
            if attribute.type == .integer16 { return condition }
            return guarded(condition, column: column, from: from, link: link, below: "9007199254740992")
        default:
            return nil
        }
    }

    /// A condition decided only where no partial sum of the members' values can reach `below` (count times the
    /// largest magnitude is under it); other rows are kept for memory.
    private func guarded(
        _ condition: Translation, column: String, from: String, link: String, below limit: String
    ) -> Translation {
        let bound = "COALESCE((SELECT count(\(column)) * max(abs(\(column)::numeric)) FROM \(from) WHERE \(link)), 0)"
        return Translation(sql: "(CASE WHEN \(bound) < \(limit) THEN \(condition.sql) ELSE TRUE END)", exact: false)
    }

    /// `SUBQUERY(collection, $variable, predicate).@count` compared with a constant: the collection is a to-many,
    /// possibly after to-ones (a missing one gives no elements, so a count of 0), and the predicate must translate
    /// exactly with `$variable` (and `SELF`) naming the element.
    mutating func subqueryCount(
        _ collection: ObjectExpression, variable: String, predicate: ObjectPredicate,
        _ op: PredicateComparison.Operator, _ constant: QueryValue
    ) -> Translation? {
        guard case .keyPath(let path, let base) = collection, var owner = start(of: base) else { return nil }
        var froms: [String] = []
        var links: [String] = []
        for (index, component) in path.components.enumerated() {
            guard case .key(let key) = component, let relationship = owner.entity.relationshipsByName[key],
                relationship.isToMany == (index == path.components.count - 1)
            else { return nil }
            let alias = makeAlias()
            let (from, link) = members(of: relationship, owner: owner.alias, alias: alias)
            froms.append(from)
            links.append(link)
            owner = Source(alias: alias, entity: relationship.destinationEntity)
        }
        var inner = self
        inner.source = owner
        inner.rowVariables[variable] = owner
        guard let condition = inner.translate(predicate), condition.exact else { return nil }
        statement = inner.statement
        aliasCount = inner.aliasCount
        let count =
            "(SELECT count(*) FROM \(froms.joined(separator: ", ")) WHERE \(links.joined(separator: " AND ")) "
            + "AND \(condition.sql))"
        return numberCondition(count, .integer, op, constant)
    }

    /// A numeric expression (never NULL for `.integer`; NULL for an empty average) compared with a number, as
    /// StrataQuery compares numbers: integers with doubles exactly (a double is bound as the decimal that
    /// names it, below 2^53), doubles with doubles; NaN, Booleans and decimals stay in memory.
    mutating func numberCondition(
        _ expression: String, _ kind: NumberKind, _ op: PredicateComparison.Operator, _ constant: QueryValue
    ) -> Translation? {
        func bound(_ value: QueryValue) -> String? {
            switch (kind, value) {
            case (.integer, .int(let number)):
                return statement.bind(number)
            case (.integer, .double(let number)):
                guard number.isFinite, abs(number) < 0x1p53 else { return nil }
                return statement.bindNumeric("\(number)")
            case (.double, .int(let number)):
                guard number.magnitude <= 1 << 53 else { return nil }
                return statement.bind(Double(number))
            case (.double, .double(let number)):
                guard !number.isNaN else { return nil }
                return statement.bind(number)
            default:
                return nil
            }
        }
        switch op {
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard let value = bound(constant) else { return nil }
            if op == .notEqual { return Translation(sql: "(\(expression) IS DISTINCT FROM \(value))", exact: true) }
            let symbol = [
                .equal: "=", .lessThan: "<", .lessThanOrEqual: "<=", .greaterThan: ">", .greaterThanOrEqual: ">=",
            ][op]!
            return Translation(sql: "COALESCE(\(expression) \(symbol) \(value), FALSE)", exact: true)
        case .between:
            guard case .array(let bounds) = constant, bounds.count == 2, let low = bound(bounds[0]),
                let high = bound(bounds[1])
            else { return nil }
            return Translation(
                sql: "COALESCE(\(expression) BETWEEN \(low) AND \(high), FALSE)", exact: true)
        case .in:
            guard case .array(let elements) = constant else { return nil }
            guard !elements.isEmpty else { return Translation(sql: "FALSE", exact: true) }
            var values: [String] = []
            for element in elements {
                guard let value = bound(element) else { return nil }
                values.append(value)
            }
            return Translation(
                sql: "COALESCE(\(expression) IN (\(values.joined(separator: ", "))), FALSE)", exact: true)
        default:
            return nil
        }
    }
}
#endif
