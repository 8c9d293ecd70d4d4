#if Postgres
import Foundation
import Strata
import StrataQuery

/// Turns a predicate into an SQL condition on a hierarchy's table (alias `t`) that every matching row meets.
///
/// Each part with an SQL form becomes SQL: comparisons of an attribute with a constant (`==`, `!=`, `<`, `<=`,
/// `>`, `>=`, `BETWEEN`, `IN`), `nil` tests, `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `LIKE` on strings, key
/// paths through a to-one (an `EXISTS` on the related table), `SELF` and to-ones compared with object IDs (`==`,
/// `!=`, `IN`), AND, OR, NOT, TRUEPREDICATE and FALSEPREDICATE. A translation is *exact* when the SQL holds for exactly the rows the
/// predicate holds for (comparisons are wrapped so that SQL's NULL never differs from StrataQuery's `nil`
/// semantics, and strings compare in Unicode normalization form C, as Swift compares them); a part without an
/// exact form (string matching, whose grapheme rules SQL does not know) narrows the rows without deciding, and a
/// part without any (key paths through to-manys, ANY/ALL, SUBQUERY, aggregates, `MATCHES`, `[c]` and `[d]`)
/// is left out. The store then evaluates the whole predicate in memory on the rows SQL returned, so the
/// answer is always StrataQuery's.
struct PostgresPredicateTranslator {
    /// The SQL of a part and whether it decides the part exactly.
    struct Translation {
        var sql: String
        var exact: Bool
    }

    let schema: PostgresSchema
    let entity: EntityDescription
    /// The store whose object IDs name rows of this schema.
    let storeIdentifier: UUID
    var statement: PostgresStatement

    /// The condition, or nil when no part of the predicate has an SQL form.
    mutating func translate(_ predicate: ObjectPredicate) -> Translation? {
        switch predicate {
        case .constant(let value):
            return Translation(sql: value ? "TRUE" : "FALSE", exact: true)
        case .and(let parts):
            let translated = parts.map { translate($0) }
            let present = translated.compactMap { $0 }
            guard !present.isEmpty else { return nil }
            return Translation(
                sql: "(" + present.map(\.sql).joined(separator: " AND ") + ")",
                exact: present.count == parts.count && present.allSatisfy(\.exact))
        case .or(let parts):
            var translated: [Translation] = []
            for part in parts {
                // A part that cannot narrow makes the whole disjunction unable to.
                guard let translation = translate(part) else { return nil }
                translated.append(translation)
            }
            guard !translated.isEmpty else { return Translation(sql: "FALSE", exact: true) }
            return Translation(
                sql: "(" + translated.map(\.sql).joined(separator: " OR ") + ")", exact: translated.allSatisfy(\.exact))
        case .not(let inner):
            // Only an exact condition can be negated: the negation of a superset is not one.
            var copy = self
            guard let translated = copy.translate(inner), translated.exact else { return nil }
            self = copy
            return Translation(sql: "NOT \(translated.sql)", exact: true)
        case .comparison(let comparison):
            var copy = self
            guard let translated = copy.translate(comparison) else { return nil }
            self = copy
            return translated
        }
    }

