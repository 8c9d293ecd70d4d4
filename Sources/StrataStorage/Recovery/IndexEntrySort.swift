import StrataFormat

/// Sorts index entries (encoded key ++ row ID) into the tree's order (``IndexKey/compare(_:_:)``) for a bottom-up
/// build.
///
/// Comparing two `[UInt8]` entries costs two array accesses and a byte loop; sorting millions of them that way
/// dominated a bulk build. Each entry's first 24 bytes are loaded once as three big-endian words (zero-padded), and
/// the sort compares those integers; only entries whose first 24 bytes are equal are compared in full. The order is
/// exactly the byte order: padding with zeros never puts a shorter entry after a longer one it differs from within
/// its length, and entries equal up to the padding are told apart by the full comparison.
enum IndexEntrySort {
    private struct Prefix {
        var first: UInt64
        var second: UInt64
        var third: UInt64
        var position: Int
    }

    /// `entries` in increasing order.
    static func sorted(_ entries: [[UInt8]]) -> [[UInt8]] {
        var prefixes: [Prefix] = []
        prefixes.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() {
            entry.withUnsafeBytes { bytes in
                prefixes.append(
                    Prefix(
                        first: word(bytes, at: 0), second: word(bytes, at: 8), third: word(bytes, at: 16),
                        position: position))
            }
        }
        prefixes.sort { a, b in
            if a.first != b.first { return a.first < b.first }
            if a.second != b.second { return a.second < b.second }
            if a.third != b.third { return a.third < b.third }
            return IndexKey.compare(entries[a.position], entries[b.position]) < 0
        }
        return prefixes.map { entries[$0.position] }
    }

    /// The big-endian word of `bytes[offset ..< offset + 8]`, zero-padded past the end.
    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        // Safe: the load reads offset ..< offset + 8, checked to lie within the buffer.
        if bytes.count >= offset &+ 8 {
            return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        var word: UInt64 = 0
        var index = offset
        while index < bytes.count {
            word |= UInt64(bytes[index]) << (8 &* UInt64(7 &- (index &- offset)))
            index &+= 1
        }
        return word
    }
}
