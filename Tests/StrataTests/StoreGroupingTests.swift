import Foundation
import Strata
import Testing

/// Dictionary fetches grouped and aggregated in the store (``StoreFetchRequest/ResultKind/groups(keys:aggregates:)``):
/// the Strata store folds them on row bytes (a to-one by row ID, integers in place), the others from the values
/// they read; every store must give what the key-path walk computes over the same objects.
@Suite struct StoreGroupingTests {
    /// The value of a collection operator over values, through the key-path walk (KVC's and predicates' road).
    private func walk(_ op: CollectionOperator, _ values: [QueryValue]) throws -> QueryValue {
        try SortKey(QueryKeyPath(components: [.key("values"), .collectionOperator(op)]))
            .value(of: ["values": QueryValue.array(values)])
    }

    private func department(_ employee: FetchEmployee) -> QueryValue {
        employee.department.map { .identity(ObjectIdentity($0.objectID)) } ?? .null
    }

    private func groupedByDepartment(_ predicate: String?) throws -> FetchRequest<[String: QueryValue]> {
        let request = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        request.predicate = try predicate.map { try ObjectPredicate(format: $0) }
        request.propertiesToFetch = [
            "department",
            .expression(ExpressionDescription(name: "rows", .count(nil))),
            .expression(ExpressionDescription(name: "rated", .count("rating"))),
            .expression(ExpressionDescription(name: "salaries", .sum("salary"))),
            .expression(ExpressionDescription(name: "average", .average("salary"), resultType: .double)),
            .expression(ExpressionDescription(name: "ratings", .sum("rating"))),
            .expression(ExpressionDescription(name: "bonuses", .average("bonus"))),
            .expression(ExpressionDescription(name: "first", .min("hired"))),
            .expression(ExpressionDescription(name: "last", .max("name"))),
            .expression(ExpressionDescription(name: "low", .min("salary"), resultType: .double)),
        ]
        request.propertiesToGroupBy = ["department"]
        return request
    }

    /// The dictionaries `groupedByDepartment` must give, from the objects: nil department first, then by row.
    private func expected(_ employees: [FetchEmployee]) throws -> [[String: QueryValue]] {
        var groups: [QueryValue: [FetchEmployee]] = [:]
        var order: [QueryValue] = []
        for employee in employees {
            let key = department(employee)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(employee)
        }
        order.sort { [SortKey("key")].compare(values: [$0], [$1]) == .orderedAscending }
        return try order.map { key in
            let members = groups[key]!
            var dictionary: [String: QueryValue] = [
                "rows": .int(Int64(members.count)),
                "rated": .int(Int64(members.filter { $0.rating != nil }.count)),
                "salaries": .int(members.map(\.salary).reduce(0, +)),
                "average": .double(Double(members.map(\.salary).reduce(0, +)) / Double(members.count)),
                "low": .double(Double(members.map(\.salary).min()!)),
            ]
            if key != .null { dictionary["department"] = key }
            let values: [(String, CollectionOperator, [QueryValue])] = [
                ("ratings", .sum, members.map { $0.rating.map(QueryValue.double) ?? .null }),
                ("bonuses", .avg, members.map { $0.bonus.map(QueryValue.decimal) ?? .null }),
                ("first", .min, members.map { $0.hired.map(QueryValue.date) ?? .null }),
                ("last", .max, members.map { $0.name.map(QueryValue.string) ?? .null }),
            ]
            for (name, op, values) in values {
                let value = try walk(op, values)
                if value != .null { dictionary[name] = value }
            }
            return dictionary
        }
    }

    @Test(arguments: StoreKind.allCases)
    func groupedByAToOneAsTheKeyPathWalkComputes(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        // A predicate the Strata store compiles (folded on bytes), one it does not (read as values), none.
        for predicate in [nil, "salary > 100 AND bonus != nil", "department.name BEGINSWITH[cd] 'e' OR rating == nil"] {
            let employees = try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))
                .filter { employee in
                    try predicate.map { try ObjectPredicate(format: $0).evaluate(with: employee) } ?? true
                }
                .sorted { $0.serial < $1.serial }
            let registered = context.registeredObjects.count
            let groups = try context.fetch(try groupedByDepartment(predicate))
            #expect(context.registeredObjects.count == registered, "no object made")
            #expect(groups == (try expected(employees)), "\(kind), \(predicate ?? "no predicate")")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func groupedBySeveralKeysWithHavingAndSort(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let employees = try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))
        let request = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        request.propertiesToFetch = [
            "active", "department", .expression(ExpressionDescription(name: "n", .count(nil))),
            .expression(ExpressionDescription(name: "top", .max("salary"))),
        ]
        request.propertiesToGroupBy = ["department", "active"]
        request.havingPredicate = try ObjectPredicate(format: "n >= 2")
        request.sortKeys = [SortKey("top", ascending: false)]
        let groups = try context.fetch(request)
        var members: [[QueryValue]: [FetchEmployee]] = [:]
        for employee in employees {
            members[[department(employee), .bool(employee.active)], default: []].append(employee)
        }
        let kept = members.filter { $0.value.count >= 2 }
        #expect(groups.count == kept.count)
        for group in groups {
            let key = [group["department"] ?? .null, group["active"] ?? .null]
            let rows = try #require(kept[key])
            #expect(group["n"] == .int(Int64(rows.count)))
            #expect(group["top"] == .int(rows.map(\.salary).max()!))
        }
        let tops = groups.map { $0["top"] ?? .null }
        #expect(tops == tops.sorted { $0.predicateCompare($1) == .orderedDescending })
    }

    @Test(arguments: StoreKind.allCases)
    func aggregatesWithoutGroupsOverNoRowsGiveOneDictionary(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let request = FetchRequest<[String: QueryValue]>(entityName: "FetchEmployee")
        request.predicate = try ObjectPredicate(format: "salary > 100000")
        request.propertiesToFetch = [
            .expression(ExpressionDescription(name: "n", .count(nil))),
            .expression(ExpressionDescription(name: "sum", .sum("salary"))),
            .expression(ExpressionDescription(name: "avg", .average("salary"))),
            .expression(ExpressionDescription(name: "max", .max("name"))),
        ]
        #expect(try context.fetch(request) == [["n": .int(0), "sum": .int(0)]])
    }

    @Test(arguments: StoreKind.allCases)
    func storeRequestFoldsGroupsInTheOrderTheirFirstRowsCame(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        var request = StoreFetchRequest(entity: FetchTestModel.model.entity(named: "FetchEmployee")!)
        request.predicate = try ObjectPredicate(format: "serial <= 8")
        request.resultKind = .groups(
            keys: [QueryKeyPath("active")],
            aggregates: [.init(.sum, QueryKeyPath("serial")), .init(.count, QueryKeyPath("rating"))])
        let result = try stack.store.fetch(request)
        // Serials 1...8: active unless a multiple of 3; rating nil for 5.
        #expect(result.groups.map(\.keys) == [[.bool(true)], [.bool(false)]])
        #expect(result.groups.map(\.rowCount) == [6, 2])
        let active: [QueryValue] = [.int(27), .int(5)]
        let inactive: [QueryValue] = [.int(9), .int(2)]
        #expect(result.groups.map(\.aggregates) == [active, inactive])
        #expect(result.count == 2)
    }
}