    private mutating func translate(_ comparison: PredicateComparison) -> Translation? {
        guard comparison.modifier == .direct else { return nil }
        var left = comparison.left
        var right = comparison.right
        var op = comparison.operator
        if case .constant = left, case .keyPath = right {
            swap(&left, &right)
            switch op {
            case .lessThan: op = .greaterThan
            case .lessThanOrEqual: op = .greaterThanOrEqual
            case .greaterThan: op = .lessThan
            case .greaterThanOrEqual: op = .lessThanOrEqual
            case .equal, .notEqual: break
            default: return nil
            }
        }
        guard case .constant(let constant) = right else { return nil }
        // SELF compared with object IDs: the row's own ID.
        if case .evaluatedObject = left {
            return identityCondition("t.strata_row_id", root: entity.rootEntity, op, constant)
        }
        guard case .keyPath(let path, .evaluatedObject) = left else { return nil }
        let keys = path.components.compactMap { component -> String? in
            if case .key(let key) = component { key } else { nil }
        }
        guard keys.count == path.components.count, let first = keys.first else { return nil }
        if keys.count == 1, let relationship = entity.relationshipsByName[first], !relationship.isToMany {
            // A to-one compared with nil or with object IDs: its row-ID column.
            let column = "t." + schema.columns(relationship).id
            if constant == .null, op == .equal || op == .notEqual {
                return Translation(sql: "(\(column) IS \(op == .equal ? "" : "NOT ")NULL)", exact: true)
            }
            return identityCondition(column, root: relationship.destinationEntity.rootEntity, op, constant)
        }
        if keys.count == 2, let relationship = entity.relationshipsByName[first], !relationship.isToMany {
            // A key path through a to-one: the related row, when there is one, must meet the condition. Without
            // one the key path is nil, which meets only `== nil` and `!= value`: those stay in memory.
            let destination = relationship.destinationEntity
            guard constant != .null, op != .notEqual, let attribute = destination.attributesByName[keys[1]] else {
                return nil
            }
            var inner = PostgresPredicateTranslator(
                schema: schema, entity: destination, storeIdentifier: storeIdentifier, statement: statement)
            guard
                let condition = inner.attributeCondition(
                    attribute, column: "d." + schema.column(attribute), op, constant, options: comparison.options)
            else { return nil }
            statement = inner.statement
            return Translation(
                sql: """
                    EXISTS (SELECT 1 FROM \(schema.table(of: destination)) d \
                    WHERE d.strata_row_id = t.\(schema.columns(relationship).id) AND \(condition.sql))
                    """,
                exact: condition.exact)
        }
        guard keys.count == 1, let attribute = entity.attributesByName[first] else { return nil }
        return attributeCondition(
            attribute, column: "t." + schema.column(attribute), op, constant, options: comparison.options)
    }

    /// `column` (a row ID) compared with object IDs: equal to one of this store's rows of hierarchy `root`.
    private mutating func identityCondition(
        _ column: String, root: EntityDescription, _ op: PredicateComparison.Operator, _ constant: QueryValue
    ) -> Translation? {
        func rowID(_ value: QueryValue) -> UInt64?? {
            guard case .identity(let identity) = value, let id = identity.base as? ManagedObjectID else { return nil }
            // An ID of another store, another hierarchy or a temporary one is no row here.
            guard id.storeIdentifier == storeIdentifier, id.entity.rootEntity === root, let row = id.rowID else {
                return .some(nil)
            }
            return .some(row)
        }
        switch (op, constant) {
        case (.equal, _), (.notEqual, _):
            guard let found = rowID(constant) else { return nil }
            guard let row = found else { return Translation(sql: op == .equal ? "FALSE" : "TRUE", exact: true) }
            let value = statement.bind(Int64(bitPattern: row))
            return Translation(
                sql: op == .equal ? "COALESCE(\(column) = \(value), FALSE)" : "(\(column) IS DISTINCT FROM \(value))",
                exact: true)
        case (.in, .array(let elements)):
            var rows: [Int64] = []
            for element in elements {
                guard let found = rowID(element) else { return nil }
                if let row = found { rows.append(Int64(bitPattern: row)) }
            }
            guard !rows.isEmpty else { return Translation(sql: "FALSE", exact: true) }
            return Translation(sql: "COALESCE(\(column) = ANY(\(statement.bind(rows))), FALSE)", exact: true)
        default:
            return nil
        }
    }

