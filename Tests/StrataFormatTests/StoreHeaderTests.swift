import StrataFormat
import Testing

/// The store header (page 0): round trip, layout, and rejection of every kind of damage.
@Suite struct StoreHeaderTests {
    private let storeID: [UInt8] = Array(0x10..<0x20)

    private func encoded(pageSize: Int = 4096, edit: (inout StoreHeader) -> Void = { _ in }) -> [UInt8] {
        var header = StoreHeader(pageSize: pageSize, storeID: storeID)
        edit(&header)
        return header.encoded()
    }

    /// A header whose field at `offset` is replaced by `value`, with the checksum recomputed.
    private func resealed<T: FixedWidthInteger>(_ value: T, at offset: Int) -> [UInt8] {
        var bytes = encoded()
        storeLE(value, at: offset, in: &bytes)
        let crc = CRC32C.checksum(Array(bytes[0..<60]))
        storeLE(CRC32C.mask(crc), at: 60, in: &bytes)
        return bytes
    }

    @Test func layoutIsPinned() {
        let bytes = encoded()
        #expect(StoreHeader.encodedSize == 64)
        #expect(bytes.count == 64)
        #expect(Array(bytes[0..<8]) == [0x89, 0x53, 0x54, 0x52, 0x41, 0x0D, 0x0A, 0x1A])
        #expect(loadLE(UInt32.self, at: 8, in: bytes) == 4)
        #expect(loadLE(UInt32.self, at: 12, in: bytes) == 64)
        #expect(loadLE(UInt32.self, at: 16, in: bytes) == 4096)
        #expect(bytes[20] == StoreHeader.checksumCRC32C)
        #expect(Array(bytes[36..<52]) == storeID)
        #expect(loadLE(UInt32.self, at: 60, in: bytes) == CRC32C.mask(CRC32C.checksum(Array(bytes[0..<60]))))
    }

    @Test(arguments: [512, 1024, 4096, 16384, 65536])
    func roundTripsEveryValidPageSize(pageSize: Int) throws {
        let header = StoreHeader(pageSize: pageSize, storeID: storeID)
        #expect(try header.encoded().withUnsafeBytes { try StoreHeader.decode($0) } == header)
        // Decoding reads only the first 64 bytes of a longer page.
        let page = header.encoded() + [UInt8](repeating: 0xEE, count: pageSize - 64)
        #expect(try page.withUnsafeBytes { try StoreHeader.decode($0) } == header)
    }

    @Test func compatibleFeatureFlagsRoundTrip() throws {
        let bytes = encoded {
            $0.compatibleFeatures = 0xA5
            $0.readOnlyCompatibleFeatures = 0x5A
        }
        let decoded = try bytes.withUnsafeBytes { try StoreHeader.decode($0) }
        #expect(decoded.compatibleFeatures == 0xA5)
        #expect(decoded.readOnlyCompatibleFeatures == 0x5A)
    }

    @Test func checksumSaltMixesBothHalvesOfTheStoreID() {
        let a = StoreHeader(pageSize: 4096, storeID: storeID)
        var other = storeID
        other[15] ^= 1
        let b = StoreHeader(pageSize: 4096, storeID: other)
        #expect(a.checksumSalt != b.checksumSalt)
        other = storeID
        other[0] ^= 1
        #expect(StoreHeader(pageSize: 4096, storeID: other).checksumSalt != a.checksumSalt)
    }

    @Test func everyTruncationIsRejectedAsTruncated() {
        let bytes = encoded()
        for length in 0..<bytes.count {
            let error = formatError(Array(bytes[0..<length])) { try StoreHeader.decode($0) }
            #expect(error == .truncated(needed: 64, available: length), "length \(length)")
        }
    }

    @Test func everyByteFlipIsRejected() {
        let bytes = encoded()
        for index in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var copy = bytes
                copy[index] ^= mask
                let error = formatError(copy) { try StoreHeader.decode($0) }
                if index < 8 {
                    #expect(error == .badMagic, "byte \(index)")
                } else {
                    #expect(error != nil, "flip of byte \(index) by \(mask) was accepted")
                }
            }
        }
    }

    @Test func wrongMagicIsBadMagic() {
        var bytes = encoded()
        bytes.replaceSubrange(0..<8, with: WALFormat.magic)  // a WAL file is not a page file
        #expect(formatError(bytes) { try StoreHeader.decode($0) } == .badMagic)
    }

    @Test func otherVersionIsUnsupportedVersion() {
        #expect(formatError(resealed(UInt32(1), at: 8)) { try StoreHeader.decode($0) } == .unsupportedVersion(1))
        #expect(formatError(resealed(UInt32(2), at: 8)) { try StoreHeader.decode($0) } == .unsupportedVersion(2))
        #expect(formatError(resealed(UInt32(3), at: 8)) { try StoreHeader.decode($0) } == .unsupportedVersion(3))
        #expect(formatError(resealed(UInt32(5), at: 8)) { try StoreHeader.decode($0) } == .unsupportedVersion(5))
        #expect(formatError(resealed(UInt32(0), at: 8)) { try StoreHeader.decode($0) } == .unsupportedVersion(0))
    }

    @Test func wrongHeaderLengthIsInvalid() {
        #expect(isInvalidField(formatError(resealed(UInt32(65), at: 12)) { try StoreHeader.decode($0) }))
    }

    @Test func invalidPageSizesAreRejected() {
        for size: UInt32 in [0, 256, 511, 513, 3000, 131_072, .max] {
            #expect(
                isInvalidField(formatError(resealed(size, at: 16)) { try StoreHeader.decode($0) }),
                "page size \(size)"
            )
        }
    }

    @Test func unknownChecksumTypeIsRejected() {
        #expect(isInvalidField(formatError(resealed(UInt8(2), at: 20)) { try StoreHeader.decode($0) }))
    }

    @Test func unknownIncompatibleFeatureIsRejectedButOthersAreNot() throws {
        #expect(isInvalidField(formatError(resealed(UInt32(1), at: 32)) { try StoreHeader.decode($0) }))
        #expect(
            try resealed(UInt32(0xFFFF_FFFF), at: 24).withUnsafeBytes { try StoreHeader.decode($0) }.compatibleFeatures
                == .max
        )
    }

    @Test func randomMutationsNeverTrap() {
        let bytes = encoded()
        let rejected = mutateAndDecode(bytes, seed: 1, mutations: 2000) { try StoreHeader.decode($0) }
        #expect(rejected == 2000)
        // With the checksum recomputed, only the field checks stand between a mutation and a decode.
        mutateAndDecode(
            bytes,
            seed: 2,
            mutations: 2000,
            region: 8..<60,
            reseal: { bytes in
                storeLE(CRC32C.mask(CRC32C.checksum(Array(bytes[0..<60]))), at: 60, in: &bytes)
            }
        ) { try StoreHeader.decode($0) }
    }
}
