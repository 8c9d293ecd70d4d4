import Foundation
import Strata
import Testing

/// One query of the shared data set: every operator and modifier of the predicate language, sort keys
/// and windows, run through the Strata store (index ranges and row filtering), the in-memory store, and the
/// in-memory evaluation of unsaved objects; the three must return the same objects in the same order.
struct AgreementCase: CustomTestStringConvertible, Sendable {
    var entity = "FetchEmployee"
    var format: String
    var arguments: @Sendable (FetchLookup) -> [QueryValue] = { _ in [] }
    var variables: [String: QueryValue] = [:]
    var sortKeys: [SortKey] = []
    var offset = 0
    var limit = 0
    var includesSubentities = true

    var testDescription: String {
        "\(entity) \(format)" + (sortKeys.isEmpty ? "" : " sorted \(sortKeys)")
            + (offset > 0 || limit > 0 ? " [\(offset), \(limit)]" : "")
    }
}

private let day1 = FetchTestModel.epoch.addingTimeInterval(86_400 * 5)
private let day2 = FetchTestModel.epoch.addingTimeInterval(86_400 * 17)
private func decimal(_ text: String) -> QueryValue { .decimal(Decimal(string: text)!) }

let agreementCases: [AgreementCase] = {
    var cases: [AgreementCase] = []
    func add(_ format: String, _ entity: String = "FetchEmployee") {
        cases.append(AgreementCase(entity: entity, format: format))
    }
    // Comparisons on integers (indexed), doubles, mixed numbers.
    for format in [
        "salary == 124", "salary != 124", "salary < 120", "salary <= 124", "salary > 200", "salary >= 198",
        "124 == salary", "200 < salary", "salary > 100.5", "salary == 124.0", "rating == 3.5", "rating == 3",
        "rating < 2", "rating >= 5.5", "salary BETWEEN {100, 150}", "serial IN {1, 3, 5, 40}", "serial IN {}",
        "serial == 31",
        // An index range per element, duplicates included: each row comes once, in row-ID order.
        "serial IN {5, 1, 5, 3, 1}",
    ] { add(format) }
    // Strings: every operator, with [c], [d] and [cd].
    for format in [
        "name == 'Ada'", "name ==[c] 'ada'", "name ==[d] 'Adam'", "name ==[cd] 'adam'", "name != 'Ada'",
        "name < 'M'", "name >= 'b'", "name <[c] 'b'", "name BETWEEN {'B', 'H'}", "name IN {'Ada', 'bob', 'Nobody'}",
        "name IN[c] {'ADA'}", "'da' IN name", "name BEGINSWITH 'A'", "name BEGINSWITH[c] 'a'",
        "name BEGINSWITH[cd] 'a'", "name BEGINSWITH ''", "name ENDSWITH 'e'", "name ENDSWITH[c] 'E'",
        "name ENDSWITH[d] 'e'", "name CONTAINS 'o'", "name CONTAINS[cd] 'O'", "name LIKE 'A*'",
        "name LIKE[c] '?ve'", "name LIKE[cd] '*e'", "name MATCHES '[A-D].*'", "name MATCHES[c] 'z.*'",
        "name MATCHES[cd] 'zoe'",
    ] { add(format) }
    // Nil, Booleans, dates, compound predicates, constants.
    for format in [
        "name == nil", "name != nil", "nil == name", "rating == nil", "rating != nil", "hired == nil",
        "active == YES", "active == NO", "active == 1", "active != TRUE",
        "salary > 100 AND active == YES", "salary < 80 OR name BEGINSWITH 'Z'", "NOT (salary > 100)",
        "NOT active == YES AND rating > 2", "(salary > 100 OR rating < 2) AND NOT name CONTAINS[c] 'a'",
        "TRUEPREDICATE", "FALSEPREDICATE", "salary > 100 AND FALSEPREDICATE", "salary > 100 OR TRUEPREDICATE",
    ] { add(format) }
    // The Strata store's compiled predicates (CompiledRowPredicate): integers read in place against integer
    // constants, nil and mixed numbers on the long road, and compiled parts beside interpreted ones.
    for format in [
        "salary == nil", "salary != nil", "salary IN {124, nil}", "salary BETWEEN {100.5, 150}",
        "salary BETWEEN {150, 100}", "salary IN {124.0, 200}", "department.floor IN {1, 2}",
        "serial > 9223372036854775807", "serial >= -9223372036854775808", "NOT serial IN {1, 3, 5}",
        "serial IN {1, 3} OR department.name == 'Sales'", "salary > 100 AND ANY department.employees.name == 'Ada'",
        "NOT (salary <= 124 OR department == nil)", "(rating > 2 AND serial != 4) OR name ==[cd] 'zoe'",
        "hired != nil AND salary BETWEEN {60, 200} AND NOT active == NO",
    ] { add(format) }
    for format in ["floor == 2", "floor IN {1, 2}", "floor BETWEEN {1, 2} AND name != nil"] {
        add(format, "FetchDepartment")
    }
    // Decimals (compiled: the field decoded, then StrataQuery's comparison), against decimals, integers, doubles.
    for format in [
        "bonus == nil", "bonus != nil", "bonus > 3", "bonus <= 2.25", "bonus < 0", "bonus == -1.75",
        "bonus BETWEEN {0, 5}", "bonus IN {-2.75, 7.25, 100}", "NOT bonus > 1 AND bonus != nil",
    ] { add(format) }
    cases.append(AgreementCase(format: "bonus == %@", arguments: { _ in [decimal("4.25")] }))
    cases.append(AgreementCase(format: "bonus >= %@", arguments: { _ in [decimal("2.2500")] }))
    cases.append(
        AgreementCase(format: "bonus BETWEEN %@", arguments: { _ in [.array([decimal("-1.75"), decimal("3.25")])] }))
    cases.append(AgreementCase(format: "bonus IN %@ OR bonus == nil", arguments: { _ in [.array([decimal("6.25")])] }))
    cases.append(AgreementCase(format: "TRUEPREDICATE", sortKeys: [SortKey("bonus"), SortKey("serial")]))
    // Dates beside nil, strings with [cd] against nil and beside other compiled parts.
    cases.append(AgreementCase(format: "hired != nil AND hired < %@", arguments: { _ in [.date(day2)] }))
    cases.append(AgreementCase(format: "hired == nil OR hired >= %@", arguments: { _ in [.date(day2)] }))
    cases.append(AgreementCase(format: "hired IN %@", arguments: { _ in [.array([.date(day1), .null])] }))
    for format in [
        "name ==[cd] nil", "name !=[cd] 'ADA'", "name BEGINSWITH[cd] 'u' AND salary > 60",
        "name CONTAINS[cd] 'e' OR bonus == nil", "name IN[cd] {'zoe', 'adam'}", "name LIKE[cd] 'a*' AND active == YES",
    ] { add(format) }
    cases.append(AgreementCase(format: "hired > %@", arguments: { _ in [.date(day1)] }))
    cases.append(AgreementCase(format: "hired <= %@", arguments: { _ in [.date(day2)] }))
    cases.append(AgreementCase(format: "hired BETWEEN %@", arguments: { _ in [.array([.date(day1), .date(day2)])] }))
    cases.append(AgreementCase(format: "hired == %@", arguments: { _ in [.date(day1)] }))
    // Key paths through to-ones, objects and IDs as arguments, SELF.
    for format in [
        "department.name == 'Sales'", "department.name BEGINSWITH[cd] 'e'", "department.floor == 2",
        "department.name != 'Sales'", "department == nil", "department != nil", "department.name == nil",
        "department.name IN {'Sales', 'research'}", "department.name > 'F'",
    ] { add(format) }
    cases.append(
        AgreementCase(format: "department == %@", arguments: { [.identity(ObjectIdentity($0.departments["Sales"]!))] }))
    cases.append(
        AgreementCase(
            format: "department IN %@",
            arguments: { [.array([$0.departments["Émigré"]!.queryValue, $0.departments["research"]!.queryValue])] }))
    cases.append(
        AgreementCase(
            format: "SELF IN %@", arguments: { l in [.array([3, 7, 28, 11].map { l.employees[$0]!.queryValue })] }))
    cases.append(AgreementCase(format: "SELF == %@", arguments: { [$0.employees[4]!.queryValue] }))
    cases.append(
        AgreementCase(
            format: "NOT SELF IN %@", arguments: { l in [.array([1, 2].map { l.employees[$0]!.queryValue })] }))
    cases.append(
        AgreementCase(
            format: "SELF IN %@ AND salary > 100",
            arguments: { l in [.array((1...20).map { l.employees[Int64($0)]!.queryValue })] }))
    // Variables.
    cases.append(
        AgreementCase(format: "salary > $min AND name BEGINSWITH[c] $prefix", variables: ["min": 90, "prefix": "a"]))
    // To-many: ANY, ALL, NONE, collection operators, SUBQUERY, through a to-one and from the to-many side.
    for format in [
        "department.employees.@count > 6", "department.employees.@avg.salary > 150",
        "ANY department.employees.name == 'Ada'", "SUBQUERY(department.employees, $e, $e.salary > 200).@count > 1",
    ] { add(format) }
    for format in [
        "ANY employees.salary > 220", "ALL employees.salary > 60", "NONE employees.name BEGINSWITH 'A'",
        "employees.@count == 0", "employees.@count >= 6", "employees.@sum.salary > 900", "employees.@avg.salary < 140",
        "employees.@min.salary < 60", "employees.@max.rating >= 6",
        "SUBQUERY(employees, $e, $e.active == NO).@count >= 2",
        "ANY employees.rating == nil", "name ==[cd] 'emigre'", "name BEGINSWITH 'E'", "name == nil",
        "ANY employees.department.name == 'Sales'", "employees.@min.name == 'Ada'",
    ] { add(format, "FetchDepartment") }
    // [c] and [d] beyond ASCII: full case folding (ß, the Kelvin sign, long s, final sigma, ligatures, dotted I),
    // decomposed and precomposed forms, and MATCHES; the PostgreSQL store decides ASCII values in SQL and keeps
    // the others for memory.
    for format in [
        "name ==[c] 'strasse'", "name ==[c] 'STRASSE'", "name ==[c] 'kelvin'", "name ==[c] 'sam'",
        "name ==[c] 'σίσυφος'", "name ==[c] 'file'", "name ==[c] 'i̇stanbul'", "name ==[cd] 'eclair'",
        "name ==[d] 'eclair'", "name ==[d] 'Ore'", "name ==[cd] 'ore'", "name ==[c] 'ÉCLAIR'", "name == 'éclair'",
        "name CONTAINS[c] 'ss'", "name BEGINSWITH[c] 'σί'", "name BEGINSWITH[cd] 'e'", "name ENDSWITH[d] 'ir'",
        "name LIKE[c] 'fi*'", "name LIKE 'a?b'", "name LIKE '*\\*'", "name <[c] 'f'", "name >=[cd] 'o'",
        "name IN[c] {'straße', 'FILE', 'ada'}", "name !=[c] 'ada'", "name BETWEEN {'Z', 'é'}",
        "name MATCHES '.*ß.*'", "name MATCHES[c] 'strasse'", "name MATCHES[cd] 'e.*'", "name MATCHES '\\p{Lu}.*'",
        "NOT name ==[c] 'ada'", "name ==[c] 'ada' OR salary > 240",
    ] { add(format) }
    // To-manys: ANY, ALL, NONE, aggregates and SUBQUERY as SQL (EXISTS and correlated subqueries), from both
    // sides and through a to-one.
    for format in [
        "ALL employees.name BEGINSWITH 'A'", "NONE employees.salary > 100", "ANY employees.salary BETWEEN {100, 120}",
        "ALL employees.active == YES", "ANY employees.name ==[c] 'STRASSE'", "ANY employees == nil",
        "employees.@max.salary BETWEEN {100, 200}", "employees.@sum.salary BETWEEN {500, 1500}",
        "employees.@max.name > 'X'", "employees.@count != 5", "employees.@min.name ==[c] 'ada'",
        "employees.@avg.salary == 150.5", "employees.@avg.salary > 140", "employees.@sum.salary == 0",
        "employees.@min.hired < %@", "employees.@max.name == nil", "employees.@count IN {0, 5}",
        "SUBQUERY(employees, $e, $e.salary > 100 AND $e.active == YES).@count >= 2",
        "SUBQUERY(employees, $e, ANY $e.department.employees.salary > 240).@count > 0",
        "SUBQUERY(employees, $e, $e.name BEGINSWITH 'A').@count == 1",
        "SUBQUERY(employees, $e, SELF.salary < 100).@count == 0",
        "NOT (ANY employees.salary > 200) AND employees.@count > 0", "ALL employees.department.name == 'Sales'",
    ] {
        cases.append(
            AgreementCase(entity: "FetchDepartment", format: format, arguments: { _ in [.date(day2)] }))
    }
    for format in [
        "department.employees.@sum.salary > 1000", "ANY department.employees.salary > 245",
        "ALL department.employees.salary > 50", "NONE department.employees.name ==[c] 'ada'",
        "department.employees.@max.rating > 5", "SUBQUERY(department.employees, $e, $e.serial < 5).@count == 1",
        "department.employees.@avg.salary != 150",
        // ANY/ALL over a single value: nil is no element (ANY false, ALL true).
        "ANY name == nil", "ALL name == 'Ada'", "ANY rating == nil", "ALL rating > 3", "ANY department == nil",
        "ALL department.name == 'Sales'", "ANY department.name == nil", "NONE rating < 2",
    ] { add(format) }
    // Subentities.
    add("agency == 'Acme'", "FetchContractor")
    add("salary > 50", "FetchContractor")
    cases.append(AgreementCase(format: "salary > 50", includesSubentities: false))
    // Sort keys: several, both directions, case and diacritic folding, nil placement, key paths, windows.
    let sorts: [[SortKey]] = [
        [SortKey("name")], [SortKey("name", comparison: .caseInsensitive)],
        [SortKey("name", ascending: false, comparison: .caseAndDiacriticInsensitive), SortKey("serial")],
        [SortKey("name", comparison: .diacriticInsensitive)], [SortKey("rating")],
        [SortKey("rating", ascending: false)],
        [SortKey("department.name"), SortKey("salary", ascending: false)], [SortKey("hired", ascending: false)],
        [SortKey("active"), SortKey("salary")], [SortKey("salary", ascending: false)],
    ]
    for keys in sorts {
        cases.append(AgreementCase(format: "TRUEPREDICATE", sortKeys: keys))
        cases.append(AgreementCase(format: "salary > 100", sortKeys: keys, offset: 2, limit: 5))
    }
    // Orders the database gives (sort keys and windows in SQL when the predicate translated exactly): mixed case,
    // precomposed and decomposed forms, letters beyond Latin.
    for keys in [
        [SortKey("name")], [SortKey("name", ascending: false)], [SortKey("department.name"), SortKey("name")],
        [SortKey("active", ascending: false), SortKey("name")], [SortKey("hired"), SortKey("rating")],
    ] {
        cases.append(AgreementCase(format: "TRUEPREDICATE", sortKeys: keys, offset: 3, limit: 12))
        cases.append(AgreementCase(format: "salary > 90", sortKeys: keys, limit: 7))
        cases.append(AgreementCase(format: "name ==[c] 'ada' OR salary > 200", sortKeys: keys, offset: 1, limit: 3))
    }
    // Sorted by an indexed integer with a limit: the Strata store reads the front (or back) of the index.
    for (format, keys, offset, limit) in [
        ("TRUEPREDICATE", [SortKey("serial", ascending: false)], 2, 4), ("TRUEPREDICATE", [SortKey("salary")], 0, 3),
        ("active == YES", [SortKey("salary", ascending: false)], 0, 5), ("salary > 100", [SortKey("serial")], 3, 2),
        ("department.name == 'Sales'", [SortKey("salary")], 0, 2), ("rating == nil", [SortKey("salary")], 1, 30),
        ("TRUEPREDICATE", [SortKey("salary"), SortKey("name")], 28, 5),
    ] as [(String, [SortKey], Int, Int)] {
        cases.append(AgreementCase(format: format, sortKeys: keys, offset: offset, limit: limit))
        cases.append(AgreementCase(entity: "FetchContractor", format: format, sortKeys: keys, limit: limit))
        cases.append(
            AgreementCase(format: format, sortKeys: keys, offset: offset, limit: limit, includesSubentities: false))
    }
    for (format, keys, offset, limit) in [
        ("TRUEPREDICATE", [SortKey("floor")], 0, 1), ("TRUEPREDICATE", [SortKey("floor")], 0, 3),
        ("TRUEPREDICATE", [SortKey("floor", ascending: false), SortKey("name")], 1, 2),
        ("name != nil", [SortKey("floor"), SortKey("name", ascending: false)], 0, 4),
        ("floor != 1", [SortKey("floor", ascending: false)], 2, 1),
    ] as [(String, [SortKey], Int, Int)] {
        cases.append(
            AgreementCase(entity: "FetchDepartment", format: format, sortKeys: keys, offset: offset, limit: limit))
    }
    cases.append(AgreementCase(format: "TRUEPREDICATE", offset: 4, limit: 3))
    cases.append(AgreementCase(format: "salary > 100", offset: 100))
    cases.append(AgreementCase(format: "salary BETWEEN {60, 200}", limit: 4))
    cases.append(
        AgreementCase(
            entity: "FetchDepartment", format: "TRUEPREDICATE",
            sortKeys: [SortKey("floor"), SortKey("name", ascending: false)]))
    return cases
}()

