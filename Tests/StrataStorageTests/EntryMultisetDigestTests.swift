import Testing

@testable import StrataStorage

/// The digest compaction and verification compare an index's entries with its table's rows by.
@Suite struct EntryMultisetDigestTests {
    /// Bytes 0, 1, 2, ... of `count`, each offset by `seed`.
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0) &+ seed }
    }

    /// Whatever an entry's length, its hash depends on its bytes alone (not on what lies around them in memory), and on
    /// every one of them, the tail's included.
    @Test func theHashReadsEveryByteOfTheEntryAndNoOther() {
        for count in 0...40 {
            let entry = Self.bytes(count, seed: 7)
            let hash = entry.withUnsafeBytes { EntryMultisetDigest.hash($0) }
            for (before, after) in [(0, 0), (3, 0), (0, 5), (9, 9)] {
                let padded = Self.bytes(before, seed: 200) + entry + Self.bytes(after, seed: 100)
                let lent = padded.withUnsafeBytes {
                    EntryMultisetDigest.hash(UnsafeRawBufferPointer(rebasing: $0[before..<before + count]))
                }
                #expect(lent == hash, "\(count) bytes after \(before), before \(after)")
            }
            for position in 0..<count {
                var changed = entry
                changed[position] ^= 0x01
                #expect(changed.withUnsafeBytes { EntryMultisetDigest.hash($0) } != hash, "\(count) bytes, \(position)")
            }
        }
    }

    @Test func equalMultisetsGiveEqualDigestsInAnyOrder() {
        let entries = (0..<50).map { Self.bytes($0 % 23, seed: UInt8($0)) }
        var forward = EntryMultisetDigest()
        var backward = EntryMultisetDigest()
        var missingOne = EntryMultisetDigest()
        for entry in entries { entry.withUnsafeBytes { forward.add($0) } }
        for entry in entries.reversed() { entry.withUnsafeBytes { backward.add($0) } }
        for entry in entries.dropLast() { entry.withUnsafeBytes { missingOne.add($0) } }
        #expect(forward == backward)
        #expect(forward != missingOne)
    }
}
