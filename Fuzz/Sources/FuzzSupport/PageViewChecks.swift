import StrataFormat

/// The format-version-2 checks of FuzzPage for the four tree-page types (FORMAT.md §4.2, §4.3, §4.6, §4.7, §4.10):
///
/// - `validate` accepts a page exactly when ``PageLayoutReference`` does (the reader rules as documented), and
///   every other type's `validate` rejects it;
/// - `decode` succeeds exactly when `validate` does, and gives what the reference reads;
/// - the in-place view of an accepted page agrees with the decoded arrays entry by entry (keys, cells, entries,
///   separators, children, level), lends bytes inside the page's body, and answers `search` / `childIndex` for
///   keys taken from the page, their neighbours and random probes as a binary search over the decoded arrays does.
struct PageViewChecks {
    let page: UnsafeRawBufferPointer
    let header: PageHeader
    let body: [UInt8]
    var random: FuzzRandom

    init(page: UnsafeRawBufferPointer, header: PageHeader, seed: UInt64) {
        self.page = page
        self.header = header
        body = Array(header.body(of: page))
        random = FuzzRandom(seed: seed)
    }

    /// Neighbours of this many keys of a page (chosen at random) are probed besides the keys themselves.
    static let neighbourProbes = 64
    /// Random probes per page.
    static let randomProbes = 16

    mutating func run() {
        let accepted: [PageType: Bool] = [
            .leaf: (try? LeafPage.validate(page, header: header)) != nil,
            .internal: (try? InternalPage.validate(page, header: header)) != nil,
            .indexLeaf: (try? IndexLeafPage.validate(page, header: header)) != nil,
            .indexInternal: (try? IndexInternalPage.validate(page, header: header)) != nil,
        ]
        for (type, isAccepted) in accepted where isAccepted {
            fuzzCheck(type == header.type, "\(type) validate accepts a \(header.type) page")
        }
        let isAccepted = accepted[header.type] ?? false
        switch header.type {
        case .leaf: checkLeaf(accepted: isAccepted)
        case .internal: checkInternal(accepted: isAccepted)
        case .indexLeaf: checkIndexLeaf(accepted: isAccepted)
        case .indexInternal: checkIndexInternal(accepted: isAccepted)
        case .overflow, .rootRecord: break
        }
    }

    func agree(_ accepted: Bool, _ reference: Bool, _ decoded: Bool, _ what: String, _ section: String) {
        fuzzCheck(
            accepted == reference,
            "\(what).validate \(accepted ? "accepts" : "rejects") a page that FORMAT.md \(section) "
                + (reference ? "allows" : "forbids"))
        fuzzCheck(decoded == accepted, "\(what).decode \(decoded ? "accepts" : "rejects") a page validate does not")
    }

