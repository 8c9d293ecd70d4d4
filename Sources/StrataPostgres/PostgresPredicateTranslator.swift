#if Postgres
import Foundation
import Strata
import StrataQuery

/// Turns a predicate into an SQL condition on a hierarchy's table (alias `t`) that every matching row meets.
///
/// Each part with an SQL form becomes SQL: comparisons of an attribute with a constant (`==`, `!=`, `<`, `<=`,
/// `>`, `>=`, `BETWEEN`, `IN`), `nil` tests, `BEGINSWITH`, `ENDSWITH`, `CONTAINS` and `LIKE` on strings, `[c]`
/// and `[d]` (``foldedCondition(_:column:_:_:options:)``), key paths through to-ones (an `EXISTS` on the
/// related table), `SELF` and to-ones compared with object IDs (`==`, `!=`, `IN`), `ANY`, `ALL` and `NONE` over
/// to-manys (`EXISTS` / `NOT EXISTS` through the foreign key or the join table), `@count`, `@sum`, `@avg`, `@min`
/// and `@max` over to-manys and `SUBQUERY(…).@count` (correlated subqueries), AND, OR, NOT, TRUEPREDICATE and
/// FALSEPREDICATE.
///
/// A translation is *exact* when the SQL holds for exactly the rows the predicate holds for (comparisons are
/// wrapped so that SQL's NULL never differs from StrataQuery's `nil` semantics, and strings compare in Unicode
/// normalization form C, as Swift compares them); a part without an exact form (string matching, whose grapheme
/// rules SQL does not know; `[c]` and `[d]` on strings that are not ASCII) narrows the rows without deciding, and a
/// part without any (`MATCHES`: PostgreSQL's regular expressions are not ICU's; sums and averages of doubles,
/// whose rounding depends on the order of the elements) is left out. The store then evaluates the whole predicate
/// in memory on the rows SQL returned, so the answer is always StrataQuery's.
struct PostgresPredicateTranslator {
    /// The SQL of a part and whether it decides the part exactly.
    struct Translation {
        var sql: String
        var exact: Bool
    }

    /// A row a key path starts from: its alias in the statement and its entity.
    struct Source {
        var alias: String
        var entity: EntityDescription
    }

    let schema: PostgresSchema
    /// The store whose object IDs name rows of this schema.
    let storeIdentifier: UUID
    var statement: PostgresStatement
    /// `SELF`: the fetched row, or a subquery's element.
    var source: Source
    /// Variables bound to rows: a `SUBQUERY`'s element.
    var rowVariables: [String: Source] = [:]
    /// The number of the next alias made (`a1`, `a2`, …), shared by nested translators.
    var aliasCount = 0

    init(schema: PostgresSchema, entity: EntityDescription, storeIdentifier: UUID, statement: PostgresStatement) {
        self.schema = schema
        self.storeIdentifier = storeIdentifier
        self.statement = statement
        self.source = Source(alias: "t", entity: entity)
    }

    var entity: EntityDescription { source.entity }

    /// A new table alias.
    mutating func makeAlias() -> String {
        aliasCount += 1
        return "a\(aliasCount)"
    }

    /// Runs `body` on a copy and keeps the copy's state (binds, aliases) only when it translated.
    mutating func attempt(_ body: (inout Self) -> Translation?) -> Translation? {
        var copy = self
        guard let translated = body(&copy) else { return nil }
        self = copy
        return translated
    }

