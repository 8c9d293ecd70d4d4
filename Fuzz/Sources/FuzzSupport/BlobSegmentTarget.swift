import StrataFormat

/// FuzzBlobSegment: a blob segment file and a catalog entry through the blob decoders and LZ4.
///
/// Input: `mode:u8 salt:u64 catalogEntry[37]` then the segment file's bytes (header and chunk records). Mode bit 0
/// re-checksums the segment header, bit 1 every chunk record (walked by its stored length).
/// `BlobCatalogEntry.decode` on the entry; `BlobSegmentHeader.decode`; then for each record
/// `BlobChunkRecord.decodeHeader` and, when the record's recorded length fits in the file, `decodePayload` on
/// exactly that record (LZ4 reads only its stored bytes and writes only its raw length); raw LZ4 decompression
/// of every payload into buffers of the recorded and other lengths.
///
/// Checks: nothing traps; decoded headers, chunks and catalog entries satisfy their invariants and round-trip
/// (a chunk re-encoded from its raw bytes decodes to the same bytes; a catalog entry re-encodes to its bytes).
public func fuzzBlobSegment(_ data: UnsafeRawBufferPointer) {
    var input = FuzzInput(data)
    let mode = input.byte()
    let salt = input.uint64()
    let entryBytes = input.bytes(BlobCatalogEntry.encodedSize)
    var file = input.rest()
    checkCatalogEntry(entryBytes)
    if mode & 1 != 0 { Reseal.fileHeader48(&file) }
    if mode & 2 != 0 { Reseal.blobRecords(&file, from: min(file.count, BlobSegmentFormat.headerSize), salt: salt) }
    file.withUnsafeBytes { checkSegment($0, salt: salt) }
}

func checkCatalogEntry(_ bytes: [UInt8]) {
    guard let entry = bytes.withUnsafeBytes({ try? BlobCatalogEntry.decode($0) }) else { return }
    fuzzCheck(entry.encoded() == bytes, "catalog entry does not encode back to its bytes")
    let chunk = UInt64(BlobSegmentFormat.chunkSize)
    let chunks = entry.rawLength / chunk + (entry.rawLength % chunk == 0 ? 0 : 1)
    fuzzCheck(UInt64(entry.chunkCount) == chunks, "chunk count \(entry.chunkCount) for \(entry.rawLength) bytes")
    fuzzCheck(entry.offset >= UInt64(BlobSegmentFormat.headerSize), "entry offset inside the segment header")
    let (end, overflow) = entry.offset.addingReportingOverflow(entry.storedBytes)
    fuzzCheck(!overflow && end <= UInt64(Int64.max), "entry end overflows")
}

func checkSegment(_ bytes: UnsafeRawBufferPointer, salt: UInt64) {
    var offset = 0
    if let header = try? BlobSegmentHeader.decode(bytes) {
        let again = header.encoded().withUnsafeBytes { try? BlobSegmentHeader.decode($0) }
        fuzzCheck(again == header, "segment header does not round-trip")
        offset = BlobSegmentFormat.headerSize
    }
    var records = 0
    while offset < bytes.count, records < 1_000 {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        guard let record = try? BlobChunkRecord.decodeHeader(rest) else { return }
        fuzzCheck(record.rawLength >= 0 && record.rawLength <= BlobSegmentFormat.chunkSize, "raw length")
        switch record.codec {
        case .raw: fuzzCheck(record.storedLength == record.rawLength, "raw chunk stored length")
        case .lz4:
            fuzzCheck(record.storedLength >= 1 && record.storedLength < record.rawLength, "LZ4 chunk stored length")
        }
        guard record.encodedSize <= rest.count else {
            fuzzCheck((try? record.decodePayload(rest, salt: salt)) == nil, "a chunk longer than its bytes decoded")
            return
        }
        // Exactly the record's bytes: a decoder that read past its recorded length would trip ASan here.
        let exact = Array(rest.prefix(record.encodedSize))
        let payload = Array(exact[BlobSegmentFormat.recordHeaderSize...])
        exact.withUnsafeBytes { recordBytes in
            if let raw = try? record.decodePayload(recordBytes, salt: salt) {
                fuzzCheck(
                    raw.count == record.rawLength, "decoded chunk of \(raw.count) bytes, \(record.rawLength) recorded")
                let encoded = raw.withUnsafeBytes {
                    BlobChunkRecord.encode(chunk: $0, blobID: record.blobID, chunkIndex: record.chunkIndex, salt: salt)
                }
                let again = encoded.withUnsafeBytes { bytes -> [UInt8]? in
                    guard let header = try? BlobChunkRecord.decodeHeader(bytes) else { return nil }
                    return try? header.decodePayload(bytes, salt: salt)
                }
                fuzzCheck(again == raw, "chunk does not round-trip")
            }
        }
        if record.codec == .lz4 { checkLZ4(payload, rawLength: record.rawLength) }
        offset += record.encodedSize
        records += 1
    }
}

/// Decompresses a payload into buffers of the recorded length and of lengths around it: only the recorded
/// length may succeed (a block that decodes to another length is an error).
func checkLZ4(_ payload: [UInt8], rawLength: Int) {
    for length in [rawLength, rawLength - 1, rawLength + 1, 1] where length > 0 {
        var output = [UInt8](repeating: 0, count: length)
        let succeeded = payload.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { (try? LZ4Block.decompress(source, into: $0)) != nil }
        }
        if succeeded, let compressed = output.withUnsafeBytes({ LZ4Block.compress($0) }) {
            var again = [UInt8](repeating: 0, count: length)
            let ok = compressed.withUnsafeBytes { source in
                again.withUnsafeMutableBytes { (try? LZ4Block.decompress(source, into: $0)) != nil }
            }
            fuzzCheck(ok && again == output, "LZ4 does not round-trip")
        }
    }
}
