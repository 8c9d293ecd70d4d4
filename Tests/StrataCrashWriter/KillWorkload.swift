import StrataStorage

/// The workload of the process-kill tests: what transaction `i` writes is a pure function of `i`, so the
/// writer (which runs it until it is killed) and the test (which checks what survived) agree without
/// talking to each other.
///
/// Transaction `i`, in order:
/// 1. updates up to two earlier rows that are still live, each to its next version;
/// 2. sometimes deletes one live row at least ``minimumDeleteAge`` transactions older, and its blob;
/// 3. when `i % blobInterval == blobPhase`, stores a blob of 100–400 KB (half random, half repetitive,
///    so the blob store compresses part of it);
/// 4. inserts row `i` (row ID `i + 1`) at version 0, naming its blob if any;
/// 5. records `i` in the one row of the progress table (a second table, so that a commit touches two
///    trees and the blob catalog at once).
///
/// Nothing else writes, so the committed state after `n` transactions is a pure function of `n`
/// (``Model``). Since no transaction deletes a row younger than ``minimumDeleteAge``, the row with the
/// highest ID in a recovered store names `n`; every other row, the progress row and the blob catalog
/// must then be exactly the model's. A transaction partly visible cannot pass that comparison.
package enum KillWorkload {
    /// The table of the workload's rows.
    package static let tableName = "kills"
    /// The table whose only row holds the index of the last committed transaction.
    package static let progressTableName = "kills_progress"
    /// A blob every `blobInterval` transactions, at `i % blobInterval == blobPhase`.
    package static let blobInterval: UInt64 = 50
    package static let blobPhase: UInt64 = 25
    /// A transaction deletes only rows at least this many transactions older than itself.
    package static let minimumDeleteAge: UInt64 = 30
    /// The bytes every row starts with.
    package static let rowMagic: [UInt8] = Array("KILL".utf8)
    /// The row header: magic, index (UInt64 LE), version (UInt32 LE), blob ID (UInt64 LE, 0 for none),
    /// padding length (UInt32 LE); the padding follows.
    package static let rowHeaderSize = 28

    /// The row ID of transaction `index`'s row.
    package static func rowID(of index: UInt64) -> RowID { RowID(index + 1) }

    /// The progress row's value after transaction `index`: the index, UInt64 little-endian.
    package static func progressBytes(index: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: index >> (8 * UInt64($0))) }
    }

    // MARK: - Values

    /// The value of transaction `index`'s row at `version`.
    ///
    /// The padding length depends on index and version: mostly under 300 bytes, one version in four
    /// 1–4 KB and one in sixteen 4–24 KB, so that rows grow and shrink across page and overflow sizes.
    package static func rowBytes(index: UInt64, version: UInt32, blob: BlobID?) -> [UInt8] {
        let seed = mix(index ^ (UInt64(version) << 44) ^ 0x0052_4F57)
        let paddingLength =
            switch seed % 16 {
            case 0: 4_000 + Int((seed >> 8) % 20_000)
            case 1...3: 1_000 + Int((seed >> 8) % 3_000)
            default: Int((seed >> 8) % 300)
            }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rowHeaderSize + paddingLength)
        bytes += rowMagic
        appendLittleEndian(index, count: 8, to: &bytes)
        appendLittleEndian(UInt64(version), count: 4, to: &bytes)
        appendLittleEndian(blob?.rawValue ?? 0, count: 8, to: &bytes)
        appendLittleEndian(UInt64(paddingLength), count: 4, to: &bytes)
        appendPseudoRandom(count: paddingLength, seed: seed, to: &bytes)
        return bytes
    }

    /// What a row's header says, or nil when it is not a workload row (for failure messages).
    package static func describeRow(_ bytes: [UInt8]) -> String {
        guard bytes.count >= rowHeaderSize, Array(bytes[0..<4]) == rowMagic else {
            return "not a workload row (\(bytes.count) bytes)"
        }
        func field(_ offset: Int, _ count: Int) -> UInt64 {
            (0..<count).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        return "row of transaction \(field(4, 8)) version \(field(12, 4)) blob \(field(16, 8)) "
            + "padding \(field(24, 4)) (\(bytes.count) bytes)"
    }

    /// The length of the blob transaction `index` stores (100–400 KB).
    package static func blobLength(index: UInt64) -> Int {
        100_000 + Int(mix(index ^ 0x0042_4C4F_42) % 300_000)
    }

    /// The bytes of the blob transaction `index` stores: a random first half and a repeated second half.
    package static func blobBytes(index: UInt64) -> [UInt8] {
        let length = blobLength(index: index)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        appendPseudoRandom(count: length / 2, seed: mix(index ^ 0x0062_6C6F_62), to: &bytes)
        let phrase = Array("blob of transaction \(index); ".utf8)
        while bytes.count < length {
            bytes += phrase.prefix(length - bytes.count)
        }
        return bytes
    }

    // MARK: - Choices

    /// The rows transaction `index` would update, if still live (at most two, distinct, all older).
    static func updateCandidates(index: UInt64) -> [UInt64] {
        guard index > 0 else { return [] }
        let seed = mix(index ^ 0x0055_5044)
        let count = [2, 1, 0, 0][Int(seed % 4)]
        var targets: [UInt64] = []
        for k in 0..<UInt64(count) {
            let target = index - 1 - mix(seed &+ k) % min(index, 100)
            if !targets.contains(target) { targets.append(target) }
        }
        return targets
    }

    /// The row transaction `index` would delete, if still live.
    static func deleteCandidate(index: UInt64) -> UInt64? {
        guard index >= minimumDeleteAge else { return nil }
        let seed = mix(index ^ 0x0044_454C)
        guard seed % 3 == 0 else { return nil }
        return index - minimumDeleteAge - (seed >> 8) % min(index - minimumDeleteAge + 1, 300)
    }

    /// Whether transaction `index` stores a blob.
    static func storesBlob(index: UInt64) -> Bool { index % blobInterval == blobPhase }

    // MARK: - Helpers

    /// SplitMix64's finalizer: a well-mixed 64-bit function of `value`.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private static func appendLittleEndian(_ value: UInt64, count: Int, to bytes: inout [UInt8]) {
        for shift in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift)))) }
    }

    private static func appendPseudoRandom(count: Int, seed: UInt64, to bytes: inout [UInt8]) {
        var state = seed
        var remaining = count
        while remaining > 0 {
            state = mix(state)
            var word = state
            for _ in 0..<min(8, remaining) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
            remaining -= min(8, remaining)
        }
    }
}
