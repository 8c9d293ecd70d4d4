import StrataFormat
import StrataTestSupport
import Testing

/// B+tree leaf pages: cells of inline values and overflow references.
@Suite struct LeafPageTests {
    private let salt: UInt64 = 77

    private func leaf(
        size: Int = 512,
        number: UInt64 = 20,
        keys: [UInt64],
        values: [LeafValue]
    ) -> [UInt8] {
        makePage(size: size) { page in
            LeafPage.encode(
                keys: keys, values: LeafValues(values), into: page, pageNumber: number, generation: 1, salt: salt)
        }
    }

    private func decode(
        _ page: [UInt8],
        number: UInt64 = 20
    ) -> Result<(keys: [UInt64], values: [LeafValue]), FormatError> {
        decodePage(page, number: number, salt: salt) { buffer, header in
            let (keys, values) = try LeafPage.decode(buffer, header: header)
            return (keys, Array(values))
        }
    }

    private var sampleKeys: [UInt64] { [1, 2, 10, 1000, .max - 1] }
    private var sampleValues: [LeafValue] {
        [
            .bytes([]), .bytes([7]), .overflow(firstPage: 3, length: 5000), .bytes(Array(repeating: 9, count: 107)),
            .overflow(firstPage: 19, length: 109),
        ]
    }

    @Test func roundTripsInlineAndOverflowCells() throws {
        let page = leaf(keys: sampleKeys, values: sampleValues)
        let decoded = try decode(page).get()
        #expect(decoded.keys == sampleKeys)
        #expect(decoded.values == sampleValues)
        let header = try decodePage(page, number: 20, salt: salt) { _, h in h }.get()
        #expect(header.itemCount == 5)
        #expect(header.flags == 8)  // row IDs spread over nearly 2^64: 8-byte deltas
        let cells = sampleValues.reduce(0) { $0 + $1.cellSize(maximumInline: 108) }
        #expect(header.bodyLength == LeafPage.bodySize(count: 5, first: 1, last: .max - 1, cellBytes: cells))
        // First row ID, five deltas, one byte of overflow bits, then value ends and values.
        #expect(header.bodyLength == 8 + 5 * 8 + 1 + 5 * 2 + 0 + 1 + 12 + 107 + 12)
    }

