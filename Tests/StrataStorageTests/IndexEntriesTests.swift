import Testing

@testable import StrataStorage

/// ``IndexEntries`` packs a node's entries in one buffer with their ends in another: inserting and removing in the
/// middle moves the bytes after and shifts the ends after (up by an insert's length, down by a removal's) exactly as
/// an array of entries would change.
@Suite struct IndexEntriesTests {
    @Test func insertsAndRemovalsAnywhereKeepEveryEntry() {
        var random: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((random >> 33) % UInt64(bound))
        }
        var model: [[UInt8]] = []
        var entries = IndexEntries([])
        for step in 0..<2_000 {
            if model.isEmpty || next(3) > 0 {
                let entry = (0..<(1 + next(40))).map { _ in UInt8(truncatingIfNeeded: next(256)) }
                let position = next(model.count + 1)
                model.insert(entry, at: position)
                entries.insert(entry, at: position)
            } else {
                let position = next(model.count)
                let removed = model.remove(at: position)
                if step % 2 == 0 {
                    #expect(entries.remove(at: position) == removed)
                } else {
                    entries.removeEntry(at: position)
                }
            }
            #expect(entries.count == model.count)
        }
        #expect(Array(entries) == model)
        #expect(entries.bytes.count == model.reduce(0) { $0 + $1.count })
        for position in model.indices { #expect(entries.length(at: position) == model[position].count) }
    }
}
