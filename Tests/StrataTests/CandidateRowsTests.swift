import StrataTestSupport
import Testing

@testable import Strata

/// The Strata store's candidate rows (an index range per element of `IN`, row IDs a request names) come in
/// increasing row-ID order, each once, whatever order and repetitions their sources gave.
@Suite struct CandidateRowsTests {
    @Test func rowsAreSortedEachOnce() {
        #expect(StrataStore.increasingWithoutDuplicates([]) == [])
        #expect(StrataStore.increasingWithoutDuplicates([7]) == [7])
        #expect(StrataStore.increasingWithoutDuplicates([3, 1, 2]) == [1, 2, 3])
        #expect(StrataStore.increasingWithoutDuplicates([5, 5, 5]) == [5])
        #expect(StrataStore.increasingWithoutDuplicates([9, 1, 9, 0, 1, .max, 0]) == [0, 1, 9, .max])
    }

    @Test func randomRowsAgreeWithASortedSet() {
        let seed: UInt64 = 0x5EED_0018
        var random = RepeatableRandomNumberGenerator(seed: seed)
        for count in [1, 2, 10, 1_000] {
            let rows = (0..<count).map { _ in UInt64.random(in: 0..<UInt64(count), using: &random) }
            #expect(StrataStore.increasingWithoutDuplicates(rows) == Set(rows).sorted(), "seed \(seed): \(rows)")
        }
    }
}
