/// The names of the files in a store directory, in one place (FORMAT.md, "Files of a store").
public enum StoreFileNames {
    /// The page file: the store header in page 0, then B+tree, overflow and root-record pages.
    public static let pageFile = "strata.pages"
    /// The write-ahead log.
    public static let wal = "strata.wal"
    /// A new write-ahead log being prepared; renamed over ``wal`` once synced.
    public static let walTemporary = "strata.wal.tmp"
    /// A new page file being prepared at store creation; renamed over ``pageFile`` once synced.
    public static let pageFileTemporary = "strata.pages.tmp"
    /// The compacted page file being written by compaction; renamed over ``pageFile`` to commit it.
    /// A leftover (a compaction that did not reach its rename) is garbage.
    public static let pageFileCompacted = "strata.pages.compact"
    /// The advisory lock every open of the store holds shared, and that compaction (which needs the store to itself)
    /// takes exclusive.
    public static let lock = "strata.lock"
    /// The advisory lock that serialises writers across processes: held exclusive for the length of one write
    /// transaction (or checkpoint), never for the length of an open.
    public static let writerLock = "strata.writer"

    /// Joins a directory and a file name.
    public static func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
