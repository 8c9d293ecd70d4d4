/// Writes a large transaction's full leaves to the page file before it commits, so that its memory is bounded by
/// ``StoreConfiguration/largeTransactionMemoryBytes`` rather than by its size (FORMAT.md, "Large transactions").
///
/// The pages go where the commit's own pages would (after the newest root record), and the commit's pages follow
/// them. Nothing references them until the commit's root record does: after a crash they are garbage that the next
/// checkpoint writes over, as an interrupted checkpoint's are, and a rollback cuts them off (``Store``'s
/// `discardSpill`). The transaction's tree names them by page number; reading one back (a later change to one of
/// its rows copies it into memory) goes through the file handle (``PageStore/setPendingLimit(_:)``).
struct LeafSpill {
    let pages: PageStore
    /// The first page the spill writes: the page file's end as the newest checkpoint left it.
    let startPage: UInt64
    private let generation: UInt64
    private let boundBytes: UInt64
    private var writer: CheckpointWriter?
    private var bytesSinceSpill: UInt64 = 0
    /// A spill that failed may have left the tree naming pages never written: the transaction can no longer commit.
    private var failure: (any Error)?
    /// How many times leaves were written.
    private(set) var spills = 0

    /// - Parameters:
    ///   - startPage: where the newest checkpoint's pages end.
    ///   - generation: the generation the commit's root record will have.
    ///   - boundBytes: the row bytes put between spills.
    init(pages: PageStore, startPage: UInt64, generation: UInt64, boundBytes: UInt64) {
        self.pages = pages
        self.startPage = startPage
        self.generation = generation
        self.boundBytes = max(boundBytes, 1)
    }

    /// The pages written so far.
    var written: Range<UInt64> { startPage..<(writer?.nextPage ?? startPage) }

    /// Counts `bytes` of rows put; returns whether the bound is passed (time to ``spill(_:tree:owner:)``, once the
    /// transaction is large).
    mutating func note(bytes: Int) -> Bool {
        bytesSinceSpill &+= UInt64(bytes)
        return bytesSinceSpill >= boundBytes
    }

    /// Writes the full leaves of the trees at `roots` that the transaction tagged `owner` holds in memory.
    /// - Throws: ``StorageError/io(_:)``; then, and at every later call and at ``checkUsable()``, the transaction
    ///   cannot commit.
    mutating func spill(_ roots: [NodeRef?], tree: BTree, owner: UInt64) throws {
        bytesSinceSpill = 0
        try withWriter { writer in
            for root in roots { try tree.spillLeaves(root, owner: owner) { try writer.writeSpilledLeaf($0) } }
        }
        try publish()
        spills += 1
    }

    /// Writes a leaf of a secondary index (a sorted run of a load, or a leaf of the index a load builds at commit,
    /// ``IndexLoadRuns``); returns its page. Readable once ``publish()`` has run.
    /// - Throws: as ``spill(_:tree:owner:)``.
    mutating func writeIndexLeaf(_ node: IndexNode) throws -> UInt64 {
        try withWriter { try $0.writeSpilledIndexLeaf(node) }
    }

    /// Writes what is buffered and lets the transaction read back every page written so far.
    /// - Throws: as ``spill(_:tree:owner:)``.
    mutating func publish() throws {
        try withWriter { try $0.flush() }
        pages.setPendingLimit(written.upperBound)
    }

    private mutating func withWriter<R>(_ body: (inout CheckpointWriter) throws -> R) throws -> R {
        try checkUsable()
        // Taken out while it writes: a copy left here would make each write copy its buffer (a megabyte).
        var writer = writer ?? CheckpointWriter(pages: pages, startPage: startPage, generation: generation)
        self.writer = nil
        defer { self.writer = writer }
        do {
            return try body(&writer)
        } catch {
            failure = error
            throw error
        }
    }

    /// Throws the error of a spill that failed: the tree may name pages that were never written.
    func checkUsable() throws {
        if let failure { throw failure }
    }
}
