extension InMemoryFileSystem {
    /// What a simulated power loss does to data written since the last sync of each file.
    ///
    /// Names follow the durable namespace under every policy: a file whose creation was not made
    /// durable by a directory sync is gone, and an unsynced rename or removal is undone. The
    /// policies differ only in the contents of the files that survive.
    ///
    /// For example, to check that recovery copes with a torn write at the end of a log:
    ///
    ///     for seed in 0..<100 {
    ///         let crashed = fileSystem.crashImage(policy: .keepUnsyncedPrefix(seed: seed))
    ///         try recover(crashed)  // print the seed when it fails
    ///     }
    public enum CrashPolicy: Sendable, Equatable, Hashable {
        /// Every file holds exactly its contents at its last sync: all unsynced writes are lost.
        /// The default, and the only policy that is exact rather than random.
        case dropUnsynced

        /// Every file holds its contents at its last sync followed by a random prefix of the writes
        /// and truncations made since, in the order they were made, the last of them possibly cut
        /// short at a random byte: a torn tail. The same seed on the same history gives the same
        /// image.
        case keepUnsyncedPrefix(seed: UInt64)

        /// Like ``keepUnsyncedPrefix(seed:)``, and then the surviving bytes of the write that was cut
        /// short, where they lie in the last 512-byte sector it reached, are replaced by random
        /// bytes: a sector the device was writing when the power went.
        case garbleLastSector(seed: UInt64)

        /// The sector size that ``garbleLastSector(seed:)`` garbles within.
        public static let sectorSize = 512

        /// A generator seeded from the policy (unused by ``dropUnsynced``).
        func makeGenerator() -> Generator {
            switch self {
            case .dropUnsynced: Generator(seed: 0)
            case .keepUnsyncedPrefix(let seed), .garbleLastSector(let seed): Generator(seed: seed)
            }
        }

        /// The contents of `file` after a crash under this policy.
        func survivingContents(of file: State.File, using generator: inout Generator) -> [UInt8] {
            switch self {
            case .dropUnsynced:
                return file.durableContents
            case .keepUnsyncedPrefix:
                return Self.replayPrefix(of: file, using: &generator).contents
            case .garbleLastSector:
                var (contents, tornWrite) = Self.replayPrefix(of: file, using: &generator)
                if let tornWrite {
                    // The torn write is the last change replayed and is not empty.
                    let sectorStart = (tornWrite.upperBound - 1) / Self.sectorSize * Self.sectorSize
                    for index in max(sectorStart, tornWrite.lowerBound)..<tornWrite.upperBound {
                        contents[index] = UInt8.random(in: 0...255, using: &generator)
                    }
                }
                return contents
            }
        }

        /// The durable contents of `file` with a random prefix of its unsynced changes applied, the
        /// last one possibly partially, and the bytes that survive of a write cut short, if any.
        private static func replayPrefix(
            of file: State.File,
            using generator: inout Generator
        ) -> (contents: [UInt8], tornWrite: Range<Int>?) {
            var contents = file.durableContents
            var tornWrite: Range<Int>?
            let changes = file.unsyncedChanges
            let kept = Int.random(in: 0...changes.count, using: &generator)
            for (index, change) in changes[..<min(kept + 1, changes.count)].enumerated() {
                switch change {
                case .write(let offset, let bytes):
                    // Every change before `kept` survives whole; the one at `kept` keeps a random prefix.
                    let count = index < kept ? bytes.count : Int.random(in: 0...bytes.count, using: &generator)
                    if count == 0 { continue }
                    bytes[..<count].withUnsafeBytes { State.File.apply($0, at: offset, to: &contents) }
                    if index == kept { tornWrite = offset..<(offset + count) }
                case .truncate(let size):
                    // A truncation is one metadata update: it happens or it does not.
                    if index < kept || Bool.random(using: &generator) { State.File.resize(&contents, to: size) }
                }
            }
            return (contents, tornWrite)
        }

        /// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast, seedable generator whose output
        /// is the same on every platform, so a failing seed replays anywhere.
        struct Generator: RandomNumberGenerator {
            /// The generator's state, advanced by the golden-ratio increment on every draw.
            private var state: UInt64

            /// A generator whose sequence is fixed by `seed`.
            init(seed: UInt64) {
                state = seed
            }

            /// The next 64 random bits.
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
    }
}
