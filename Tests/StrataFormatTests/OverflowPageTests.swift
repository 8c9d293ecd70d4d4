import StrataFormat
import StrataTestSupport
import Testing

/// Pages of a long value's overflow chain.
@Suite struct OverflowPageTests {
    private let salt: UInt64 = 0xC0FFEE

    private func page(size: Int = 512, number: UInt64 = 8, next: UInt64 = 7, data: [UInt8]) -> [UInt8] {
        makePage(size: size) { buffer in
            data.withUnsafeBytes {
                OverflowPage.encode(data: $0, next: next, into: buffer, pageNumber: number, generation: 1, salt: salt)
            }
        }
    }

    private func decode(_ page: [UInt8], number: UInt64 = 8) -> Result<(next: UInt64, data: [UInt8]), FormatError> {
        decodePage(page, number: number, salt: salt) { buffer, header in
            let (next, data) = try OverflowPage.decode(buffer, header: header)
            return (next, Array(data))
        }
    }

    @Test func roundTripsFullAndPartialPages() throws {
        var random = RepeatableRandomNumberGenerator(seed: 61)
        for size in [512, 4096] {
            for length in [1, 100, PageFormat.overflowCapacity(pageSize: size)] {
                let data = random.bytes(length)
                let decoded = try decode(page(size: size, next: PageFormat.noPage, data: data)).get()
                #expect(decoded.data == data)
                #expect(decoded.next == PageFormat.noPage)
            }
        }
        #expect(try decode(page(next: 1, data: [5])).get().next == 1)
    }

    @Test func everyByteFlipIsRejected() {
        let bytes = page(data: Array(0..<50))
        for index in bytes.indices {
            var copy = bytes
            copy[index] ^= 0x02
            #expect(decode(copy).failure != nil, "byte \(index)")
        }
    }

    @Test func nextPageNotBeforeThisOneIsInvalid() {
        for next: UInt64 in [0, 8, 9, .max - 1] {
            var bytes = page(data: [1, 2])
            storeLE(next, at: 32, in: &bytes)
            resealPage(&bytes, salt: salt)
            #expect(isInvalidField(decode(bytes).failure), "next \(next)")
        }
    }

    @Test func dataLengthMustMatchTheBody() {
        var bytes = page(data: [1, 2, 3])
        storeLE(UInt32(4), at: 28, in: &bytes)
        resealPage(&bytes, salt: salt)
        #expect(isInvalidField(decode(bytes).failure))
        bytes = page(data: [1, 2, 3])
        storeLE(UInt32(7), at: 24, in: &bytes)  // body shorter than the next pointer
        storeLE(UInt32(0), at: 28, in: &bytes)
        resealPage(&bytes, salt: salt)
        #expect(isInvalidField(decode(bytes).failure))
    }

    @Test func pageWithoutDataIsInvalid() {
        var bytes = page(data: [1])
        storeLE(UInt32(8), at: 24, in: &bytes)
        storeLE(UInt32(0), at: 28, in: &bytes)
        resealPage(&bytes, salt: salt)
        #expect(isInvalidField(decode(bytes).failure))
    }

    @Test func randomResealedMutationsNeverTrap() {
        mutateAndDecode(
            page(data: Array(0..<90)),
            seed: 62,
            mutations: 3000,
            region: 4..<130,
            reseal: { resealPage(&$0, salt: salt) }
        ) { buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 8, salt: salt)
            return try OverflowPage.decode(buffer, header: header).data.count
        }
    }
}