    /// The guess of where a row's value lies, from the parent's separators alone, is exact for a full dense leaf of
    /// equal values (the case the B-tree seek hints), inside the page for any row of the range, and nil outside it.
    @Test(arguments: [512, 4096])
    func theLikelyValueOffsetIsExactForAFullDenseLeaf(pageSize: Int) throws {
        // 40 rows of n bytes fill the data area of the page exactly: 40 + 2 × 40 + 5 bytes before the data.
        let count = 40
        let dataStart = PageFormat.headerSize + 8 + 2 * count + (count + 7) / 8
        let size = (pageSize - dataStart) / count
        let first: UInt64 = 1_001
        let keys = (0..<UInt64(count)).map { first + $0 }
        let values = keys.map { LeafValue.bytes(Array(repeating: UInt8(truncatingIfNeeded: $0), count: size)) }
        let page = leaf(size: pageSize, keys: keys, values: values)
        let header = try decodePage(page, number: 20, salt: salt) { _, header in header }.get()
        #expect(header.flags == 0)
        for (index, key) in keys.enumerated() {
            let guess = try #require(
                LeafPage.likelyValueOffset(of: key, first: first, end: first + UInt64(count), pageSize: pageSize))
            // Full only when the values fill the page exactly; else off by at most the rows' share of the rest.
            let slack = (pageSize - dataStart) - size * count
            #expect(abs(guess - (dataStart + index * size)) <= slack, "row \(key)")
        }
        #expect(LeafPage.likelyValueOffset(of: first - 1, first: first, end: first + 40, pageSize: pageSize) == nil)
        #expect(LeafPage.likelyValueOffset(of: first + 40, first: first, end: first + 40, pageSize: pageSize) == nil)
        // A range wider than any leaf holds says nothing.
        #expect(LeafPage.likelyValueOffset(of: 5, first: 0, end: UInt64(pageSize), pageSize: pageSize) == nil)
        for end in [first + 1, first + 100, first + UInt64(pageSize / 2) - 1] {
            for key in [first, (first + end) / 2, end - 1] {
                let guess = LeafPage.likelyValueOffset(of: key, first: first, end: end, pageSize: pageSize)
                #expect(guess.map { $0 >= 0 && $0 < pageSize } ?? true, "key \(key) of \(first)..<\(end)")
            }
        }
    }

    /// Values whose removals near the front left unused bytes before the first (``LeafValues/remove(at:)`` moves the
    /// shorter side) encode to the very page the same values packed afresh do, and decode to them.
    @Test func valuesAfterRemovalsAtTheFrontEncodeAsFreshOnes() throws {
        var values = LeafValues(sampleValues + [.bytes([1, 2, 3]), .bytes(Array(repeating: 4, count: 50))])
        var keys: [UInt64] = [1, 2, 10, 1000, 2000, 3000, 4000]
        values.remove(at: 1)
        keys.remove(at: 1)
        values.remove(at: 0)
        keys.remove(at: 0)
        let model = Array(values)
        #expect(values == LeafValues(model))
        let page = makePage(size: 512) { page in
            LeafPage.encode(keys: keys, values: values, into: page, pageNumber: 20, generation: 1, salt: salt)
        }
        #expect(page == leaf(keys: keys, values: model))
        let decoded = try decode(page).get()
        #expect(decoded.keys == keys)
        #expect(decoded.values == model)
    }

    @Test func emptyLeafRoundTrips() throws {
        let page = leaf(keys: [], values: [])
        let decoded = try decode(page).get()
        #expect(decoded.keys.isEmpty && decoded.values.isEmpty)
        // Its one encoding: no delta width, a first row ID of 0.
        for edit: (inout [UInt8]) -> Void in [{ $0[5] = 1 }, { $0[5] = 8 }, { $0[32] = 7 }] {
            var edited = page
            edit(&edited)
            resealPage(&edited, salt: salt)
            #expect(isInvalidField(decode(edited).failure))
        }
    }

    @Test func fullLeafOfLargestInlineValuesRoundTrips() throws {
        // 4 dense rows of 2 + 108 bytes after the first row ID and the overflow bits: 449 of the 480-byte body.
        let values = (0..<4).map { LeafValue.bytes(Array(repeating: UInt8($0), count: 108)) }
        let page = leaf(keys: [1, 2, 3, 4], values: values)
        #expect(try decode(page).get().values == values)
        #expect(loadLE(UInt32.self, at: 24, in: page) == 449)
    }

    /// Row IDs cost what their spread needs: nothing when dense, else 1, 2, 4 or 8 bytes each.
    static let widthCases: [([UInt64], Int)] = [
        ([7, 8, 9], 0), ([7, 9, 10], 1), ([7, 8, 7 + 255], 1), ([7, 8, 7 + 256], 2),
        ([0, 1, 0xFFFF], 2), ([0, 1, 0x1_0000], 4), ([5, 6, 5 + 0xFFFF_FFFF], 4), ([5, 6, 6 + 0xFFFF_FFFF], 8),
        ([0, 1, .max], 8), ([.max - 2, .max - 1, .max], 0),
    ]

    @Test(arguments: widthCases)
    func deltaWidthIsTheNarrowestThatHoldsTheLeaf(keys: [UInt64], width: Int) throws {
        let values = keys.map { LeafValue.bytes([UInt8(truncatingIfNeeded: $0)]) }
        let page = leaf(keys: keys, values: values)
        let header = try decodePage(page, number: 20, salt: salt) { _, h in h }.get()
        #expect(Int(header.flags) == width)
        #expect(header.bodyLength == 8 + width * 3 + 1 + 3 * 3)
        #expect(LeafRowIDs(count: 3, first: keys[0], last: keys[2]).flags == UInt8(width))
        let decoded = try decode(page).get()
        #expect(decoded.keys == keys && decoded.values == values)
        // Any other width is refused, even one that would hold the row IDs.
        for other: UInt8 in [0, 1, 2, 3, 4, 8, 16, LeafPage.bitmapFlags] where Int(other) != width {
            var edited = page
            edited[5] = other
            resealPage(&edited, salt: salt)
            #expect(decode(edited).failure != nil, "width \(other) accepted for \(keys)")
        }
    }

    /// The three forms of row IDs, each the narrowest for its rows: a bitmap when it takes fewer bytes than a
    /// delta a row (its 2-byte length included), deltas on a tie.
    static let formCases: [([UInt64], LeafRowIDs)] = [
        ([7, 8, 9, 10], .dense), ([0, 2, 3], .deltas(width: 1)), ([0, 2, 3, 4], .bitmap(length: 1)),
        ([10, 12, 13, 14, 15, 16, 17, 18, 19], .bitmap(length: 2)),
        (Array(0..<300).filter { $0 != 150 }, .bitmap(length: 38)),
        ([0, 100, 200, 300], .deltas(width: 2)), (Array(stride(from: 0, through: 2_000, by: 2)), .bitmap(length: 251)),
    ]

    @Test(arguments: formCases)
    func rowIDsTakeTheNarrowestForm(keys: [UInt64], form: LeafRowIDs) throws {
        let values = keys.map { LeafValue.bytes([UInt8(truncatingIfNeeded: $0)]) }
        #expect(LeafRowIDs(count: keys.count, first: keys[0], last: keys.last!) == form)
        let page = leaf(size: 4096, keys: keys, values: values)
        let header = try decodePage(page, number: 20, salt: salt) { _, h in h }.get()
        #expect(header.flags == form.flags)
        #expect(header.bodyLength == 8 + form.size(count: keys.count) + (keys.count + 7) / 8 + 3 * keys.count)
        let decoded = try decode(page).get()
        #expect(decoded.keys == keys && decoded.values == values)
        page.withUnsafeBytes { buffer in
            let view = LeafPageView(validatedPage: buffer, header: header)
            for (index, key) in keys.enumerated() {
                #expect(view.key(at: index) == key)
                #expect(view.search(key) == (index, true))
                #expect(view.search(key &+ 1) == (index + 1, keys.contains(key &+ 1)))
            }
            #expect(view.search(keys.last! &+ 9) == (keys.count, false))
        }
    }

    /// FORMAT.md §4.2's bitmap example, byte for byte: rows 5, 7, 8 and 9 with values `A`, `B`, `C` and `D`.
    @Test func theBitmapExampleOfFormatMD() throws {
        let page = leaf(
            number: 9, keys: [5, 7, 8, 9], values: [.bytes([0x41]), .bytes([0x42]), .bytes([0x43]), .bytes([0x44])])
        #expect(Array(page[4..<8]) == [1, 0x80, 4, 0])  // leaf, a row-ID bitmap, 4 rows
        #expect(loadLE(UInt32.self, at: 24, in: page) == 24)
        #expect(
            Array(page[32..<56]) == [
                5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x1D, 1, 0, 2, 0, 3, 0, 4, 0, 0, 0x41, 0x42, 0x43, 0x44,
            ])
        #expect(try decode(page, number: 9).get().keys == [5, 7, 8, 9])
    }

    /// A leaf written by hand: `rowIDs` after the first row ID, then `count` empty values (all ends 0, no overflow).
    private func handMadeLeaf(flags: UInt8, first: UInt64, rowIDs: [UInt8], count: Int) -> [UInt8] {
        var body: [UInt8] = []
        for index in 0..<8 { body.append(UInt8(truncatingIfNeeded: first >> (8 * index))) }
        body += rowIDs + [UInt8](repeating: 0, count: 2 * count + (count + 7) / 8)
        return makePage(size: 512) { page in
            for (index, byte) in body.enumerated() { page[32 + index] = byte }
            PageHeader(
                type: .leaf, flags: flags, itemCount: count, pageNumber: 20, generation: 1, bodyLength: body.count,
                extra: 0
            ).seal(page, salt: salt)
        }
    }

    /// Only the narrowest form decodes, and a bitmap must start with the first row, end with a byte holding the last
    /// and count the rows: one encoding per leaf.
    @Test func nonCanonicalRowIDFormsAreInvalid() throws {
        // Rows 0, 2, 3, 4: the bitmap (3 bytes) decodes, deltas (4 bytes) do not.
        #expect(
            try decode(handMadeLeaf(flags: 0x80, first: 0, rowIDs: [1, 0, 0x1D], count: 4)).get().keys == [0, 2, 3, 4])
        #expect(isInvalidField(decode(handMadeLeaf(flags: 1, first: 0, rowIDs: [0, 2, 3, 4], count: 4)).failure))
        // Rows 0, 2, 3: deltas (3 bytes) decode, a bitmap of as many bytes does not.
        #expect(try decode(handMadeLeaf(flags: 1, first: 0, rowIDs: [0, 2, 3], count: 3)).get().keys == [0, 2, 3])
        #expect(isInvalidField(decode(handMadeLeaf(flags: 0x80, first: 0, rowIDs: [1, 0, 0x0D], count: 3)).failure))
        // Dense rows as a bitmap; a bitmap with a trailing empty byte, without the first row's bit, with a row more
        // or fewer than the count, or longer than the body; a bitmap of one row.
        let refused: [(rowIDs: [UInt8], count: Int)] = [
            ([1, 0, 0x0F], 4), ([2, 0, 0x1D, 0], 4), ([1, 0, 0x1C], 3), ([1, 0, 0x1F], 4), ([1, 0, 0x0D], 4),
            ([0xFF, 0x01, 0x1D], 4), ([0, 0], 4), ([1, 0, 0x01], 1),
        ]
        for (rowIDs, count) in refused {
            let error = decode(handMadeLeaf(flags: 0x80, first: 0, rowIDs: rowIDs, count: count)).failure
            #expect(
                isInvalidField(error) || isTruncated(error),
                "bitmap \(rowIDs) of \(count) rows: \(String(describing: error))")
        }
        // A bitmap whose last row would wrap past 2^64.
        let wrapping = decode(handMadeLeaf(flags: 0x80, first: .max - 3, rowIDs: [1, 0, 0x1D], count: 4)).failure
        #expect(isInvalidField(wrapping))
    }

    @Test func everyByteFlipIsRejected() {
        let page = leaf(keys: sampleKeys, values: sampleValues)
        for index in page.indices {
            var copy = page
            copy[index] ^= 0x08
            #expect(decode(copy).failure != nil, "flip of byte \(index) decoded")
        }
    }

    /// Edits a body byte of the sample leaf, reseals the page and decodes it.
    private func editedSample(_ edit: (inout [UInt8]) -> Void) -> FormatError? {
        var page = leaf(keys: sampleKeys, values: sampleValues)
        edit(&page)
        resealPage(&page, salt: salt)
        return decode(page).failure
    }

    // The sample leaf's body (page offset 32): the first row ID at 32, five 8-byte deltas at 40..<80 (0, 1, 9, 999,
    // max − 2), value ends at 80..<90 (0, 1, 13, 120, 132), the overflow bits at 90 (0x14: rows 2 and 4), then the
    // data from 91: row 1's empty value, row 2's byte at 91, row 10's overflow reference at 92, row 1000's 107 bytes
    // at 104, row (max − 1)'s overflow reference at 211; the body ends at 223.

    @Test func keysOutOfOrderAreInvalid() {
        // The second delta (offset 48) set equal to the first, a first delta that is not 0, a delta that wraps.
        #expect(isInvalidField(editedSample { storeLE(UInt64(0), at: 48, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt64(1), at: 40, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt64.max, at: 72, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt64(999), at: 56, in: &$0) }))
    }

    /// A dense leaf's row IDs follow its first one: a first row ID that makes a later one wrap past 2^64 is invalid,
    /// reported at the first row that wraps.
    @Test func denseRowIDsThatWrapAreInvalid() throws {
        var page = leaf(keys: [.max - 2, .max - 1, .max], values: [.bytes([1]), .bytes([2]), .bytes([3])])
        #expect(try decode(page).get().keys == [.max - 2, .max - 1, .max])
        storeLE(UInt64.max - 1, at: 32, in: &page)
        resealPage(&page, salt: salt)
        #expect(decode(page).failure == .invalidField("leaf keys out of order at row 2"))
    }

    @Test func itemCountBeyondTheBodyIsInvalidOrTruncated() {
        for count: UInt16 in [6, 100, .max] {
            let error = editedSample { storeLE(count, at: 6, in: &$0) }
            #expect(isInvalidField(error) || isTruncated(error), "count \(count): \(String(describing: error))")
        }
    }

    @Test func fewerItemsThanCellsAreInvalid() {
        #expect(isInvalidField(editedSample { storeLE(UInt16(4), at: 6, in: &$0) }))
    }

    @Test func valuesMustFollowEachOtherBackToBack() {
        // Value 3's end (offset 86) before value 2's, past the data, and one short (a 13-byte reference after it).
        #expect(isInvalidField(editedSample { storeLE(UInt16(12), at: 86, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt16(133), at: 88, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt16(119), at: 86, in: &$0) }))
        // The last value ends one byte early: a stray byte after it.
        #expect(isInvalidField(editedSample { storeLE(UInt16(131), at: 88, in: &$0) }))
    }

    @Test func inlineLengthBeyondTheInlineLimitIsInvalid() throws {
        // Two dense rows of 50 and 60 bytes; value 0's end (page offset 40) moved to 110 makes it 110 > 108 bytes.
        var page = leaf(
            keys: [1, 2], values: [.bytes(Array(repeating: 1, count: 50)), .bytes(Array(repeating: 2, count: 60))])
        #expect(try decode(page).get().keys == [1, 2])
        storeLE(UInt16(110), at: 40, in: &page)
        resealPage(&page, salt: salt)
        #expect(isInvalidField(decode(page).failure))
    }

    @Test func overflowReferencesAreValidated() {
        // Row 10's reference at page offset 92: first page, then total length at 100.
        #expect(isInvalidField(editedSample { storeLE(UInt64(20), at: 92, in: &$0) }), "chain at the leaf itself")
        #expect(isInvalidField(editedSample { storeLE(UInt64(0), at: 92, in: &$0) }), "chain at page 0")
        #expect(isInvalidField(editedSample { storeLE(UInt64.max, at: 92, in: &$0) }), "chain at noPage")
        #expect(
            isInvalidField(editedSample { storeLE(UInt32(108), at: 100, in: &$0) }),
            "overflow value short enough to be inline"
        )
        #expect(
            isInvalidField(editedSample { storeLE(UInt32(WALFormat.maximumValueSize + 1), at: 100, in: &$0) }),
            "overflow value too long"
        )
        // The overflow bit of row 1000's 107 inline bytes, and a bit past the last row.
        #expect(isInvalidField(editedSample { $0[90] |= 0x08 }))
        #expect(isInvalidField(editedSample { $0[90] |= 0x20 }))
    }

    /// FORMAT.md §4.2's worked example, byte for byte.
    @Test func theWorkedExampleOfFormatMD() throws {
        let page = leaf(
            number: 9, keys: [5, 7], values: [.bytes([0x41, 0x42]), .overflow(firstPage: 8, length: 2_000)])
        #expect(Array(page[4..<8]) == [1, 1, 2, 0])  // leaf, 1-byte deltas, 2 rows
        #expect(loadLE(UInt32.self, at: 24, in: page) == 0x1D)
        #expect(Array(page[32..<47]) == [5, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0x0E, 0, 0x02])
        #expect(Array(page[47..<61]) == [0x41, 0x42, 8, 0, 0, 0, 0, 0, 0, 0, 0xD0, 0x07, 0, 0])
        #expect(page[61...].allSatisfy { $0 == 0 })
    }

    /// Fills a leaf of `pageSize` with random values under row IDs `gap` apart at most, as a tree would.
    private func randomLeaf(
        pageSize: Int, gap: ClosedRange<UInt64>, overflowEvery: Int, maximumLength: Int,
        using random: inout RepeatableRandomNumberGenerator
    ) -> (keys: [UInt64], values: [LeafValue]) {
        let maximumInline = PageFormat.maximumInlineValue(pageSize: pageSize)
        var keys: [UInt64] = []
        var values: [LeafValue] = []
        var cells = 0
        var key: UInt64 = 3
        while true {
            key += UInt64.random(in: gap, using: &random)
            let value: LeafValue =
                Int.random(in: 0..<overflowEvery, using: &random) == 0
                ? .overflow(
                    firstPage: UInt64.random(in: 1..<20, using: &random),
                    length: maximumInline + 1 + Int.random(in: 0...9999, using: &random))
                : .bytes(random.bytes(Int.random(in: 0...min(maximumInline, maximumLength), using: &random)))
            let cell = value.cellSize(maximumInline: maximumInline)
            let size = LeafPage.bodySize(
                count: keys.count + 1, first: keys.first ?? key, last: key, cellBytes: cells + cell)
            if size > pageSize - 32 { break }
            cells += cell
            keys.append(key)
            values.append(value)
        }
        return (keys, values)
    }

    /// The in-place view answers as the decoded arrays do, for every key present and absent, at both page sizes
    /// and every delta width.
    static let gaps: [ClosedRange<UInt64>] = [1...1, 1...2, 1...5, 1...1000, 1...100_000, 1...(1 << 40)]

    @Test(arguments: [512, 4096], gaps)
    func viewSearchesAndLendsValuesInPlace(pageSize: Int, gap: ClosedRange<UInt64>) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(pageSize) + gap.upperBound)
        let (keys, values) = randomLeaf(
            pageSize: pageSize, gap: gap, overflowEvery: 5, maximumLength: 60, using: &random)
        let page = leaf(size: pageSize, number: 20, keys: keys, values: values)
        try page.withUnsafeBytes { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 20, salt: salt)
            try LeafPage.validate(buffer, header: header)
            let view = LeafPageView(validatedPage: buffer, header: header)
            #expect(view.count == keys.count)
            var probes = Set(keys.flatMap { [$0 &- 1, $0, $0 &+ 1] })
            probes.formUnion([0, 1, 2, .max])
            for probe in probes.sorted() {
                let (index, found) = view.search(probe)
                let expected = keys.firstIndex { $0 >= probe } ?? keys.count
                #expect(index == expected && found == (expected < keys.count && keys[expected] == probe))
                if found { #expect(LeafValue(view.cell(at: index)) == values[index]) }
            }
            for index in keys.indices { #expect(view.key(at: index) == keys[index]) }
        }
    }

    @Test func bodyLengthShorterThanTheCellsIsRejected() {
        let error = editedSample { storeLE(UInt32(30), at: 24, in: &$0) }
        #expect(isInvalidField(error) || isTruncated(error))
    }

    @Test func otherPageTypesAreNotLeaves() {
        #expect(isInvalidField(editedSample { $0[4] = PageType.internal.rawValue }))
        #expect(isInvalidField(editedSample { storeLE(UInt32(1), at: 28, in: &$0) }), "level 1 is not a leaf")
    }

    @Test(arguments: [512, 4096])
    func randomResealedMutationsNeverTrap(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(pageSize))
        let (keys, values) = randomLeaf(
            pageSize: pageSize, gap: 1...1000, overflowEvery: 2, maximumLength: pageSize, using: &random)
        let page = leaf(size: pageSize, keys: keys, values: values)
        #expect(try decode(page).get().values == values)
        let bodyLength = Int(loadLE(UInt32.self, at: 24, in: page))
        mutateAndDecode(
            page,
            seed: 41,
            mutations: 2000,
            region: 4..<(32 + bodyLength),
            reseal: { resealPage(&$0, salt: salt) }
        ) { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 20, salt: salt)
            return try LeafPage.decode(buffer, header: header).keys
        }
    }
}
