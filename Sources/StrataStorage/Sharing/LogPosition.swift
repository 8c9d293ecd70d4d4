import StrataFormat
import StrataIO

/// How far this open of the store has read the log that every open shares: the file (which a checkpoint, made by
/// any process, replaces with a new one), its size when last looked at, and the end of the last commit applied to
/// the store's state. Appends of this open move it with them, under the same lock, so that catching up never reads
/// this open's own commits as another's.
struct LogPosition {
    var file: FileIdentity
    var header: WALFileHeader
    /// The end of the last commit record this open's state contains.
    var committedEnd: UInt64
    /// The commit notice read when this open last read the log: while the notice stays the same, nothing changed.
    var notice: CommitNotice? = nil {
        didSet { noticeBytes = notice.map(NoticeBytes.init) }
    }
    /// ``notice`` as it is written, for a reader to compare the mapped notice with in place: equal bytes are the same
    /// notice, so the reader need not decode it (its checksum was about 150 instructions of every row read).
    private(set) var noticeBytes: NoticeBytes? = nil
    /// The first bytes of the writer lock file, mapped once it holds a notice: reading the notice is then a memory
    /// read (the mapping is shared, so it shows every write to the file).
    var noticeMapping: FileMapping? = nil
}

/// A ``CommitNotice``'s ``CommitNotice/size`` bytes as four words.
struct NoticeBytes: Equatable {
    let words: (UInt64, UInt64, UInt64, UInt64)

    init(_ notice: CommitNotice) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { notice.encode(into: $0) }
        self.words = words
    }

    /// The first ``CommitNotice/size`` bytes of `bytes`, which hold at least that many.
    init(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= CommitNotice.size, "a commit notice takes \(CommitNotice.size) bytes")
        words = (
            bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
            bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
            bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        )
    }

    static func == (lhs: NoticeBytes, rhs: NoticeBytes) -> Bool { lhs.words == rhs.words }
}
