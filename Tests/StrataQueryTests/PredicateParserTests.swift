import Foundation
import StrataQuery
import Testing

@Suite struct PredicateParserTests {
    private func comparison(
        _ left: ObjectExpression, _ op: PredicateComparison.Operator, _ right: ObjectExpression,
        modifier: PredicateComparison.Modifier = .direct, options: ComparisonOptions = []
    ) -> ObjectPredicate {
        .comparison(PredicateComparison(left, op, right, modifier: modifier, options: options))
    }

    @Test(arguments: [
        ("a == 1", PredicateComparison.Operator.equal), ("a = 1", .equal), ("a != 1", .notEqual),
        ("a <> 1", .notEqual), ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqual), ("a =< 1", .lessThanOrEqual),
        ("a > 1", .greaterThan), ("a >= 1", .greaterThanOrEqual), ("a => 1", .greaterThanOrEqual),
        ("a BETWEEN 1", .between), ("a in 1", .in), ("a CONTAINS 1", .contains), ("a beginswith 1", .beginsWith),
        ("a EndsWith 1", .endsWith), ("a LIKE 1", .like), ("a MATCHES 1", .matches),
    ])
    func everyOperatorSpellingParses(format: String, op: PredicateComparison.Operator) throws {
        #expect(try parse(format) == comparison(.keyPath("a"), op, .constant(.int(1))))
    }

    @Test func compoundSpellingsAndPrecedence() throws {
        let a = comparison(.keyPath("a"), .equal, .constant(.int(1)))
        let b = comparison(.keyPath("b"), .equal, .constant(.int(2)))
        let c = comparison(.keyPath("c"), .equal, .constant(.int(3)))
        #expect(try parse("a == 1 AND b == 2 and c == 3") == .and([a, b, c]))
        #expect(try parse("a == 1 && b == 2 || c == 3") == .or([.and([a, b]), c]))
        #expect(try parse("a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("a == 1 AND (b == 2 AND c == 3)") == .and([a, .and([b, c])]))
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("!(a == 1 || b == 2)") == .not(.or([a, b])))
        #expect(try parse("not not a == 1") == .not(.not(a)))
        #expect(try parse("TRUEPREDICATE") == .true)
        #expect(try parse("falsepredicate OR TRUEPREDICATE") == .or([.false, .true]))
    }

    @Test func modifiersAndOptions() throws {
        #expect(
            try parse("ANY tags == 'x'")
                == comparison(.keyPath("tags"), .equal, .constant(.string("x")), modifier: .any))
        #expect(
            try parse("some tags == 'x'")
                == comparison(.keyPath("tags"), .equal, .constant(.string("x")), modifier: .any))
        #expect(
            try parse("ALL tags == 'x'")
                == comparison(.keyPath("tags"), .equal, .constant(.string("x")), modifier: .all))
        #expect(
            try parse("NONE tags == 'x'")
                == .not(comparison(.keyPath("tags"), .equal, .constant(.string("x")), modifier: .any)))
        #expect(
            try parse("name BEGINSWITH[c] 'x'")
                == comparison(.keyPath("name"), .beginsWith, .constant(.string("x")), options: .caseInsensitive))
        #expect(
            try parse("name LIKE[cd] 'x'")
                == comparison(
                    .keyPath("name"), .like, .constant(.string("x")),
                    options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(
            try parse("name ==[dn] 'x'")
                == comparison(
                    .keyPath("name"), .equal, .constant(.string("x")), options: [.diacriticInsensitive, .normalized]))
    }

    @Test func literals() throws {
        func right(_ format: String) throws -> ObjectExpression {
            guard case .comparison(let comparison) = try parse("a == " + format) else {
                Issue.record("not a comparison")
                return .evaluatedObject
            }
            return comparison.right
        }
        #expect(try right("42") == .constant(.int(42)))
        #expect(try right("-42") == .constant(.int(-42)))
        #expect(try right("0x1F") == .constant(.int(31)))
        #expect(try right("0b101") == .constant(.int(5)))
        #expect(try right("0o17") == .constant(.int(15)))
        #expect(try right("-9223372036854775808") == .constant(.int(.min)))
        #expect(try right("9223372036854775808") == .constant(.double(9_223_372_036_854_775_808)))
        #expect(try right("1.5") == .constant(.double(1.5)))
        #expect(try right("2e3") == .constant(.double(2000)))
        #expect(try right("2.5E-1") == .constant(.double(0.25)))
        #expect(try right("1e999") == .constant(.double(.infinity)))
        #expect(try right("'single'") == .constant(.string("single")))
        #expect(try right("\"dou'ble\"") == .constant(.string("dou'ble")))
        #expect(try right(#""a\"b\\c\n\t\u00e9\ud83d\ude00""#) == .constant(.string("a\"b\\c\n\té😀")))
        #expect(try right(#""a\*b""#) == .constant(.string("a\\*b")))
        #expect(try right("'100%%'") == .constant(.string("100%")))
        #expect(try right("'%@'") == .constant(.string("%@")))
        for word in ["YES", "true", "TRUE"] { #expect(try right(word) == .constant(.bool(true))) }
        for word in ["NO", "false", "False"] { #expect(try right(word) == .constant(.bool(false))) }
        for word in ["nil", "NULL", "Nil"] { #expect(try right(word) == .constant(.null)) }
        #expect(try right("{1, 'a', nil}") == .constant(.array([.int(1), .string("a"), .null])))
        #expect(try right("{}") == .constant(.array([])))
        #expect(try right("{1, b}") == .aggregate([.constant(.int(1)), .keyPath("b")]))
        #expect(try right("CAST(0, \"NSDate\")") == .constant(.date(Date(timeIntervalSinceReferenceDate: 0))))
        let uuid = UUID()
        #expect(try right("CAST('\(uuid.uuidString)', 'NSUUID')") == .constant(.uuid(uuid)))
        #expect(try right("CAST('1.25', 'NSDecimalNumber')") == .constant(.decimal(Decimal(string: "1.25")!)))
        #expect(try right("CAST('AQI=', 'NSData')") == .constant(.data(Data([1, 2]))))
    }

    @Test func keyPathsVariablesSelfAndSubqueries() throws {
        #expect(
            try parse("manager.manager.name == 'x'")
                == comparison(.keyPath("manager.manager.name"), .equal, .constant(.string("x"))))
        #expect(try parse("SELF.name == 1") == comparison(.keyPath("name"), .equal, .constant(.int(1))))
        #expect(
            try parse("reports.@count > 1") == comparison(.keyPath("reports.@count"), .greaterThan, .constant(.int(1))))
        #expect(
            try parse("reports.@sum.salary > 1")
                == comparison(
                    .keyPath(
                        QueryKeyPath(components: [.key("reports"), .collectionOperator(.sum), .key("salary")]),
                        of: .evaluatedObject), .greaterThan, .constant(.int(1))))
        #expect(try parse("#size == 1") == comparison(.keyPath("size"), .equal, .constant(.int(1))))
        #expect(try parse("#self.#in == 1") == comparison(.keyPath("self.in"), .equal, .constant(.int(1))))
        #expect(try parse("SELF IN $ids") == comparison(.evaluatedObject, .in, .variable("ids")))
        #expect(
            try parse("$x.name == 1") == comparison(.keyPath("name", of: .variable("x")), .equal, .constant(.int(1))))
        let subquery = ObjectExpression.subquery(
            collection: .keyPath("reports"), variable: "r",
            predicate: comparison(.keyPath("age", of: .variable("r")), .greaterThan, .constant(.int(30))))
        #expect(
            try parse("SUBQUERY(reports, $r, $r.age > 30).@count > 0")
                == comparison(.keyPath("@count", of: subquery), .greaterThan, .constant(.int(0))))
        #expect(try parse("nameé == 1") == comparison(.keyPath("nameé"), .equal, .constant(.int(1))))
    }

    /// `%K` anywhere in a key path, in every form NSPredicate accepts (issue 19).
    @Test func keyPathArgumentsWorkInsideKeyPaths() throws {
        #expect(try parse("manager.%K == %@", "name", "x") == parse("manager.name == 'x'"))
        #expect(try parse("%K.%K == %@", "manager", "name", "x") == parse("manager.name == 'x'"))
        #expect(try parse("ANY %K.%K == %@", "reports", "name", "x") == parse("ANY reports.name == 'x'"))
        #expect(try parse("%K.%K.name == 1", "manager", "manager") == parse("manager.manager.name == 1"))
        #expect(try parse("manager.%K == 1", "manager.age") == parse("manager.manager.age == 1"))
        #expect(try parse("%K.@count > 1", "reports") == parse("reports.@count > 1"))
        #expect(try parse("manager.%K > 1", "reports.@count") == parse("manager.reports.@count > 1"))
        #expect(try parse("SELF.%K == 1", "age") == parse("SELF.age == 1"))
        #expect(try parse("manager.%2$K == %1$@", "x", "name") == parse("manager.name == 'x'"))
        #expect(
            try parse("SUBQUERY(%K, $r, $r.%K > %d).@count > 0", "reports", "age", 30)
                == parse("SUBQUERY(reports, $r, $r.age > 30).@count > 0"))
        #expect(
            try parse("manager.%K == %@", "and", 1) == comparison(.keyPath("manager.and"), .equal, .constant(.int(1))))
        #expect(throws: PredicateSyntaxError.self) { try parse("manager.%K == 1", 3) }
        #expect(throws: PredicateSyntaxError.self) { try parse("manager.%@ == 1", "name") }
    }

    @Test func argumentsAreSubstituted() throws {
        #expect(
            try parse("age > %d AND name BEGINSWITH[c] %@", 30, "a")
                == .and([
                    comparison(.keyPath("age"), .greaterThan, .constant(.int(30))),
                    comparison(.keyPath("name"), .beginsWith, .constant(.string("a")), options: .caseInsensitive),
                ]))
        #expect(try parse("%K == %@", "manager.name", "x") == parse("manager.name == 'x'"))
        #expect(try parse("%K == %@", "reports.@count", 3) == parse("reports.@count == 3"))
        #expect(try parse("%K == 1", "and") == comparison(.keyPath("and"), .equal, .constant(.int(1))))
        #expect(try parse("a == %f", 2) == comparison(.keyPath("a"), .equal, .constant(.double(2))))
        #expect(try parse("a == %ld OR a == %lld OR a == %i", 1, 2, 3) == parse("a == 1 OR a == 2 OR a == 3"))
        #expect(try parse("a == %2$@ AND b == %1$@", "one", "two") == parse("a == 'two' AND b == 'one'"))
        #expect(try parse("a IN %@", [1, 2]) == parse("a IN {1, 2}"))
        #expect(try parse("a == %@", Int?.none) == parse("a == nil"))
        #expect(try parse("a == %@ AND b == 1", "x", "ignored extra") == parse("a == 'x' AND b == 1"))
        #expect(
            try ObjectPredicate(format: "a == %@ AND b == %d", arguments: [.string("x"), .int(1)])
                == parse("a == 'x' AND b == 1"))
    }

    @Test func parsingExpressionsAlone() throws {
        #expect(try PredicateParser.parseExpression("manager.name") == .keyPath("manager.name"))
        #expect(throws: PredicateSyntaxError.self) { try PredicateParser.parseExpression("a b") }
    }

    @Test func nestingAtTheLimitParsesAndBeyondIsATypedError() throws {
        // Each parenthesis is one level, and the comparison's two operands one more.
        let limit = PredicateParser.maximumDepth
        let deepest = String(repeating: "(", count: limit - 2) + "a == 1" + String(repeating: ")", count: limit - 2)
        #expect(throws: Never.self) { try parse(deepest) }
        for nested in [
            String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000),
            String(repeating: "NOT ", count: 10_000) + "a == 1",
            "a IN " + String(repeating: "{", count: 10_000),
            String(repeating: "SUBQUERY(", count: 10_000),
        ] {
            #expect {
                try parse(nested)
            } throws: { error in
                (error as? PredicateSyntaxError)?.reason == .nestingTooDeep(limit: limit)
            }
        }
    }
}

