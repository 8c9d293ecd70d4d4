import Foundation
import Strata
import Testing

/// Key-value coding's key paths and predicates' key paths are one walk: `value(forKeyPath:)` gives, for every
/// collection operator, what a sort key (and so a predicate) computes over the same objects.
@Suite struct KeyPathAgreementTests {
    /// Whether a key-value coding result is the walk's value (numbers as `NSNumber`s).
    private func same(_ kvc: Any?, _ walked: QueryValue) -> Bool {
        switch walked {
        case .null: kvc == nil
        case .int(let value): (kvc as? NSNumber)?.int64Value == value && !(kvc is Decimal)
        case .double(let value): (kvc as? NSNumber)?.doubleValue == value && !(kvc is Decimal)
        case .decimal(let value): kvc as? Decimal == value
        case .string(let value): kvc as? String == value
        case .date(let value): kvc as? Date == value
        default: false
        }
    }

    @Test(arguments: StoreKind.allCases)
    func collectionOperatorsAgreeWithTheWalkPredicatesUse(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let paths = [
            "employees.@count", "employees.@sum.salary", "employees.@avg.salary", "employees.@min.salary",
            "employees.@max.salary", "employees.@sum.rating", "employees.@avg.rating", "employees.@max.rating",
            "employees.@sum.bonus", "employees.@avg.bonus", "employees.@min.bonus", "employees.@min.name",
            "employees.@max.name", "employees.@min.hired", "employees.@max.hired",
        ]
        let departments = try context.fetch(FetchRequest<FetchDepartment>(entityName: "FetchDepartment"))
        #expect(departments.count == FetchTestModel.departmentNames.count)
        for department in departments {
            for path in paths {
                let walked = try SortKey(QueryKeyPath(path)).value(of: department)
                let kvc = try department.value(forKeyPath: path)
                #expect(same(kvc, walked), "\(department.name ?? "nil") \(path): \(String(describing: kvc)), \(walked)")
                #expect(try ObjectPredicate(format: "\(path) == %@", walked).evaluate(with: department))
            }
        }
        // Through a nil to-one: nil, as in a predicate (the employee with serial 9 has no department).
        let alone = try #require(
            try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee")).first { $0.serial == 9 })
        #expect(try alone.value(forKeyPath: "department.employees.@count") == nil)
        #expect(try SortKey("department.employees.@count").value(of: alone) == .null)
        // Values through a to-many: a set of those that are not nil; a union operator's: an array.
        let sales = try #require(departments.first { $0.name == "Sales" })
        let names = try #require(try sales.value(forKeyPath: "employees.name") as? Set<AnyHashable>)
        #expect(names == Set(sales.employees.compactMap(\.name)))
        let floors = try #require(
            try sales.value(forKeyPath: "employees.department.@distinctUnionOfObjects.floor") as? [Any])
        #expect(floors.count == 1)
    }
}
