import StrataFormat
import Testing

/// The 48-byte header of a log file.
@Suite struct WALFileHeaderTests {
    private let header = WALFileHeader(storeID: Array(0xA0..<0xB0), startLSN: 0x0102_0304_0506, salt: 0xCAFE_F00D)

    private func resealed<T: FixedWidthInteger>(_ value: T, at offset: Int) -> [UInt8] {
        var bytes = header.encoded()
        storeLE(value, at: offset, in: &bytes)
        storeLE(CRC32C.mask(CRC32C.checksum(Array(bytes[0..<44]))), at: 44, in: &bytes)
        return bytes
    }

    @Test func layoutIsPinned() {
        let bytes = header.encoded()
        #expect(WALFormat.fileHeaderSize == 48)
        #expect(bytes.count == 48)
        #expect(Array(bytes[0..<8]) == WALFormat.magic)
        #expect(loadLE(UInt32.self, at: 8, in: bytes) == WALFormat.version)
        #expect(loadLE(UInt32.self, at: 12, in: bytes) == 48)
        #expect(Array(bytes[16..<32]) == header.storeID)
        #expect(loadLE(UInt64.self, at: 32, in: bytes) == header.startLSN)
        #expect(loadLE(UInt32.self, at: 40, in: bytes) == header.salt)
    }

    @Test func roundTrips() throws {
        #expect(try header.encoded().withUnsafeBytes { try WALFileHeader.decode($0) } == header)
        let longer = header.encoded() + [1, 2, 3]
        #expect(try longer.withUnsafeBytes { try WALFileHeader.decode($0) } == header)
    }

    @Test func everyTruncationIsRejected() {
        let bytes = header.encoded()
        for length in 0..<48 {
            #expect(
                formatError(Array(bytes[0..<length])) { try WALFileHeader.decode($0) }
                    == .truncated(needed: 48, available: length)
            )
        }
    }

    @Test func everyByteFlipIsRejected() {
        let bytes = header.encoded()
        for index in bytes.indices {
            var copy = bytes
            copy[index] ^= 0x20
            let error = formatError(copy) { try WALFileHeader.decode($0) }
            if index < 8 {
                #expect(error == .badMagic)
            } else {
                #expect(isChecksumMismatch(error), "byte \(index): \(String(describing: error))")
            }
        }
    }

    @Test func otherVersionLengthOrZeroStartAreRejected() {
        #expect(formatError(resealed(UInt32(2), at: 8)) { try WALFileHeader.decode($0) } == .unsupportedVersion(2))
        #expect(isInvalidField(formatError(resealed(UInt32(40), at: 12)) { try WALFileHeader.decode($0) }))
        #expect(isInvalidField(formatError(resealed(UInt64(0), at: 32)) { try WALFileHeader.decode($0) }))
    }

    @Test func randomMutationsNeverTrap() {
        let bytes = header.encoded()
        #expect(mutateAndDecode(bytes, seed: 11, mutations: 2000) { try WALFileHeader.decode($0) } == 2000)
        mutateAndDecode(
            bytes,
            seed: 12,
            mutations: 2000,
            region: 8..<44,
            reseal: { bytes in
                storeLE(CRC32C.mask(CRC32C.checksum(Array(bytes[0..<44]))), at: 44, in: &bytes)
            }
        ) { try WALFileHeader.decode($0) }
    }
}
