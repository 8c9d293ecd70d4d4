import Testing

@testable import Strata

/// The position assignment behind ordered relationships: few rewrites, always a correct order.
@Suite struct OrderedPositionsTests {
    /// Applies an assignment and returns the members sorted by their resulting positions.
    private func apply(_ order: [Int], _ stored: [Int: Int64]) -> (sorted: [Int], written: Int) {
        var positions = stored
        let changes = OrderedPositions.assign(order: order, stored: stored)
        for change in changes { positions[order[change.index]] = change.position }
        let kept = Set(order)
        let sorted = positions.filter { kept.contains($0.key) }.sorted { $0.value < $1.value }.map(\.key)
        return (sorted, changes.count)
    }

    @Test func appendingAndInsertingWriteOnlyTheNewMembers() {
        var stored: [Int: Int64] = [:]
        for member in 0..<100 { stored[member] = Int64(member) * OrderedPositions.spacing }
        var order = Array(0..<100)
        order.insert(1000, at: 50)
        order.append(1001)
        order.insert(1002, at: 0)
        let (sorted, written) = apply(order, stored)
        #expect(sorted == order)
        #expect(written == 3)
    }

    @Test func aMoveRewritesOneMember() {
        var stored: [Int: Int64] = [:]
        for member in 0..<50 { stored[member] = Int64(member) * 7 }
        var order = Array(0..<50)
        order.remove(at: 10)
        order.insert(10, at: 40)
        let (sorted, written) = apply(order, stored)
        #expect(sorted == order)
        #expect(written == 1)
    }

    @Test func aFullGapRenumbersAndStaysCorrect() {
        let stored: [Int: Int64] = [0: 0, 1: 1]
        let order = [0, 2, 1]
        let (sorted, written) = apply(order, stored)
        #expect(sorted == order)
        #expect(written == 3)
    }

    @Test func randomReorderingsAlwaysGiveTheRequestedOrder() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let count = Int.random(in: 0..<40, using: &generator)
            var stored: [Int: Int64] = [:]
            var position: Int64 = Int64.random(in: -1000...1000, using: &generator)
            for member in 0..<count where Bool.random(using: &generator) {
                position += Int64.random(in: 1...5, using: &generator)
                stored[member] = position
            }
            let order = Array(0..<(count + 5)).shuffled(using: &generator)
            #expect(apply(order, stored).sorted == order)
        }
        #expect(OrderedPositions.longestIncreasingRun([3, nil, 1, 2, 5, 4, 6]).count == 4)
    }
}
