/// The 32 bytes at the start of the writer lock file (`strata.writer`, FORMAT.md §11.2) that tell every open of a
/// store which commit is the newest: a writer rewrites them, holding the writer lock, after each commit record it
/// appends, after each new log it renames into place and after cutting the log back, each time with the next
/// sequence number. An open that finds the notice it saw when it last read the log knows that nothing changed since,
/// and skips reading the log (a read of 32 bytes through a mapping of the file, instead of a `stat` and a read of the
/// log's end).
///
/// A hint, not a record: it is never synced, and a crash may leave it stale, torn or zero. A notice that does not
/// decode, or that differs from what the reader has in any way, sends the reader to the log itself.
public struct CommitNotice: Sendable, Equatable {
    /// The notice's size in bytes.
    public static let size = 32
    /// "STCN": Strata commit notice.
    public static let magic: [UInt8] = Array("STCN".utf8)
    /// ``magic``'s four bytes as one word loaded from memory (the bytes in the order they lie).
    private static let magicWord = magic.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }

    /// One more than the notice before: two notices are the same only if nothing was written between them, even when
    /// a log cut back after a failed sync comes to the same LSN again.
    public var sequence: UInt64
    /// The LSN of the newest commit record in the log.
    public var lastCommitLSN: UInt64
    /// The first LSN of the current log file: it changes when a checkpoint starts a new log.
    public var logStartLSN: UInt64

    /// Creates a notice.
    public init(sequence: UInt64, lastCommitLSN: UInt64, logStartLSN: UInt64) {
        self.sequence = sequence
        self.lastCommitLSN = lastCommitLSN
        self.logStartLSN = logStartLSN
    }

    /// The notice's bytes: magic, the sequence number and the two LSNs (UInt64 little-endian) and the masked CRC-32C
    /// of the 28 bytes before.
    public func encoded() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.size) { bytes, count in
            encode(into: UnsafeMutableRawBufferPointer(bytes))
            count = Self.size
        }
    }

    /// Writes ``encoded()``'s bytes into the first ``size`` bytes of `bytes`: every commit posts a notice, and the
    /// writer encodes it on its stack (an array for it was an allocation per commit).
    public func encode(into bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= Self.size, "a commit notice takes \(Self.size) bytes")
        // The magic word holds the magic's bytes in memory order.
        bytes.storeBytes(of: Self.magicWord, toByteOffset: 0, as: UInt32.self)
        bytes.storeLE(sequence, at: 4)
        bytes.storeLE(lastCommitLSN, at: 12)
        bytes.storeLE(logStartLSN, at: 20)
        let covered = UnsafeRawBufferPointer(rebasing: bytes[0..<(Self.size - 4)])
        bytes.storeLE(CRC32C.mask(CRC32C.checksum(covered)), at: Self.size - 4)
    }

    /// Decodes a notice; nil for anything else (too short, another magic, a checksum that does not match): a stale
    /// or torn notice is normal after a crash, and only means "read the log".
    public static func decode(_ bytes: [UInt8]) -> CommitNotice? {
        bytes.withUnsafeBytes { decode($0) }
    }

    /// ``decode(_:)-([UInt8])`` of bytes in place (a mapping of the file).
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> CommitNotice? {
        guard bytes.count >= size else { return nil }
        // Safe: every load lies in the first `size` bytes, which the guard found. Read in place, without a reader or a
        // comparison of sequences: every snapshot reads the notice (430 instructions a W3.graph lookup that way).
        guard bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self) == magicWord else { return nil }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 28, as: UInt32.self))
        guard CRC32C.unmask(stored) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(size &- 4)])) else {
            return nil
        }
        return CommitNotice(
            sequence: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt64.self)),
            lastCommitLSN: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self)),
            logStartLSN: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 20, as: UInt64.self)))
    }
}
