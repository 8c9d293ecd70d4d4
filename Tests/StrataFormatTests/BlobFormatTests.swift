import StrataFormat
import StrataTestSupport
import Testing

/// Blob segments (FORMAT.md §5): chunk records, LZ4 blocks, segment headers, catalog entries and segment
/// file names. Decoders take untrusted bytes: every rejection below must be a ``FormatError``, never a trap.
@Suite struct BlobFormatTests {
    private static let salt: UInt64 = 0x5EED_0123_4567_89AB

    // MARK: - Inputs

    /// English-like text that LZ4 compresses well.
    static func compressible(_ count: Int) -> [UInt8] {
        let phrase = Array("the catalog maps a blob to its segment, and the segment holds its chunks. ".utf8)
        return (0..<count).map { phrase[$0 % phrase.count] }
    }

    /// Seeded random bytes that LZ4 cannot compress.
    static func incompressible(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        var random = RepeatableRandomNumberGenerator(seed: seed)
        return random.bytes(count)
    }

    static func encode(_ chunk: [UInt8], blobID: UInt64 = 42, chunkIndex: UInt32 = 3) -> [UInt8] {
        chunk.withUnsafeBytes { BlobChunkRecord.encode(chunk: $0, blobID: blobID, chunkIndex: chunkIndex, salt: salt) }
    }

    /// Decodes a record as the engine does: header first, then the whole record.
    static func decodeRecord(_ record: [UInt8], salt: UInt64 = salt) throws -> (BlobChunkRecord, [UInt8]) {
        let header = try record.withUnsafeBytes { bytes in
            try BlobChunkRecord.decodeHeader(
                UnsafeRawBufferPointer(rebasing: bytes.prefix(BlobSegmentFormat.recordHeaderSize)))
        }
        let raw = try record.withUnsafeBytes { bytes in try header.decodePayload(bytes, salt: salt) }
        return (header, raw)
    }