    /// Whether `bytes` lie inside the page's body (a view lends bytes of the page, never a copy or beyond).
    func insideBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let body = header.body(of: page)
        guard let start = bytes.baseAddress, let bodyStart = body.baseAddress else { return bytes.isEmpty }
        return start >= bodyStart && start + bytes.count <= bodyStart + body.count
    }

    /// The length of the prefix of `0 ..< count` on which `holds` is true (it is true on a prefix, then false): a
    /// binary search over the decoded arrays.
    static func prefixCount(_ count: Int, _ holds: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if holds(middle) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Indices of `count` keys whose neighbours are probed: all of a small page, a random sample of a big one.
    mutating func sample(_ count: Int) -> [Int] {
        guard count > Self.neighbourProbes else { return Array(0..<count) }
        return (0..<Self.neighbourProbes).map { _ in Int(random.next() % UInt64(count)) }
    }

    /// Byte-string probes around `keys`: each key, and for a sample, the key cut short, extended, and with its last
    /// byte one up or down; then random strings, some sharing a prefix with a key.
    mutating func byteProbes(_ keys: [[UInt8]]) -> [[UInt8]] {
        var probes: [[UInt8]] = [[], [0], [0xFF], Array(repeating: 0xFF, count: 20)]
        guard !keys.isEmpty else { return probes }
        for index in sample(keys.count) {
            let key = keys[index]
            probes.append(Array(key.dropLast()))
            probes.append(key + [0])
            if let last = key.last {
                probes.append(key.dropLast() + [last &+ 1])
                probes.append(key.dropLast() + [last &- 1])
            }
        }
        for _ in 0..<Self.randomProbes {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let prefix = Int(random.next() % UInt64(key.count + 1))
            probes.append(Array(key.prefix(prefix)) + random.bytes(Int(random.next() % 12)))
        }
        return probes
    }

    // MARK: - Leaf (§4.2)

    mutating func checkLeaf(accepted: Bool) {
        let reference = PageLayoutReference.leaf(body, header: header, pageSize: page.count)
        let decoded = try? LeafPage.decode(page, header: header)
        agree(accepted, reference != nil, decoded != nil, "LeafPage", "§4.2")
        guard let reference, let decoded else { return }
        fuzzCheck(decoded.keys == reference.keys && Array(decoded.values) == reference.values, "leaf decodes other cells")
        let keys = decoded.keys
        let view = LeafPageView(validatedPage: page, header: header)
        fuzzCheck(view.count == keys.count, "leaf view count \(view.count), decoded \(keys.count)")
        for index in keys.indices {
            fuzzCheck(view.key(at: index) == keys[index], "leaf view key \(index)")
            let cell = view.cell(at: index)
            fuzzCheck(LeafValue(cell) == decoded.values[index], "leaf view cell \(index)")
            if case .inline(let bytes) = cell { fuzzCheck(insideBody(bytes), "leaf view lends bytes off the body") }
            let found = view.search(keys[index])
            fuzzCheck(found.index == index && found.found, "leaf view search for its key \(index) gives \(found)")
        }
        var probes: [UInt64] = [0, 1, .max, .max - 1]
        for index in sample(keys.count) { probes += [keys[index] &- 1, keys[index] &+ 1] }
        for _ in 0..<Self.randomProbes { probes.append(random.next()) }
        for probe in probes {
            let below = Self.prefixCount(keys.count) { keys[$0] < probe }
            let expected = (index: below, found: below < keys.count && keys[below] == probe)
            let actual = view.search(probe)
            fuzzCheck(actual == expected, "leaf view search(\(probe)) gives \(actual), decoded \(expected)")
        }
    }

    // MARK: - Internal (§4.3)

    mutating func checkInternal(accepted: Bool) {
        let reference = PageLayoutReference.internal(body, header: header)
        let decoded = try? InternalPage.decode(page, header: header)
        agree(accepted, reference != nil, decoded != nil, "InternalPage", "§4.3")
        guard let reference, let decoded else { return }
        fuzzCheck(
            decoded.level == reference.level && decoded.keys == reference.keys
                && decoded.children == reference.children, "internal page decodes other separators or children")
        let (keys, children) = (decoded.keys, decoded.children)
        let view = InternalPageView(validatedPage: page, header: header)
        fuzzCheck(view.count == children.count && view.level == decoded.level, "internal view count or level")
        for index in children.indices {
            fuzzCheck(view.child(at: index) == children[index], "internal view child \(index)")
            if index > 0 {
                fuzzCheck(view.separator(at: index) == keys[index], "internal view separator \(index)")
                fuzzCheck(view.childIndex(for: keys[index]) == index, "internal view childIndex of separator \(index)")
            }
        }
        var probes: [UInt64] = [0, 1, .max, .max - 1]
        for index in sample(keys.count) { probes += [keys[index] &- 1, keys[index] &+ 1] }
        for _ in 0..<Self.randomProbes { probes.append(random.next()) }
        let separators = Array(keys.dropFirst())
        for probe in probes {
            // The last child whose separator is at most the probe (child 0 when none is).
            let expected = Self.prefixCount(separators.count) { separators[$0] <= probe }
            let actual = view.childIndex(for: probe)
            fuzzCheck(
                actual == expected, "internal view childIndex(for: \(probe)) gives \(actual), decoded \(expected)")
        }
    }

    // MARK: - Index leaf (§4.6)

    mutating func checkIndexLeaf(accepted: Bool) {
        let reference = PageLayoutReference.indexLeaf(body, header: header, pageSize: page.count)
        let decoded = try? IndexLeafPage.decode(page, header: header)
        agree(accepted, reference != nil, decoded != nil, "IndexLeafPage", "§4.6")
        guard let reference, let entries = decoded else { return }
        fuzzCheck(entries == reference, "index leaf decodes other entries")
        let view = IndexLeafPageView(validatedPage: page, header: header)
        fuzzCheck(view.count == entries.count, "index leaf view count \(view.count), decoded \(entries.count)")
        fuzzCheck(insideBody(view.prefix), "index leaf view lends a prefix off the body")
        for index in entries.indices {
            fuzzCheck(view.entry(at: index) == entries[index], "index leaf view entry \(index)")
            fuzzCheck(insideBody(view.suffix(at: index)), "index leaf view lends a suffix off the body")
        }
        // Entries put together for a walk, both ways, over every range's end.
        for reverse in [false, true] {
            var walked: [[UInt8]] = []
            _ = view.forEachEntry(in: 0..<entries.count, reverse: reverse) { entry in
                walked.append(Array(entry))
                return true
            }
            fuzzCheck(walked == (reverse ? entries.reversed() : entries), "index leaf walk (reverse: \(reverse))")
        }
        for probe in byteProbes(entries) {
            let below = Self.prefixCount(entries.count) { PageLayoutReference.precedes(entries[$0], probe) }
            let expected = (index: below, found: below < entries.count && entries[below] == probe)
            let actual = probe.withUnsafeBytes { view.search($0) }
            fuzzCheck(actual == expected, "index leaf view search(\(probe)) gives \(actual), decoded \(expected)")
        }
    }

    // MARK: - Index internal (§4.7)

    mutating func checkIndexInternal(accepted: Bool) {
        let reference = PageLayoutReference.indexInternal(body, header: header, pageSize: page.count)
        let decoded = try? IndexInternalPage.decode(page, header: header)
        agree(accepted, reference != nil, decoded != nil, "IndexInternalPage", "§4.7")
        guard let reference, let decoded else { return }
        fuzzCheck(
            decoded.level == reference.level && decoded.keys == reference.keys
                && decoded.children == reference.children, "index internal page decodes other separators or children")
        let (keys, children) = (decoded.keys, decoded.children)
        let view = IndexInternalPageView(validatedPage: page, header: header)
        fuzzCheck(view.count == children.count && view.level == decoded.level, "index internal view count or level")
        for index in children.indices {
            fuzzCheck(view.child(at: index) == children[index], "index internal view child \(index)")
            if index > 0 {
                let separator = view.separator(at: index)
                fuzzCheck(separator.elementsEqual(keys[index]), "index internal view separator \(index)")
                fuzzCheck(insideBody(separator), "index internal view lends bytes off the body")
            }
        }
        let separators = Array(keys.dropFirst())
        for probe in byteProbes(separators) {
            // childIndex(for:): separators at most the probe; childIndex(below:): separators below it.
            let atMost = Self.prefixCount(separators.count) { !PageLayoutReference.precedes(probe, separators[$0]) }
            let below = Self.prefixCount(separators.count) { PageLayoutReference.precedes(separators[$0], probe) }
            let (actualAtMost, actualBelow) = probe.withUnsafeBytes {
                (view.childIndex(for: $0), view.childIndex(below: $0))
            }
            fuzzCheck(
                actualAtMost == atMost && actualBelow == below,
                "index internal view childIndex for/below \(probe): \(actualAtMost)/\(actualBelow), decoded \(atMost)/\(below)"
            )
        }
    }
}