@Suite struct PredicateStoreAgreementTests {
    /// The keys of the objects a case fetches, and its count, in a context.
    static func run(_ testCase: AgreementCase, in context: ManagedObjectContext, lookup: FetchLookup) throws -> [String]
    {
        let request = FetchRequest<ManagedObject>(entityName: testCase.entity)
        var predicate = try ObjectPredicate(format: testCase.format, arguments: testCase.arguments(lookup))
        if !testCase.variables.isEmpty { predicate = predicate.withSubstitutionVariables(testCase.variables) }
        request.predicate = predicate
        request.sortKeys = testCase.sortKeys
        request.fetchOffset = testCase.offset
        request.fetchLimit = testCase.limit
        request.includesSubentities = testCase.includesSubentities
        let keys = try context.fetch(request).map(fetchKey)
        #expect(try context.count(for: request) == keys.count, "count(for:) of \(testCase)")
        let ids = FetchRequest<ManagedObjectID>(entityName: testCase.entity)
        ids.predicate = request.predicate
        ids.sortKeys = request.sortKeys
        ids.fetchOffset = request.fetchOffset
        ids.fetchLimit = request.fetchLimit
        ids.includesSubentities = request.includesSubentities
        #expect(try context.fetch(ids).map { fetchKey(context.object(with: $0)) } == keys, "IDs of \(testCase)")
        return keys
    }

