import StrataFormat
import StrataTestSupport
import Testing

/// B+tree internal pages: children separated by row-ID keys.
@Suite struct InternalPageTests {
    private let salt: UInt64 = 0xFEED

    private func page(
        size: Int = 512,
        number: UInt64 = 100,
        level: Int = 1,
        keys: [UInt64] = [0, 10, 20, 30],
        children: [UInt64] = [4, 7, 2, 99]
    ) -> [UInt8] {
        makePage(size: size) { buffer in
            InternalPage.encode(
                level: level,
                keys: keys,
                children: children,
                into: buffer,
                pageNumber: number,
                generation: 3,
                salt: salt
            )
        }
    }

    private func decode(
        _ page: [UInt8],
        number: UInt64 = 100
    ) -> Result<(level: Int, keys: [UInt64], children: [UInt64]), FormatError> {
        decodePage(page, number: number, salt: salt) { buffer, header in try InternalPage.decode(buffer, header: header)
        }
    }

    private func edited(_ edit: (inout [UInt8]) -> Void) -> FormatError? {
        var bytes = page()
        edit(&bytes)
        resealPage(&bytes, salt: salt)
        return decode(bytes).failure
    }

    /// The view's child lookup (an interpolated first probe, then a binary search) agrees with a linear scan for
    /// evenly spaced, clustered and random separators, at every key around each separator.
    @Test(arguments: ["even", "clustered", "random"])
    func childIndexAgreesWithALinearScan(spacing: String) throws {
        var random = RepeatableRandomNumberGenerator(seed: UInt64(spacing.count))
        let count = 60
        var keys: [UInt64] = [0]
        var next: UInt64 = 1_000
        for index in 1..<count {
            switch spacing {
            case "even": next = 1_000 + UInt64(index) * 47
            case "clustered": next += index < 50 ? 1 : 100_000
            default: next += UInt64.random(in: 1...10_000, using: &random)
            }
            keys.append(next)
        }
        let bytes = page(size: 4096, number: 5_000, keys: keys, children: (1...UInt64(count)).map { $0 })
        try bytes.withUnsafeBytes { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 5_000, salt: salt)
            try InternalPage.validate(buffer, header: header)
            let view = InternalPageView(validatedPage: buffer, header: header)
            var probes: [UInt64] = [0, .max, keys[count - 1] + 1]
            for key in keys.dropFirst() { probes += [key - 1, key, key + 1] }
            for _ in 0..<200 { probes.append(UInt64.random(in: 0...(next + 10), using: &random)) }
            for probe in probes {
                let expected = (1..<count).last { keys[$0] <= probe } ?? 0
                #expect(view.childIndex(for: probe) == expected, "\(spacing): key \(probe)")
            }
        }
    }

    @Test func roundTripsAndDropsTheFirstKey() throws {
        let decoded = try decode(page(keys: [12345, 10, 20, 30])).get()
        #expect(decoded.level == 1)
        #expect(decoded.keys == [0, 10, 20, 30])
        #expect(decoded.children == [4, 7, 2, 99])
        #expect(InternalPage.bodySize(childCount: 4) == 56)
    }

    @Test func fullestNodeOfEachPageSizeRoundTrips() throws {
        for size in [512, 4096] {
            let count = (size - 32 - 8) / 16 + 1
            let keys = [0] + (1..<count).map { UInt64($0) * 3 }
            let children = (0..<count).map { UInt64($0 + 1) }
            let decoded = try decode(
                page(size: size, number: UInt64(count + 1), level: 31, keys: keys, children: children),
                number: UInt64(count + 1)
            ).get()
            #expect(decoded.children == children)
            #expect(decoded.level == 31)
        }
    }

    @Test func everyByteFlipIsRejected() {
        let bytes = page()
        for index in bytes.indices {
            var copy = bytes
            copy[index] ^= 0x40
            #expect(decode(copy).failure != nil, "byte \(index)")
        }
    }

    @Test func childAtOrAfterTheNodeIsInvalid() {
        #expect(isInvalidField(edited { storeLE(UInt64(100), at: 32, in: &$0) }))
        #expect(isInvalidField(edited { storeLE(UInt64(0), at: 32 + 16, in: &$0) }))
        #expect(isInvalidField(edited { storeLE(UInt64.max, at: 32 + 48, in: &$0) }))
    }

    @Test func separatorsNotIncreasingAreInvalid() {
        #expect(isInvalidField(edited { storeLE(UInt64(10), at: 32 + 24, in: &$0) }))
        #expect(isInvalidField(edited { storeLE(UInt64(5), at: 32 + 24, in: &$0) }))
    }

    @Test func levelOutsideTheTreeLimitIsInvalid() {
        for level: UInt32 in [0, 32, .max] {
            #expect(isInvalidField(edited { storeLE(level, at: 28, in: &$0) }), "level \(level)")
        }
    }

    @Test func childCountAndBodyMustAgree() {
        for count: UInt16 in [0, 1, 3, 5, .max] {
            #expect(isInvalidField(edited { storeLE(count, at: 6, in: &$0) }), "count \(count)")
        }
        #expect(isInvalidField(edited { storeLE(UInt32(40), at: 24, in: &$0) }))
    }

    @Test func randomResealedMutationsNeverTrap() {
        mutateAndDecode(
            page(),
            seed: 51,
            mutations: 3000,
            region: 4..<(32 + 56),
            reseal: { resealPage(&$0, salt: salt) }
        ) { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 100, salt: salt)
            return try InternalPage.decode(buffer, header: header).children
        }
    }
}
