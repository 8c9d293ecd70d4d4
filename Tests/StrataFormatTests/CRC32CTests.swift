import StrataFormat
import StrataTestSupport
import Testing

/// CRC-32C against published vectors (RFC 3720 B.4, LevelDB `crc32c_test.cc`) and a bit-at-a-time reference.
@Suite struct CRC32CTests {
    /// The definition of CRC-32C, one bit at a time: the reference the table-driven code must match.
    private func referenceCRC(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        var state = ~crc
        for byte in bytes {
            state ^= UInt32(byte)
            for _ in 0..<8 { state = state & 1 != 0 ? (state >> 1) ^ 0x82F6_3B78 : state >> 1 }
        }
        return ~state
    }

    @Test func checkStringGivesTheCatalogueValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }

    @Test func rfc3720VectorsMatch() {
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
        let iscsiReadCommand: [UInt8] = [
            0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
            0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ]
        #expect(CRC32C.checksum(iscsiReadCommand) == 0xD996_3A56)
    }

    @Test func emptyInputGivesZero() {
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum([UInt8](), continuing: 0x1234_5678) == 0x1234_5678)
    }

    @Test func tableDrivenCodeMatchesTheBitwiseReferenceAtEveryLengthAndAlignment() {
        var random = RepeatableRandomNumberGenerator(seed: 0xC3C)
        let data = random.bytes(300)
        for start in 0..<9 {
            for length in 0...(data.count - start) where length < 40 || length % 13 == 0 {
                let slice = Array(data[start..<(start + length)])
                let fast = data.withUnsafeBytes {
                    CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)]))
                }
                #expect(fast == referenceCRC(slice), "start \(start) length \(length)")
            }
        }
    }

    /// The hardware path splits long inputs into three interleaved streams of 256 bytes and joins them, or (with
    /// AVX-512 VPCLMULQDQ) folds them 256 bytes, then 16 bytes, at a time: it must agree with the tables at every
    /// length around those block boundaries, from every alignment, continuing any state. (On a CPU without CRC
    /// instructions both calls take the tables and this checks nothing new.)
    @Test func hardwarePathMatchesTheTablesAcrossItsBlockBoundaries() {
        var random = RepeatableRandomNumberGenerator(seed: 0x55E4)
        let data = random.bytes(5_000)
        let lengths =
            Array(0...40) + [255, 256, 257, 767, 768, 769, 1_535, 1_536, 1_537, 2_304, 4_064, 4_096, 4_950]
            + [271, 272, 273, 279, 280, 287, 511, 512, 513, 527, 528, 1_023, 1_024, 1_025, 1_039, 1_040, 2_047, 2_048]
        for start in [0, 1, 3, 7, 8] {
            for length in lengths where start + length <= data.count {
                let seed = UInt32.random(in: .min ... .max, using: &random)
                data.withUnsafeBytes { all in
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])
                    #expect(
                        CRC32C.checksum(slice, continuing: seed) == CRC32C.tableChecksum(slice, continuing: seed),
                        "start \(start) length \(length)")
                }
            }
        }
    }

    @Test func continuingEqualsChecksumOfTheConcatenation() {
        var random = RepeatableRandomNumberGenerator(seed: 7)
        for _ in 0..<50 {
            let first = random.bytes(Int.random(in: 0...40, using: &random))
            let second = random.bytes(Int.random(in: 0...40, using: &random))
            #expect(CRC32C.checksum(second, continuing: CRC32C.checksum(first)) == CRC32C.checksum(first + second))
        }
        #expect(CRC32C.checksum(Array("6789".utf8), continuing: CRC32C.checksum(Array("12345".utf8))) == 0xE306_9283)
    }

    @Test func integerChecksumCoversLittleEndianBytes() {
        #expect(CRC32C.checksum(of: UInt64(0x0807_0605_0403_0201)) == CRC32C.checksum([1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(CRC32C.checksum(of: UInt32(0x3433_3231)) == CRC32C.checksum(Array("1234".utf8)))
    }

    @Test func maskIsInvertedByUnmaskAndChangesTheValue() {
        var random = RepeatableRandomNumberGenerator(seed: 99)
        let crc = CRC32C.checksum(Array("foo".utf8))
        #expect(CRC32C.mask(crc) != crc)
        #expect(CRC32C.mask(CRC32C.mask(crc)) != crc)
        #expect(CRC32C.unmask(CRC32C.mask(crc)) == crc)
        #expect(CRC32C.unmask(CRC32C.unmask(CRC32C.mask(CRC32C.mask(crc)))) == crc)
        for value in [0, 1, 0xFFFF_FFFF, 0x8000_0000, 0xA282_EAD8]
            + (0..<200).map({ _ in UInt32.random(in: .min ... .max, using: &random) })
        {
            #expect(CRC32C.unmask(CRC32C.mask(value)) == value)
            #expect(CRC32C.mask(CRC32C.unmask(value)) == value)
        }
    }

    @Test func maskMatchesLevelDBDefinition() {
        // LevelDB: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
        #expect(CRC32C.mask(0) == 0xA282_EAD8)
        let crc: UInt32 = 0xE306_9283
        #expect(CRC32C.mask(crc) == ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8)
        #expect(CRC32C.mask(crc) == 0xC78A_B0E5)
    }

    @Test func everySingleBitFlipChangesTheChecksum() {
        var random = RepeatableRandomNumberGenerator(seed: 3)
        let data = random.bytes(64)
        let original = CRC32C.checksum(data)
        for index in data.indices {
            for bit in 0..<8 {
                var copy = data
                copy[index] ^= 1 << bit
                #expect(CRC32C.checksum(copy) != original, "byte \(index) bit \(bit)")
            }
        }
    }
}