    /// Recomputes a record's checksum after an edit (LevelDB's `FixChecksum`), so that only the checks
    /// behind the checksum can reject the edit.
    static func reseal(_ record: inout [UInt8], salt: UInt64 = salt) {
        let crc = record.withUnsafeBytes { all in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[4...]), continuing: CRC32C.checksum(of: salt))
        }
        storeLE(CRC32C.mask(crc), at: 0, in: &record)
    }

    /// Recomputes a segment header's checksum (bytes 44..<48) after an edit.
    static func resealHeader(_ header: inout [UInt8]) {
        let crc = header.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<44])) }
        storeLE(CRC32C.mask(crc), at: 44, in: &header)
    }

    // MARK: - Layout facts

    @Test func layoutConstantsMatchTheSpecification() {
        #expect(BlobSegmentFormat.magic == [0x89, 0x53, 0x42, 0x4C, 0x42, 0x0D, 0x0A, 0x1A])
        #expect(BlobSegmentFormat.version == 1)
        #expect(BlobSegmentFormat.headerSize == 48)
        #expect(BlobSegmentFormat.recordHeaderSize == 28)
        #expect(BlobSegmentFormat.chunkSize == 1 << 20)
        #expect(BlobCatalogEntry.encodedSize == 37)
        #expect(BlobCatalogEntry.version == 1)
        #expect(BlobCodec.raw.rawValue == 0 && BlobCodec.lz4.rawValue == 1)
    }

    // MARK: - Chunk records

    @Test func compressibleChunkRoundTripsAsLZ4() throws {
        let chunk = Self.compressible(10_000)
        let record = Self.encode(chunk, blobID: 0x0102_0304_0506_0708, chunkIndex: 9)
        let (header, raw) = try Self.decodeRecord(record)
        #expect(raw == chunk)
        #expect(header.codec == .lz4)
        #expect(header.blobID == 0x0102_0304_0506_0708 && header.chunkIndex == 9)
        #expect(header.rawLength == chunk.count)
        #expect(header.storedLength < chunk.count / 4, "stored \(header.storedLength) of \(chunk.count)")
        #expect(header.encodedSize == record.count)
        // The fields sit where FORMAT.md §5.2 says.
        #expect(record[4] == 1 && record[5] == 0 && record[6] == 0 && record[7] == 0)
        #expect(loadLE(UInt64.self, at: 8, in: record) == 0x0102_0304_0506_0708)
        #expect(loadLE(UInt32.self, at: 16, in: record) == 9)
        #expect(loadLE(UInt32.self, at: 20, in: record) == 10_000)
        #expect(Int(loadLE(UInt32.self, at: 24, in: record)) == header.storedLength)
    }

    @Test func incompressibleChunkIsStoredRawAtItsOwnLength() throws {
        let chunk = Self.incompressible(5_000)
        let record = Self.encode(chunk)
        let (header, raw) = try Self.decodeRecord(record)
        #expect(raw == chunk)
        #expect(header.codec == .raw)
        #expect(record[4] == 0, "codec byte")
        #expect(header.storedLength == chunk.count && header.rawLength == chunk.count)
        #expect(record.count == BlobSegmentFormat.recordHeaderSize + chunk.count)
        #expect(Array(record[28...]) == chunk, "a raw payload is the chunk itself")
    }

    @Test func chunksOfEdgeSizesRoundTrip() throws {
        let cases: [(String, [UInt8])] = [
            ("empty", []), ("one byte", [0xA5]), ("two equal bytes", [7, 7]),
            ("a full compressible chunk", Self.compressible(BlobSegmentFormat.chunkSize)),
            ("a full incompressible chunk", Self.incompressible(BlobSegmentFormat.chunkSize)),
            ("zeros", [UInt8](repeating: 0, count: 65_536)),
        ]
        for (name, chunk) in cases {
            let record = Self.encode(chunk)
            let (header, raw) = try Self.decodeRecord(record)
            #expect(raw == chunk, "\(name)")
            #expect(header.rawLength == chunk.count, "\(name)")
            #expect(header.storedLength <= chunk.count, "\(name): a record never expands its payload")
            #expect(header.codec == .raw || header.storedLength < chunk.count, "\(name)")
        }
    }

    @Test func checksumDependsOnTheStoreSalt() throws {
        let record = Self.encode(Self.compressible(3_000))
        #expect(throws: FormatError.self) { try Self.decodeRecord(record, salt: Self.salt ^ 1) }
    }

    @Test func headerWithUnknownCodecIsRejected() {
        for codec: UInt8 in [2, 3, 0x80, 0xFF] {
            var record = Self.encode(Self.compressible(1_000))
            record[4] = codec
            let error = formatError(record) { try BlobChunkRecord.decodeHeader($0) }
            #expect(isInvalidField(error), "codec \(codec): \(String(describing: error))")
        }
    }

    @Test func headerWithFlagsOrReservedBitsIsRejected() {
        for (offset, bit) in [(5, 0x01), (5, 0x80), (6, 0x01), (7, 0x80)] {
            var record = Self.encode(Self.compressible(1_000))
            record[offset] ^= UInt8(bit)
            Self.reseal(&record)
            let error = formatError(record) { try BlobChunkRecord.decodeHeader($0) }
            #expect(isInvalidField(error), "byte \(offset) bit \(bit): \(String(describing: error))")
        }
    }

    @Test func headerWithRawLengthOverOneMebibyteIsRejected() {
        for rawLength in [UInt32(BlobSegmentFormat.chunkSize + 1), 1 << 21, .max] {
            // As a raw record (stored = raw) and as a compressed one (stored < raw): both over the bound.
            for (codec, stored) in [(UInt8(0), rawLength), (1, 100)] {
                var record = Self.encode([])
                record[4] = codec
                storeLE(rawLength, at: 20, in: &record)
                storeLE(stored, at: 24, in: &record)
                let error = formatError(record) { try BlobChunkRecord.decodeHeader($0) }
                #expect(isInvalidField(error), "raw \(rawLength), codec \(codec): \(String(describing: error))")
            }
        }
        // Exactly 1 MiB is allowed.
        var record = Self.encode([])
        storeLE(UInt32(BlobSegmentFormat.chunkSize), at: 20, in: &record)
        storeLE(UInt32(BlobSegmentFormat.chunkSize), at: 24, in: &record)
        #expect(formatError(record) { try BlobChunkRecord.decodeHeader($0) } == nil)
    }

    @Test func headerWithInconsistentStoredLengthIsRejected() {
        // (codec, raw, stored): raw must store exactly raw bytes; LZ4 must store 1...raw - 1.
        let cases: [(UInt8, UInt32, UInt32)] = [
            (0, 100, 99), (0, 100, 101), (0, 0, 1), (0, 100, .max),
            (1, 100, 0), (1, 100, 100), (1, 100, 101), (1, 0, 0), (1, 1, 1), (1, 100, .max),
        ]
        for (codec, raw, stored) in cases {
            var record = Self.encode([])
            record[4] = codec
            storeLE(raw, at: 20, in: &record)
            storeLE(stored, at: 24, in: &record)
            let error = formatError(record) { try BlobChunkRecord.decodeHeader($0) }
            #expect(isInvalidField(error), "codec \(codec) raw \(raw) stored \(stored): \(String(describing: error))")
        }
    }

    @Test func truncatedHeaderIsRejected() {
        let record = Self.encode(Self.compressible(1_000))
        for length in 0..<BlobSegmentFormat.recordHeaderSize {
            let error = formatError(Array(record.prefix(length))) { try BlobChunkRecord.decodeHeader($0) }
            #expect(isTruncated(error), "\(length) bytes: \(String(describing: error))")
        }
    }

    @Test func truncatedRecordIsRejectedByPayloadDecoding() throws {
        let record = Self.encode(Self.compressible(2_000))
        let (header, _) = try Self.decodeRecord(record)
        for cut in [1, 2, header.storedLength] {
            let short = Array(record.dropLast(cut))
            let error = formatError(short) { try header.decodePayload($0, salt: Self.salt) }
            #expect(isTruncated(error), "cut \(cut): \(String(describing: error))")
        }
    }

    /// Every byte of a small record, changed in three ways (its low bit, its high bit, all bits): the
    /// header check or the checksum rejects each, and no changed record ever decodes.
    @Test func flippedByteAnywhereInARecordIsDetected() {
        for (name, chunk) in [("lz4", Self.compressible(600)), ("raw", Self.incompressible(150))] {
            let record = Self.encode(chunk)
            var byHeader = 0
            var byPayload = 0
            for index in record.indices {
                for mask: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = record
                    damaged[index] ^= mask
                    do {
                        let (_, raw) = try Self.decodeRecord(damaged)
                        let what = raw == chunk ? "the original" : "other"
                        Issue.record("\(name): byte \(index) ^ \(mask) decoded to \(what) bytes")
                    } catch {
                        let headerRejects = formatError(damaged) { try BlobChunkRecord.decodeHeader($0) } != nil
                        if headerRejects { byHeader += 1 } else { byPayload += 1 }
                    }
                }
            }
            #expect(byHeader + byPayload == record.count * 3)
            print(
                "BlobFormatTests: \(name) record of \(record.count) bytes: \(byHeader) changes rejected by the header, "
                    + "\(byPayload) by the checksum")
        }
    }

    /// The checksum covers the stored bytes; LZ4 has no integrity check of its own. A damaged block
    /// behind a valid checksum must still be an error (or, at worst, other bytes of the right length,
    /// which the blob's content checksum catches), never a crash or a read outside the buffers.
    @Test func malformedLZ4PayloadBehindAValidChecksumIsRejected() throws {
        let chunk = Self.compressible(8_000)
        let record = Self.encode(chunk)
        let (header, _) = try Self.decodeRecord(record)
        #expect(header.codec == .lz4)

        // Every payload byte set to 0xFF: literal-length runs that overflow the block.
        var garbage = record
        for index in BlobSegmentFormat.recordHeaderSize..<garbage.count { garbage[index] = 0xFF }
        Self.reseal(&garbage)
        #expect(isInvalidField(Self.decodeError(garbage)))

        // The block cut short by one byte (stored length adjusted and resealed).
        var cut = Array(record.dropLast())
        storeLE(UInt32(header.storedLength - 1), at: 24, in: &cut)
        Self.reseal(&cut)
        #expect(isInvalidField(Self.decodeError(cut)))

        // Raw length one more or one less than the block yields (resealed).
        for delta in [-1, 1] {
            var wrong = record
            storeLE(UInt32(chunk.count + delta), at: 20, in: &wrong)
            Self.reseal(&wrong)
            #expect(isInvalidField(Self.decodeError(wrong)), "raw length \(delta)")
        }

        // Random damage to the payload, resealed: never a trap, and whatever decodes has the recorded length.
        var random = RepeatableRandomNumberGenerator(seed: 0xB10B)
        var rejected = 0
        let trials = 400
        for _ in 0..<trials {
            var damaged = record
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: BlobSegmentFormat.recordHeaderSize..<damaged.count, using: &random)
                damaged[index] = UInt8.random(in: 0...255, using: &random)
            }
            Self.reseal(&damaged)
            do {
                let (_, raw) = try Self.decodeRecord(damaged)
                #expect(raw.count == chunk.count)
            } catch {
                rejected += 1
            }
        }
        print("BlobFormatTests: \(rejected) of \(trials) resealed damaged LZ4 payloads rejected by decompression")
    }

    private static func decodeError(_ record: [UInt8]) -> FormatError? {
        do {
            _ = try decodeRecord(record)
            return nil
        } catch let error as FormatError {
            return error
        } catch {
            Issue.record("a decoder threw \(error), not a FormatError")
            return nil
        }
    }

    // MARK: - LZ4 blocks

    @Test func lz4BlockRoundTripsAndDeclinesWhatDoesNotShrink() throws {
        let text = Self.compressible(50_000)
        let compressed = try #require(text.withUnsafeBytes { LZ4Block.compress($0) })
        #expect(compressed.count < text.count)
        var output = [UInt8](repeating: 0, count: text.count)
        try compressed.withUnsafeBytes { source in
            try output.withUnsafeMutableBytes { destination in try LZ4Block.decompress(source, into: destination) }
        }
        #expect(output == text)
        #expect(Self.incompressible(4_096).withUnsafeBytes { LZ4Block.compress($0) } == nil)
        #expect([UInt8]().withUnsafeBytes { LZ4Block.compress($0) } == nil)
        #expect([UInt8(1)].withUnsafeBytes { LZ4Block.compress($0) } == nil)
    }

    /// Decompresses `block` into exactly `length` bytes; returns the error, or nil when it succeeded.
    private static func decompressError(_ block: [UInt8], length: Int) -> FormatError? {
        var output = [UInt8](repeating: 0, count: length)
        do {
            try block.withUnsafeBytes { source in
                try output.withUnsafeMutableBytes { destination in try LZ4Block.decompress(source, into: destination) }
            }
            return nil
        } catch let error as FormatError {
            return error
        } catch {
            Issue.record("LZ4Block.decompress threw \(error), not a FormatError")
            return nil
        }
    }

    @Test func lz4DecompressionRejectsMalformedBlocksAndWrongLengths() throws {
        let text = Self.compressible(20_000)
        let block = try #require(text.withUnsafeBytes { LZ4Block.compress($0) })
        #expect(Self.decompressError(block, length: text.count) == nil)
        // Wrong output lengths: one short (would overflow), one long (yields fewer), far off, none.
        for length in [text.count - 1, text.count + 1, 1, text.count * 2] {
            #expect(isInvalidField(Self.decompressError(block, length: length)), "output length \(length)")
        }
        #expect(isInvalidField(Self.decompressError(block, length: 0)))
        // Malformed blocks.
        #expect(isInvalidField(Self.decompressError([], length: 10)))
        #expect(isInvalidField(Self.decompressError([0xFF], length: 10)))
        #expect(isInvalidField(Self.decompressError([UInt8](repeating: 0xFF, count: 64), length: 1_000)))
        #expect(isInvalidField(Self.decompressError(Array(block.dropLast()), length: text.count)))
        #expect(isInvalidField(Self.decompressError(Array(block.prefix(block.count / 2)), length: text.count)))
        // A match whose offset points before the start of the output.
        #expect(isInvalidField(Self.decompressError([0x1F, 0x41, 0xFF, 0x7F, 0x00], length: 100)))
        // Random blocks: no trap, and nothing but an error or exactly the asked length.
        var random = RepeatableRandomNumberGenerator(seed: 0x4C5A)
        var rejected = 0
        for _ in 0..<500 {
            let garbage = random.bytes(Int.random(in: 1...200, using: &random))
            if Self.decompressError(garbage, length: Int.random(in: 1...4_000, using: &random)) != nil { rejected += 1 }
        }
        #expect(rejected > 450, "\(rejected) of 500 random blocks rejected")
    }

    // MARK: - Segment headers

    private static let storeID: [UInt8] = Array(0x10..<0x20)

    @Test func segmentHeaderRoundTripsWithTheSpecifiedLayout() throws {
        let header = BlobSegmentHeader(storeID: Self.storeID, segmentID: 0x0A0B_0C0D)
        let bytes = header.encoded()
        #expect(bytes.count == 48)
        #expect(Array(bytes[0..<8]) == BlobSegmentFormat.magic)
        #expect(loadLE(UInt32.self, at: 8, in: bytes) == 1)
        #expect(loadLE(UInt32.self, at: 12, in: bytes) == 48)
        #expect(Array(bytes[16..<32]) == Self.storeID)
        #expect(loadLE(UInt32.self, at: 32, in: bytes) == 0x0A0B_0C0D)
        #expect(bytes[36..<44].allSatisfy { $0 == 0 })
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<44])) }
        #expect(loadLE(UInt32.self, at: 44, in: bytes) == CRC32C.mask(crc))
        let decoded = try bytes.withUnsafeBytes { try BlobSegmentHeader.decode($0) }
        #expect(decoded == header)
        // Trailing bytes (the first record) do not disturb decoding.
        let withRecord = bytes + Self.encode(Self.compressible(100))
        #expect(try withRecord.withUnsafeBytes { try BlobSegmentHeader.decode($0) } == header)
    }

    @Test func segmentHeaderRejectsTruncationMagicChecksumVersionAndLength() {
        let bytes = BlobSegmentHeader(storeID: Self.storeID, segmentID: 1).encoded()
        for length in [0, 8, 47] {
            #expect(
                isTruncated(formatError(Array(bytes.prefix(length))) { try BlobSegmentHeader.decode($0) }),
                "\(length) bytes")
        }
        for index in 0..<8 {
            var damaged = bytes
            damaged[index] ^= 0x20
            #expect(formatError(damaged) { try BlobSegmentHeader.decode($0) } == .badMagic, "magic byte \(index)")
        }
        // Any other byte changed: the checksum catches it.
        for index in 8..<48 {
            var damaged = bytes
            damaged[index] ^= 0x01
            #expect(isChecksumMismatch(formatError(damaged) { try BlobSegmentHeader.decode($0) }), "byte \(index)")
        }
        var version = bytes
        storeLE(UInt32(2), at: 8, in: &version)
        Self.resealHeader(&version)
        #expect(formatError(version) { try BlobSegmentHeader.decode($0) } == .unsupportedVersion(2))
        for length: UInt32 in [0, 47, 49, 4096] {
            var header = bytes
            storeLE(length, at: 12, in: &header)
            Self.resealHeader(&header)
            #expect(isInvalidField(formatError(header) { try BlobSegmentHeader.decode($0) }), "header length \(length)")
        }
        // The page file's magic is not a segment's.
        var pageMagic = bytes
        pageMagic.replaceSubrange(0..<8, with: [0x89, 0x53, 0x54, 0x52, 0x41, 0x0D, 0x0A, 0x1A])
        #expect(formatError(pageMagic) { try BlobSegmentHeader.decode($0) } == .badMagic)
    }

    // MARK: - Catalog entries

    private static let sampleEntry = BlobCatalogEntry(
        segmentID: 0x0102_0304, offset: 0x1122_3344_5566, rawLength: 3 * (1 << 20) + 5,
        storedBytes: 2_000_123, chunkCount: 4, contentChecksum: 0xDEAD_BEEF)

    @Test func catalogEntryRoundTripsWithTheSpecifiedLayout() throws {
        let bytes = Self.sampleEntry.encoded()
        #expect(bytes.count == 37)
        #expect(bytes[0] == 1)
        #expect(loadLE(UInt32.self, at: 1, in: bytes) == 0x0102_0304)
        #expect(loadLE(UInt64.self, at: 5, in: bytes) == 0x1122_3344_5566)
        #expect(loadLE(UInt64.self, at: 13, in: bytes) == 3 * (1 << 20) + 5)
        #expect(loadLE(UInt64.self, at: 21, in: bytes) == 2_000_123)
        #expect(loadLE(UInt32.self, at: 29, in: bytes) == 4)
        #expect(loadLE(UInt32.self, at: 33, in: bytes) == 0xDEAD_BEEF)
        #expect(try bytes.withUnsafeBytes { try BlobCatalogEntry.decode($0) } == Self.sampleEntry)

        let empty = BlobCatalogEntry(
            segmentID: 1, offset: 48, rawLength: 0, storedBytes: 0, chunkCount: 0, contentChecksum: CRC32C.mask(0))
        #expect(try empty.encoded().withUnsafeBytes { try BlobCatalogEntry.decode($0) } == empty)
        let exact = BlobCatalogEntry(
            segmentID: 1, offset: 48, rawLength: 1 << 20, storedBytes: 28 + (1 << 20), chunkCount: 1, contentChecksum: 0
        )
        #expect(try exact.encoded().withUnsafeBytes { try BlobCatalogEntry.decode($0) } == exact)
    }

    @Test func catalogEntryRejectsWrongSizeVersionAndInconsistentFields() {
        let bytes = Self.sampleEntry.encoded()
        #expect(isInvalidField(formatError(Array(bytes.dropLast())) { try BlobCatalogEntry.decode($0) }))
        #expect(isInvalidField(formatError(bytes + [0]) { try BlobCatalogEntry.decode($0) }))
        #expect(isInvalidField(formatError([]) { try BlobCatalogEntry.decode($0) }))
        var version = bytes
        version[0] = 2
        #expect(formatError(version) { try BlobCatalogEntry.decode($0) } == .unsupportedVersion(2))
        version[0] = 0
        #expect(formatError(version) { try BlobCatalogEntry.decode($0) } == .unsupportedVersion(0))

        func rejects(_ change: (inout BlobCatalogEntry) -> Void, _ what: String) {
            var entry = Self.sampleEntry
            change(&entry)
            #expect(isInvalidField(formatError(entry.encoded()) { try BlobCatalogEntry.decode($0) }), "\(what)")
        }
        rejects({ $0.chunkCount = 3 }, "too few chunks for the length")
        rejects({ $0.chunkCount = 5 }, "too many chunks for the length")
        rejects(
            {
                $0.rawLength = 4 << 20; $0.chunkCount = 5
            }, "an exact multiple of 1 MiB takes no extra chunk")
        rejects({ $0.rawLength = 0 }, "an empty blob has no chunk")
        rejects({ $0.offset = 47 }, "a blob cannot start inside the segment header")
        rejects({ $0.offset = 0 }, "a blob cannot start at the start of the segment")
        rejects({ $0.storedBytes = 4 * 28 - 1 }, "fewer stored bytes than the chunks' record headers")
    }

    /// A catalog entry is untrusted input: a damaged (or fuzzed) raw length near `UInt64.max` must be
    /// rejected, not overflow the chunk-count arithmetic. Run in a child process because it traps today.
    @Test func catalogEntryWithRawLengthNearUInt64MaxIsRejectedWithoutTrapping() async {
        await #expect(processExitsWith: .success) {
            let entry = BlobCatalogEntry(
                segmentID: 1, offset: 48, rawLength: .max, storedBytes: .max, chunkCount: .max, contentChecksum: 0)
            let bytes = entry.encoded()
            do {
                _ = try bytes.withUnsafeBytes { try BlobCatalogEntry.decode($0) }
                fatalError("an entry of UInt64.max bytes decoded")
            } catch {
                // Rejected: the expected outcome.
            }
        }
    }

    /// An entry whose records would end past `UInt64.max` is inconsistent: the engine adds `offset` and
    /// `storedBytes` (segment accounting in verify and statistics), which must not overflow.
    @Test func catalogEntryWhoseRecordsWouldEndPastUInt64MaxIsRejected() {
        for (offset, storedBytes) in [(UInt64.max - 100, UInt64(1_000)), (.max, 28), (48, .max)] {
            let entry = BlobCatalogEntry(
                segmentID: 1, offset: offset, rawLength: 5, storedBytes: storedBytes, chunkCount: 1, contentChecksum: 0)
            #expect(
                isInvalidField(formatError(entry.encoded()) { try BlobCatalogEntry.decode($0) }),
                "offset \(offset), stored \(storedBytes)")
        }
    }

    /// Random damage outside the raw length (whose overflow the test above pins): a value or a FormatError.
    @Test func catalogEntryMutationsNeverTrap() {
        var rejected = 0
        for (seed, region) in [(UInt64(0xCA7A), 0..<13), (0xCA7B, 21..<37)] {
            rejected += mutateAndDecode(Self.sampleEntry.encoded(), seed: seed, mutations: 1_000, region: region) {
                try BlobCatalogEntry.decode($0)
            }
        }
        #expect(rejected > 0)
    }

    // MARK: - Segment file names

    @Test func segmentFileNamesRoundTrip() {
        #expect(BlobSegmentFormat.fileName(segment: 1) == "blob-000001.seg")
        #expect(BlobSegmentFormat.fileName(segment: 0) == "blob-000000.seg")
        #expect(BlobSegmentFormat.fileName(segment: 999_999) == "blob-999999.seg")
        #expect(BlobSegmentFormat.fileName(segment: 1_000_000) == "blob-1000000.seg")
        #expect(BlobSegmentFormat.fileName(segment: .max) == "blob-4294967295.seg")
        for id: UInt32 in [0, 1, 9, 10, 123_456, 999_999, 1_000_000, 98_765_432, .max] {
            #expect(BlobSegmentFormat.segmentID(fileName: BlobSegmentFormat.fileName(segment: id)) == id)
        }
    }

    @Test func otherFileNamesAreNotSegments() {
        let names = [
            "", "blob-.seg", "blob-1.seg", "blob-00001.seg", "blob-00000a.seg", "blob-000001.seg.tmp",
            "blob-000001.SEG", "Blob-000001.seg", "xblob-000001.seg", "blob-000001", "000001.seg", "blob--00001.seg",
            "blob-+00001.seg", "blob- 00001.seg", "blob-4294967296.seg", "blob-99999999999999999999.seg",
            "blob-٠٠٠٠٠١.seg", "blob-１２３４５６.seg", "strata.wal", "strata.pages", "strata.lock",
        ]
        for name in names {
            #expect(BlobSegmentFormat.segmentID(fileName: name) == nil, "\(name)")
        }
    }
}
