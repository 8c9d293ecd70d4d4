import StrataFormat
import StrataTestSupport
import Testing

/// The 32-byte page header and the page checksum.
@Suite struct PageHeaderTests {
    private let salt: UInt64 = 0x0123_4567_89AB_CDEF

    private func sealedPage(
        size: Int = 512,
        number: UInt64 = 5,
        body: [UInt8] = [1, 2, 3],
        type: PageType = .leaf
    ) -> [UInt8] {
        makePage(size: size) { page in
            for (index, byte) in body.enumerated() { page[32 + index] = byte }
            PageHeader(
                type: type,
                itemCount: 3,
                pageNumber: number,
                generation: 9,
                bodyLength: body.count,
                extra: 0xABCD
            )
            .seal(page, salt: salt)
        }
    }

    @Test func layoutIsPinned() {
        #expect(PageFormat.headerSize == 32)
        #expect(PageFormat.leafCellHeaderSize == 2)
        #expect(PageFormat.overflowCellSize == 14)
        #expect(PageFormat.internalFirstChildSize == 8)
        #expect(PageFormat.internalEntrySize == 16)
        #expect(PageFormat.maximumInlineValue(pageSize: 4096) == 1004)
        #expect(PageFormat.maximumInlineValue(pageSize: 512) == 108)
        // A slot's 15-bit length holds the longest inline value of the largest page.
        #expect(PageFormat.maximumInlineValue(pageSize: 65536) == 16_364)
        #expect(PageFormat.overflowCapacity(pageSize: 4096) == 4056)
        let page = sealedPage()
        #expect(page[4] == PageType.leaf.rawValue)
        #expect(page[5] == 0)
        #expect(loadLE(UInt16.self, at: 6, in: page) == 3)
        #expect(loadLE(UInt64.self, at: 8, in: page) == 5)
        #expect(loadLE(UInt64.self, at: 16, in: page) == 9)
        #expect(loadLE(UInt32.self, at: 24, in: page) == 3)
        #expect(loadLE(UInt32.self, at: 28, in: page) == 0xABCD)
        let crc = CRC32C.checksum(Array(page[4...]), continuing: CRC32C.checksum(of: salt))
        #expect(loadLE(UInt32.self, at: 0, in: page) == CRC32C.mask(crc))
    }

    @Test func roundTrips() throws {
        let page = sealedPage()
        let header = try decodePage(page, number: 5, salt: salt) { _, header in header }.get()
        #expect(
            header == PageHeader(type: .leaf, itemCount: 3, pageNumber: 5, generation: 9, bodyLength: 3, extra: 0xABCD)
        )
        #expect(page.withUnsafeBytes { Array(header.body(of: $0)) } == [1, 2, 3])
    }

    @Test func everyByteFlipFailsTheChecksum() {
        let page = sealedPage()
        for index in page.indices {
            var copy = page
            copy[index] ^= 0x04
            let error = decodePage(copy, number: 5, salt: salt) { _, header in header }.failure
            #expect(isChecksumMismatch(error), "byte \(index): \(String(describing: error))")
        }
    }

    @Test func pageReadAtAnotherPositionIsRejected() {
        #expect(isInvalidField(decodePage(sealedPage(number: 5), number: 6, salt: salt) { _, h in h }.failure))
    }

    @Test func pageOfAnotherStoreFailsTheChecksum() {
        #expect(isChecksumMismatch(decodePage(sealedPage(), number: 5, salt: salt ^ 1) { _, h in h }.failure))
    }

    @Test func shortBuffersAreTruncated() {
        let page = sealedPage()
        for length in [0, 1, 4, 31, 32, 63] {
            #expect(isTruncated(decodePage(Array(page[0..<length]), number: 5, salt: salt) { _, h in h }.failure))
        }
    }

    @Test func unknownTypeFlagsAndOversizedBodyAreInvalidEvenWithAValidChecksum() {
        // Flags belong to leaves and index leaves (their readers check them); any other type must have none.
        for type in [PageType.internal, .overflow, .rootRecord, .indexInternal] {
            var page = sealedPage(type: type)
            page[5] = 1
            resealPage(&page, salt: salt)
            #expect(isInvalidField(decodePage(page, number: 5, salt: salt) { _, h in h }.failure), "\(type) flags")
        }
        for (offset, value) in [(4, UInt32(0)), (4, 7), (4, 0xFF)] {
            var page = sealedPage()
            page[offset] = UInt8(value)
            resealPage(&page, salt: salt)
            #expect(
                isInvalidField(decodePage(page, number: 5, salt: salt) { _, h in h }.failure),
                "byte \(offset) = \(value)"
            )
        }
        for bodyLength: UInt32 in [481, 4096, .max] {
            var page = sealedPage()
            storeLE(bodyLength, at: 24, in: &page)
            resealPage(&page, salt: salt)
            #expect(isInvalidField(decodePage(page, number: 5, salt: salt) { _, h in h }.failure), "body \(bodyLength)")
        }
        var page = sealedPage()
        storeLE(UInt32(480), at: 24, in: &page)
        resealPage(&page, salt: salt)
        #expect(decodePage(page, number: 5, salt: salt) { _, h in h.bodyLength }.failure == nil)
    }

    @Test func randomResealedHeadersNeverTrap() {
        let page = sealedPage()
        mutateAndDecode(page, seed: 31, mutations: 3000, region: 4..<32, reseal: { resealPage(&$0, salt: salt) }) {
            buffer in
            let header = try PageHeader.decode(buffer, expectedPageNumber: 5, salt: salt)
            return header.body(of: buffer).count
        }
    }
}
