import Foundation
import Logging
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Review of the several-processes change (issue 25): interleavings of two opens of one store (which conflict on
/// their locks as two processes do) that lost, hid or trapped on an acknowledged commit before their fixes.
@Suite struct SharedStoreReviewTests {
    static let configuration = StoreConfiguration(
        durability: .full, pageSize: 512, checkpointThresholdBytes: 1 << 30,
        logger: Logger(label: "review") { _ in SwiftLogNoOpLogHandler() })

    static func fileSystem() throws -> (InMemoryFileSystem, FaultInjectingFileSystem) {
        let memory = InMemoryFileSystem()
        try memory.createDirectory(at: "/db")
        try memory.syncDirectory(at: "/")
        return (memory, FaultInjectingFileSystem(wrapping: memory))
    }

    static func open(_ fileSystem: any FileSystem) throws -> Store {
        try Store.open(at: "/db", configuration: configuration, fileSystem: fileSystem)
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Open A's checkpoint fails (a page-file sync error: a transient EIO, or ENOSPC on the write) after its
    /// CheckpointWriter put the nodes it wrote into A's page cache under page numbers 1, 2, ... Open B then
    /// checkpoints successfully and writes *its* nodes at the same page numbers (they were past the newest root
    /// record: garbage). A follows B's checkpoint, and its next write transaction copies the page it changes out of
    /// its page cache: A's stale node, not B's page. B's acknowledged update disappears from A's state, and A's
    /// next checkpoint makes the loss durable.
    @Test func aFailedCheckpointsCachedNodesDoNotShadowPagesAnotherOpenWroteThere() throws {
        let (memory, faulty) = try Self.fileSystem()
        let a = try Self.open(faulty)
        let b = try Self.open(faulty)
        let table = try a.write { try $0.createTable(named: "t") }
        let one = try a.write { try $0.insert(Self.bytes("old"), into: table) }
        let two = try a.write { try $0.insert(Self.bytes("two"), into: table) }

        faulty.inject(FaultInjectingFileSystem.Fault(on: [.sync], pathContaining: "strata.pages"))
        #expect(throws: (any Error).self) { try a.checkpoint() }
        faulty.clearFaults()

        try b.write { try $0.update(one, in: table, to: Self.bytes("new")) }  // acknowledged
        try b.checkpoint()

        try a.write { try $0.update(two, in: table, to: Self.bytes("TWO")) }
        #expect(try a.snapshot().row(one, in: table) == Self.bytes("new"), "A lost B's acknowledged update")
        #expect(try b.snapshot().row(one, in: table) == Self.bytes("new"), "B lost its own acknowledged update")
        try a.close()
        try b.close()

        let reopened = try Self.open(memory)
        defer { try? reopened.close() }
        #expect(try reopened.snapshot().row(one, in: table) == Self.bytes("new"), "the loss is durable")
        #expect(try reopened.snapshot().row(two, in: table) == Self.bytes("TWO"))
    }

    /// A commit of open A whose log sync fails (full durability) is seen by reader R (FORMAT.md §11.5 allows that),
    /// then A repairs its log (cuts it back to its last durable commit) and commits again at the same LSN. When R
    /// missed the notice of the cut (it did not look in between), nothing in the notice or the log's size tells it:
    /// the notice names the LSN R already has. With a rewritten commit of the same length, R keeps the cut commit
    /// and never shows A's acknowledged one; with a longer one, R, writing, reads on from the middle of A's
    /// acknowledged commit and cuts it off as a torn tail.
    @Test(arguments: ["new", "longer than the commit that was cut"])
    func aLogCutBackAndRewrittenToTheSameLSNIsNotMistakenForTheOldOne(_ value: String) throws {
        let (memory, faulty) = try Self.fileSystem()
        let a = try Self.open(faulty)
        let r = try Self.open(faulty)
        let table = try a.write { try $0.createTable(named: "t") }
        let row = try a.write { try $0.insert(Self.bytes("base"), into: table) }
        #expect(try r.snapshot().row(row, in: table) == Self.bytes("base"))

        faulty.inject(FaultInjectingFileSystem.Fault(on: [.sync], pathContaining: "strata.wal"))
        #expect(throws: (any Error).self) { try a.write { try $0.update(row, in: table, to: Self.bytes("cut")) } }
        faulty.clearFaults()
        // R reads the unacknowledged commit before A repairs (allowed: §11.5).
        #expect(try r.snapshot().row(row, in: table) == Self.bytes("cut"))

        // A cuts its log back and commits again at the same LSN; acknowledged.
        try a.write { try $0.update(row, in: table, to: Self.bytes(value)) }
        #expect(try a.snapshot().row(row, in: table) == Self.bytes(value))

        #expect(try r.snapshot().row(row, in: table) == Self.bytes(value), "R does not see A's acknowledged commit")
        let other = try r.write { try $0.insert(Self.bytes("r"), into: table) }
        #expect(try r.snapshot().row(row, in: table) == Self.bytes(value), "R's write is based on the cut commit")
        try r.close()
        try a.close()

        let reopened = try Self.open(memory)
        defer { try? reopened.close() }
        let snapshot = reopened.snapshot()
        #expect(try snapshot.row(row, in: table) == Self.bytes(value), "A's acknowledged commit is lost")
        #expect(try snapshot.row(other, in: table) == Self.bytes("r"), "R's acknowledged commit is lost")
        #expect(try reopened.verify().isClean)
    }

    /// A writer whose commit notice cannot be written (an I/O error on strata.writer) must not acknowledge the
    /// commit: a reader in another process would find the notice it saw last, take the fast path, and miss it. The
    /// commit fails as a failed log write does, leaving no trace, and the store goes on: its next commit is seen.
    @Test func aCommitWhoseNoticeCouldNotBeWrittenFailsWithoutATraceAndTheNextIsSeenElsewhere() throws {
        let (memory, faulty) = try Self.fileSystem()
        let a = try Self.open(faulty)
        let r = try Self.open(faulty)
        defer {
            try? a.close()
            try? r.close()
        }
        let table = try a.write { try $0.createTable(named: "t") }
        _ = r.snapshot()
        faulty.inject(FaultInjectingFileSystem.Fault(on: [.write], pathContaining: "strata.writer"))
        #expect(throws: StorageError.self) { try a.write { try $0.insert(Self.bytes("failed"), into: table) } }
        faulty.clearFaults()
        #expect(try r.snapshot().rowCount(in: table) == 0, "a commit that failed is visible elsewhere")
        let row = try a.write { try $0.insert(Self.bytes("acknowledged"), into: table) }
        let snapshot = r.snapshot()
        #expect(try snapshot.row(row, in: table) == Self.bytes("acknowledged"), "R's new snapshot misses it")
        #expect(try snapshot.rowCount(in: table) == 1)
        let recovered = try Self.open(memory.crashImage())
        defer { try? recovered.close() }
        #expect(try recovered.snapshot().rowCount(in: recovered.snapshot().table(named: "t")!) == 1)
    }

    /// Open A checkpoints and renames its new log into place, but the directory sync that makes the rename durable
    /// fails (or A is killed right after the rename). A alone would refuse to log anything until the directory sync
    /// succeeds (§7.3's table); open B does not know, follows the new log and acknowledges commits in it. A power loss
    /// then brings the old log back, and B's acknowledged commits with it are gone.
    @Test func commitsInANewLogWhoseRenameIsNotDurableYetSurviveAPowerLoss() throws {
        let (memory, faulty) = try Self.fileSystem()
        let a = try Self.open(faulty)
        let b = try Self.open(faulty)
        let table = try a.write { try $0.createTable(named: "t") }
        _ = try a.write { try $0.insert(Self.bytes("before"), into: table) }
        faulty.inject(FaultInjectingFileSystem.Fault(on: [.syncDirectory]))
        #expect(throws: (any Error).self) { try a.checkpoint() }
        faulty.clearFaults()
        let row = try b.write { try $0.insert(Self.bytes("acknowledged by B"), into: table) }

        let recovered = try Self.open(memory.crashImage())
        defer { try? recovered.close() }
        #expect(try recovered.snapshot().row(row, in: table) == Self.bytes("acknowledged by B"), "lost at power loss")
        _ = a
    }

    /// Open A follows commits of open B (its WALWriter's appended LSN moves, its durable LSN does not), then cuts a
    /// torn tail a killed writer left (WALWriter.truncate sets the durable end to the cut, not the durable LSN). A's
    /// next commit's sync fails; the repair before A's next write then rolls the writer back to a durable LSN below
    /// the state A has published, and repairLog's precondition ("no state for the durable LSN") traps: the process
    /// dies, holding nothing, but an EIO is not supposed to be a crash.
    @Test func aFailedSyncAfterCuttingADeadWritersTailDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            let (memory, faulty) = try SharedStoreReviewTests.fileSystem()
            let a = try SharedStoreReviewTests.open(faulty)
            let b = try SharedStoreReviewTests.open(faulty)
            let table = try a.write { try $0.createTable(named: "t") }
            _ = try b.write { try $0.insert(SharedStoreReviewTests.bytes("b"), into: table) }
            // A writer killed in the middle of its append left the start of a record.
            let log = try memory.openFile(at: "/db/strata.wal", mode: .existing)
            try log.write([UInt8](repeating: 0xA5, count: 12), at: try log.size())
            try log.close()
            // The cut's own sync succeeds; the commit's fails.
            faulty.inject(FaultInjectingFileSystem.Fault(on: [.sync], after: 1, pathContaining: "strata.wal"))
            _ = try? a.write { try $0.insert(SharedStoreReviewTests.bytes("a"), into: table) }
            faulty.clearFaults()
            _ = try? a.write { try $0.insert(SharedStoreReviewTests.bytes("a2"), into: table) }
        }
    }
}
