#if Postgres
import Foundation
import Strata
import StrataQuery

/// Turns a predicate into an SQL condition on a hierarchy's table (alias `t`) that every matching row meets.
///
/// Each part with an SQL form becomes SQL: comparisons of an attribute with a constant (`==`, `!=`, `<`, `<=`,
/// `>`, `>=`, `BETWEEN`, `IN`), `nil` tests, `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `LIKE` on strings, AND, OR,
/// NOT, TRUEPREDICATE and FALSEPREDICATE. A translation is *exact* when the SQL holds for exactly the rows the
/// predicate holds for (comparisons are wrapped so that SQL's NULL never differs from StrataQuery's `nil`
/// semantics, and strings compare in Unicode normalization form C, as Swift compares them); a part without an
/// exact form (string matching, whose grapheme rules SQL does not know) narrows the rows without deciding, and a
/// part without any (key paths through relationships, ANY/ALL, SUBQUERY, aggregates, `MATCHES`, `[c]` and `[d]`)
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
        guard case .keyPath(let path, .evaluatedObject) = left, let key = path.singleKey,
            case .constant(let constant) = right, let attribute = entity.attributesByName[key],
            attribute.storageIndex != nil, attribute.type != .transformable, !PostgresSchema.isExternal(attribute)
        else { return nil }
        let column = "t." + schema.column(attribute)
        let isString = attribute.type == .string
        let options = comparison.options.subtracting(.normalized)
        guard options.isEmpty else { return nil }
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
