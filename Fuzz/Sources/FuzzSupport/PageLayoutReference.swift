import StrataFormat

/// A second reading of the tree-page layouts of format version 2 (FORMAT.md §4.2, §4.3, §4.6, §4.7), written from
/// the document, not from the decoders, over a copy of the body with every read bounds-checked. FuzzPage holds
/// `validate`, `decode` and the in-place views to it: `validate` must accept exactly the pages this accepts, and
/// `decode` and the views must give what it reads.
///
/// Each function returns the page's contents when every reader rule of its section holds, nil when one does not.
enum PageLayoutReference {
    struct Leaf {
        var keys: [UInt64]
        var values: [LeafValue]
    }

    struct Internal {
        var level: Int
        /// One per child; the first is 0 (not stored).
        var keys: [UInt64]
        var children: [UInt64]
    }

    struct IndexInternal {
        var level: Int
        /// One per child; the first is empty (not stored).
        var keys: [[UInt8]]
        var children: [UInt64]
    }

    static func uint16(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }

    /// Bytewise order, unsigned, a proper prefix first (§4.6).
    static func precedes(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
        a.lexicographicallyPrecedes(b)
    }

    /// §4.2. An empty leaf is accepted here as `LeafPage.validate` accepts it (the format's tests round-trip one);
    /// the tree readers refuse it (`PageStore`, the verifier).
    static func leaf(_ body: [UInt8], header: PageHeader, pageSize: Int) -> Leaf? {
        guard header.type == .leaf, header.extra == 0 else { return nil }
        let count = header.itemCount
        let maximumInline = (pageSize - 32) / 4 - 12
        guard 12 * count <= body.count else { return nil }
        var result = Leaf(keys: [], values: [])
        var end = 12 * count
        for index in 0..<count {
            guard let key = Reseal.uint64(body, at: 8 * index),
                let offset = uint16(body, at: 8 * count + 4 * index),
                let word = uint16(body, at: 8 * count + 4 * index + 2)
            else { return nil }
            if let last = result.keys.last, key <= last { return nil }
            let length = word & 0x7FFF
            guard offset == end, offset + length <= body.count else { return nil }
            if word & 0x8000 == 0 {
                guard length <= maximumInline else { return nil }
                result.values.append(.bytes(Array(body[offset..<(offset + length)])))
            } else {
                guard length == 12, let first = Reseal.uint64(body, at: offset),
                    let total = Reseal.uint32(body, at: offset + 8),
                    first >= 1, first < header.pageNumber, total > maximumInline, total <= 1 << 26
                else { return nil }
                result.values.append(.overflow(firstPage: first, length: Int(total)))
            }
            result.keys.append(key)
            end = offset + length
        }
        return end == body.count ? result : nil
    }

    /// §4.3.
    static func `internal`(_ body: [UInt8], header: PageHeader) -> Internal? {
        let count = header.itemCount
        guard header.type == .internal, (1...31).contains(header.extra), count >= 2,
            body.count == 8 + 16 * (count - 1), let first = Reseal.uint64(body, at: 0)
        else { return nil }
        var result = Internal(level: Int(header.extra), keys: [0], children: [first])
        for index in 1..<count {
            guard let key = Reseal.uint64(body, at: 8 + 16 * (index - 1)),
                let child = Reseal.uint64(body, at: 16 + 16 * (index - 1))
            else { return nil }
            if index > 1, key <= result.keys[index - 1] { return nil }
            result.keys.append(key)
            result.children.append(child)
        }
        guard result.children.allSatisfy({ $0 >= 1 && $0 < header.pageNumber }) else { return nil }
        return result
    }

    /// Splits `body[start...]` at `offsets` (then the body's end) into pieces of `lengths` bytes, the first piece
    /// starting at `start`; nil when an offset is out of place.
    static func pieces(_ body: [UInt8], offsets: [Int], start: Int, lengths: ClosedRange<Int>) -> [[UInt8]]? {
        guard offsets.first == start else { return nil }
        let bounds = offsets + [body.count]
        var result: [[UInt8]] = []
        for index in offsets.indices {
            guard lengths.contains(bounds[index + 1] - bounds[index]), bounds[index + 1] <= body.count else {
                return nil
            }
            result.append(Array(body[bounds[index]..<bounds[index + 1]]))
            if index > 0, !precedes(result[index - 1], result[index]) { return nil }
        }
        return result
    }

    /// §4.6.
    static func indexLeaf(_ body: [UInt8], header: PageHeader, pageSize: Int) -> [[UInt8]]? {
        let count = header.itemCount
        guard header.type == .indexLeaf, header.extra == 0, count >= 1 else { return nil }
        var offsets: [Int] = []
        for index in 0..<count {
            guard let offset = uint16(body, at: 2 * index) else { return nil }
            offsets.append(offset)
        }
        return pieces(body, offsets: offsets, start: 2 * count, lengths: 9...((pageSize - 32) / 4 - 10))
    }

    /// §4.7.
    static func indexInternal(_ body: [UInt8], header: PageHeader, pageSize: Int) -> IndexInternal? {
        let count = header.itemCount
        guard header.type == .indexInternal, (1...31).contains(header.extra), count >= 2 else { return nil }
        var children: [UInt64] = []
        var offsets: [Int] = []
        for index in 0..<count {
            guard let child = Reseal.uint64(body, at: 8 * index), child >= 1, child < header.pageNumber else {
                return nil
            }
            children.append(child)
        }
        for index in 0..<(count - 1) {
            guard let offset = uint16(body, at: 8 * count + 2 * index) else { return nil }
            offsets.append(offset)
        }
        guard
            let separators = pieces(
                body, offsets: offsets, start: 8 * count + 2 * (count - 1), lengths: 1...((pageSize - 32) / 4 - 10))
        else { return nil }
        return IndexInternal(level: Int(header.extra), keys: [[]] + separators, children: children)
    }
}
