import Foundation
import StrataQuery
import Testing

@Suite struct PredicateEvaluationTests {
    let row: [String: QueryValue] = [
        "age": .int(30), "score": .double(2.5), "price": .decimal(Decimal(string: "9.99")!), "flag": .bool(true),
        "name": .string("Zoë Smith"), "empty": .string(""), "nothing": .null,
        "born": .date(Date(timeIntervalSinceReferenceDate: 1000)), "tags": .array([.string("a"), .string("b")]),
        "address": .dictionary(["city": .string("Köln"), "geo": .dictionary(["lat": .double(50.9)])]),
    ]

    @Test func comparisonsOfNumbersAcrossTypes() throws {
        #expect(try holds("age == 30", row))
        #expect(try holds("age == 30.0", row))
        #expect(try holds("age = 3e1", row))
        #expect(try !holds("age != 30", row))
        #expect(try holds("age <> 31", row))
        #expect(try holds("age < 30.5 AND age <= 30 AND age > 29.99 AND age >= 30", row))
        #expect(try holds("score > 2 AND score < 3", row))
        #expect(try holds("price > 9.98 AND price < 10 AND price == CAST('9.99', 'NSDecimalNumber')", row))
        #expect(try holds("flag == YES AND flag == 1 AND flag != 0", row))
        // Integers compare with doubles without rounding: 2^53 + 1 is not 2^53.
        #expect(try holds("n > 9007199254740992.0", ["n": .int(9_007_199_254_740_993)]))
        #expect(try holds("n < 1e300 AND n > -1e300", ["n": .int(.max)]))
    }

    @Test func comparisonsOfStringsDatesAndMixedKinds() throws {
        #expect(try holds("name == 'Zoë Smith'", row))
        #expect(try holds("name == 'Zoe\u{0308} Smith'", row), "canonical equivalence")
        #expect(try holds("name > 'Zoa' AND name < 'Zp'", row))
        #expect(try holds("'B' < 'a'", row), "plain comparison is by Unicode scalar value")
        #expect(try holds("born > CAST(999, 'NSDate') AND born <= CAST(1000, 'NSDate')", row))
        #expect(try !holds("age == '30'", row), "a number never equals a string")
        #expect(try !holds("age < '31'", row), "numbers and strings do not order")
        #expect(try holds("age != '30'", row))
    }

    @Test func caseAndDiacriticModifiers() throws {
        #expect(try !holds("name == 'zoë smith'", row))
        #expect(try holds("name ==[c] 'ZOË SMITH'", row))
        #expect(try !holds("name ==[c] 'zoe smith'", row))
        #expect(try holds("name ==[d] 'Zoe Smith'", row))
        #expect(try holds("name ==[cd] 'ZOE SMITH'", row))
        #expect(try holds("name BEGINSWITH[cd] 'zoe'", row))
        #expect(try holds("name ENDSWITH[c] 'SMITH'", row))
        #expect(try holds("name CONTAINS[cd] 'OE S'", row))
        #expect(try holds("name LIKE[cd] 'zoe*'", row))
        #expect(try holds("name MATCHES[c] 'zoë.*'", row))
        #expect(try holds("name MATCHES[cd] 'zoe.*'", row))
        #expect(try holds("address.city ==[d] 'Koln'", row))
        #expect(try holds("name >[c] 'ZOA'", row))
        #expect(try holds("'ÉCOLE' IN[cd] {'x', 'ecole'}", row))
    }

    @Test func stringOperators() throws {
        #expect(try holds("name BEGINSWITH 'Zo'", row))
        #expect(try !holds("name BEGINSWITH 'zo'", row))
        #expect(try holds("name ENDSWITH 'ith'", row))
        #expect(try holds("name CONTAINS 'ë S'", row))
        #expect(try holds("'ë S' IN name", row), "IN on a string is a substring test")
        // NSString semantics: the empty string is no prefix, suffix or substring.
        #expect(try !holds("name BEGINSWITH ''", row))
        #expect(try !holds("name ENDSWITH ''", row))
        #expect(try !holds("name CONTAINS ''", row))
        #expect(try !holds("'' IN name", row))
        #expect(try holds("empty == ''", row))
    }

    @Test(arguments: [
        ("abc", "abc", true), ("abc", "a*", true), ("abc", "*c", true), ("abc", "*b*", true), ("abc", "a?c", true),
        ("abc", "???", true), ("abc", "??", false), ("abc", "????", false), ("abc", "*", true), ("", "*", true),
        ("", "?", false), ("", "", true), ("abc", "", false), ("abc", "a*b*c*", true), ("abc", "a**c", true),
        ("aaa", "a*a*a*a", false), ("a*c", "a\\*c", true), ("abc", "a\\*c", false), ("a?c", "a\\?c", true),
        ("mississippi", "m*iss*ppi", true), ("mississippi", "m*iss*ppx", false), ("e\u{301}", "?", true),
        ("ABC", "abc", false), ("x\\", "x\\", true),
    ])
    func likeWildcards(string: String, pattern: String, matches: Bool) throws {
        #expect(try holds("s LIKE %@", ["s": .string(string)], pattern) == matches)
    }

