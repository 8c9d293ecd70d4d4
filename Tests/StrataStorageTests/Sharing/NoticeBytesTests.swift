import StrataFormat
import StrataIO
import Testing

@testable import StrataStorage

/// A reader compares the mapped commit notice with the one it saw as bytes (``NoticeBytes``), without decoding it:
/// equal bytes must mean the same notice, and any other notice (or a torn one) must differ.
@Suite struct NoticeBytesTests {
    static let notice = CommitNotice(sequence: 7, lastCommitLSN: 5_001, logStartLSN: 4_000)

    @Test func aNoticeAndItsWrittenBytesAreEqual() {
        let encoded = Self.notice.encoded()
        let fromBytes = encoded.withUnsafeBytes { NoticeBytes($0) }
        #expect(NoticeBytes(Self.notice) == fromBytes)
    }

    @Test func anyOtherNoticeOrATornOneDiffers() {
        let seen = NoticeBytes(Self.notice)
        let others = [
            CommitNotice(sequence: 8, lastCommitLSN: 5_001, logStartLSN: 4_000),
            CommitNotice(sequence: 7, lastCommitLSN: 5_002, logStartLSN: 4_000),
            CommitNotice(sequence: 7, lastCommitLSN: 5_001, logStartLSN: 4_001),
        ]
        for other in others { #expect(NoticeBytes(other) != seen) }
        // A notice half written over the one seen.
        var torn = Self.notice.encoded()
        let next = others[0].encoded()
        torn.replaceSubrange(0..<16, with: next[0..<16])
        #expect(torn.withUnsafeBytes { NoticeBytes($0) } != seen)
    }

    @Test func aPositionKeepsTheBytesOfTheNoticeItSaw() throws {
        let header = WALFileHeader(storeID: Array(repeating: 1, count: 16), startLSN: 1, salt: 1)
        var position = LogPosition(file: FileIdentity(device: 1, inode: 2, size: 0), header: header, committedEnd: 0)
        #expect(position.noticeBytes == nil)
        position.notice = Self.notice
        #expect(position.noticeBytes == NoticeBytes(Self.notice))
        position.notice = nil
        #expect(position.noticeBytes == nil)
    }
}