    /// The expected keys, computed by filtering and sorting the unsaved objects directly with StrataQuery.
    static func evaluateDirectly(
        _ testCase: AgreementCase, _ objects: [ManagedObject], lookup: FetchLookup
    ) throws -> [String] {
        let entity = FetchTestModel.model.entity(named: testCase.entity)!
        var predicate = try ObjectPredicate(format: testCase.format, arguments: testCase.arguments(lookup))
        if !testCase.variables.isEmpty { predicate = predicate.withSubstitutionVariables(testCase.variables) }
        let candidates = objects.filter {
            testCase.includesSubentities ? $0.entity.isKind(of: entity) : $0.entity === entity
        }
        var matching = try candidates.filter { try predicate.evaluate(with: $0) }.sorted(by: testCase.sortKeys)
        matching = Array(matching.dropFirst(testCase.offset))
        if testCase.limit > 0 { matching = Array(matching.prefix(testCase.limit)) }
        return matching.map(fetchKey)
    }

    /// Names whose folds are not ASCII lowering: employees 101 and up, after the shared data set.
    static let unicodeNames = [
        "Straße", "STRASSE", "\u{212A}elvin", "kelvin", "ſam", "Σίσυφος", "ΣΊΣΥΦΟΣ", "ﬁle", "FILE", "İstanbul",
        "istanbul", "e\u{301}clair", "éclair", "ÉCLAIR", "Øre", "øre", "a🇫🇷b", "a*", "Zebra", "zebra", "Émile",
    ]

