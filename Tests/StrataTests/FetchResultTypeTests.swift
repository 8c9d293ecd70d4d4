import Foundation
import Strata
import Testing

@Suite struct FetchResultTypeTests {
    @Test(arguments: StoreKind.allCases)
    func objectIDResultsRegisterNothing(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let request = FetchRequest<ManagedObjectID>(entityName: "FetchEmployee")
        try request.setPredicate(format: "department.name == %@", "Sales")
        let ids = try context.fetch(request)
        #expect(request.resultType == .managedObjectID)
        #expect(!ids.isEmpty)
        #expect(context.registeredObjects.isEmpty)
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func countResultAndCountForRequestReadNoRows(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let reads = stack.store.rowReads
        let request = FetchRequest<Int>(entityName: "FetchEmployee")
        #expect(try context.fetch(request) == [FetchTestModel.employeeNames.count])
        request.predicate = try ObjectPredicate(format: "salary > 150")
        let count = try context.count(for: request)
        #expect(try context.fetch(request) == [count])
        #expect(stack.store.rowReads == reads)
        #expect(context.registeredObjects.isEmpty)
        if case .count(let executed) = try context.execute(request) {
            #expect(executed == count)
        } else {
            Issue.record()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func faultsAndFilledObjectsAndIDsOnly(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.predicate = try ObjectPredicate(format: "salary > 150")
        var faults = try context.fetch(request)
        #expect(faults.allSatisfy { $0.isFault })
        // Rows came with the IDs: filling a fault needs no store read.
        let reads = stack.store.rowReads
        #expect(faults[0].salary > 150)
        #expect(stack.store.rowReads == reads)
        faults = []

        let filling = stack.context()
        request.returnsObjectsAsFaults = false
        let filled = try filling.fetch(request)
        #expect(filled.allSatisfy { !$0.isFault })

        let idsOnly = stack.context()
        request.includesPropertyValues = false
        request.returnsObjectsAsFaults = true
        let before = stack.coordinator.rowCacheStatistics.cachedRows
        let bare = try idsOnly.fetch(request)
        #expect(bare.count == filled.count && bare.allSatisfy { $0.isFault })
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == before)
        #expect(bare[0].salary > 150)
    }

    @Test(arguments: StoreKind.allCases)
    func prefetchingFillsRelatedObjectsInOneQuery(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.predicate = try ObjectPredicate(format: "department != nil")
        request.relationshipKeyPathsForPrefetching = ["department", "department.employees"]
        let employees = try context.fetch(request)
        let reads = stack.store.rowReads
        let departments = Set(employees.compactMap(\.department))
        #expect(departments.count == 4)
        #expect(departments.allSatisfy { !$0.isFault })
        #expect(departments.flatMap(\.employees).allSatisfy { !$0.isFault })
        #expect(stack.store.rowReads == reads)
        #expect(throws: FetchRequestError.self) {
            request.relationshipKeyPathsForPrefetching = ["salary"]
            _ = try context.fetch(request)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func dictionariesWithPropertiesExpressionsGroupsAndHaving(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let all = try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))

        let department = all[0].department
        let registered = context.registeredObjects.count
        // Plain properties, sorted, with a to-one as its ID; nil values are left out.
        let rows = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        rows.propertiesToFetch = ["serial", "name", "department", "department.name"]
        rows.sortKeys = [SortKey("serial")]
        rows.fetchLimit = 9
        let dictionaries = try context.fetch(rows)
        #expect(rows.resultType == .dictionary)
        #expect(dictionaries.count == 9)
        #expect(dictionaries[0]["name"] == "Ada" && dictionaries[0]["serial"] == 1)
        #expect(dictionaries[0]["department"]?.objectID == department?.objectID)
        #expect(dictionaries[0]["department.name"] == .string(department!.name!))
        #expect(dictionaries[8]["name"] == nil && dictionaries[8]["department"] == nil)
        #expect(context.registeredObjects.count == registered)  // nothing new registered

        // Distinct values.
        let floors = FetchRequest<[String: QueryValue]>(entityName: "FetchDepartment")
        floors.propertiesToFetch = ["floor"]
        floors.returnsDistinctResults = true
        #expect(Set(try context.fetch(floors).map { $0["floor"]! }) == [0, 1, 2])
        #expect(try context.fetch(floors).count == 3)

        // Aggregates over everything.
        let totals = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        totals.predicate = try ObjectPredicate(format: "rating != nil")
        totals.propertiesToFetch = [
            .expression(ExpressionDescription(name: "n", .count(nil))),
            .expression(ExpressionDescription(name: "sum", .sum("salary"))),
            .expression(ExpressionDescription(name: "avg", .average("rating"))),
            .expression(ExpressionDescription(name: "min", .min("salary"))),
            .expression(ExpressionDescription(name: "max", .max("name"))),
            .expression(ExpressionDescription(name: "avgInt", .average("salary"), resultType: .integer64)),
        ]
        let rated = all.filter { $0.rating != nil }
        let total = try #require(try context.fetch(totals).first)
        #expect(total["n"] == .int(Int64(rated.count)))
        #expect(total["sum"] == .int(rated.map(\.salary).reduce(0, +)))
        #expect(total["avg"] == .double(rated.map { $0.rating! }.reduce(0, +) / Double(rated.count)))
        #expect(total["min"] == .int(rated.map(\.salary).min()!))
        #expect(total["max"] == .string(rated.compactMap(\.name).max()!))
        #expect(total["avgInt"] == .int(rated.map(\.salary).reduce(0, +) / Int64(rated.count)))

        // Grouped by department, with a having predicate, sorted by the average.
        let grouped = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        grouped.propertiesToFetch = [
            "department.name", .expression(ExpressionDescription(name: "average", .average("salary"))),
            .expression(ExpressionDescription(name: "count", .count("serial"))),
        ]
        grouped.propertiesToGroupBy = ["department.name"]
        grouped.havingPredicate = try ObjectPredicate(format: "count >= 5")
        grouped.sortKeys = [SortKey("average", ascending: false)]
        let groups = try context.fetch(grouped)
        var expected: [String?: [Int64]] = [:]
        for employee in all { expected[employee.department?.name, default: []].append(employee.salary) }
        let kept = expected.filter { $0.value.count >= 5 }
        #expect(groups.count == kept.count)
        for group in groups {
            let name = group["department.name"].flatMap { if case .string(let s) = $0 { s } else { nil } }
            let salaries = try #require(kept[name])
            #expect(group["count"] == .int(Int64(salaries.count)))
            #expect(group["average"] == .double(Double(salaries.reduce(0, +)) / Double(salaries.count)))
        }
        let averages: [Double] = groups.map { group -> Double in
            if case .double(let value) = group["average"] { return value }
            return 0
        }
        #expect(averages == averages.sorted(by: >))
        if case .dictionaries(let executed) = try context.execute(grouped) {
            #expect(executed == groups)
        } else {
            Issue.record()
        }
    }

    @Test func optionsThatNeedDictionariesAreRejected() throws {
        let stack = try TestStack(.inMemory, model: FetchTestModel.model)
        let context = stack.context()
        let objects = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        objects.propertiesToGroupBy = ["name"]
        #expect(throws: FetchRequestError.requiresDictionaryResults(option: "propertiesToGroupBy")) {
            try context.fetch(objects)
        }
        let dictionaries = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        dictionaries.havingPredicate = .true
        #expect(throws: FetchRequestError.havingRequiresGroupBy) { try context.fetch(dictionaries) }
        dictionaries.havingPredicate = nil
        dictionaries.propertiesToFetch = ["name", .expression(ExpressionDescription(name: "n", .count(nil)))]
        dictionaries.propertiesToGroupBy = ["salary"]
        #expect(throws: FetchRequestError.propertyNotGrouped("name")) { try context.fetch(dictionaries) }
        let unknown = FetchRequest<ManagedObject>(entityName: "Nope")
        #expect(throws: ObjectGraphError.self) { try context.fetch(unknown) }
    }

