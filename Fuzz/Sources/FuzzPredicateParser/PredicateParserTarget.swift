import Foundation
import StrataQuery

// FuzzPredicateParser: its harness lives here rather than in FuzzSupport, which depends on the whole engine and
// object graph; this target depends on StrataQuery alone, so it builds in seconds and whatever else is being
// changed in the tree.

/// The object predicates are evaluated on: a small record with a to-one (`manager`), a to-many (`reports`), a
/// nil value and a collection of strings. Strings are short, so that `MATCHES` stays fast on them.
let fuzzObject: [String: QueryValue] = [
    "name": "Ada", "age": 36, "score": 2.5, "nick": .null, "tags": ["a", "b"], "flag": true,
    "born": .date(Date(timeIntervalSinceReferenceDate: 1000)),
    "manager": ["name": "Bob", "age": 50, "reports": [["name": "Ada", "age": 36]]],
    "reports": [["name": "Cy", "age": 20, "tags": ["c"]], ["name": "Dé", "age": .null, "tags": []]],
]

/// Arguments for the `%` specifiers an input uses: a key path for `%K`, numbers for `%d`/`%f`, and values with
/// literal forms (so that descriptions parse back).
let fuzzArguments: [QueryValue] = ["name", 3, 2.5, ["a", 1, .null], .null, "reports.@count"]

/// Variables an evaluation binds (`$v`, `$x`); any other variable is an `unboundVariable` error.
let fuzzVariables: [String: QueryValue] = ["v": 1, "x": "a"]

/// Stops the process on a broken invariant so that libFuzzer records the input (as `fuzzFail` in FuzzSupport).
func fuzzFail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    FileHandle.standardError.write(Data("FUZZ FINDING: \(message)\n".utf8))
    fatalError(message, file: file, line: line)
}

/// FuzzPredicateParser: arbitrary UTF-8 through `PredicateParser.parse`.
///
/// Checks: nothing traps (no stack overflow either: nesting is limited); a malformed string throws a
/// `PredicateSyntaxError` whose offset is within the string; a parsed predicate's `description` parses back to an
/// equal predicate; evaluation on ``fuzzObject`` returns or throws a `PredicateEvaluationError` (typed throws
/// makes that a compile-time fact; the harness checks it does not trap).
public func fuzzPredicateParser(_ data: UnsafeRawBufferPointer) {
    guard let format = String(validating: data, as: UTF8.self) else { return }
    let predicate: ObjectPredicate
    do {
        predicate = try PredicateParser.parse(format, arguments: fuzzArguments)
    } catch {
        if error.offset < 0 || error.offset > format.count {
            fuzzFail("error offset \(error.offset) outside a string of \(format.count) characters: \(error)")
        }
        return
    }
    let description = predicate.description
    do {
        let reparsed = try PredicateParser.parse(description)
        if reparsed != predicate {
            fuzzFail("description parses back differently:\n\(format)\n\(description)\n\(reparsed)")
        }
    } catch {
        // `NONE` prints as `NOT ANY`, one level deeper: an input at the nesting limit may print beyond it.
        if case .nestingTooDeep = error.reason, format.uppercased().contains("NONE") {
        } else {
            fuzzFail("description does not parse: \(error)\n\(format)\n\(description)")
        }
    }
    guard isCheapToEvaluate(predicate) else { return }
    _ = try? predicate.evaluate(with: fuzzObject, variables: fuzzVariables)
    _ = try? SortKey(QueryKeyPath("reports.@max.age")).value(of: fuzzObject)
}

/// Whether evaluation is bounded: nested subqueries multiply (each evaluates its predicate once per element of
/// its collection, as `NSPredicate` does), and an ICU regular expression can backtrack exponentially on a long
/// subject. Neither is a bug to report; both would be timeouts.
func isCheapToEvaluate(_ predicate: ObjectPredicate) -> Bool {
    var budget = Budget()
    budget.visit(predicate, subqueryDepth: 0)
    return budget.maximumSubqueryDepth <= 2 && !(budget.hasMatches && budget.longestString > 16)
        && budget.longestString <= 4096
}

struct Budget {
    var maximumSubqueryDepth = 0
    var hasMatches = false
    var longestString = 0

    mutating func visit(_ predicate: ObjectPredicate, subqueryDepth: Int) {
        switch predicate {
        case .constant: break
        case .comparison(let comparison):
            if comparison.operator == .matches { hasMatches = true }
            visit(comparison.left, subqueryDepth: subqueryDepth)
            visit(comparison.right, subqueryDepth: subqueryDepth)
        case .and(let terms), .or(let terms): for term in terms { visit(term, subqueryDepth: subqueryDepth) }
        case .not(let inner): visit(inner, subqueryDepth: subqueryDepth)
        }
    }

    mutating func visit(_ expression: ObjectExpression, subqueryDepth: Int) {
        switch expression {
        case .constant(let value): visit(value)
        case .evaluatedObject, .variable: break
        case .keyPath(_, let base): visit(base, subqueryDepth: subqueryDepth)
        case .aggregate(let elements): for element in elements { visit(element, subqueryDepth: subqueryDepth) }
        case .subquery(let collection, _, let predicate):
            maximumSubqueryDepth = max(maximumSubqueryDepth, subqueryDepth + 1)
            visit(collection, subqueryDepth: subqueryDepth + 1)
            visit(predicate, subqueryDepth: subqueryDepth + 1)
        }
    }

    mutating func visit(_ value: QueryValue) {
        switch value {
        case .string(let string): longestString = max(longestString, string.unicodeScalars.count)
        case .array(let values): for value in values { visit(value) }
        default: break
        }
    }
}
