/// What ``Store/verify()`` found: every problem with its location, and counts.
public struct VerificationReport: Sendable, Equatable, CustomStringConvertible {
    /// One inconsistency, where it was found and what is wrong.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var file: String
        /// The byte offset in the file, when the problem has one.
        public var offset: UInt64?
        public var message: String

        public var description: String {
            if let offset { return "\(file) @\(offset): \(message)" }
            return "\(file): \(message)"
        }
    }

    public var problems: [Problem] = []
    public var tableCount = 0
    public var rowCount: UInt64 = 0
    /// Tree pages reachable from the newest checkpoint's roots.
    public var treePages = 0
    /// Overflow pages reachable through leaves.
    public var overflowPages = 0
    /// Pages in the page file up to the newest root record, page 0 included.
    public var pageFilePages: UInt64 = 0
    /// Pages no current tree references (superseded by later checkpoints, or older root records):
    /// what compaction would reclaim.
    public var unreferencedPages: UInt64 = 0
    /// Committed blobs and their total length.
    public var blobCount = 0
    public var blobBytes: UInt64 = 0
    /// Bytes in blob segments that no committed blob uses (deleted blobs, orphans, torn tails).
    public var orphanedBlobBytes: UInt64 = 0
    /// Valid records in the log.
    public var walRecords = 0
    public var walBytes: UInt64 = 0

    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }

    public var description: String {
        var lines = [
            "tables \(tableCount), rows \(rowCount), tree pages \(treePages), overflow pages \(overflowPages), "
                + "page file pages \(pageFilePages) (\(unreferencedPages) unreferenced), WAL records \(walRecords) (\(walBytes) bytes), "
                + "blobs \(blobCount) (\(blobBytes) bytes, \(orphanedBlobBytes) orphaned bytes in segments)"
        ]
        lines += problems.map { "problem: \($0)" }
        return lines.joined(separator: "\n")
    }
}
