import Foundation
import StrataQuery
import Testing

@Suite struct SortKeyTests {
    private func names(_ rows: [[String: QueryValue]]) -> [String] {
        rows.map { row in
            if case .string(let name) = row["name"] ?? .null { return name }
            return "nil"
        }
    }

    @Test func severalKeysAscendingAndDescending() throws {
        let rows: [[String: QueryValue]] = [
            ["name": "b", "age": .int(30)], ["name": "a", "age": .int(30)], ["name": "c", "age": .int(40)],
            ["name": "d", "age": .double(35.5)],
        ]
        #expect(try names(rows.sorted(by: [SortKey("age"), SortKey("name")])) == ["a", "b", "d", "c"])
        #expect(
            try names(rows.sorted(by: [SortKey("age", ascending: false), SortKey("name")])) == ["c", "d", "a", "b"])
        #expect(
            try names(rows.sorted(by: [SortKey("age"), SortKey("name", ascending: false)])) == ["b", "a", "d", "c"])
    }

    @Test func nilSortsFirstAscendingAndLastDescending() throws {
        let rows: [[String: QueryValue]] = [
            ["name": "x", "age": .int(2)], ["name": "nil age"], ["name": "y", "age": .int(1)],
        ]
        #expect(try names(rows.sorted(by: [SortKey("age")])) == ["nil age", "y", "x"])
        #expect(try names(rows.sorted(by: [SortKey("age", ascending: false)])) == ["x", "y", "nil age"])
    }

    @Test func stringComparisons() throws {
        let words = ["b", "B", "a", "Á", "é", "e", "Z", "file10", "file9"]
        let rows = words.map { ["name": QueryValue.string($0)] }
        func sorted(_ comparison: SortKey.Comparison) throws -> [String] {
            try names(rows.sorted(by: [SortKey("name", comparison: comparison)]))
        }
        #expect(try sorted(.standard) == ["B", "Z", "a", "b", "e", "file10", "file9", "Á", "é"])
        // Equal under folding keeps the input order (stable).
        #expect(try sorted(.caseInsensitive) == ["a", "b", "B", "e", "file10", "file9", "Z", "Á", "é"])
        #expect(try sorted(.diacriticInsensitive) == ["Á", "B", "Z", "a", "b", "é", "e", "file10", "file9"])
        #expect(try sorted(.caseAndDiacriticInsensitive) == ["a", "Á", "b", "B", "é", "e", "file10", "file9", "Z"])
        let standard = try sorted(.localizedStandard)
        #expect(standard.firstIndex(of: "file9")! < standard.firstIndex(of: "file10")!, "digits compare as numbers")
        let localized = try sorted(.localized)
        #expect(localized.firstIndex(of: "a")! < localized.firstIndex(of: "B")!, "collation, not code points")
    }

    @Test func keyPathsThroughObjectsAndCollectionOperators() throws {
        let ada = Person.team()
        let people = [ada] + ada.reports
        let byManagerThenName = try people.sorted(by: [SortKey("manager.name"), SortKey("name")])
        #expect(byManagerThenName.map(\.id) == [1, 4, 2, 3], "Ada has no manager (nil first); Dan has no name")
        let byReports = try people.sorted(by: [SortKey("reports.@count", ascending: false), SortKey("age")])
        #expect(byReports.map(\.id) == [1, 4, 2, 3])
        #expect(throws: PredicateEvaluationError.unknownKey("nmae", in: "Person")) {
            try people.sorted(by: [SortKey("nmae")])
        }
    }

    @Test func mixedKindsOrderByKindAndCompareValuesDirectly() throws {
        let key = SortKey("v")
        let values: [QueryValue] = [
            .string("a"), .int(3), .null, .date(Date(timeIntervalSinceReferenceDate: 0)), .double(2.5), .bool(true),
        ]
        let sorted = values.sorted { key.compare($0, $1) == .orderedAscending }
        #expect(
            sorted == [
                .null, .bool(true), .double(2.5), .int(3), .string("a"), .date(Date(timeIntervalSinceReferenceDate: 0)),
            ])
        #expect(key.compare(.int(2), .double(2)) == .orderedSame)
        #expect(SortKey("v", ascending: false).compare(.null, .int(1)) == .orderedDescending)
        let keys = [SortKey("a"), SortKey("b", ascending: false)]
        #expect(keys.compare(values: [.int(1), .int(1)], [.int(1), .int(2)]) == .orderedDescending)
        #expect(try keys.compare(["a": QueryValue.int(1)], ["a": QueryValue.int(2)]) == .orderedAscending)
        #expect(
            SortKey("name", ascending: false, comparison: .caseInsensitive).description == "name DESC (caseInsensitive)"
        )
    }
}