    @discardableResult
    static func insertUnicodeNames(
        into context: ManagedObjectContext, departments: [FetchDepartment]
    ) -> [ManagedObject] {
        unicodeNames.enumerated().map { index, name in
            let employee = FetchEmployee(context: context)
            employee.serial = Int64(101 + index)
            employee.name = name
            employee.salary = Int64(40 + index * 11)
            employee.rating = index % 4 == 0 ? nil : Double(index) / 2
            employee.hired = FetchTestModel.epoch.addingTimeInterval(Double(index) * 3_600)
            employee.active = index % 2 == 0
            employee.department = index % 5 == 4 ? nil : departments[index % departments.count]
            return employee
        }
    }

    @Test(arguments: agreementCases)
    func storesAndPendingObjectsAgree(_ testCase: AgreementCase) throws {
        // Unsaved objects, evaluated in memory by the fetch, and directly.
        let pendingStack = try TestStack(.inMemory, model: FetchTestModel.model)
        let pendingContext = pendingStack.context()
        let inserted = FetchTestModel.insertDataSet(into: pendingContext)
        let all: [ManagedObject] =
            inserted.departments + inserted.employees
            + Self.insertUnicodeNames(into: pendingContext, departments: inserted.departments)
        let pendingLookup = FetchLookup(all)
        let direct = try Self.evaluateDirectly(testCase, all, lookup: pendingLookup)
        let pending = try Self.run(testCase, in: pendingContext, lookup: pendingLookup)
        #expect(pending == direct, "pending objects: \(testCase)")

        for kind in StoreKind.allCases {
            let stack = try TestStack(kind, model: FetchTestModel.model)
            let saving = stack.context()
            let departments = FetchTestModel.insertDataSet(into: saving).departments
            Self.insertUnicodeNames(into: saving, departments: departments)
            try saving.save()
            let context = stack.context()
            let saved = try Self.run(testCase, in: context, lookup: try FetchLookup(context: stack.context()))
            #expect(saved == direct, "\(kind) store: \(testCase)")
        }
    }
}
