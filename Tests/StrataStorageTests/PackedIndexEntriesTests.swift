import Testing

@testable import StrataStorage

/// ``PackedIndexEntries/sorted(inRowOrder:including:)`` orders entries by their bytes, equal ones in the order they
/// were appended, whichever way it sorts: comparing entries (few of them, or keys that do not group) or grouping them
/// by key (many entries of few keys).
@Suite struct PackedIndexEntriesTests {
    /// An entry as an index on a small integer makes it: `keyLength` bytes of key, then the row ID big-endian.
    private static func entry(key: UInt8, keyLength: Int, row: UInt64) -> [UInt8] {
        [UInt8](repeating: 0x40, count: keyLength - 1) + [key] + withUnsafeBytes(of: row.bigEndian) { Array($0) }
    }

    /// Entries of `keys` distinct keys appended in increasing row order (some rows twice, as an insert and a removal
    /// of one entry would be), and the order they must sort to: by bytes, equal ones by position.
    private static func entries(count: Int, keys: Int, keyLength: Int, seed: UInt64) -> Appended {
        var random = seed
        func next() -> UInt64 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return random >> 33
        }
        var packed = PackedIndexEntries()
        var appended: [[UInt8]] = []
        var row: UInt64 = 0
        while appended.count < count {
            if next() % 4 != 0 || appended.isEmpty { row += 1 + next() % 3 }
            let bytes = entry(key: UInt8(next() % UInt64(keys)), keyLength: keyLength, row: row)
            packed.append(bytes, tag: appended.count)
            appended.append(bytes)
        }
        let expected = appended.indices.sorted { a, b in
            appended[a] != appended[b] ? appended[a].lexicographicallyPrecedes(appended[b]) : a < b
        }
        return Appended(packed: packed, expected: expected)
    }

    private struct Appended {
        var packed: PackedIndexEntries
        var expected: [Int]
    }

    @Test(arguments: [1, 2, 5, 31, 32, 33, 64, 500])
    func entriesInRowOrderSortByBytesAndThenByPosition(count: Int) {
        for (keys, keyLength) in [(1, 9), (3, 9), (40, 9), (7, 20)] {
            let appended = Self.entries(count: count, keys: keys, keyLength: keyLength, seed: UInt64(count))
            let (packed, expected) = (appended.packed, appended.expected)
            for inRowOrder in [true, false] {
                let sorted = packed.sorted(inRowOrder: inRowOrder).map { packed.tag(of: $0) }
                #expect(
                    sorted == expected, "count \(count), \(keys) keys of \(keyLength) bytes, inRowOrder \(inRowOrder)")
            }
        }
    }

    @Test(arguments: [3, 32, 33, 200])
    func onlyTheIncludedEntriesAreSorted(count: Int) {
        let appended = Self.entries(count: count, keys: 4, keyLength: 9, seed: 7)
        let (packed, expected) = (appended.packed, appended.expected)
        let sorted = packed.sorted(inRowOrder: true, including: { $0 % 2 == 0 }).map { packed.tag(of: $0) }
        #expect(sorted == expected.filter { $0 % 2 == 0 })
    }
}
