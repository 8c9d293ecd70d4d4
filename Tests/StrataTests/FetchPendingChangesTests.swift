import Foundation
import Strata
import Testing

/// includesPendingChanges in every combination: an unsaved insert, update or delete of an object that
/// matches or not before and after the change, with the option on and off, on both store kinds.
@Suite struct FetchPendingChangesTests {
    enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case insertMatching, insertNotMatching
        case updateToMatch, updateToNotMatch, updateStillMatching, updateStillNotMatching
        case deleteMatching, deleteNotMatching

        var testDescription: String { rawValue }
    }

    /// Runs `salary > 150` sorted by salary after one change; returns the keys with and without pending changes.
    static func results(
        _ kind: StoreKind, _ change: Change
    ) throws -> (pending: [String], stored: [String], counts: [Int]) {
        let stack = try TestStack(kind, model: FetchTestModel.model)
        let seed = stack.context()
        for (serial, salary) in [(1, 100), (2, 200), (3, 300)] as [(Int64, Int64)] {
            let employee = FetchEmployee(context: seed)
            employee.serial = serial
            employee.salary = salary
        }
        try seed.save()
        let context = stack.context()
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try request.setPredicate(format: "salary > %d", 150)
        request.sortKeys = [SortKey("salary")]
        let byID = Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee")).map {
                ($0.serial, $0)
            })
        switch change {
        case .insertMatching, .insertNotMatching:
            let employee = FetchEmployee(context: context)
            employee.serial = 9
            employee.salary = change == .insertMatching ? 250 : 10
        case .updateToMatch: byID[1]!.salary = 400
        case .updateToNotMatch: byID[2]!.salary = 120
        case .updateStillMatching: byID[2]!.salary = 350
        case .updateStillNotMatching: byID[1]!.salary = 90
        case .deleteMatching: context.delete(byID[3]!)
        case .deleteNotMatching: context.delete(byID[1]!)
        }
        let pending = try context.fetch(request).map(fetchKey)
        let pendingCount = try context.count(for: request)
        request.includesPendingChanges = false
        let stored = try context.fetch(request).map(fetchKey)
        let storedCount = try context.count(for: request)
        return (pending, stored, [pendingCount, storedCount])
    }

    @Test(arguments: StoreKind.allCases, Change.allCases)
    func pendingChangesAreFoldedInOnlyWhenAsked(_ kind: StoreKind, _ change: Change) throws {
        let (pending, stored, counts) = try Self.results(kind, change)
        let expected: [String] =
            switch change {
            case .insertMatching: ["e2", "e9", "e3"]
            case .insertNotMatching, .updateStillNotMatching, .deleteNotMatching: ["e2", "e3"]
            case .updateToMatch: ["e2", "e3", "e1"]
            case .updateToNotMatch: ["e3"]
            case .updateStillMatching: ["e3", "e2"]
            case .deleteMatching: ["e2"]
            }
        #expect(pending == expected)
        // Without pending changes the stores' answer stands: saved rows that match as stored, in stored order
        // (a registered object keeps its in-memory values, as uniquing requires).
        #expect(stored == ["e2", "e3"])
        #expect(counts == [expected.count, 2])
    }

    @Test(arguments: StoreKind.allCases)
    func everyKindOfChangeAtOnceWithAWindow(_ kind: StoreKind) throws {
        let stack = try FetchTestModel.savedStack(kind)
        let context = stack.context()
        let all = try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))
        all[0].salary = 999  // e1 now first by salary descending
        context.delete(all[1])
        let newcomer = FetchEmployee(context: context)
        newcomer.serial = 100
        newcomer.salary = 500
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        request.sortKeys = [SortKey("salary", ascending: false), SortKey("serial")]
        request.fetchLimit = 3
        let top = try context.fetch(request).map(fetchKey)
        #expect(top.prefix(2) == ["e1", "e100"])
        #expect(top.count == 3)
        request.fetchLimit = 0
        request.fetchOffset = 1
        let rest = try context.fetch(request)
        #expect(rest.count == FetchTestModel.employeeNames.count - 1 + 1 - 1)
        #expect(!rest.contains { $0 === all[1] })
        #expect(try context.count(for: request) == rest.count)
    }

    /// Pending changes of another entity leave the sort and the window to the store (its results become objects
    /// without a merge), and the fetched objects are the registered ones; a pending change of the fetched entity is
    /// still folded in.
    @Test(arguments: StoreKind.allCases)
    func anotherEntitysPendingChangesLeaveTheWindowToTheStore(_ kind: StoreKind) throws {
        let stack = try TestStack(kind, model: FetchTestModel.model)
        let seed = stack.context()
        for (serial, salary) in [(1, 100), (2, 200), (3, 300), (4, 400)] as [(Int64, Int64)] {
            let employee = FetchEmployee(context: seed)
            employee.serial = serial
            employee.salary = salary
        }
        try seed.save()
        let context = stack.context()
        let registered = try context.fetch(FetchRequest<FetchEmployee>(entityName: "FetchEmployee"))
        let department = FetchDepartment(context: context)
        department.name = "unsaved"
        #expect(context.hasChanges)
        let request = FetchRequest<FetchEmployee>(entityName: "FetchEmployee")
        try request.setPredicate(format: "salary > %d", 150)
        request.sortKeys = [SortKey("salary", ascending: false)]
        request.fetchOffset = 1
        request.fetchLimit = 2
        let window = try context.fetch(request)
        #expect(window.map(fetchKey) == ["e3", "e2"])
        #expect(window.allSatisfy { found in registered.contains { $0 === found } })
        #expect(try context.count(for: request) == 2)
        let newcomer = FetchEmployee(context: context)
        newcomer.serial = 9
        newcomer.salary = 350
        #expect(try context.fetch(request).map(fetchKey) == ["e9", "e3"])
    }
}
