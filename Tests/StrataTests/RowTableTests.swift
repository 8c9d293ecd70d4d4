import StrataTestSupport
import Testing

@testable import Strata

/// The row cache's hash table: every sequence of insertions, changes and removals leaves it holding what a
/// dictionary would.
@Suite struct RowTableTests {
    static func expectSame(_ table: RowTable<Int>, _ model: [UInt64: Int], probes: [UInt64]) {
        #expect(table.count == model.count)
        for rowID in probes {
            #expect(table.slot(of: rowID).map { table[$0] } == model[rowID], "row \(rowID)")
        }
    }

    @Test(arguments: [(0 as UInt64)...200, 1...50_000])
    func randomInsertionsChangesAndRemovalsMatchADictionary(rowIDs: ClosedRange<UInt64>) {
        var generator = RepeatableRandomNumberGenerator(seed: rowIDs.upperBound)
        let table = RowTable<Int>()
        var model: [UInt64: Int] = [:]
        let span = rowIDs.upperBound - rowIDs.lowerBound + 1
        for step in 0..<20_000 {
            let rowID = rowIDs.lowerBound + generator.next() % span
            switch generator.next() % 4 {
            case 0, 1:
                if let slot = table.slot(of: rowID) {
                    table[slot] += 1
                    model[rowID]! += 1
                } else {
                    table.insert(step, for: rowID)
                    model[rowID] = step
                }
            default:
                if let slot = table.slot(of: rowID) {
                    table.remove(at: slot)
                    #expect(model.removeValue(forKey: rowID) != nil)
                } else {
                    #expect(model[rowID] == nil)
                }
            }
        }
        Self.expectSame(table, model, probes: Array(rowIDs.prefix(300)) + model.keys.prefix(300))
        #expect(table.count(where: { _ in true }) == model.count)
    }

    @Test func removingEveryRowLeavesAnEmptyTableThatTakesRowsAgain() {
        let table = RowTable<Int>()
        for rowID in UInt64(1)...5_000 { table.insert(Int(rowID), for: rowID) }
        // Remove in an order unrelated to the slots, so that probe runs are cut in the middle.
        let order =
            Array(stride(from: UInt64(4_999), through: 1, by: -2)) + stride(from: UInt64(5_000), through: 2, by: -2)
        for rowID in order {
            guard let slot = table.slot(of: rowID) else {
                Issue.record("row \(rowID) missing")
                return
            }
            #expect(table[slot] == Int(rowID))
            table.remove(at: slot)
            #expect(table.slot(of: rowID) == nil)
        }
        #expect(table.count == 0)
        table.insert(7, for: 3)
        #expect(table.slot(of: 3).map { table[$0] } == 7)
    }

    @Test func reservedRoomTakesThatManyRowsWithoutGrowing() {
        let table = RowTable<Int>()
        for rowID in UInt64(1)...1_000 { table.insert(Int(rowID), for: rowID) }
        table.reserveCapacity(1_000 + 70_000)
        let reserved = table.capacity
        // The fewest slots that hold them at 7/8 full: no more room than the rows need.
        #expect(reserved == 71_000 * 8 / 7 + 1)
        for rowID in UInt64(1_001)...71_000 { table.insert(Int(rowID), for: rowID) }
        #expect(table.capacity == reserved)
        // Asking for less than it has changes nothing; the next row grows it as before.
        table.reserveCapacity(10)
        #expect(table.capacity == reserved)
        table.insert(0, for: 71_001)
        #expect(table.capacity > reserved)
        #expect(table.count == 71_001)
        #expect((UInt64(1)...71_000).allSatisfy { table.slot(of: $0).map { table[$0] } == Int($0) })
    }

