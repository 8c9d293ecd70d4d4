import StrataFormat
import StrataTestSupport
import Testing

/// Index leaf and internal pages, and the root record's index section.
@Suite struct IndexPageTests {
    private let salt: UInt64 = 0x1234
    private let pageSize = 512

    private func page(_ encode: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: pageSize)
        bytes.withUnsafeMutableBytes { encode($0) }
        return bytes
    }

    private func decodeLeaf(_ bytes: [UInt8], number: UInt64 = 9) -> Result<[[UInt8]], FormatError> {
        bytes.withUnsafeBytes { buffer in
            Result { () throws(FormatError) in
                let header = try PageHeader.decode(buffer, expectedPageNumber: number, salt: salt)
                return try IndexLeafPage.decode(buffer, header: header)
            }
        }
    }

    private func decodeInternal(
        _ bytes: [UInt8], number: UInt64 = 9
    ) -> Result<
        (level: Int, keys: [[UInt8]], children: [UInt64]), FormatError
    > {
        bytes.withUnsafeBytes { buffer in
            Result { () throws(FormatError) in
                let header = try PageHeader.decode(buffer, expectedPageNumber: number, salt: salt)
                return try IndexInternalPage.decode(buffer, header: header)
            }
        }
    }

    private var entries: [[UInt8]] {
        [
            IndexKey.entry(key: IndexKey.encode([.string("a")]), rowID: 1),
            IndexKey.entry(key: IndexKey.encode([.string("a")]), rowID: 2),
            IndexKey.entry(key: IndexKey.encode([.string("b\u{0}")]), rowID: 1),
        ]
    }

    @Test func leafRoundTripsAndIsPinned() throws {
        let bytes = page {
            IndexLeafPage.encode(entries: entries, into: $0, pageNumber: 9, generation: 3, salt: salt)
        }
        #expect(try decodeLeaf(bytes).get() == entries)
        #expect(bytes[4] == PageType.indexLeaf.rawValue)
        // The prefix the entries share (1 byte: the string tag 05), the suffixes' offsets in the body (9, 20, 31),
        // then the first entry's suffix.
        #expect(Array(bytes[32..<42]) == [1, 0, 5, 9, 0, 20, 0, 31, 0, 0x61])
        #expect(loadLE(UInt32.self, at: 24, in: bytes) == 44)
        try bytes.withUnsafeBytes { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 9, salt: salt)
            let view = IndexLeafPageView(validatedPage: buffer, header: header)
            #expect((0..<view.count).map { Array(view.entry(at: $0)) } == entries)
            for (index, entry) in entries.enumerated() {
                #expect(entry.withUnsafeBytes { view.search($0) } == (index, true))
                // A byte longer: after the entry, before the next one.
                #expect((entry + [0]).withUnsafeBytes { view.search($0) } == (index + 1, false))
            }
        }
        #expect(IndexLeafPage.bodySize(entries: entries) == 2 + 1 + 3 * 2 + (12 - 1) + (12 - 1) + (14 - 1))
    }

    /// Entries of one key share it and most of their row IDs: stored once, each entry costs its last bytes.
    @Test func aRunOfOneKeyStoresItsPrefixOnce() throws {
        let key = IndexKey.encode([.reference(42)])
        let run = (1000..<1100).map { IndexKey.entry(key: key, rowID: UInt64($0)) }
        let bytes = page { IndexLeafPage.encode(entries: run, into: $0, pageNumber: 9, generation: 3, salt: salt) }
        #expect(try decodeLeaf(bytes).get() == run)
        // Row IDs 1000 ... 1099 share their first 7 big-endian bytes but for 03 E8 ... 04 4B: 15 bytes of prefix
        // (9 of key, 6 of row ID), then 2 bytes of suffix and 2 of offset an entry.
        #expect(loadLE(UInt16.self, at: 32, in: bytes) == 15)
        #expect(loadLE(UInt32.self, at: 24, in: bytes) == 2 + 15 + 100 * 4)
        try bytes.withUnsafeBytes { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 9, salt: salt)
            let view = IndexLeafPageView(validatedPage: buffer, header: header)
            var seen: [[UInt8]] = []
            _ = view.forEachEntry(in: 10..<20, reverse: true) { entry in
                seen.append(Array(entry))
                return true
            }
            #expect(seen == run[10..<20].reversed())
            // Probes below, inside and above the prefix, and shorter than it.
            #expect(IndexKey.entry(key: key, rowID: 5).withUnsafeBytes { view.search($0) } == (0, false))
            #expect(IndexKey.entry(key: key, rowID: 1050).withUnsafeBytes { view.search($0) } == (50, true))
            #expect(IndexKey.entry(key: key, rowID: 5000).withUnsafeBytes { view.search($0) } == (100, false))
            #expect(key.withUnsafeBytes { view.search($0) } == (0, false))
            #expect(IndexKey.encode([.reference(43)]).withUnsafeBytes { view.search($0) } == (100, false))
        }
    }

    /// The prefix must be all the first and last entries share, no less: one encoding per leaf.
    /// The word-at-a-time prefix of lent bytes agrees with the byte-at-a-time one of arrays, wherever the first
    /// difference falls (within or after a word, or none before the shorter ends).
    @Test func commonPrefixOfLentBytesAgreesWithArrays() {
        var random = RepeatableRandomNumberGenerator(seed: 0x9F1E)
        for _ in 0..<2_000 {
            let a = (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) }
            var b = Array(a.prefix(Int.random(in: 0...a.count, using: &random)))
            b += (0..<Int.random(in: 0..<20, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) }
            let lent = a.withUnsafeBytes { a in b.withUnsafeBytes { IndexLeafPage.commonPrefixLength(a, $0) } }
            #expect(lent == IndexLeafPage.commonPrefixLength(a, b), "\(a) \(b)")
        }
    }

    @Test func aPrefixShorterThanTheEntriesShareIsInvalid() throws {
        let first = IndexKey.entry(key: IndexKey.encode([.string("a")]), rowID: 1)
        let second = IndexKey.entry(key: IndexKey.encode([.string("a")]), rowID: 2)
        // body := prefixLength 1, prefix 05, offsets 7 and 18, then the two 11-byte suffixes.
        let body: [UInt8] = [1, 0, 5, 7, 0, 18, 0] + Array(first[1...]) + Array(second[1...])
        let bytes = page { page in
            for (index, byte) in body.enumerated() { page[32 + index] = byte }
            PageHeader(
                type: .indexLeaf, itemCount: 2, pageNumber: 9, generation: 3, bodyLength: body.count, extra: 0
            ).seal(page, salt: salt)
        }
        #expect(isInvalidField(decodeLeaf(bytes).failure))
        let canonical = page {
            IndexLeafPage.encode(entries: [first, second], into: $0, pageNumber: 9, generation: 3, salt: salt)
        }
        #expect(loadLE(UInt16.self, at: 32, in: canonical) == 11)
        #expect(try decodeLeaf(canonical).get() == [first, second])
    }

    @Test func internalRoundTripsAndIsPinned() throws {
        let keys: [[UInt8]] = [[], [5, 0x61], [5, 0x62]]
        let bytes = page {
            IndexInternalPage.encode(
                level: 2, keys: keys, children: [1, 4, 7], into: $0, pageNumber: 9, generation: 3, salt: salt)
        }
        let decoded = try decodeInternal(bytes).get()
        #expect(decoded.level == 2 && decoded.keys == keys && decoded.children == [1, 4, 7])
        // Three children, two separator offsets (28, 30), the separators.
        #expect(Array(bytes[32..<44]) == [1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0])
        #expect(Array(bytes[56..<64]) == [28, 0, 30, 0, 5, 0x61, 5, 0x62])
        try bytes.withUnsafeBytes { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 9, salt: salt)
            let view = IndexInternalPageView(validatedPage: buffer, header: header)
            #expect(view.count == 3 && view.level == 2 && view.child(at: 2) == 7)
            #expect([UInt8]([5, 0x61]).withUnsafeBytes { view.childIndex(for: $0) } == 1)
            #expect([UInt8]([5, 0x61]).withUnsafeBytes { view.childIndex(below: $0) } == 0)
            #expect([UInt8]([5, 0x63]).withUnsafeBytes { view.childIndex(for: $0) } == 2)
            #expect([UInt8]([4]).withUnsafeBytes { view.childIndex(for: $0) } == 0)
        }
        #expect(IndexInternalPage.bodySize(separatorLengths: [2, 2]) == 8 + 2 * 12)
    }

    /// Re-seals a page after byte surgery, so that only the structural check can reject it.
    private func resealed(_ bytes: [UInt8], _ change: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes = bytes
        change(&bytes)
        let header = bytes.withUnsafeBytes { buffer in
            PageHeader(
                type: PageType(rawValue: buffer[4])!,
                itemCount: Int(buffer.loadUnaligned(fromByteOffset: 6, as: UInt16.self)),
                pageNumber: 9, generation: 3,
                bodyLength: Int(buffer.loadUnaligned(fromByteOffset: 24, as: UInt32.self)),
                extra: buffer.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
        }
        bytes.withUnsafeMutableBytes { header.seal($0, salt: salt) }
        return bytes
    }

    @Test func structuralDamageIsInvalid() {
        let leaf = page { IndexLeafPage.encode(entries: entries, into: $0, pageNumber: 9, generation: 3, salt: salt) }
        // Out of order: swap the first key byte of the last entry below the first.
        #expect(decodeLeaf(resealed(leaf) { $0[32 + 31] = 0x41 }).failure != nil)
        // The first suffix not right after the offsets, an empty leaf, an item count beyond the body, a prefix
        // longer than the body.
        #expect(decodeLeaf(resealed(leaf) { $0[35] = 8 }).failure != nil)
        #expect(decodeLeaf(resealed(leaf) { $0[33] = 2 }).failure != nil)
        // A one-entry leaf whose offset points past the body (reads clamp it to the body's end).
        let single = page {
            IndexLeafPage.encode(entries: [entries[0]], into: $0, pageNumber: 9, generation: 3, salt: salt)
        }
        #expect(decodeLeaf(single).failure == nil)
        let prefixLength = Int(loadLE(UInt16.self, at: 32, in: single))
        #expect(decodeLeaf(resealed(single) { $0[32 + 2 + prefixLength] = 0xF0 }).failure != nil)
        #expect(decodeLeaf(resealed(leaf) { $0[6] = 0 }).failure != nil)
        #expect(decodeLeaf(resealed(leaf) { $0[6] = 200 }).failure != nil)
        let node = page {
            IndexInternalPage.encode(
                level: 1, keys: [[], [3], [4]], children: [1, 2, 3], into: $0, pageNumber: 9, generation: 3, salt: salt)
        }
        #expect(decodeInternal(node).failure == nil)
        #expect(decodeInternal(resealed(node) { $0[32 + 29] = 2 }).failure != nil)  // separators out of order
        #expect(decodeInternal(resealed(node) { $0[32 + 24] = 29 }).failure != nil)  // offsets off the separators
        #expect(decodeInternal(resealed(node) { $0[32] = 9 }).failure != nil)  // child not below its parent
        #expect(decodeInternal(resealed(node) { $0[28] = 0 }).failure != nil)  // level 0
        #expect(decodeInternal(resealed(node) { $0[6] = 1 }).failure != nil)  // one child
        #expect(decodeLeaf(node).failure != nil)
        #expect(decodeInternal(leaf).failure != nil)
    }

    @Test func randomMutationsNeverTrap() {
        var random = RepeatableRandomNumberGenerator(seed: 11)
        let leaf = page { IndexLeafPage.encode(entries: entries, into: $0, pageNumber: 9, generation: 3, salt: salt) }
        let node = page {
            IndexInternalPage.encode(
                level: 1, keys: [[], [3], [4]], children: [1, 2, 3], into: $0, pageNumber: 9, generation: 3, salt: salt)
        }
        for _ in 0..<3000 {
            let original = Bool.random(using: &random) ? leaf : node
            let mutated = resealed(original) { bytes in
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    // Anything but the body length (resealing needs it within the page): item count, extra, body.
                    let at =
                        Bool.random(using: &random)
                        ? Int.random(in: 6...7, using: &random) : Int.random(in: 28..<96, using: &random)
                    bytes[at] = UInt8.random(in: 0...255, using: &random)
                }
            }
            _ = decodeLeaf(mutated)
            _ = decodeInternal(mutated)
        }
    }

    @Test func maximumEntryFitsFourToAPage() {
        for pageSize in [512, 4096, 65536] {
            let maximum = PageFormat.maximumIndexEntry(pageSize: pageSize)
            #expect(
                4 * (maximum + PageFormat.indexInternalEntryOverhead) <= PageFormat.bodyCapacity(pageSize: pageSize))
        }
        #expect(PageFormat.maximumIndexEntry(pageSize: 4096) == 1006)
        #expect(PageFormat.maximumIndexEntry(pageSize: 512) == 110)
    }

    // MARK: - Root record index section

    private func decodeRecord(_ payload: [UInt8], firstPage: UInt64 = 40) -> Result<RootRecord, FormatError> {
        payload.withUnsafeBytes { buffer in
            Result { () throws(FormatError) in try RootRecord.decode(buffer, firstPage: firstPage) }
        }
    }

    private var record: RootRecord {
        RootRecord(
            walLSN: 5, nextTableID: 3, previousRootPage: PageFormat.noPage,
            tables: [RootRecord.Table(tableID: 2, name: "t", nextRowID: 9, rowCount: 4, rootPage: 7, height: 1)],
            nextIndexID: 6,
            indexes: [
                RootRecord.Index(
                    descriptor: IndexDescriptor(indexID: 5, tableID: 2, name: "t.a", fields: [0, 3], entityIDs: [2]),
                    entryCount: 4, rootPage: 8, height: 1),
                RootRecord.Index(
                    descriptor: IndexDescriptor(indexID: 1, tableID: 2, name: "t.b", fields: [1], entityIDs: nil),
                    entryCount: 0, rootPage: PageFormat.noPage, height: 0),
            ])
    }

    @Test func rootRecordIndexSectionRoundTrips() throws {
        #expect(try decodeRecord(record.encodedPayload()).get() == record)
        // No index ever created: no section, the bytes of a record without indexes.
        var plain = record
        plain.indexes = []
        plain.nextIndexID = 1
        #expect(plain.encodedPayload().count == 24 + 31 + 1)
        // Every index dropped: the section keeps the next ID.
        var dropped = record
        dropped.indexes = []
        #expect(try decodeRecord(dropped.encodedPayload()).get() == dropped)
        let payload = record.encodedPayload()
        for length in (24 + 32 + 1)..<payload.count {
            #expect(decodeRecord(Array(payload[..<length])).failure != nil, "length \(length)")
        }
    }

    @Test func inconsistentIndexesAreInvalid() {
        func rejects(_ change: (inout RootRecord) -> Void, _ why: String) {
            var changed = record
            change(&changed)
            #expect(isInvalidField(decodeRecord(changed.encodedPayload()).failure), "\(why)")
        }
        rejects({ $0.indexes[0].descriptor.tableID = 1 }, "unknown table")
        rejects({ $0.indexes[1].descriptor.indexID = 5 }, "duplicate ID")
        rejects({ $0.indexes[1].descriptor.name = "t.a" }, "duplicate name")
        rejects({ $0.indexes[0].descriptor.indexID = 6 }, "ID not below the next")
        rejects({ $0.indexes[0].rootPage = 40 }, "root at the record")
        rejects({ $0.indexes[0].entryCount = 0 }, "a root without entries")
        rejects({ $0.indexes[1].height = 1 }, "an empty index with a height")
    }
}
