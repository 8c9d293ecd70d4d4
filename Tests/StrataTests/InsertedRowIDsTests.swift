import Strata
import Testing

/// The row IDs of a save's inserts, kept as runs of consecutive IDs: they read back as the IDs appended.
@Suite struct InsertedRowIDsTests {
    @Test func consecutiveAndScatteredIDsReadBackInTheirOrder() {
        // Two tables' runs, an ID obtained earlier in the middle, a gap, a repeat and a fall.
        let appended: [UInt64] = [1, 2, 3, 7, 4, 5, 100, 101, 101, 102, 0, 1, .max - 1, .max]
        var rowIDs = InsertedRowIDs()
        for rowID in appended { rowIDs.append(rowID) }
        #expect(rowIDs.count == appended.count)
        #expect(Array(rowIDs) == appended)
        for (position, rowID) in appended.enumerated() { #expect(rowIDs[position] == rowID) }
        #expect(rowIDs == InsertedRowIDs(appended))
    }

    @Test func aMillionConsecutiveIDsReadBackFromAnyPosition() {
        var rowIDs: InsertedRowIDs = [42]
        for rowID in UInt64(1)...1_000_000 { rowIDs.append(rowID) }
        #expect(rowIDs.count == 1_000_001)
        #expect(rowIDs[0] == 42)
        #expect(rowIDs[1] == 1)
        #expect(rowIDs[500_000] == 500_000)
        #expect(rowIDs.last == 1_000_000)
    }

    @Test func listsAreEqualWhenTheirIDsAre() {
        #expect(InsertedRowIDs() == [])
        #expect(InsertedRowIDs([1, 2, 3]) == [1, 2, 3])
        #expect(InsertedRowIDs([1, 2, 3]) != [1, 2, 4])
        #expect(InsertedRowIDs([1, 2, 3]) != [1, 2])
        #expect(InsertedRowIDs([3, 2, 1]) != [1, 2, 3])
    }
}
