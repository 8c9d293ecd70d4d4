import StrataFormat

/// FuzzIndexKey: arbitrary bytes as an index key and as an index entry (FORMAT.md §4.8). Decoding never
/// traps; a key that decodes is canonical (it encodes back to the same bytes), has 1 ... 16 parts, and its
/// first parts encode to a byte prefix of it; an entry that decodes ends in its row ID.
public func fuzzIndexKey(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    if let key = try? IndexKey.decode(data) {
        fuzzCheck(!key.isEmpty && key.count <= IndexKey.maximumParts, "index key part count")
        fuzzCheck(IndexKey.encode(key) == bytes, "index key is not canonical")
        for length in 0...key.count {
            fuzzCheck(
                bytes.starts(with: IndexKey.encodePrefix(Array(key[..<length]))), "key prefix is not a byte prefix")
        }
    }
    checkIndexEntry(bytes)
    // Successors bound prefixes: every string starting with the prefix sorts below the successor.
    if let successor = IndexKey.prefixSuccessor(bytes) {
        fuzzCheck(IndexKey.compare(bytes, successor) < 0, "prefix successor not above its prefix")
        fuzzCheck(IndexKey.compare(bytes + [0xFF, 0xFF], successor) < 0, "prefix successor not above an extension")
    }
}

/// An index entry that decodes re-encodes to itself.
func checkIndexEntry(_ entry: [UInt8]) {
    guard let (key, row) = try? IndexKey.decodeEntry(entry) else { return }
    fuzzCheck(IndexKey.entry(key: IndexKey.encode(key), rowID: row) == entry, "index entry is not canonical")
    fuzzCheck(IndexKey.rowID(ofEntry: entry) == row, "index entry row ID")
}
