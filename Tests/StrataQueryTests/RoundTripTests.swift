import Foundation
import StrataQuery
import Testing

/// `description` writes a format string that parses back to an equal predicate: checked on generated
/// predicates of the shapes the parser makes.
@Suite struct RoundTripTests {
    /// Makes random predicates from a seeded generator.
    struct Generator {
        var random: SplitMix64

        static let keys = ["name", "age", "manager", "reports", "x_1", "Ünïcødé", "名前", "size", "in", "self", "ANY"]

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func bool() -> Bool { Bool.random(using: &random) }
        mutating func pick<T>(_ elements: [T]) -> T { elements[int(0...elements.count - 1)] }

        mutating func string() -> String {
            let pool: [Unicode.Scalar] = [
                "a", "Z", " ", "'", "\"", "\\", "%", "@", "*", "?", "\n", "\t", "\u{0}", "\u{7F}", "\u{1}", "é", "e",
                "\u{301}", "😀", "名", "$", "u",
            ]
            var scalars = String.UnicodeScalarView()
            for _ in 0..<int(0...8) { scalars.append(pick(pool)) }
            return String(scalars)
        }

        mutating func double() -> Double {
            switch int(0...5) {
            case 0:
                return pick([
                    0.0, -0.0, 1.5, -2.25, 1e20, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity,
                    -.infinity,
                ])
            case 1: return Double(int(-1000...1000))
            default:
                var value = Double(bitPattern: random.next())
                while value.isNaN { value = Double(bitPattern: random.next()) }
                return value
            }
        }

        mutating func scalar() -> QueryValue {
            switch int(0...11) {
            case 0: return .null
            case 1: return .bool(bool())
            case 2: return .int(pick([0, 1, -1, .max, .min, Int64(int(-99999...99999))]))
            case 3: return .double(double())
            case 4, 5: return .string(string())
            case 6:
                return .date(
                    Date(timeIntervalSinceReferenceDate: double().isFinite ? Double(int(-9999...9999)) / 8 : 0))
            case 7:
                return .uuid(
                    UUID(
                        uuid: (
                            UInt8(int(0...255)), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(int(0...255))
                        )))
            case 8: return .data(Data((0..<int(0...6)).map { _ in UInt8(int(0...255)) }))
            case 9:
                return .decimal(
                    Decimal(sign: bool() ? .plus : .minus, exponent: int(-6...6), significand: Decimal(int(0...99999))))
            case 10:
                return .url(URL(string: pick(["https://example.com/a?b=c", "file:///tmp/x%20y", "mailto:a@b.c"]))!)
            default: return .array((0..<int(0...3)).map { _ in scalar() })
            }
        }

        mutating func keyPath() -> QueryKeyPath {
            var components: [QueryKeyPath.Component] = []
            for _ in 0..<int(1...3) {
                components.append(
                    int(0...4) == 0 ? .collectionOperator(pick(CollectionOperator.allCases)) : .key(pick(Self.keys)))
            }
            return QueryKeyPath(components: components)
        }

        mutating func expression(depth: Int) -> ObjectExpression {
            switch int(0...(depth > 0 ? 9 : 5)) {
            case 0, 1: return .constant(scalar())
            case 2, 3: return .keyPath(keyPath(), of: .evaluatedObject)
            case 4: return .evaluatedObject
            case 5: return .variable(pick(Self.keys))
            case 6:
                // Parser-shaped: a key path never applies to a key path (the parser merges them).
                let base = pick([.variable("v"), .constant(scalar()), subquery(depth: depth - 1)])
                return .keyPath(keyPath(), of: base)
            case 7:
                // Parser-shaped: an aggregate has an element that is not a constant.
                var elements = (0..<int(0...2)).map { _ in expression(depth: depth - 1) }
                elements.insert(.variable("v"), at: int(0...elements.count))
                return .aggregate(elements)
            default:
                return subquery(depth: depth - 1)
            }
        }

        mutating func subquery(depth: Int) -> ObjectExpression {
            .subquery(
                collection: expression(depth: max(depth - 1, 0)), variable: pick(Self.keys),
                predicate: predicate(depth: max(depth - 1, 0)))
        }

        mutating func predicate(depth: Int) -> ObjectPredicate {
            switch int(0...(depth > 0 ? 9 : 5)) {
            case 0: return .constant(bool())
            case 1...5:
                var options: ComparisonOptions = []
                if bool() { options.insert(.caseInsensitive) }
                if bool() { options.insert(.diacriticInsensitive) }
                if int(0...3) == 0 { options.insert(.normalized) }
                return .comparison(
                    PredicateComparison(
                        expression(depth: depth), pick(PredicateComparison.Operator.allCases), expression(depth: depth),
                        modifier: pick([.direct, .direct, .any, .all]), options: options))
            case 6: return .and((0..<int(2...4)).map { _ in predicate(depth: depth - 1) })
            case 7: return .or((0..<int(2...4)).map { _ in predicate(depth: depth - 1) })
            default: return .not(predicate(depth: depth - 1))
            }
        }
    }

    @Test func generatedPredicatesParseBackFromTheirDescription() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = Generator(random: SplitMix64(seed: seed))
        for iteration in 0..<2000 {
            let predicate = generator.predicate(depth: 4)
            let format = predicate.description
            let parsed: ObjectPredicate
            do {
                parsed = try PredicateParser.parse(format)
            } catch {
                Issue.record("seed \(seed), iteration \(iteration): \(error)\n\(format)")
                return
            }
            guard parsed == predicate else {
                Issue.record("seed \(seed), iteration \(iteration): parsed back differently\n\(format)\n\(parsed)")
                return
            }
        }
    }

    @Test func descriptionsReadLikeNSPredicate() throws {
        #expect(try parse("age>30&&name beginswith[c] \"a\"").description == #"age > 30 AND name BEGINSWITH[c] "a""#)
        #expect(try parse("a = 1 OR (b = 2 AND c = 3)").description == "a == 1 OR (b == 2 AND c == 3)")
        #expect(try parse("NONE tags IN {'x', 2}").description == #"NOT ANY tags IN {"x", 2}"#)
        #expect(try parse("!(a == 1 || b == 2)").description == "NOT (a == 1 OR b == 2)")
        #expect(try parse("#size == 1 AND #in == a.#Self").description == "size == 1 AND #in == a.#Self")
        #expect(
            try parse("SUBQUERY(reports, $r, $r.age > 3).@count > 0").description
                == "SUBQUERY(reports, $r, $r.age > 3).@count > 0")
        #expect(throws: PredicateSyntaxError.self, "two strings in a row") { try parse("a == 'it''s'") }
    }

    @Test func builtPredicatesPrintAndParseBack() throws {
        let built: ObjectPredicate =
            ObjectExpression.keyPath("age") > 30
            && ObjectExpression.keyPath("name").beginsWith("a", options: .caseInsensitive)
            && !(ObjectExpression.keyPath("manager").isNil || ObjectExpression.keyPath("tags").contains("x"))
        #expect(try parse(built.description) == built)
        #expect(try parse("age > 30 AND name BEGINSWITH[c] 'a' AND NOT (manager == nil OR tags CONTAINS 'x')") == built)
    }
}
