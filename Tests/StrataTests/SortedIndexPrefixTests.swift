import Foundation
import Strata
import Testing

/// A fetch sorted first by an indexed integer attribute, with a limit: the Strata store reads only the front (or
/// back) of the index, plus the rest of the last key's rows, instead of scanning the table. Results are checked
/// against the in-memory store by PredicateStoreAgreementTests; here, that few rows are read.
@Suite struct SortedIndexPrefixTests {
    private func examined(
        _ entity: String, _ format: String, _ keys: [SortKey], limit: Int, offset: Int = 0
    ) throws -> (rows: Int, keys: [String]) {
        let stack = try FetchTestModel.savedStack(.strata)
        let store = try #require(stack.store as? StrataStore)
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try ObjectPredicate(format: format)
        request.sortKeys = keys
        request.fetchLimit = limit
        request.fetchOffset = offset
        request.includesSubentities = false
        let context = stack.context()
        let before = store.rowsExamined
        let keys = try context.fetch(request).map(fetchKey)
        return (store.rowsExamined - before, keys)
    }

    @Test func theFirstEntriesOfAnAscendingOrDescendingIndexAreRead() throws {
        let highest = try examined("FetchEmployee", "TRUEPREDICATE", [SortKey("serial", ascending: false)], limit: 3)
        #expect(highest.keys == ["e26", "e25", "e24"])  // 27...30 are contractors
        #expect(highest.rows == 3)
        let cheapest = try examined("FetchEmployee", "TRUEPREDICATE", [SortKey("salary")], limit: 2, offset: 1)
        #expect(cheapest.rows == 3)
        #expect(cheapest.keys.count == 2)
    }

    @Test func rowsThatDoNotMatchAreSkippedAndTheLastKeysTiesAreRead() throws {
        // Floors 0, 1, 2, 0, 1, 2: the two departments on floor 0 tie; both are read, the name orders them.
        let lowest = try examined(
            "FetchDepartment", "TRUEPREDICATE", [SortKey("floor"), SortKey("name", ascending: false)], limit: 1)
        #expect(lowest.rows == 2)
        #expect(lowest.keys == ["d:research"])
        // Serials 3, 6, 9 ... are inactive: skipped until five active ones are found.
        let active = try examined("FetchEmployee", "active == YES", [SortKey("serial")], limit: 5)
        #expect(active.keys == ["e1", "e2", "e4", "e5", "e7"])
        #expect(active.rows == 5)
    }

    @Test func aPredicateThatDoesNotCompileScans() throws {
        let scanned = try examined(
            "FetchEmployee", "department.name == 'Sales'", [SortKey("serial")], limit: 1)
        #expect(scanned.rows > 1)
    }
}
