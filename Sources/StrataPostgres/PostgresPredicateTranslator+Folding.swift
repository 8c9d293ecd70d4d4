#if Postgres
import Foundation
import Strata
import StrataQuery

extension PostgresPredicateTranslator {
    /// `[c]` and `[d]` on a string column: decided in SQL for ASCII values, kept for memory otherwise.
    ///
    /// Swift folds case with Unicode's full case folding ("ß" is "ss", the Kelvin sign "k", "ſ" "s", final
    /// sigma "σ", "ﬁ" "fi") and diacritics with Foundation's tables; PostgreSQL 15 has neither without extensions
    /// (`lower()` maps a character to one character, `unaccent` is an extension with a table of its own), so no
    /// SQL form agrees on every string. On an ASCII string both folds are plain ASCII lowering (case) and nothing
    /// (diacritics), which `lower(… COLLATE "C")` does exactly: rows whose value is ASCII (as many bytes as
    /// characters) are compared there with the constant folded by Swift; every other row is kept for memory to
    /// decide (a non-ASCII value may fold to an ASCII one: "K"). The translation narrows, never decides.
    mutating func foldedCondition(
        _ attribute: AttributeDescription, column: String, _ op: PredicateComparison.Operator,
        _ constant: QueryValue, options: ComparisonOptions
    ) -> Translation? {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        func fold(_ value: QueryValue) -> QueryValue? {
            switch value {
            case .null: return .null
            case .string(let string): return .string(string.folding(options: folding, locale: nil))
            case .array(let elements):
                var folded: [QueryValue] = []
                for element in elements {
                    guard let one = fold(element) else { return nil }
                    folded.append(one)
                }
                return .array(folded)
            default: return nil
            }
        }
        guard let folded = fold(constant) else { return nil }
        let subject = options.contains(.caseInsensitive) ? "lower(\(column) COLLATE \"C\")" : column
        let plain = options.subtracting([.caseInsensitive, .diacriticInsensitive])
        guard let ascii = attributeCondition(attribute, column: subject, op, folded, options: plain) else { return nil }
        return Translation(
            sql: "(CASE WHEN octet_length(\(column)) <> char_length(\(column)) THEN TRUE ELSE \(ascii.sql) END)",
            exact: false)
    }
}
#endif
