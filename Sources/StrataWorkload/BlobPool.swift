/// One of WORKLOAD.md's two blob pools (figure W6): 1,024 chunks of 65,536 bytes, 64 MiB in all.
///
/// Blob `i` of the workload's 10,000 blobs is chunk `i % 1024` of a pool, see ``chunk(_:)``. The two kinds:
///
/// - ``Kind/random``: a generator seeded 4712; each 8 bytes are one `next()`, stored little-endian.
/// - ``Kind/compressible``: a generator seeded 4711 writes English-like sentences from the workload's word list;
///   `lz4 -1` compresses the 64 MiB pool about 1.78 times (each 64 KiB chunk on its own: about 1.67 times).
///
/// For example:
///
/// ```swift
/// let pool = BlobPool(.compressible)
/// for i in 0..<BlobPool.blobCount {
///     store(Array(pool.chunk(i)))
/// }
/// ```
///
/// A pool with fewer chunks (``init(_:chunkCount:)``) holds a prefix of the full pool's bytes, which keeps
/// small runs and tests cheap.
///
/// ## Topics
///
/// ### Creating a pool
/// - ``init(_:chunkCount:)``
/// - ``Kind``
///
/// ### Reading blobs
/// - ``chunk(_:)``
/// - ``bytes``
///
/// ### Sizes
/// - ``chunkSize``
/// - ``defaultChunkCount``
/// - ``blobCount``
public struct BlobPool: Sendable {
    /// The two blob pools of WORKLOAD.md.
    public enum Kind: Hashable, Sendable, CaseIterable {
        /// Incompressible bytes: `next()` of a generator seeded ``seed`` (4712), 8 bytes little-endian each.
        case random
        /// English-like text from the workload's word list, from a generator seeded ``seed`` (4711).
        case compressible

        /// The seed of the pool's generator: 4712 for ``random``, 4711 for ``compressible``.
        public var seed: UInt64 {
            switch self {
            case .random: 4712
            case .compressible: 4711
            }
        }
    }

    /// The size of one chunk, and so of one blob: 65,536 bytes.
    public static let chunkSize = 65_536
    /// The number of chunks in a full pool: 1,024 (64 MiB).
    public static let defaultChunkCount = 1_024
    /// The number of blobs W6 writes per pool: 10,000.
    public static let blobCount = 10_000

    /// Which pool this is.
    public let kind: Kind
    /// The number of chunks in this pool.
    public let chunkCount: Int
    /// The whole pool: `chunkCount * chunkSize` bytes.
    public let bytes: [UInt8]

    /// Generates a pool.
    ///
    /// Generating a full pool takes a fraction of a second in a release build (several seconds in a debug build)
    /// and holds 64 MiB.
    ///
    /// - Parameters:
    ///   - kind: Which pool.
    ///   - chunkCount: How many chunks to generate; at least 1. A smaller pool is a prefix of the full one.
    public init(_ kind: Kind, chunkCount: Int = defaultChunkCount) {
        precondition(chunkCount >= 1, "a blob pool needs at least one chunk")
        let size = chunkCount * Self.chunkSize
        self.kind = kind
        self.chunkCount = chunkCount
        switch kind {
        case .random: self.bytes = Self.randomBytes(count: size, seed: kind.seed)
        case .compressible: self.bytes = Self.compressibleBytes(count: size, seed: kind.seed, words: workloadWords)
        }
    }

    /// Returns blob `index`: chunk `index % chunkCount`, ``chunkSize`` bytes.
    ///
    /// - Parameter index: The blob's index, not negative (W6 uses `0..<10_000`).
    /// - Returns: A slice of ``bytes`` (no copy).
    @inlinable
    public func chunk(_ index: Int) -> ArraySlice<UInt8> {
        precondition(index >= 0, "blob index must not be negative")
        let start = (index % chunkCount) * Self.chunkSize
        return bytes[start..<(start + Self.chunkSize)]
    }

    // MARK: - Generation

    /// WORKLOAD.md: "generator seeded 4712, each 8 bytes = next() stored little-endian".
    private static func randomBytes(count: Int, seed: UInt64) -> [UInt8] {
        precondition(count % 8 == 0, "the random pool is a whole number of 8-byte values")
        var generator = SplitMix64(seed: seed)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            for offset in stride(from: 0, to: count, by: 8) {
                raw.storeBytes(of: generator.next().littleEndian, toByteOffset: offset, as: UInt64.self)
            }
            initializedCount = count
        }
    }

    /// WORKLOAD.md's compressible pool, step by step:
    ///
    /// 1. Until the pool holds `count` bytes: draw `w = words[uniform(0, words.count - 1)]`, capitalised (first
    ///    letter upper-case) when it starts a sentence, and append it.
    /// 2. If the sentence now has at least 7 words and `uniform(0, 9) == 0` (drawn only from the 7th word on),
    ///    end the sentence: append `"?"` if `uniform(0, 4) == 0` else `"."`, then `"\n"` if `uniform(0, 7) == 0`
    ///    else `" "`; the next word starts a new sentence.
    /// 3. Otherwise append `", "` if `uniform(0, 14) == 0` else `" "`.
    /// 4. Cut the pool to exactly `count` bytes.
    private static func compressibleBytes(count: Int, seed: UInt64, words: [String]) -> [UInt8] {
        precondition(!words.isEmpty, "the compressible pool needs words")
        let plain = words.map { Array($0.utf8) }
        let capitalised = plain.map { word in
            var word = word
            if let first = word.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) {
                word[0] = first - 0x20  // ASCII lower to upper case.
            }
            return word
        }
        let lastWord = UInt64(words.count - 1)
        var generator = SplitMix64(seed: seed)
        var pool: [UInt8] = []
        pool.reserveCapacity(count + 32)  // The last word and separator may overshoot before the cut.
        var wordsInSentence = 0
        while pool.count < count {
            let index = Int(generator.uniform(0, lastWord))
            pool.append(contentsOf: wordsInSentence == 0 ? capitalised[index] : plain[index])
            wordsInSentence += 1
            if wordsInSentence >= 7 && generator.uniform(0, 9) == 0 {
                pool.append(generator.uniform(0, 4) == 0 ? UInt8(ascii: "?") : UInt8(ascii: "."))
                pool.append(generator.uniform(0, 7) == 0 ? UInt8(ascii: "\n") : UInt8(ascii: " "))
                wordsInSentence = 0
            } else if generator.uniform(0, 14) == 0 {
                pool.append(UInt8(ascii: ","))
                pool.append(UInt8(ascii: " "))
            } else {
                pool.append(UInt8(ascii: " "))
            }
        }
        pool.removeLast(pool.count - count)
        return pool
    }
}