    /// An attribute's column compared with a constant.
    mutating func attributeCondition(
        _ attribute: AttributeDescription, column: String, _ op: PredicateComparison.Operator,
        _ constant: QueryValue, options: ComparisonOptions
    ) -> Translation? {
        guard attribute.storageIndex != nil, attribute.type != .transformable, !PostgresSchema.isExternal(attribute)
        else { return nil }
        let isString = attribute.type == .string
        guard options.subtracting(.normalized).isEmpty else { return nil }
        switch op {
        case .equal, .notEqual:
            if constant == .null {
                return Translation(sql: "(\(column) IS \(op == .equal ? "" : "NOT ")NULL)", exact: true)
            }
            guard let value = bind(constant, for: attribute) else { return nil }
            let (lhs, rhs) = isString ? normalized(column, value, constant) : (column, value)
            return Translation(
                sql: op == .equal ? "COALESCE(\(lhs) = \(rhs), FALSE)" : "(\(lhs) IS DISTINCT FROM \(rhs))",
                exact: true)
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard constant != .null, attribute.type != .binaryData, attribute.type != .uuid,
                attribute.type != .boolean, let value = bind(constant, for: attribute)
            else { return nil }
            let symbol = [.lessThan: "<", .lessThanOrEqual: "<=", .greaterThan: ">", .greaterThanOrEqual: ">="][op]!
            let (lhs, rhs) = isString ? ("normalize(\(column), NFC)", "normalize(\(value), NFC)") : (column, value)
            return Translation(sql: "COALESCE(\(lhs) \(symbol) \(rhs), FALSE)", exact: true)
        case .between:
            guard case .array(let bounds) = constant, bounds.count == 2, bounds.allSatisfy({ $0 != .null }),
                attribute.type != .binaryData, attribute.type != .uuid, attribute.type != .boolean,
                let lower = bind(bounds[0], for: attribute), let upper = bind(bounds[1], for: attribute)
            else { return nil }
            let value = isString ? "normalize(\(column), NFC)" : column
            let (low, high) = isString ? ("normalize(\(lower), NFC)", "normalize(\(upper), NFC)") : (lower, upper)
            return Translation(sql: "COALESCE(\(value) >= \(low) AND \(value) <= \(high), FALSE)", exact: true)
        case .in:
            guard case .array(let elements) = constant else { return nil }
            guard !elements.isEmpty else { return Translation(sql: "FALSE", exact: true) }
            var placeholders: [String] = []
            for element in elements {
                guard element != .null, let value = bind(element, for: attribute) else { return nil }
                placeholders.append(isString ? "normalize(\(value), NFC)" : value)
            }
            let value = isString ? "normalize(\(column), NFC)" : column
            return Translation(
                sql: "COALESCE(\(value) IN (\(placeholders.joined(separator: ", "))), FALSE)", exact: true)
        case .beginsWith, .endsWith, .contains, .like:
            guard isString, case .string(let text) = constant else { return nil }
            let value = statement.bind(text)
            let subject = "normalize(\(column), NFC)"
            let pattern = "normalize(\(value), NFC)"
            // Swift matches whole characters; bytes of the normalized forms match whenever it does (a superset).
            switch op {
            case .beginsWith:
                return Translation(sql: "COALESCE(starts_with(\(subject), \(pattern)), FALSE)", exact: false)
            case .endsWith:
                return Translation(
                    sql: "COALESCE(right(\(subject), char_length(\(pattern))) = \(pattern), FALSE)", exact: false)
            case .contains: return Translation(sql: "COALESCE(strpos(\(subject), \(pattern)) > 0, FALSE)", exact: false)
            default:
                let like = statement.bind(Self.likePattern(text))
                return Translation(sql: "COALESCE(\(subject) LIKE normalize(\(like), NFC), FALSE)", exact: false)
            }
        case .matches:
            return nil
        }
    }

    /// For strings, the comparison in normalization form C; a plain column when the constant is ASCII (no other
    /// string is canonically equivalent to an ASCII one), so that the column's indexes serve.
    private func normalized(_ column: String, _ value: String, _ constant: QueryValue) -> (String, String) {
        if case .string(let text) = constant, text.utf8.allSatisfy({ $0 < 0x80 }) { return (column, value) }
        return ("normalize(\(column), NFC)", "normalize(\(value), NFC)")
    }

    /// Binds a constant as the attribute's column holds it; nil when it is not a value of that column (the
    /// comparison is then left to memory, which knows how numbers of different kinds compare).
    private mutating func bind(_ constant: QueryValue, for attribute: AttributeDescription) -> String? {
        if attribute.type == .float, case .double(let number) = constant, Double(Float(number)) != number {
            return nil
        }
        if attribute.type == .float || attribute.type == .double, case .int(let number) = constant,
            Int64(exactly: Double(number)) != number
        {
            return nil
        }
        guard let value = AttributeValue(constant, type: attribute.type) else { return nil }
        if case .boolean = value, case .int(let number) = constant, number != 0 && number != 1 { return nil }
        return try? statement.bind(value, of: attribute)
    }

    /// A LIKE pattern (`*` any characters, `?` one) as SQL's (`%`, `_`, with `\` escaping).
    static func likePattern(_ pattern: String) -> String {
        var result = ""
        for character in pattern {
            switch character {
            case "*": result += "%"
            case "?": result += "_"
            case "%", "_", "\\": result += "\\" + String(character)
            default: result.append(character)
            }
        }
        return result
    }
}
#endif
