import Foundation
import StrataIO
import StrataLock
import StrataTestSupport
import Testing

@testable import StrataStorage

/// `WALWriter`'s group commit, driven directly from many threads: committers append one at a time (as the
/// store's writer gate has them do) and then wait on the writer's condition variable, where one leads each
/// sync and the others are woken by it. Run under ThreadSanitizer by `Scripts/tsan`.
@Suite struct WALWriterConcurrencyTests {
    static let recordSize = 32

    /// A record that names its committer and its number, so the log can be read back.
    static func record(thread: Int, index: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xA5, count: recordSize)
        bytes[0] = UInt8(thread)
        bytes[1] = UInt8(index & 0xFF)
        bytes[2] = UInt8(index >> 8)
        return bytes
    }

    /// A writer of a new log "/wal" on an in-memory file system whose syncs take `seconds` (as on a disk), the directory
    /// synced so that the log survives a power loss with what its syncs covered. It reserves no space ahead, so that
    /// the file holds nothing but records.
    static func makeWriter(
        syncTaking seconds: Double
    ) throws -> (memory: InMemoryFileSystem, files: FaultInjectingFileSystem, wal: WALWriter) {
        let memory = InMemoryFileSystem()
        let files = FaultInjectingFileSystem(wrapping: memory) { _, operation in
            if operation == .sync { Thread.sleep(forTimeInterval: seconds) }
        }
        let wal = WALWriter(
            handle: try files.openFile(at: "/wal", mode: .createNew), salt: 1, endOffset: 0, reservedEnd: 0,
            lastLSN: 0, maximumReserve: 0, repairsFailedSyncs: true)
        try memory.syncDirectory(at: "/")
        return (memory, files, wal)
    }

    /// The records a log file holds after a power loss, as (thread, index) pairs.
    static func durableRecords(_ memory: InMemoryFileSystem) throws -> Set<[Int]> {
        let file = try memory.crashImage().openFile(at: "/wal", mode: .existing)
        let bytes = try file.read(count: Int(try file.size()), at: 0)
        #expect(bytes.count % recordSize == 0)
        return Set(
            stride(from: 0, to: bytes.count, by: recordSize).map {
                [Int(bytes[$0]), Int(bytes[$0 + 1]) | Int(bytes[$0 + 2]) << 8]
            }
        )
    }

    /// Commits `perThread` records from each of `threads` threads: appends under a lock that stands for the
    /// store's writer gate (and holds the last LSN appended), then waits until durable. A committer that finds the writer failed
    /// repairs it under the gate, as ``Store/write(_:)`` does.
    /// - Returns: the records whose commit returned, and the errors of the others.
    static func commit(
        _ wal: WALWriter, threads: Int, perThread: Int
    ) -> (acknowledged: Set<[Int]>, errors: [String]) {
        let gate = Lock<UInt64>(0)
        let acknowledged = Lock<Set<[Int]>>([])
        let errors = Lock<[String]>([])
        let polls = Lock(0)
        runOnThreads(threads + 1) { thread in
            if thread == threads {
                // A bystander reads the writer's state while the committers hold and wait on its lock.
                while acknowledged.withLock({ $0.count }) + errors.withLock({ $0.count }) < threads * perThread {
                    _ = (wal.size, wal.syncs, wal.failed, wal.isRepairable, wal.currentSalt)
                    polls.withLock { $0 += 1 }
                    Thread.sleep(forTimeInterval: 0.0002)
                }
                return
            }
            for index in 0..<perThread {
                do {
                    let (lsn, epoch) = try gate.withLock { last throws -> (UInt64, Int) in
                        if wal.failed != nil, wal.isRepairable { last = try wal.repair() }
                        let epoch = try wal.append(Self.record(thread: thread, index: index), lastLSN: last + 1)
                        last += 1
                        return (last, epoch)
                    }
                    try wal.waitUntilDurable(lsn, epoch: epoch)
                    acknowledged.withLock { _ = $0.insert([thread, index]) }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(polls.withLock { $0 } > 0)
        return (acknowledged.withLock { $0 }, errors.withLock { $0 })
    }

    /// Eight committers whose syncs take a little while (as on a disk): every commit returns durable, and
    /// they share syncs.
    @Test func committersOnEightThreadsShareSyncsAndReturnOnlyOnceDurable() throws {
        let (memory, _, wal) = try Self.makeWriter(syncTaking: 0.0005)
        let (threads, perThread) = (8, 100)
        let (acknowledged, errors) = Self.commit(wal, threads: threads, perThread: perThread)
        #expect(errors == [])
        #expect(acknowledged.count == threads * perThread)
        #expect(wal.syncs < threads * perThread / 2, "\(wal.syncs) syncs for \(threads * perThread) commits")
        #expect(wal.size == UInt64(threads * perThread * Self.recordSize))
        #expect(try Self.durableRecords(memory) == acknowledged)
        wal.close()
    }

    /// Syncs that fail now and then, under eight committers: each failure fails every committer waiting on
    /// it, the next committer repairs the log, and every commit that returned is durable.
    @Test func failedSyncsFailTheirWaitersAndEveryReturnedCommitIsDurable() throws {
        let (memory, faulty, wal) = try Self.makeWriter(syncTaking: 0.0003)
        for skip in [5, 20, 40, 70] { faulty.inject(.init(on: [.sync], after: skip)) }
        let (threads, perThread) = (8, 60)
        let (acknowledged, errors) = Self.commit(wal, threads: threads, perThread: perThread)
        #expect(!errors.isEmpty)
        #expect(acknowledged.count + errors.count == threads * perThread)
        try wal.syncAll()
        #expect(try Self.durableRecords(memory).isSuperset(of: acknowledged))
        wal.close()
    }

    /// A committer that leads a sync first waits for a writer on its way to append (at most as long as the last sync
    /// took), so that both commits share one sync. Without the wait the leader would sync alone, 20 ms before the
    /// other writer appends, and that writer would need a third sync.
    @Test func aLeaderWaitsForAWriterOnItsWayAndBothShareOneSync() throws {
        let (memory, _, wal) = try Self.makeWriter(syncTaking: 0.2)
        // A first commit times a sync: how long a leader may wait.
        let firstEpoch = try wal.append(Self.record(thread: 0, index: 0), lastLSN: 1)
        try wal.waitUntilDurable(1, epoch: firstEpoch, gathering: true)
        #expect(wal.syncs == 1)

        wal.writerArrives()
        let epoch = try wal.append(Self.record(thread: 1, index: 0), lastLSN: 2)
        let errors = Lock<[String]>([])
        runOnThreads(2) { thread in
            do {
                if thread == 0 {
                    try wal.waitUntilDurable(2, epoch: epoch, gathering: true)
                } else {
                    Thread.sleep(forTimeInterval: 0.02)
                    let late = try wal.append(Self.record(thread: 2, index: 0), lastLSN: 3)
                    wal.writerLeaves()
                    try wal.waitUntilDurable(3, epoch: late, gathering: true)
                }
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        #expect(errors.withLock { $0 } == [])
        #expect(wal.syncs == 2, "the leader synced before the arriving writer appended")
        #expect(try Self.durableRecords(memory) == [[0, 0], [1, 0], [2, 0]])
        wal.close()
    }

    /// A writer counted as arriving that never appends (it holds the gate for a long transaction) keeps a leader
    /// waiting no longer than a sync takes: the commit still becomes durable, with one sync of its own.
    @Test func aWriterThatDoesNotAppendDelaysTheLeaderOnlyBriefly() throws {
        let (memory, _, wal) = try Self.makeWriter(syncTaking: 0.01)
        let firstEpoch = try wal.append(Self.record(thread: 0, index: 0), lastLSN: 1)
        try wal.waitUntilDurable(1, epoch: firstEpoch, gathering: true)
        wal.writerArrives()
        let epoch = try wal.append(Self.record(thread: 1, index: 0), lastLSN: 2)
        try wal.waitUntilDurable(2, epoch: epoch, gathering: true)
        #expect(wal.syncs == 2)
        #expect(try Self.durableRecords(memory) == [[0, 0], [1, 0]])
        wal.writerLeaves()
        wal.close()
    }
}
