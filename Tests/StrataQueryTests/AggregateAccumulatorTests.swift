import Foundation
import StrataQuery
import Testing

@Suite struct AggregateAccumulatorTests {
    private func fold(_ op: CollectionOperator, _ values: [QueryValue]) -> QueryValue? {
        var accumulator = AggregateAccumulator(op)
        for value in values where !accumulator.add(value) { return nil }
        return accumulator.result
    }

    /// The same operator through a key path's collection operator (the predicate's and KVC's road).
    private func walk(_ op: CollectionOperator, _ values: [QueryValue]) throws -> QueryValue {
        try SortKey(QueryKeyPath(components: [.key("values"), .collectionOperator(op)]))
            .value(of: ["values": QueryValue.array(values)])
    }

    @Test func integersSumExactlyAndAverageAsDoubles() throws {
        let values: [QueryValue] = [.int(3), .null, .int(-10), .int(40)]
        #expect(fold(.sum, values) == .int(33))
        #expect(fold(.avg, values) == .double(11))
        #expect(fold(.min, values) == .int(-10))
        #expect(fold(.max, values) == .int(40))
        #expect(fold(.count, values) == .int(3))
        for op in [CollectionOperator.sum, .avg, .min, .max] { #expect(try walk(op, values) == fold(op, values)) }
    }

    @Test func integerAddsAsItsValueAdds() {
        var direct = AggregateAccumulator(.avg)
        var boxed = AggregateAccumulator(.avg)
        for number: Int64 in [7, -3, .max, 12] {
            direct.add(integer: number)
            _ = boxed.add(.int(number))
        }
        #expect(direct.result == boxed.result)
        #expect(direct.count == 4)
    }

    @Test func anOverflowingIntegerSumBecomesADouble() throws {
        let values: [QueryValue] = [.int(.max), .int(1), .int(-5)]
        let expected = Double(Int64.max) + 1 - 5
        #expect(fold(.sum, values) == .double(expected))
        #expect(try walk(.sum, values) == .double(expected))
    }

    @Test func decimalsAndIntegersSumAsDecimalsAfterAnOverflow() throws {
        // The integers before the decimal overflowed Int64: their decimal sum is still exact.
        let values: [QueryValue] = [.int(.max), .int(.max), .decimal(Decimal(string: "0.5")!), .int(2)]
        let expected = Decimal(Int64.max) + Decimal(Int64.max) + Decimal(string: "0.5")! + Decimal(2)
        #expect(fold(.sum, values) == .decimal(expected))
        #expect(fold(.avg, values) == .decimal(expected / Decimal(4)))
        #expect(try walk(.sum, values) == fold(.sum, values))
    }

    @Test func aDoubleMakesTheSumADouble() {
        #expect(fold(.sum, [.int(1), .double(0.5), .decimal(Decimal(2))]) == .double(3.5))
        #expect(fold(.avg, [.int(1), .double(0.5), .decimal(Decimal(2))]) == .double(3.5 / 3))
    }

    @Test func emptyFoldsAsTheKeyPathWalkDoes() throws {
        for op in [CollectionOperator.sum, .avg, .min, .max] {
            #expect(fold(op, [.null]) == (try walk(op, [.null])))
        }
        #expect(fold(.sum, []) == .int(0))
        #expect(fold(.avg, []) == .null)
        #expect(fold(.count, [.null]) == .int(0))
    }

    @Test func aSumOfSomethingElseIsRefused() {
        #expect(fold(.sum, [.int(1), .string("x")]) == nil)
        #expect(fold(.max, [.string("a"), .string("b")]) == .string("b"))
        #expect(fold(.sum, [.bool(true), .bool(true)]) == .int(2))
    }
}
