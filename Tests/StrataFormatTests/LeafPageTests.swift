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
            LeafPage.encode(keys: keys, values: values, into: page, pageNumber: number, generation: 1, salt: salt)
        }
    }

    private func decode(
        _ page: [UInt8],
        number: UInt64 = 20
    ) -> Result<(keys: [UInt64], values: [LeafValue]), FormatError> {
        decodePage(page, number: number, salt: salt) { buffer, header in try LeafPage.decode(buffer, header: header) }
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
        #expect(header.bodyLength == sampleValues.reduce(0) { $0 + $1.cellSize(maximumInline: 108) })
        #expect(header.bodyLength == 5 * 12 + 0 + 1 + 12 + 107 + 12)
    }

    @Test func emptyLeafRoundTrips() throws {
        let decoded = try decode(leaf(keys: [], values: [])).get()
        #expect(decoded.keys.isEmpty && decoded.values.isEmpty)
    }

    @Test func fullLeafOfLargestInlineValuesRoundTrips() throws {
        // 4 rows of 12 + 108 bytes fill a 512-byte page's 480-byte body exactly.
        let values = (0..<4).map { LeafValue.bytes(Array(repeating: UInt8($0), count: 108)) }
        let decoded = try decode(leaf(keys: [1, 2, 3, 4], values: values)).get()
        #expect(decoded.values == values)
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

    // The sample leaf's body (page offset 32): row IDs at 32..<72, slots at 72..<92, then the values: row 1's
    // (empty) and row 2's (1 byte) at 92, row 10's overflow reference at 93, row 1000's 107 bytes at 105, row
    // (max - 1)'s overflow reference at 212; the body ends at 224.

    @Test func keysOutOfOrderAreInvalid() {
        // The second row ID (offset 32 + 8) set equal to the first, then below it.
        #expect(isInvalidField(editedSample { storeLE(UInt64(1), at: 40, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt64(0), at: 40, in: &$0) }))
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
        // Slot 1's offset (page offset 76) moved one byte on, and back onto slot 0's value.
        #expect(isInvalidField(editedSample { storeLE(UInt16(61), at: 76, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt16(59), at: 76, in: &$0) }))
        // Slot 3 claims one byte fewer: a stray byte is left before the next value.
        #expect(isInvalidField(editedSample { storeLE(UInt16(106), at: 86, in: &$0) }))
    }

    @Test func inlineLengthBeyondTheInlineLimitIsInvalid() {
        #expect(isInvalidField(editedSample { storeLE(UInt16(109), at: 86, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt16(0x7FFF), at: 86, in: &$0) }))
    }

    @Test func overflowReferencesAreValidated() {
        // Row 10's reference at page offset 93: first page, then total length at 101.
        #expect(isInvalidField(editedSample { storeLE(UInt64(20), at: 93, in: &$0) }), "chain at the leaf itself")
        #expect(isInvalidField(editedSample { storeLE(UInt64(0), at: 93, in: &$0) }), "chain at page 0")
        #expect(isInvalidField(editedSample { storeLE(UInt64.max, at: 93, in: &$0) }), "chain at noPage")
        #expect(
            isInvalidField(editedSample { storeLE(UInt32(108), at: 101, in: &$0) }),
            "overflow value short enough to be inline"
        )
        #expect(
            isInvalidField(editedSample { storeLE(UInt32(WALFormat.maximumValueSize + 1), at: 101, in: &$0) }),
            "overflow value too long"
        )
        // Slot 2's word (page offset 82) says overflow with another length than a reference's 12 bytes.
        #expect(isInvalidField(editedSample { storeLE(UInt16(0x8000 | 11), at: 82, in: &$0) }))
    }

    /// FORMAT.md §4.2's worked example, byte for byte.
    @Test func theWorkedExampleOfFormatMD() throws {
        let page = leaf(
            number: 9, keys: [5, 7], values: [.bytes([0x41, 0x42]), .overflow(firstPage: 8, length: 2_000)])
        #expect(Array(page[4..<8]) == [1, 0, 2, 0])
        #expect(loadLE(UInt32.self, at: 24, in: page) == 0x26)
        #expect(
            Array(page[32..<56]) == [
                5, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0x18, 0, 2, 0, 0x1A, 0, 0x0C, 0x80,
            ])
        #expect(Array(page[56..<70]) == [0x41, 0x42, 8, 0, 0, 0, 0, 0, 0, 0, 0xD0, 0x07, 0, 0])
        #expect(page[70...].allSatisfy { $0 == 0 })
    }

    /// The in-place view answers as the decoded arrays do, for every key present and absent, at both page sizes.
    @Test(arguments: [512, 4096])
    func viewSearchesAndLendsValuesInPlace(pageSize: Int) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(pageSize) + 5)
        let maximumInline = PageFormat.maximumInlineValue(pageSize: pageSize)
        var keys: [UInt64] = []
        var values: [LeafValue] = []
        var size = 0
        var key: UInt64 = 3
        while true {
            key += UInt64.random(in: 1...5, using: &random)
            let value: LeafValue =
                Int.random(in: 0..<5, using: &random) == 0
                ? .overflow(firstPage: 2, length: maximumInline + 1)
                : .bytes(random.bytes(Int.random(in: 0...min(maximumInline, 60), using: &random)))
            let cell = value.cellSize(maximumInline: maximumInline)
            if size + cell > pageSize - 32 { break }
            size += cell
            keys.append(key)
            values.append(value)
        }
        let page = leaf(size: pageSize, number: 20, keys: keys, values: values)
        try page.withUnsafeBytes { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 20, salt: salt)
            try LeafPage.validate(buffer, header: header)
            let view = LeafPageView(validatedPage: buffer, header: header)
            #expect(view.count == keys.count)
            for probe in 0...(key + 2) {
                let (index, found) = view.search(probe)
                let expected = keys.firstIndex { $0 >= probe } ?? keys.count
                #expect(index == expected && found == (expected < keys.count && keys[expected] == probe))
                if found { #expect(LeafValue(view.cell(at: index)) == values[index]) }
            }
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
        let maximumInline = PageFormat.maximumInlineValue(pageSize: pageSize)
        var keys: [UInt64] = []
        var values: [LeafValue] = []
        var size = 0
        var key: UInt64 = 0
        while true {
            key += UInt64.random(in: 1...1000, using: &random)
            let value: LeafValue =
                Bool.random(using: &random)
                ? .bytes(random.bytes(Int.random(in: 0...maximumInline, using: &random)))
                : .overflow(
                    firstPage: UInt64.random(in: 1..<20, using: &random),
                    length: maximumInline + 1 + Int.random(in: 0...9999, using: &random)
                )
            let cell = value.cellSize(maximumInline: maximumInline)
            if size + cell > pageSize - 32 { break }
            size += cell
            keys.append(key)
            values.append(value)
        }
        let page = leaf(size: pageSize, keys: keys, values: values)
        #expect(try decode(page).get().values == values)
        mutateAndDecode(
            page,
            seed: 41,
            mutations: 2000,
            region: 4..<(32 + size),
            reseal: { resealPage(&$0, salt: salt) }
        ) { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 20, salt: salt)
            return try LeafPage.decode(buffer, header: header).keys
        }
    }
}
