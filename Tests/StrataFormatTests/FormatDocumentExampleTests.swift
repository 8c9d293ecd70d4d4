import StrataFormat
import Testing

/// Pins the worked examples of FORMAT.md byte for byte, so the document cannot drift from the code.
@Suite struct FormatDocumentExampleTests {
    @Test func walWorkedExampleMatchesTheDocument() throws {
        let storeID = [UInt8](0..<16)
        let salt: UInt32 = 0x1234_5678
        var file = WALFileHeader(storeID: storeID, startLSN: 1, salt: salt).encoded()
        var builder = WALRecordBuilder(salt: salt, firstLSN: 1)
        builder.appendOperation { WALOperation.encodeCreateTable(tableID: 1, name: "t", into: &$0) }
        builder.appendOperation { writer in
            [UInt8]([0x41, 0x42]).withUnsafeBytes {
                WALOperation.encodePut(tableID: 1, rowID: 1, value: $0, into: &writer)
            }
        }
        let (records, commitLSN) = builder.finish()
        file += records
        #expect(commitLSN == 2)
        #expect(file.count == 127)

        #expect(Array(file[0..<8]) == [0x89, 0x53, 0x57, 0x41, 0x4C, 0x0D, 0x0A, 0x1A])
        #expect(Array(file[8..<16]) == [1, 0, 0, 0, 48, 0, 0, 0])
        #expect(Array(file[16..<32]) == storeID)
        #expect(Array(file[32..<40]) == [1, 0, 0, 0, 0, 0, 0, 0])
        // Operations record, LSN 1, 27-byte payload.
        #expect(Array(file[52..<68]) == [0x1B, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(file[68..<76]) == [0x01, 0x01, 0, 0, 0, 0x01, 0x00, 0x74])
        #expect(
            Array(file[76..<95]) == [0x03, 0x01, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0x41, 0x42])
        // Commit record, LSN 2: one operations record, two operations.
        #expect(Array(file[99..<115]) == [0x0C, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(file[115..<127]) == [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])

        // Each record's checksum is the masked CRC-32C of the salt and the record from offset 4.
        let covered = CRC32C.checksum(Array(file[52..<95]), continuing: CRC32C.checksum(of: salt))
        let stored = file.withUnsafeBytes {
            UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 48, as: UInt32.self))
        }
        #expect(stored == CRC32C.mask(covered))
    }

    @Test func storeHeaderLayoutMatchesTheDocument() throws {
        let header = StoreHeader(pageSize: 4096, storeID: [UInt8](repeating: 7, count: 16)).encoded()
        #expect(header.count == 64)
        #expect(Array(header[0..<8]) == [0x89, 0x53, 0x54, 0x52, 0x41, 0x0D, 0x0A, 0x1A])
        #expect(Array(header[8..<24]) == [4, 0, 0, 0, 64, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0])
        #expect(Array(header[36..<52]) == [UInt8](repeating: 7, count: 16))
        let decoded = try header.withUnsafeBytes { (bytes) throws(FormatError) in try StoreHeader.decode(bytes) }
        #expect(decoded.pageSize == 4096)
    }

    @Test func layoutConstantsAreWhatTheDocumentSays() {
        #expect(WALFormat.fileHeaderSize == 48)
        #expect(WALFormat.recordHeaderSize == 20)
        #expect(PageFormat.headerSize == 32)
        #expect(PageFormat.maximumInlineValue(pageSize: 4096) == 1004)
        #expect(PageFormat.overflowCapacity(pageSize: 4096) == 4056)
        #expect(InternalPage.bodySize(childCount: 2) == 24)
    }
}