    @Test func insertingIfAbsentFindsAnEntryOrMakesOneWithOneSearch() {
        let table = RowTable<Int>()
        var made = 0
        for rowID in UInt64(0)..<3_000 {
            let (slot, inserted) = table.slot(of: rowID) {
                made += 1
                return Int(rowID)
            }
            #expect(inserted && table[slot] == Int(rowID))
        }
        // Present rows are found, not made again.
        for rowID in UInt64(0)..<3_000 where rowID % 7 == 0 {
            let (slot, inserted) = table.slot(of: rowID) {
                made += 1
                return -1
            }
            #expect(!inserted && table[slot] == Int(rowID))
        }
        #expect(made == 3_000 && table.count == 3_000)
        // A removed row's search passes its tombstone; made again, it takes the run's first free slot.
        for rowID in UInt64(0)..<3_000 where rowID % 3 == 0 { table.remove(at: table.slot(of: rowID)!) }
        #expect(table.count == 2_000)
        #expect(
            (UInt64(0)..<3_000).allSatisfy { table.slot(of: $0).map { table[$0] } == ($0 % 3 == 0 ? nil : Int($0)) })
        for rowID in UInt64(0)..<3_000 where rowID % 3 == 0 {
            #expect(table.slot(of: rowID) { Int(rowID) + 1 }.inserted)
        }
        #expect(
            (UInt64(0)..<3_000).allSatisfy { table.slot(of: $0).map { table[$0] } == Int($0) + ($0 % 3 == 0 ? 1 : 0) })
    }

    @Test func tombstonesAreDroppedByARehashAtTheSameSizeNotByGrowing() {
        let table = RowTable<Int>()
        for rowID in UInt64(1)...1_000 { table.insert(Int(rowID), for: rowID) }
        // Rows come and go with the count steady: tombstones fill the table, and it is rehashed at its size (it grows
        // once, when a rehash finds it more than 2/3 full of entries, to half as many slots again as entries).
        for round in UInt64(1)...20 {
            for rowID in UInt64(1)...1_000 where rowID % 4 == round % 4 {
                table.remove(at: table.slot(of: rowID + (round - 1) * 1_000)!)
                table.insert(Int(rowID), for: rowID + round * 1_000)
            }
            for rowID in UInt64(1)...1_000 where rowID % 4 != round % 4 {
                table.remove(at: table.slot(of: rowID + (round - 1) * 1_000)!)
                table.insert(Int(rowID), for: rowID + round * 1_000)
            }
            #expect(table.count == 1_000)
            #expect(table.count + table.tombstoneCount <= table.capacity * 7 / 8)
        }
        #expect(table.capacity <= 1_001 * 3 / 2)
        #expect((UInt64(1)...1_000).allSatisfy { table.slot(of: $0 + 20_000).map { table[$0] } == Int($0) })
        // The last entry gone, the tombstones go with it.
        for rowID in UInt64(20_001)...21_000 { table.remove(at: table.slot(of: rowID)!) }
        #expect(table.count == 0 && table.tombstoneCount == 0)
        #expect(table.slot(of: 20_500) == nil)
    }

    @Test func anEmptiedTableLetsGoOfItsSlotsAndRegrowsToItsFormerPeakInOneStep() {
        let table = RowTable<Int>()
        for rowID in UInt64(1)...5_000 { table.insert(Int(rowID), for: rowID) }
        #expect(table.capacity > 5_000)
        for rowID in UInt64(1)...5_000 { table.remove(at: table.slot(of: rowID)!) }
        // Empty, it holds no slots: one row at a time then lands in a small table, never in a large sparse one.
        #expect(table.count == 0 && table.capacity == 0 && table.tombstoneCount == 0)
        for rowID in UInt64(1)...100 {
            table.insert(Int(rowID), for: rowID)
            #expect(table.capacity == RowTable<Int>.smallCapacity)
            table.remove(at: table.slot(of: rowID)!)
        }
        // Filled again, it grows once past a small table's size, straight to the fewest slots that hold 5,000 rows.
        var capacities: Set<Int> = []
        for rowID in UInt64(10_001)...15_000 {
            table.insert(Int(rowID), for: rowID)
            capacities.insert(table.capacity)
        }
        #expect(capacities == [RowTable<Int>.smallCapacity, 5_000 * 8 / 7 + 1])
        #expect((UInt64(10_001)...15_000).allSatisfy { table.slot(of: $0).map { table[$0] } == Int($0) })
        #expect(table.slot(of: 1) == nil)
        // Filled with fewer rows after that, it remembers the smaller peak.
        for rowID in UInt64(10_001)...15_000 { table.remove(at: table.slot(of: rowID)!) }
        for rowID in UInt64(1)...300 { table.insert(Int(rowID), for: rowID) }
        for rowID in UInt64(1)...300 { table.remove(at: table.slot(of: rowID)!) }
        for rowID in UInt64(1)...300 { table.insert(Int(rowID), for: rowID) }
        #expect(table.capacity == 300 * 8 / 7 + 1)
        #expect(table.count == 300 && (UInt64(1)...300).allSatisfy { table.slot(of: $0).map { table[$0] } == Int($0) })
    }

    @Test func updateEachChangesEveryValueInPlace() {
        let table = RowTable<Int>()
        for rowID in UInt64(10)..<20 { table.insert(1, for: rowID) }
        table.updateEach { $0 *= 5 }
        #expect((UInt64(10)..<20).allSatisfy { table.slot(of: $0).map { table[$0] } == 5 })
        #expect(table.count(where: { $0 == 5 }) == 10)
    }
}
