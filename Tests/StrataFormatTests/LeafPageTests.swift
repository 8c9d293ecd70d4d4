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
            .overflow(firstPage: 19, length: 108),
        ]
    }

    @Test func roundTripsInlineAndOverflowCells() throws {
        let page = leaf(keys: sampleKeys, values: sampleValues)
        let decoded = try decode(page).get()
        #expect(decoded.keys == sampleKeys)
        #expect(decoded.values == sampleValues)
        let header = try decodePage(page, number: 20, salt: salt) { _, h in h }.get()
        #expect(header.itemCount == 5)
        #expect(header.bodyLength == sampleValues.reduce(0) { $0 + $1.cellSize(maximumInline: 107) })
    }

    @Test func emptyLeafRoundTrips() throws {
        let decoded = try decode(leaf(keys: [], values: [])).get()
        #expect(decoded.keys.isEmpty && decoded.values.isEmpty)
    }

    @Test func fullLeafOfLargestInlineValuesRoundTrips() throws {
        // 4 cells of 13 + 107 bytes fill a 512-byte page's 480-byte body exactly.
        let values = (0..<4).map { LeafValue.bytes(Array(repeating: UInt8($0), count: 107)) }
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

    @Test func keysOutOfOrderAreInvalid() {
        // The second cell's key (offset 32 + 13) set equal to the first.
        #expect(isInvalidField(editedSample { storeLE(UInt64(1), at: 45, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt64(0), at: 45, in: &$0) }))
    }

    @Test func itemCountBeyondTheBodyIsInvalidOrTruncated() {
        for count: UInt16 in [6, 100, .max] {
            let error = editedSample { storeLE(count, at: 6, in: &$0) }
            #expect(isInvalidField(error) || isTruncated(error), "count \(count): \(String(describing: error))")
        }
    }

    @Test func fewerItemsThanCellsLeaveStrayBytes() {
        #expect(isInvalidField(editedSample { storeLE(UInt16(4), at: 6, in: &$0) }))
    }

    @Test func unknownCellKindIsInvalid() {
        #expect(isInvalidField(editedSample { $0[32 + 8] = 2 }))
    }

    @Test func inlineLengthBeyondTheInlineLimitIsInvalid() {
        #expect(isInvalidField(editedSample { storeLE(UInt32(108), at: 32 + 9, in: &$0) }))
        #expect(isInvalidField(editedSample { storeLE(UInt32.max, at: 32 + 9, in: &$0) }))
    }

    @Test func overflowReferencesAreValidated() {
        // Third cell starts at 32 + 13 + 14 = 59: key, kind 1, length, first page.
        #expect(isInvalidField(editedSample { storeLE(UInt64(20), at: 59 + 13, in: &$0) }), "chain at the leaf itself")
        #expect(isInvalidField(editedSample { storeLE(UInt64(0), at: 59 + 13, in: &$0) }), "chain at page 0")
        #expect(isInvalidField(editedSample { storeLE(UInt64.max, at: 59 + 13, in: &$0) }), "chain at noPage")
        #expect(
            isInvalidField(editedSample { storeLE(UInt32(107), at: 59 + 9, in: &$0) }),
            "overflow value short enough to be inline"
        )
        #expect(
            isInvalidField(editedSample { storeLE(UInt32(WALFormat.maximumValueSize + 1), at: 59 + 9, in: &$0) }),
            "overflow value too long"
        )
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
