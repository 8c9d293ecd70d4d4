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
    var notice: CommitNotice? = nil
    /// The first bytes of the writer lock file, mapped once it holds a notice: reading the notice is then a memory
    /// read (the mapping is shared, so it shows every write to the file).
    var noticeMapping: FileMapping? = nil
}
