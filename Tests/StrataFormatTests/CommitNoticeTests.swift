import StrataFormat
import Testing

/// The commit notice of `strata.writer` (FORMAT.md §11.2): a hint that must decode exactly what was written, and
/// nothing at all from anything else (a torn, zeroed or stale-format notice only sends readers to the log).
@Suite struct CommitNoticeTests {
    static let notice = CommitNotice(sequence: 42, lastCommitLSN: 1_000_003, logStartLSN: 999_001)

    @Test func encodesToThirtyTwoBytesThatDecodeBack() {
        let bytes = Self.notice.encoded()
        #expect(bytes.count == CommitNotice.size && CommitNotice.size == 32)
        #expect(Array(bytes[0..<4]) == Array("STCN".utf8))
        // The sequence number and the two LSNs, each a little-endian UInt64, then the masked CRC-32C (FORMAT.md).
        func word(at offset: Int) -> UInt64 {
            bytes[offset..<(offset + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        #expect(word(at: 4) == 42 && word(at: 12) == 1_000_003 && word(at: 20) == 999_001)
        #expect(CommitNotice.decode(bytes) == Self.notice)
        // Bytes after the notice are not its business.
        #expect(CommitNotice.decode(bytes + [1, 2, 3]) == Self.notice)
    }

    @Test func everyTruncationDecodesToNothing() {
        let bytes = Self.notice.encoded()
        for count in 0..<bytes.count { #expect(CommitNotice.decode(Array(bytes.prefix(count))) == nil) }
    }

    @Test func everyFlippedBitDecodesToNothing() {
        let bytes = Self.notice.encoded()
        for index in bytes.indices {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[index] ^= UInt8(1 << bit)
                #expect(CommitNotice.decode(damaged) == nil, "byte \(index) bit \(bit)")
            }
        }
        #expect(CommitNotice.decode([UInt8](repeating: 0, count: 32)) == nil)
    }
}
