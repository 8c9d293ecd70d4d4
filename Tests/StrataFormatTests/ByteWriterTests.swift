import StrataFormat
import Testing

/// `ByteWriter` appends little-endian fields and patches them in place.
@Suite struct ByteWriterTests {
    @Test func writesLittleEndianFields() {
        var writer = ByteWriter()
        writer.writeUInt8(0x01)
        writer.writeUInt16LE(0x0302)
        writer.writeUInt32LE(0x0706_0504)
        writer.writeUInt64LE(0x0F0E_0D0C_0B0A_0908)
        writer.writeBytes([0xAA, 0xBB])
        writer.writeZeros(2)
        #expect(writer.bytes == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xAA, 0xBB, 0, 0])
        #expect(writer.count == 19)
    }

    @Test func setOverwritesInPlace() {
        var writer = ByteWriter()
        writer.writeZeros(12)
        writer.setUInt32LE(0xDDCC_BBAA, at: 0)
        writer.setLE(UInt64(0x1122_3344_5566_7788), at: 4)
        #expect(writer.bytes == [0xAA, 0xBB, 0xCC, 0xDD, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
    }

    @Test func writerOutputReadsBackThroughReader() throws {
        var writer = ByteWriter()
        let values: [UInt64] = [0, 1, 0xFF, 0x1_0000, .max, 0x0123_4567_89AB_CDEF]
        for value in values {
            writer.writeUInt64LE(value)
            writer.writeUInt32LE(UInt32(truncatingIfNeeded: value))
            writer.writeUInt16LE(UInt16(truncatingIfNeeded: value))
        }
        try writer.bytes.withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            for value in values {
                #expect(try reader.readUInt64LE() == value)
                #expect(try reader.readUInt32LE() == UInt32(truncatingIfNeeded: value))
                #expect(try reader.readUInt16LE() == UInt16(truncatingIfNeeded: value))
            }
        }
    }

    @Test func takeHandsOverAndEmpties() {
        var writer = ByteWriter()
        writer.writeBytes([1, 2, 3])
        #expect(writer.take() == [1, 2, 3])
        #expect(writer.count == 0)
        writer.writeUInt8(9)
        writer.removeAll()
        #expect(writer.bytes.isEmpty)
    }

    @Test func growsAfterRemoveAllWithOnlyWhatWasWrittenSince() {
        var writer = ByteWriter()
        writer.writeBytes([UInt8](repeating: 0xEE, count: 100))
        writer.removeAll()
        let pattern = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        writer.writeBytes(pattern[..<50])
        writer.writeZeros(10)
        writer.writeBytes(pattern[50...])
        #expect(writer.bytes == Array(pattern[..<50]) + [UInt8](repeating: 0, count: 10) + Array(pattern[50...]))
        #expect(writer.take().count == 310)
    }

    @Test func growsPastItsCapacityKeepingEveryByte() {
        var writer = ByteWriter(capacity: 3)
        var expected: [UInt8] = []
        for value in 0..<1_000 {
            writer.writeUInt32LE(UInt32(value))
            withUnsafeBytes(of: UInt32(value).littleEndian) { expected.append(contentsOf: $0) }
            writer.writeUInt8(UInt8(truncatingIfNeeded: value))
            expected.append(UInt8(truncatingIfNeeded: value))
        }
        #expect(writer.count == expected.count)
        #expect(writer.bytes == expected)
        #expect(writer.withUnsafeBytes { Array($0) } == expected)
        #expect(writer.take() == expected)
    }

    @Test func zerosAfterRemoveAllAreZeros() {
        var writer = ByteWriter()
        writer.writeUInt64LE(.max)
        writer.removeAll()
        writer.writeZeros(6)
        writer.writeUInt16LE(0x0201)
        #expect(writer.bytes == [0, 0, 0, 0, 0, 0, 1, 2])
    }

    @Test func writesBigEndianAndAnySequence() {
        var writer = ByteWriter()
        writer.writeBigEndian(UInt32(0x0102_0304))
        writer.writeBytes((5...7).lazy.map { UInt8($0) })
        writer.writeBytes([UInt8]())
        #expect(writer.bytes == [1, 2, 3, 4, 5, 6, 7])
    }
}
