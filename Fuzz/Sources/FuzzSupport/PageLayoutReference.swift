import StrataFormat

/// A second reading of the tree-page layouts of format version 4 (FORMAT.md §4.2, §4.3, §4.6, §4.7), written from
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
        guard header.type == .leaf, header.extra == 0, [0, 1, 2, 4, 8, 0x80].contains(header.flags) else { return nil }
        let count = header.itemCount
        let isBitmap = header.flags == 0x80
        let width = isBitmap ? 0 : Int(header.flags)
        let maximumInline = (pageSize - 32) / 4 - 12
        guard let first = Reseal.uint64(body, at: 0) else { return nil }
        var rowIDBytes = width * count
        var bitmap: [UInt8] = []
        if isBitmap {
            guard let length = uint16(body, at: 8), 10 + length <= body.count else { return nil }
            rowIDBytes = 2 + length
            bitmap = Array(body[10..<(10 + length)])
        }
        let endsAt = 8 + rowIDBytes
        let bitsAt = endsAt + 2 * count
        let dataAt = bitsAt + (count + 7) / 8
        guard dataAt <= body.count else { return nil }
        // An empty leaf has one encoding: dense row IDs and a first row ID of 0.
        if count == 0, header.flags != 0 || first != 0 { return nil }
        var result = Leaf(keys: [], values: [])
        var deltas: [UInt64] = []
        if isBitmap {
            for (byteIndex, byte) in bitmap.enumerated() {
                for bit in 0..<8 where byte >> bit & 1 == 1 { deltas.append(UInt64(byteIndex * 8 + bit)) }
            }
            // The first row's bit is set, the last byte holds the last row's, and the bits count the rows.
            guard deltas.count == count, deltas.first == 0, bitmap.last.map({ $0 != 0 }) ?? false else { return nil }
        } else {
            for index in 0..<count {
                var delta = UInt64(index)
                if width > 0 {
                    delta = 0
                    for byte in (0..<width).reversed() { delta = delta << 8 | UInt64(body[8 + width * index + byte]) }
                }
                deltas.append(delta)
            }
        }
        if width > 0, deltas.first.map({ $0 != 0 }) ?? false { return nil }
        for index in deltas.indices.dropFirst() where deltas[index] <= deltas[index - 1] { return nil }
        if let last = deltas.last {
            guard last <= UInt64.max - first else { return nil }
            // The narrowest form: dense, else deltas of the narrowest width, unless a bitmap is strictly smaller.
            let span = last
            let deltaWidth = span <= 0xFF ? 1 : span <= 0xFFFF ? 2 : span <= 0xFFFF_FFFF ? 4 : 8
            let bitmapBytes = span / 8 + 1
            let narrowest: UInt8 =
                span == UInt64(count - 1)
                ? 0 : bitmapBytes <= 0xFFFF && 2 + bitmapBytes < UInt64(deltaWidth * count) ? 0x80 : UInt8(deltaWidth)
            guard narrowest == header.flags else { return nil }
        }
        // Bits past the last row are zero.
        if count % 8 != 0, body[bitsAt + count / 8] >> (count % 8) != 0 { return nil }
        var start = 0
        for index in 0..<count {
            guard let end = uint16(body, at: endsAt + 2 * index), end >= start, dataAt + end <= body.count else {
                return nil
            }
            let value = Array(body[(dataAt + start)..<(dataAt + end)])
            if body[bitsAt + index / 8] >> (index % 8) & 1 == 0 {
                guard value.count <= maximumInline else { return nil }
                result.values.append(.bytes(value))
            } else {
                guard value.count == 12, let firstPage = Reseal.uint64(value, at: 0),
                    let total = Reseal.uint32(value, at: 8),
                    firstPage >= 1, firstPage < header.pageNumber, total > maximumInline, total <= 1 << 26
                else { return nil }
                result.values.append(.overflow(firstPage: firstPage, length: Int(total)))
            }
            result.keys.append(first + deltas[index])
            start = end
        }
        return dataAt + start == body.count ? result : nil
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

    /// §4.6: the prefix, then the suffixes; the prefix is exactly what the first and last entries share.
    static func indexLeaf(_ body: [UInt8], header: PageHeader, pageSize: Int) -> [[UInt8]]? {
        let count = header.itemCount
        let maximum = (pageSize - 32) / 4 - 10
        guard header.type == .indexLeaf, header.extra == 0, header.flags == 0, count >= 1,
            let prefixLength = uint16(body, at: 0), prefixLength <= maximum, 2 + prefixLength <= body.count
        else { return nil }
        let prefix = Array(body[2..<(2 + prefixLength)])
        var offsets: [Int] = []
        for index in 0..<count {
            guard let offset = uint16(body, at: 2 + prefixLength + 2 * index) else { return nil }
            offsets.append(offset)
        }
        let start = 2 + prefixLength + 2 * count
        guard offsets.first == start else { return nil }
        let bounds = offsets + [body.count]
        var entries: [[UInt8]] = []
        for index in offsets.indices {
            guard bounds[index] <= bounds[index + 1], bounds[index + 1] <= body.count else { return nil }
            let entry = prefix + body[bounds[index]..<bounds[index + 1]]
            guard (9...maximum).contains(entry.count) else { return nil }
            if let previous = entries.last, !precedes(previous, entry) { return nil }
            entries.append(entry)
        }
        let shared = zip(entries[0], entries[count - 1]).prefix { $0 == $1 }.count
        return shared == prefixLength ? entries : nil
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