@Suite struct KeyComparisonTests {
    private func keyComparison(
        _ format: String, _ arguments: any QueryValueConvertible...
    ) throws
        -> PredicateComparison.KeyComparison?
    {
        guard
            case .comparison(let comparison) = try PredicateParser.parse(format, arguments: arguments.map(\.queryValue))
        else { return nil }
        return comparison.keyComparison
    }

    @Test func attributeAgainstConstantIsRecognizedEitherWayRound() throws {
        #expect(
            try keyComparison("age > 30")
                == PredicateComparison.KeyComparison(key: "age", operator: .greaterThan, value: .int(30), options: []))
        #expect(
            try keyComparison("30 > age")
                == PredicateComparison.KeyComparison(key: "age", operator: .lessThan, value: .int(30), options: []))
        #expect(
            try keyComparison("5 <= SELF.age")
                == PredicateComparison.KeyComparison(
                    key: "age", operator: .greaterThanOrEqual, value: .int(5), options: []))
        #expect(
            try keyComparison("name BEGINSWITH[c] 'a'")
                == PredicateComparison.KeyComparison(
                    key: "name", operator: .beginsWith, value: .string("a"), options: .caseInsensitive))
        #expect(
            try keyComparison("id IN %@", [1, 2])
                == PredicateComparison.KeyComparison(key: "id", operator: .in, value: [1, 2], options: []))
        #expect(
            try keyComparison("'x' IN tags")
                == PredicateComparison.KeyComparison(key: "tags", operator: .contains, value: "x", options: []))
        #expect(
            try keyComparison("{1, 2} CONTAINS age")
                == PredicateComparison.KeyComparison(key: "age", operator: .in, value: [1, 2], options: []))
    }

    @Test(arguments: [
        "manager.age > 3", "ANY tags == 'x'", "age > $x", "age > score", "'a' BEGINSWITH name", "SELF == 3",
        "reports.@count > 1", "'a*' LIKE name",
    ])
    func otherShapesAreNot(_ format: String) throws {
        #expect(try keyComparison(format) == nil)
    }
}