@Suite struct PredicateBuilderTests {
    @Test func operatorsBuildWhatTheParserBuilds() throws {
        let age = ObjectExpression.keyPath("age")
        let name = ObjectExpression.keyPath("name")
        #expect((age == 30) == (try parse("age == 30")))
        #expect((age != 30) == (try parse("age != 30")))
        #expect((age < 30) == (try parse("age < 30")))
        #expect((age <= 30.5) == (try parse("age <= 30.5")))
        #expect((age > Int64(30)) == (try parse("age > 30")))
        #expect((age >= QueryValue.null) == (try parse("age >= nil")))
        #expect(
            name.beginsWith("a", options: [.caseInsensitive, .diacriticInsensitive])
                == (try parse("name BEGINSWITH[cd] 'a'")))
        #expect(name.endsWith("z") == (try parse("name ENDSWITH 'z'")))
        #expect(name.contains("q", options: .caseInsensitive) == (try parse("name CONTAINS[c] 'q'")))
        #expect(name.like("a*") == (try parse("name LIKE 'a*'")))
        #expect(name.matches("a.+") == (try parse("name MATCHES 'a.+'")))
        #expect(age.isIn([1, 2]) == (try parse("age IN {1, 2}")))
        #expect(age.between(1, 2) == (try parse("age BETWEEN {1, 2}")))
        #expect(name.isNil == (try parse("name == nil")))
        #expect(ObjectPredicate.true == (try parse("TRUEPREDICATE")))
        #expect(ObjectPredicate.false == (try parse("FALSEPREDICATE")))
        #expect((age > 1 && age < 9 && name.isNil) == (try parse("age > 1 AND age < 9 AND name == nil")))
        #expect((age > 1 || age < 9 || name.isNil) == (try parse("age > 1 OR age < 9 OR name == nil")))
        #expect((age > 1 && (age < 9 || name.isNil)) == (try parse("age > 1 AND (age < 9 OR name == nil)")))
        #expect(!(age > 1) == (try parse("NOT age > 1")))
        #expect(.any(ObjectExpression.keyPath("reports.age") > 1) == (try parse("ANY reports.age > 1")))
        #expect(.all(ObjectExpression.keyPath("reports.age") > 1) == (try parse("ALL reports.age > 1")))
        #expect(.none(ObjectExpression.keyPath("reports.age") > 1) == (try parse("NONE reports.age > 1")))
        #expect(
            ObjectExpression.evaluatedObject.isIn([ObjectIdentity(1)])
                == (try ObjectPredicate(format: "SELF IN %@", [ObjectIdentity(1)])))
        let leadingDot: ObjectPredicate = .keyPath("age") > 30
        #expect(leadingDot == (try parse("age > 30")))
    }

    @Test func builtPredicatesEvaluate() throws {
        let ada = Person.team()
        let predicate: ObjectPredicate =
            ObjectExpression.keyPath("reports.@count") >= 3
            && .any(ObjectExpression.keyPath("reports.name").beginsWith("c", options: .caseInsensitive))
        #expect(try predicate.evaluate(with: ada))
        #expect(try !predicate.evaluate(with: ada.reports[0]))
    }

    @Test func keyPathsFromStrings() {
        let path: QueryKeyPath = "reports.@sum.salary"
        #expect(path.components == [.key("reports"), .collectionOperator(.sum), .key("salary")])
        #expect(path.description == "reports.@sum.salary")
        #expect(QueryKeyPath("age").singleKey == "age")
        #expect(QueryKeyPath("a.b").singleKey == nil)
        #expect(QueryKeyPath("@bogus").components == [.key("@bogus")])
    }
}
