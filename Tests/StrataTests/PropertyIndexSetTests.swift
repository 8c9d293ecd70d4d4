import Testing

@testable import Strata

/// The set of changed property indexes each object keeps: bits for the first 64, a set beyond.
@Suite struct PropertyIndexSetTests {
    @Test func insertsRemovesAndIteratesInAscendingOrderAcrossTheWordBoundary() {
        var set: PropertyIndexSet = []
        #expect(set.isEmpty)
        for index in [70, 3, 63, 64, 0, 3, 200] { set.insert(index) }
        #expect(Array(set) == [0, 3, 63, 64, 70, 200])
        #expect(set.count == 6)
        #expect(set.contains(63) && set.contains(64) && !set.contains(1) && !set.contains(65))
        set.remove(63)
        set.remove(200)
        set.remove(5)
        #expect(Array(set) == [0, 3, 64, 70])
        for index in Array(set) { set.remove(index) }
        #expect(set.isEmpty)
        #expect(set == [])
    }

    @Test func equalityIgnoresInsertionOrder() {
        #expect(PropertyIndexSet([1, 65, 2]) == PropertyIndexSet([65, 2, 1]))
        #expect(PropertyIndexSet([1]) != PropertyIndexSet([1, 64]))
    }
}