    @Test(arguments: StoreKind.allCases)
    func executeReturnsIDsWithoutRegisteringOrPendingChanges(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let unsaved = FetchEmployee(context: context)
        unsaved.salary = 1_000
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try request.setPredicate(format: "salary > %d", 200)
        guard case .objectIDs(let ids) = try context.execute(request) else { Issue.record(); return }
        #expect(!ids.contains(unsaved.objectID))
        #expect(context.registeredObjects == [unsaved])
        #expect(try context.fetch(request).count == ids.count + 1)
    }

    @Test func sortingOnATransientOrUnknownKeyThrows() throws {
        let stack = try FetchTestModel.savedStack(.strata)
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.predicate = try ObjectPredicate(format: "nope == 1")
        #expect(throws: PredicateEvaluationError.self) { try context.fetch(request) }
    }

    @Test(arguments: StoreKind.allCases)
    func resultsOfSeveralClassesAreEachOfTheirOwnClassAsAnyResultType(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        // By salary, contractors fall between employees: the results' class changes from one result to the next.
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.sortKeys = [SortKey("salary"), SortKey("serial")]
        let employees = try context.fetch(request)
        #expect(employees.count == FetchTestModel.employeeNames.count)
        #expect(employees.allSatisfy { ($0 is FetchContractor) == ($0.serial > 26) })
        let changes = zip(employees, employees.dropFirst()).filter { type(of: $0) != type(of: $1) }.count
        #expect(changes > 2)
        // The same objects (uniquing) as the base class and as a protocol the classes conform to.
        let base = FetchRequest<ManagedObject>(entityName: "FetchEmployee")
        base.sortKeys = request.sortKeys
        #expect(zip(try context.fetch(base), employees).allSatisfy { $0 === $1 })
        let numbered = FetchRequest<any SerialNumbered>(entityName: "FetchEmployee")
        numbered.sortKeys = request.sortKeys
        #expect(try context.fetch(numbered).map(\.serial) == employees.map(\.serial))
    }

    @Test(arguments: StoreKind.allCases)
    func fetchedObjectsHoldOneRowCacheEntryEachUntilTheyGo(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try request.setPredicate(format: "salary > %d", 150)
        let (firstContext, secondContext) = (stack.context(), stack.context())
        var first: [FetchEmployee]? = try firstContext.fetch(request)
        let count = first!.count
        #expect(count > 1)
        #expect(stack.coordinator.rowCacheStatistics.entries == count)
        #expect(stack.coordinator.rowCacheStatistics.cachedRows == count)
        // Another context's results share the entries, and fill from them (firing its faults reads no store).
        var second: [FetchEmployee]? = try secondContext.fetch(request)
        #expect(stack.coordinator.rowCacheStatistics.entries == count)
        let reads = stack.store.rowReads
        #expect(second!.allSatisfy { $0.isFault && $0.salary > 150 })
        #expect(stack.store.rowReads == reads)
        // Each context's objects release their holds: the entries go with the last holder.
        first = nil
        #expect(stack.coordinator.rowCacheStatistics.entries == count)
        second = nil
        #expect(stack.coordinator.rowCacheStatistics.entries == 0)
    }
}

/// A protocol the fetch test model's employee classes conform to: a fetch may return its results as it.
protocol SerialNumbered {
    var serial: Int64 { get }
}

extension FetchEmployee: SerialNumbered {}