    @Test func likeIsNotExponential() throws {
        let string = String(repeating: "a", count: 2000)
        let pattern = String(repeating: "*a", count: 200) + "b"
        #expect(try !holds("s LIKE %@", ["s": .string(string)], pattern))
    }

    @Test func matchesIsAWholeStringICURegularExpression() throws {
        #expect(try holds("name MATCHES 'Z.*h'", row))
        #expect(try !holds("name MATCHES 'Zo'", row), "the whole string, not a prefix")
        #expect(try !holds("name MATCHES 'Smith'", row), "the whole string, not a substring")
        #expect(try holds("s MATCHES 'a|ab'", ["s": .string("ab")]), "alternation is tried until the whole matches")
        #expect(try !holds("s MATCHES 'a.*'", ["s": .string("a\nb")]), "dot does not match a newline")
        #expect(try !holds("s MATCHES 'ab$'", ["s": .string("ab\n")]), "no match before a final newline")
        #expect(try holds("s MATCHES '\\\\d{3}-\\\\d{4}'", ["s": .string("555-1234")]))
        #expect {
            try holds("name MATCHES 'a)|(b'", row)
        } throws: { error in
            (error as? PredicateEvaluationError) == .invalidRegularExpression("a)|(b")
        }
        #expect(throws: PredicateEvaluationError.invalidRegularExpression("(")) { try holds("name MATCHES '('", row) }
    }

    @Test func betweenAndIn() throws {
        #expect(try holds("age BETWEEN {30, 40}", row), "inclusive low")
        #expect(try holds("age BETWEEN {20, 30}", row), "inclusive high")
        #expect(try !holds("age BETWEEN {31, 40}", row))
        #expect(try holds("age BETWEEN %@", row, [29.5, 30.5]))
        #expect(try holds("name BETWEEN {'Z', 'Zz'}", row))
        #expect(try !holds("nothing BETWEEN {1, 2}", row))
        #expect(try !holds("age BETWEEN nothing", row))
        #expect(throws: PredicateEvaluationError.self) { try holds("age BETWEEN {1, 2, 3}", row) }
        #expect(throws: PredicateEvaluationError.self) { try holds("age BETWEEN 3", row) }
        #expect(try holds("age IN {10, 30.0}", row))
        #expect(try !holds("age IN {}", row))
        #expect(try holds("'b' IN tags", row))
        #expect(try holds("tags CONTAINS 'a'", row))
        #expect(try !holds("tags CONTAINS 'c'", row))
        #expect(try !holds("age IN nothing", row))
        #expect(try holds("'Köln' IN address", row), "IN a dictionary looks at its values")
        #expect(throws: PredicateEvaluationError.invalidOperands(operator: .in, left: .int(30), right: .int(3))) {
            try holds("age IN 3", row)
        }
        #expect(throws: PredicateEvaluationError.self) { try holds("age BEGINSWITH 'x'", row) }
        #expect(throws: PredicateEvaluationError.self) { try holds("age CONTAINS 3", row) }
    }

    @Test func nilComparisons() throws {
        #expect(try holds("nothing == nil", row))
        #expect(try holds("missing == nil", row), "a dictionary's missing key is nil")
        #expect(try holds("nil == NULL", row))
        #expect(try !holds("age == nil", row))
        #expect(try holds("age != nil", row))
        #expect(try !holds("nothing != nil", row))
        #expect(try holds("nothing != 3", row))
        for op in ["<", "<=", ">", ">="] {
            #expect(try !holds("nothing \(op) 3", row), "nil \(op) 3")
            #expect(try !holds("3 \(op) nothing", row), "3 \(op) nil")
            #expect(try !holds("nothing \(op) nil", row), "nil \(op) nil")
        }
        for op in ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "IN"] {
            #expect(try !holds("nothing \(op) 'a'", row), "nil \(op)")
            #expect(try !holds("name \(op) nil", row), "\(op) nil")
        }
        #expect(try holds("address.nowhere.deeper == nil", row), "key paths through nil are nil")
    }

    @Test func nestedDictionariesAndKeyPaths() throws {
        #expect(try holds("address.city == 'Köln'", row))
        #expect(try holds("address.geo.lat > 50", row))
        #expect(try holds("SELF.address.geo.lat < 51", row))
        #expect(throws: PredicateEvaluationError.notAnObject(key: "length", value: .string("Zoë Smith"))) {
            try holds("name.length > 3", row)
        }
    }

    @Test func objectsThroughToOneAndToMany() throws {
        let ada = Person.team()
        let bob = ada.reports[0]
        func check(_ format: String, _ object: Person, _ arguments: any QueryValueConvertible...) throws -> Bool {
            try PredicateParser.parse(format, arguments: arguments.map(\.queryValue)).evaluate(with: object)
        }
        #expect(try check("manager.name == 'Ada'", bob))
        #expect(try check("manager.manager == nil", bob))
        #expect(try check("manager.manager.name == nil", bob))
        #expect(try check("ANY reports.name == 'Bob'", ada))
        #expect(try check("SOME reports.age > 40", ada))
        #expect(try !check("ANY reports.age > 41", ada))
        #expect(try !check("ALL reports.salary < 5000", ada), "Cléo's nil salary is not less than anything")
        #expect(try check("ALL reports.salary < 5000 OR ANY reports.salary == nil", ada))
        #expect(try check("ALL reports.manager == SELF", ada), "objects compare by identity")
        #expect(try check("ALL reports.manager.name == 'Ada'", ada))
        #expect(try check("NONE reports.age > 45", ada))
        #expect(try !check("NONE reports.age > 40", ada))
        #expect(try check("ALL reports.age > 100", Person(9, name: "Solo")), "ALL of nothing holds")
        #expect(try !check("ANY reports.age > 0", Person(9, name: "Solo")))
        #expect(try check("ANY tags == 'ops' AND ANY reports.tags == 'ops'", ada), "to-many of arrays flattens")
        #expect(try check("reports.name CONTAINS 'Bob'", ada), "a to-many key path is a collection")
        #expect(try check("reports.manager.name CONTAINS 'Ada'", ada))
    }

    @Test func selfAndIdentities() throws {
        let ada = Person.team()
        let bob = ada.reports[0]
        let ids = [ObjectIdentity(2), ObjectIdentity(4)]
        #expect(try ObjectPredicate(format: "SELF IN %@", ids).evaluate(with: bob))
        #expect(try !ObjectPredicate(format: "SELF IN %@", ids).evaluate(with: ada))
        #expect(try ObjectPredicate(format: "SELF == %@", ObjectIdentity(1)).evaluate(with: ada))
        #expect(try !ObjectPredicate(format: "SELF == %@", ObjectIdentity("1")).evaluate(with: ada), "typed identities")
        #expect(try ObjectPredicate(format: "manager == %@", ObjectIdentity(1)).evaluate(with: bob))
        #expect(try ObjectPredicate(format: "manager IN %@", ids + [ObjectIdentity(1)]).evaluate(with: bob))
        #expect(try ObjectPredicate(format: "%@ IN reports", ObjectIdentity(3)).evaluate(with: ada))
        #expect(try ObjectPredicate(format: "reports CONTAINS %@", ObjectIdentity(4)).evaluate(with: ada))
        #expect(try ObjectPredicate(format: "ANY reports == %@", ObjectIdentity(4)).evaluate(with: ada))
        #expect(try ObjectPredicate(format: "manager.reports CONTAINS SELF").evaluate(with: bob))
        #expect(throws: PredicateEvaluationError.self, "a dictionary is no string") {
            try ObjectPredicate(format: "SELF BEGINSWITH 'a'").evaluate(with: ["x": .null])
        }
    }

    @Test func collectionOperators() throws {
        let ada = Person.team()
        func value(_ path: String, _ object: Person = Person.team()) throws -> QueryValue {
            try SortKey(QueryKeyPath(path)).value(of: object)
        }
        #expect(try value("reports.@count") == .int(3))
        #expect(try value("tags.@count") == .int(2))
        #expect(try value("reports.@sum.age") == .int(71), "nil ages are skipped")
        #expect(try value("reports.@sum.salary") == .double(7000))
        #expect(try value("reports.@avg.age") == .double(35.5))
        #expect(try value("reports.@min.age") == .int(30))
        #expect(try value("reports.@max.age") == .int(41))
        #expect(try value("reports.@max.name") == .string("Cléo"))
        #expect(try value("reports.tags.@distinctUnionOfObjects.@count") == .int(2))
        #expect(try value("reports.@distinctUnionOfObjects.manager") == .array([.identity(ObjectIdentity(1))]))
        #expect(try value("reports.@unionOfObjects.name") == .array([.string("Bob"), .string("Cléo")]))
        #expect(try value("reports.@avg.age", Person(9, name: "Solo")) == .null, "no mean of nothing")
        #expect(try value("reports.@sum.age", Person(9, name: "Solo")) == .int(0))
        #expect(try value("reports.@max.age", Person(9, name: "Solo")) == .null)
        #expect(try value("manager.reports.@count", ada) == .null, "through a nil to-one")
        #expect(try ObjectPredicate(format: "reports.@count == 3 AND reports.@avg.age < 36").evaluate(with: ada))
        #expect(try ObjectPredicate(format: "reports.@max.age BETWEEN {40, 50}").evaluate(with: ada))
        #expect(try holds("{1, 2, 3}.@sum == 6 AND {1, 2.5}.@avg == 1.75 AND {}.@count == 0", [:]))
        #expect(
            try holds("n.@sum > 1e19", ["n": .array([.int(.max), .int(.max)])]), "integer overflow becomes a double")
        #expect(throws: PredicateEvaluationError.invalidCollectionOperator(.count, value: .int(30))) {
            try holds("age.@count == 1", row)
        }
        #expect(throws: PredicateEvaluationError.self) { try holds("tags.@sum == 1", row) }
    }

    @Test func subqueries() throws {
        let ada = Person.team()
        #expect(try ObjectPredicate(format: "SUBQUERY(reports, $r, $r.age > 35).@count == 1").evaluate(with: ada))
        #expect(
            try ObjectPredicate(format: "SUBQUERY(reports, $r, $r.age > 20 AND ANY $r.tags == 'dev').@count == 2")
                .evaluate(with: ada))
        #expect(
            try ObjectPredicate(format: "SUBQUERY(reports, $r, SELF.age > 35).@count == 1").evaluate(with: ada),
            "SELF is the element inside a subquery")
        #expect(
            try ObjectPredicate(format: "SUBQUERY(reports, $r, $r.manager.name == 'Ada').@count == reports.@count")
                .evaluate(with: ada))
        #expect(
            try ObjectPredicate(
                format: "SUBQUERY(reports, $r, SUBQUERY($r.tags, $t, $t BEGINSWITH 'o').@count > 0).@count == 1"
            ).evaluate(with: ada))
        #expect(
            try ObjectPredicate(format: "SUBQUERY(manager.reports, $r, $r.age > 35).@count == 0").evaluate(with: ada))
    }

    @Test func variablesAndSubstitution() throws {
        let template = try ObjectPredicate(format: "age > $minimum AND name BEGINSWITH $prefix")
        #expect(throws: PredicateEvaluationError.unboundVariable("minimum")) { try template.evaluate(with: row) }
        #expect(try template.evaluate(with: row, variables: ["minimum": .int(20), "prefix": .string("Zo")]))
        let partial = template.withSubstitutionVariables(["minimum": .int(40)])
        #expect(partial == (try parse("age > 40 AND name BEGINSWITH $prefix")))
        #expect(try !partial.evaluate(with: row, variables: ["prefix": .string("Zo")]))
        let subquery = try parse("SUBQUERY(reports, $r, $r.age > $r).@count > 0 AND $r == 1")
        #expect(
            subquery.withSubstitutionVariables(["r": .int(7)])
                == (try parse("SUBQUERY(reports, $r, $r.age > $r).@count > 0 AND 7 == 1")),
            "a subquery's own variable is not substituted")
        #expect(
            try parse("a IN {$x, $y}").withSubstitutionVariables(["x": .int(1), "y": .int(2)])
                == (try parse("a IN {1, 2}")))
    }

    @Test func evaluableErrorsStayTyped() throws {
        let bob = Person.team().reports[0]
        #expect(throws: PredicateEvaluationError.unknownKey("nmae", in: "Person")) {
            try ObjectPredicate(format: "nmae == 'Bob'").evaluate(with: bob)
        }
        #expect(throws: PredicateEvaluationError.unknownKey("nmae", in: "Person")) {
            try ObjectPredicate(format: "manager.nmae == 'Bob'").evaluate(with: bob)
        }
        #expect {
            try ObjectPredicate(format: "broken == 1").evaluate(with: bob)
        } throws: { error in
            guard case .evaluable(let key, let underlying) = error as? PredicateEvaluationError else { return false }
            return key == "broken" && underlying is BrokenKey
        }
    }

    @Test func compoundsShortCircuit() throws {
        let bob = Person.team().reports[0]
        #expect(try !ObjectPredicate(format: "FALSEPREDICATE AND broken == 1").evaluate(with: bob))
        #expect(try ObjectPredicate(format: "TRUEPREDICATE OR broken == 1").evaluate(with: bob))
        #expect(try ObjectPredicate(format: "NOT FALSEPREDICATE").evaluate(with: bob))
        #expect(throws: PredicateEvaluationError.self) {
            try ObjectPredicate(format: "TRUEPREDICATE AND broken == 1").evaluate(with: bob)
        }
    }
}
