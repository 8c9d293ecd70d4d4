import Testing

@testable import StrataWorkload

// Expected values were computed once with an independent Python implementation of WORKLOAD.md's pools, reading
// shared/workload/words.txt directly (so they also check the embedded word list), not with this library.
// Checksums are 64-bit FNV-1a. The Python pools were also fed to `lz4 -1` (v1.9.4): the compressible pool
// compressed 67,108,864 -> 37,727,381 bytes (1.78x), the random pool not at all; no test depends on the lz4 CLI.
@Suite struct BlobPoolTests {
    @Test func wordsMatchTheSharedList() {
        #expect(workloadWords.count == 233)
        #expect(workloadWords.first == "the")
        #expect(workloadWords.last == "father")
        // FNV-1a of words.txt itself: the words, each followed by "\n" (1,199 bytes).
        #expect(fnv1a(workloadWords.flatMap { Array($0.utf8) + [UInt8(ascii: "\n")] }) == 0x4654_2711_C04D_B45F)
    }

    @Test func randomPoolIsPinned() {
        let pool = BlobPool(.random)
        #expect(pool.bytes.count == 67_108_864)
        #expect(Array(pool.chunk(0).prefix(8)) == [182, 134, 198, 210, 22, 112, 148, 122])
        #expect(Array(pool.chunk(1).prefix(8)) == [126, 53, 175, 143, 48, 85, 161, 135])
        #expect(Array(pool.chunk(1023).prefix(8)) == [0x19, 0x02, 0x1F, 0xEF, 0x31, 0x86, 0xCD, 0x9F])
        #expect(fnv1a(pool.bytes) == 0x47C2_A9A0_4898_933E)
    }

    @Test func compressiblePoolIsPinned() {
        let pool = BlobPool(.compressible)
        #expect(pool.bytes.count == 67_108_864)
        #expect(
            String(decoding: pool.chunk(0).prefix(120), as: UTF8.self)
                == "Food both help why, their words in as own.\n"
                + "Into food want world all this than part had this does same first high, into? "
        )
        #expect(
            String(decoding: pool.chunk(1).prefix(60), as: UTF8.self)
                == " back often next. Food we we think water like above day how,"
        )
        #expect(
            String(decoding: pool.chunk(1023).suffix(40), as: UTF8.self) == "r asked time once called going them?\nNum"
        )
        #expect(fnv1a(pool.bytes) == 0x55A1_8810_89DF_8EFF)
        var histogram = [Int](repeating: 0, count: 256)
        pool.bytes.withUnsafeBufferPointer { bytes in
            for byte in bytes { histogram[Int(byte)] += 1 }
        }
        #expect(histogram[Int(UInt8(ascii: "\n"))] == 99_259)
        #expect(histogram[Int(UInt8(ascii: "?"))] == 159_194)
        #expect(histogram[Int(UInt8(ascii: "."))] == 636_308)
        #expect(histogram[Int(UInt8(ascii: ","))] == 797_326)
    }

    @Test(arguments: BlobPool.Kind.allCases)
    func smallerPoolsArePrefixes(kind: BlobPool.Kind) {
        let small = BlobPool(kind, chunkCount: 2)
        let larger = BlobPool(kind, chunkCount: 5)
        #expect(small.bytes.count == 2 * 65_536)
        #expect(small.bytes[...] == larger.bytes.prefix(small.bytes.count))
    }

    @Test func blobIndexWrapsAroundThePool() {
        let pool = BlobPool(.random, chunkCount: 3)
        for index in [0, 1, 2, 3, 7, 9_999] {
            let chunk = pool.chunk(index)
            #expect(chunk.count == BlobPool.chunkSize)
            #expect(chunk.startIndex == (index % 3) * BlobPool.chunkSize)
        }
        #expect(pool.chunk(4) == pool.chunk(1))
        #expect(pool.chunk(0) != pool.chunk(1))
    }

    @Test func sizesMatchTheWorkload() {
        #expect(BlobPool.chunkSize == 65_536)
        #expect(BlobPool.defaultChunkCount == 1_024)
        #expect(BlobPool.blobCount == 10_000)
        #expect(BlobPool.Kind.random.seed == 4712)
        #expect(BlobPool.Kind.compressible.seed == 4711)
    }

    /// 64-bit FNV-1a, the checksum the expected values above were computed with.
    private func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}