    /// The condition, or nil when no part of the predicate has an SQL form.
    mutating func translate(_ predicate: ObjectPredicate) -> Translation? {
        switch predicate {
        case .constant(let value):
            return Translation(sql: value ? "TRUE" : "FALSE", exact: true)
        case .and(let parts):
            let translated = parts.map { part in attempt { $0.translate(part) } }
            let present = translated.compactMap { $0 }
            guard !present.isEmpty else { return nil }
            return Translation(
                sql: "(" + present.map(\.sql).joined(separator: " AND ") + ")",
                exact: present.count == parts.count && present.allSatisfy(\.exact))
        case .or(let parts):
            return attempt { copy in
                var translated: [Translation] = []
                for part in parts {
                    // A part that cannot narrow makes the whole disjunction unable to.
                    guard let translation = copy.translate(part) else { return nil }
                    translated.append(translation)
                }
                guard !translated.isEmpty else { return Translation(sql: "FALSE", exact: true) }
                return Translation(
                    sql: "(" + translated.map(\.sql).joined(separator: " OR ") + ")",
                    exact: translated.allSatisfy(\.exact))
            }
        case .not(let inner):
            // Only an exact condition can be negated: the negation of a superset is not one.
            return attempt { copy in
                guard let translated = copy.translate(inner), translated.exact else { return nil }
                return Translation(sql: "NOT \(translated.sql)", exact: true)
            }
        case .comparison(let comparison):
            return attempt { $0.translate(comparison) }
        }
    }

