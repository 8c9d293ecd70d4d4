import StrataFormat
import Testing

/// `ByteReader` reads little-endian fields and never reads past its end.
@Suite struct ByteReaderTests {
    @Test func readsLittleEndianFieldsInOrder() throws {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F]
        try bytes.withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            #expect(try reader.readUInt8() == 0x01)
            #expect(try reader.readUInt16LE() == 0x0302)
            #expect(try reader.readUInt32LE() == 0x0706_0504)
            #expect(try reader.readUInt64LE() == 0x0F0E_0D0C_0B0A_0908)
            #expect(reader.remaining == 0)
            #expect(reader.readerIndex == 15)
        }
    }

    @Test func shortInputThrowsTruncatedWithoutAdvancing() {
        let bytes: [UInt8] = [1, 2, 3]
        bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            #expect(throws: FormatError.truncated(needed: 4, available: 3)) { try reader.readUInt32LE() }
            #expect(reader.readerIndex == 0)
            #expect(throws: FormatError.truncated(needed: 8, available: 3)) { try reader.readUInt64LE() }
            #expect(throws: FormatError.truncated(needed: 5, available: 3)) { try reader.readBytes(5) }
            #expect(throws: FormatError.truncated(needed: 4, available: 3)) { try reader.skip(4) }
            #expect(throws: FormatError.truncated(needed: 4, available: 3)) { try reader.readSlice(4) }
            #expect(throws: FormatError.truncated(needed: 4, available: 3)) { try reader.readUTF8(4) }
            #expect(reader.readerIndex == 0)
        }
    }

    @Test func negativeCountIsRejectedNotTrapped() {
        [UInt8](repeating: 0, count: 8).withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            #expect(throws: FormatError.self) { try reader.readBytes(-1) }
            #expect(throws: FormatError.self) { try reader.skip(Int.min) }
        }
    }

    @Test func emptyInputReadsNothing() {
        [UInt8]().withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            #expect(reader.remaining == 0)
            #expect(throws: FormatError.truncated(needed: 1, available: 0)) { try reader.readUInt8() }
            #expect((try? reader.readBytes(0)) == [])
        }
    }

    @Test func readUTF8RejectsInvalidSequences() throws {
        for invalid: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x61, 0x80]] {
            invalid.withUnsafeBytes { buffer in
                var reader = ByteReader(buffer)
                #expect(throws: FormatError.self) { try reader.readUTF8(invalid.count) }
            }
        }
        try Array("Grüße".utf8).withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            #expect(try reader.readUTF8(buffer.count) == "Grüße")
        }
    }

    @Test func readUTF8TakesASCIIOfEveryLengthAndRejectsOneHighByteAnywhere() throws {
        // The ASCII path tests eight bytes at a time, then the tail: lengths around the word boundaries.
        for length in 0...20 {
            let ascii = (0..<length).map { UInt8(0x41 + $0 % 26) }
            try ascii.withUnsafeBytes { buffer throws in
                var reader = ByteReader(buffer)
                #expect(try reader.readUTF8(length) == String(decoding: ascii, as: UTF8.self))
            }
            for position in 0..<length {
                var damaged = ascii
                damaged[position] = 0x80
                damaged.withUnsafeBytes { buffer in
                    var reader = ByteReader(buffer)
                    #expect(throws: FormatError.self) { try reader.readUTF8(length) }
                }
            }
        }
    }

    @Test func getUInt32AtAbsoluteOffsetChecksBounds() throws {
        let bytes: [UInt8] = [1, 0, 0, 0, 2, 0, 0, 0]
        try bytes.withUnsafeBytes { buffer throws in
            let reader = ByteReader(buffer, readerIndex: 3)
            #expect(try reader.getUInt32LE(at: 4) == 2)
            #expect(reader.readerIndex == 3)
            for offset in [5, 8, 100, -1, Int.min, Int.max] {
                #expect(throws: FormatError.self) { try reader.getUInt32LE(at: offset) }
            }
        }
        _ = [UInt8](repeating: 0, count: 2).withUnsafeBytes { buffer in
            #expect(throws: FormatError.self) { try ByteReader(buffer).getUInt32LE(at: 0) }
        }
    }

    @Test func readSliceAndSkipAdvance() throws {
        let bytes: [UInt8] = Array(0..<10)
        try bytes.withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            try reader.skip(2)
            #expect(Array(try reader.readSlice(3)) == [2, 3, 4])
            #expect(try reader.readBytes(5) == [5, 6, 7, 8, 9])
            #expect(reader.remaining == 0)
        }
    }
}