    private mutating func translate(_ comparison: PredicateComparison) -> Translation? {
        var left = comparison.left
        var right = comparison.right
        var op = comparison.operator
        if comparison.modifier == .direct, case .constant = left, !Self.isConstant(right) {
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
        switch comparison.modifier {
        case .direct:
            return directCondition(left, op, constant, options: comparison.options)
        case .any:
            return elementsCondition(left, op, constant, options: comparison.options, negated: false)
        case .all:
            // ALL: no element fails the comparison (true for none).
            guard
                let failing = elementsCondition(left, op, constant, options: comparison.options, negated: true),
                failing.exact
            else { return nil }
            return Translation(sql: "NOT \(failing.sql)", exact: true)
        }
    }

    private static func isConstant(_ expression: ObjectExpression) -> Bool {
        if case .constant = expression { return true }
        return false
    }

    /// The row a key path's base names: `SELF` or a variable bound to a subquery's element.
    func start(of base: ObjectExpression) -> Source? {
        switch base {
        case .evaluatedObject: return source
        case .variable(let name): return rowVariables[name]
        default: return nil
        }
    }

    /// A comparison without modifier: an attribute, a to-one or `SELF` (possibly through to-ones), an aggregate
    /// of a to-many or a subquery's count, with a constant.
    private mutating func directCondition(
        _ left: ObjectExpression, _ op: PredicateComparison.Operator, _ constant: QueryValue,
        options: ComparisonOptions
    ) -> Translation? {
        switch left {
        case .evaluatedObject, .variable:
            // SELF (or a subquery's element) compared with object IDs: the row's own ID.
            guard let row = start(of: left) else { return nil }
            return identityCondition("\(row.alias).strata_row_id", root: row.entity.rootEntity, op, constant)
        case .keyPath(let path, .subquery(let collection, let variable, let predicate)):
            guard path.components == [.collectionOperator(.count)] else { return nil }
            return subqueryCount(collection, variable: variable, predicate: predicate, op, constant)
        case .keyPath(let path, let base):
            guard let row = start(of: base) else { return nil }
            if path.components.contains(where: { if case .collectionOperator = $0 { true } else { false } }) {
                return aggregateCondition(from: row, path.components[...], op, constant, options: options)
            }
            let keys = path.components.compactMap { component -> String? in
                if case .key(let key) = component { key } else { nil }
            }
            return valueCondition(
                from: row, keys[...], op, constant, options: options, mode: .direct, crossedToMany: false)
        default:
            return nil
        }
    }

    /// How a key path's values are compared: as one value, or as elements of which one must match (`ANY`), or
    /// of which one must fail (the negation of `ALL`).
    enum Mode {
        case direct
        case any
        case anyFailing
    }

    /// The comparison of the value (or, through to-manys, the elements) at `keys` from `row` with a constant.
    ///
    /// A to-one step is an `EXISTS` on the related row: a missing one gives the key path the value nil, so the
    /// step is taken only where nil fails the comparison (or where no element is made at all, before any
    /// to-many under `ANY`/`ALL`). A to-many step (only under `ANY`/`ALL`) is an `EXISTS` over its members.
    mutating func valueCondition(
        from row: Source, _ keys: ArraySlice<String>, _ op: PredicateComparison.Operator, _ constant: QueryValue,
        options: ComparisonOptions, mode: Mode, crossedToMany: Bool
    ) -> Translation? {
        guard let key = keys.first else {
            // The elements of a to-many themselves, compared with object IDs.
            guard mode != .direct else { return nil }
            return leaf(
                identityCondition("\(row.alias).strata_row_id", root: row.entity.rootEntity, op, constant), mode)
        }
        let rest = keys.dropFirst()
        // Under ANY/ALL before any to-many, the value itself is the only element, and nil is none.
        let present: (String) -> String? = { column in
            mode != .direct && !crossedToMany ? column : nil
        }
        if let attribute = row.entity.attributesByName[key] {
            guard rest.isEmpty else { return nil }
            let column = "\(row.alias).\(schema.column(attribute))"
            return leaf(
                attributeCondition(attribute, column: column, op, constant, options: options), mode,
                unlessNil: present(column))
        }
        guard let relationship = row.entity.relationshipsByName[key] else { return nil }
        if relationship.isToMany {
            guard mode != .direct else { return nil }
            let member = makeAlias()
            let destination = Source(alias: member, entity: relationship.destinationEntity)
            let (from, link) = members(of: relationship, owner: row.alias, alias: member)
            guard
                let inner = valueCondition(
                    from: destination, rest, op, constant, options: options, mode: mode, crossedToMany: true)
            else { return nil }
            return Translation(sql: "EXISTS (SELECT 1 FROM \(from) WHERE \(link) AND \(inner.sql))", exact: inner.exact)
        }
        let (id, _) = schema.columns(relationship)
        if rest.isEmpty {
            // A to-one compared with nil or with object IDs: its row-ID column.
            let column = "\(row.alias).\(id)"
            if constant == .null, op == .equal || op == .notEqual {
                return leaf(
                    Translation(sql: "(\(column) IS \(op == .equal ? "" : "NOT ")NULL)", exact: true), mode,
                    unlessNil: present(column))
            }
            return leaf(
                identityCondition(column, root: relationship.destinationEntity.rootEntity, op, constant), mode,
                unlessNil: present(column))
        }
        // Through a to-one: where it is missing the value is nil, which meets only `== nil` and `!= value`
        // (those stay in memory); before a to-many nothing is compared at all.
        let nilIsCompared = mode == .direct || crossedToMany
        if nilIsCompared {
            guard mode != .anyFailing, constant != .null, op != .notEqual else { return nil }
        }
        let related = makeAlias()
        guard
            let inner = valueCondition(
                from: Source(alias: related, entity: relationship.destinationEntity), rest, op, constant,
                options: options, mode: mode, crossedToMany: crossedToMany)
        else { return nil }
        return Translation(
            sql: """
                EXISTS (SELECT 1 FROM \(schema.table(of: relationship.destinationEntity)) \(related) \
                WHERE \(related).strata_row_id = \(row.alias).\(id) AND \(inner.sql))
                """,
            exact: inner.exact)
    }

    /// A comparison of one value, negated when an element failing it is sought (only an exact one can be); with
    /// `column`, only where that column is not NULL (a nil value is no element under ANY/ALL).
    private func leaf(_ translation: Translation?, _ mode: Mode, unlessNil column: String? = nil) -> Translation? {
        guard var translation else { return nil }
        if mode == .anyFailing {
            guard translation.exact else { return nil }
            translation.sql = "NOT \(translation.sql)"
        }
        if let column { translation.sql = "(\(column) IS NOT NULL AND \(translation.sql))" }
        return translation
    }

    /// `ANY` (or the negation of `ALL`) over the elements a key path yields.
    private mutating func elementsCondition(
        _ left: ObjectExpression, _ op: PredicateComparison.Operator, _ constant: QueryValue,
        options: ComparisonOptions, negated: Bool
    ) -> Translation? {
        guard case .keyPath(let path, let base) = left, let row = start(of: base) else { return nil }
        let keys = path.components.compactMap { component -> String? in
            if case .key(let key) = component { key } else { nil }
        }
        guard keys.count == path.components.count else { return nil }
        return valueCondition(
            from: row, keys[...], op, constant, options: options, mode: negated ? .anyFailing : .any,
            crossedToMany: false)
    }

    /// The members of a to-many of the row `owner`: the `FROM` item (the destination's table as `alias`,
    /// through the join table when there is one) and the condition linking them to the owner.
    func members(
        of relationship: RelationshipDescription, owner: String, alias: String
    ) -> (from: String, link: String) {
        let table = schema.table(of: relationship.destinationEntity)
        switch relationship.storage {
        case .foreignKey:
            // A to-one: its one member.
            let (id, _) = schema.columns(relationship)
            return ("\(table) \(alias)", "\(alias).strata_row_id = \(owner).\(id)")
        case .inverseForeignKey(let inverse):
            let (id, _) = schema.columns(inverse)
            let kinds = inverse.entity.allEntitiesInHierarchyBelow.map { String($0.entityID) }
            return (
                "\(table) \(alias)",
                "\(alias).\(id) = \(owner).strata_row_id AND \(alias).strata_entity IN (\(kinds.joined(separator: ", ")))"
            )
        case .joinTable(let side):
            let columns = PostgresSchema.joinColumns(side)
            let link = alias + "_j"
            return (
                "\(schema.joinTable(side)) \(link) JOIN \(table) \(alias) ON \(alias).strata_row_id = \(link).\(columns.member)",
                "\(link).\(columns.source) = \(owner).strata_row_id"
            )
        }
    }

    /// `column` (a row ID) compared with object IDs: equal to one of this store's rows of hierarchy `root`.
    mutating func identityCondition(
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

    /// An attribute's column (or an expression of its values, such as a subquery's minimum) compared with a
    /// constant.
    mutating func attributeCondition(
        _ attribute: AttributeDescription, column: String, _ op: PredicateComparison.Operator,
        _ constant: QueryValue, options: ComparisonOptions
    ) -> Translation? {
        guard attribute.storageIndex != nil, attribute.type != .transformable, !PostgresSchema.isExternal(attribute)
        else { return nil }
        let isString = attribute.type == .string
        if options.contains(.caseInsensitive) || options.contains(.diacriticInsensitive) {
            guard isString else { return nil }
            return foldedCondition(attribute, column: column, op, constant, options: options)
        }
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
            // PostgreSQL's regular expressions (Henry Spencer's) are not ICU's: classes (`\p{…}`, `\w` beyond
            // ASCII), possessive quantifiers, look-behind and case folding differ, so no form agrees.
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

    /// A LIKE pattern (`*` any characters, `?` one, `\` making the next character literal) as an SQL pattern
    /// that matches at least every string it matches: `*` is `%`, `?` is `_%` (one character of Swift's is one
    /// or more code points, as a flag is two), and literal `%`, `_` and `\` are escaped.
    static func likePattern(_ pattern: String) -> String {
        var result = ""
        var escaping = false
        func literal(_ character: Character) {
            if character == "%" || character == "_" || character == "\\" { result += "\\" }
            result.append(character)
        }
        for character in pattern {
            if escaping {
                literal(character)
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": result += "%"
            case "?": result += "_%"
            default: literal(character)
            }
        }
        if escaping { literal("\\") }
        return result
    }
}
#endif
