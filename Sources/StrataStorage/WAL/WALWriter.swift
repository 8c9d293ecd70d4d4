import Foundation
import StrataFormat
import StrataIO

/// Appends transactions to the log and makes them durable, sharing one sync among concurrent
/// committers (group commit).
///
/// Appends come only from the holder of the store's writer gate, one transaction at a time. A committer
/// then waits in ``waitUntilDurable(_:epoch:gathering:)``: the first to arrive becomes the leader and syncs
/// everything appended so far; the others wait for that sync and find themselves covered by it (or lead
/// the next). Before it syncs, a committing leader waits a moment for the commits it can expect (``gatherCommits()``),
/// so that they share its sync rather than wait for the next.
///
/// A failed sync fails every waiter. Linux may drop the dirty pages of a file whose sync failed, so what
/// the log holds past its last successful sync is unknown: when `repairsFailedSyncs` is set (full
/// durability, where nothing past that point was acknowledged) ``repair()`` cuts the log back to that
/// point and the store goes on; otherwise (acknowledged commits may be lost) the writer stays failed
/// until the store is reopened and recovers from what is really on disk.
///
/// Records are written over zeros the file already holds where it can (its reserved space, FORMAT.md §3.3): a sync
/// of a write that extends a file also commits the file's new size through the file system's journal, which made a
/// durable commit about a third slower on ext4 (6,900-7,300 syncs a second appending against 10,150-11,850
/// overwriting, 100-byte writes on this project's test machine). An append that does not fit writes the next reserve
/// of zeros after its records, in the same write.
final class WALWriter: @unchecked Sendable {
    // Safety: every mutable property is read and written with `condition` locked.
    private let condition = NSCondition()
    private var handle: any StrataIO.FileHandle
    private var salt: UInt32
    private var endOffset: UInt64
    /// The end of the file as far as this writer knows: records end at `endOffset`, zeros follow up to here. Only a
    /// hint: a file shorter than it (cut back elsewhere) costs an append that extends it, never a wrong record.
    private var reservedEnd: UInt64
    /// The most zeros one append reserves ahead (``StoreConfiguration/logReserveBytes``).
    private let maximumReserve: UInt64
    private var appendedLSN: UInt64
    private var durableLSN: UInt64
    private var durableEnd: UInt64
    private var syncInProgress = false
    /// Writers of this open that started a transaction (or wait for the gate to start one) and have not yet appended
    /// it or left without a commit.
    private var arriving = 0
    /// The commits each of the last two syncs covered: how many a leader expects to share its sync.
    private var recentBatches: (UInt64, UInt64) = (0, 0)
    /// How long the last sync took: with a floor, the longest a leader waits to gather commits.
    private var lastSyncNanoseconds: UInt64 = 0
    /// While a leader gathers: the LSN it waits to see appended (with no writer arriving).
    private var gatherTarget: UInt64?
    private var failure: StorageError?
    private var failureIsRepairable = false
    /// Changes at every repair: a commit appended before it can never become durable after it.
    private var epoch = 0
    private var syncCount = 0
    private var closed = false
    private let repairsFailedSyncs: Bool
    /// The end of the records other processes appended that this writer followed: a repair never cuts below it.
    private var followedEnd: UInt64 = 0

    init(
        handle: any StrataIO.FileHandle, salt: UInt32, endOffset: UInt64, reservedEnd: UInt64, lastLSN: UInt64,
        maximumReserve: UInt64, repairsFailedSyncs: Bool
    ) {
        self.handle = handle
        self.salt = salt
        self.endOffset = endOffset
        self.reservedEnd = max(reservedEnd, endOffset)
        self.maximumReserve = maximumReserve
        self.appendedLSN = lastLSN
        self.durableLSN = lastLSN
        self.durableEnd = endOffset
        self.repairsFailedSyncs = repairsFailedSyncs
    }

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    /// The salt of the current log file, which every record checksum includes.
    var currentSalt: UInt32 { locked { salt } }
    /// The end of the current log file's records (reserved space follows).
    var size: UInt64 { locked { endOffset } }
    /// The current log file, for reading what other processes appended to it.
    var file: any StrataIO.FileHandle { locked { handle } }
    var syncs: Int { locked { syncCount } }
    /// The error every append and wait reports, if the writer failed.
    var failed: StorageError? { locked { failure } }
    /// Whether ``repair()`` may clear the failure.
    var isRepairable: Bool { locked { failure != nil && failureIsRepairable } }

    /// Appends a transaction's records. On a failed write the log is cut back to where it was, so the
    /// transaction leaves no trace; if even that fails, the writer is failed.
    /// - Returns: the epoch to wait in.
    func append(_ bytes: [UInt8], lastLSN: UInt64) throws -> Int {
        let (file, offset, reserved) = try locked { () throws -> (any StrataIO.FileHandle, UInt64, UInt64) in
            if let failure { throw failure }
            return (handle, endOffset, reservedEnd)
        }
        let end = offset + UInt64(bytes.count)
        let reserve = end <= reserved ? 0 : reserveAhead(of: end)
        do {
            if reserve == 0 {
                try file.write(bytes, at: offset)
            } else {
                try file.write(bytes + repeatElement(0, count: Int(reserve)), at: offset)
            }
        } catch {
            // A write in the reserved space may have left part of its records there: cut them off with the reserve.
            do { try file.truncate(to: offset) } catch let truncation {
                fail(.storeFailed(reason: "log write failed (\(error)) and could not be undone (\(truncation))"))
            }
            locked { reservedEnd = offset }
            throw StorageError.io(error)
        }
        return locked {
            endOffset = end
            if reserve > 0 { reservedEnd = end + reserve }
            appendedLSN = lastLSN
            wakeGatheringLeaderIfDone()
            return epoch
        }
    }

    /// How many zeros to write after records that end at `end`, past the reserved space: as many as the log holds, so
    /// that reserving costs a bounded share of what is written, from 64 KiB up to ``maximumReserve``, ending the file
    /// on a 4 KiB boundary.
    private func reserveAhead(of end: UInt64) -> UInt64 {
        guard maximumReserve > 0 else { return 0 }
        let wanted = min(maximumReserve, max(Self.minimumReserve, end))
        let block: UInt64 = 4_096
        return (end + wanted + block - 1) / block * block - end
    }

    private static let minimumReserve: UInt64 = 64 << 10

    /// Counts a writer that is on its way to append a transaction; it calls ``writerLeaves()`` once it has appended
    /// or gives up.
    func writerArrives() { locked { arriving += 1 } }

    /// Stops counting a writer counted by ``writerArrives()``.
    func writerLeaves() {
        locked {
            arriving -= 1
            wakeGatheringLeaderIfDone()
        }
    }

    /// Wakes a leader gathering commits (``gatherCommits()``) once it has what it waits for.
    private func wakeGatheringLeaderIfDone() {
        if let gatherTarget, arriving == 0, appendedLSN >= gatherTarget { condition.broadcast() }
    }

    /// Returns once every record up to `lsn`, appended in `epoch`, is synced.
    ///
    /// - Parameter gathering: whether a leader first gathers commits (``gatherCommits()``). Committers gather:
    ///   without it, of eight threads committing at once the first to append synced alone and the other seven waited
    ///   for the next sync (four commits a sync instead of eight, W2c). A checkpoint holding the writer gate does
    ///   not: no writer can append while it waits.
    func waitUntilDurable(_ lsn: UInt64, epoch appendEpoch: Int, gathering: Bool = false) throws {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if appendEpoch != epoch {
                throw StorageError.storeFailed(reason: "the log was cut back after a failed sync")
            }
            if durableLSN >= lsn { return }
            if let failure { throw failure }
            if syncInProgress {
                condition.wait()
                continue
            }
            syncInProgress = true
            if gathering { gatherCommits() }
            let (targetLSN, targetEnd, file) = (appendedLSN, endOffset, handle)
            condition.unlock()
            var syncError: IOError?
            let syncStart = DispatchTime.now().uptimeNanoseconds
            do { try file.sync() } catch { syncError = error }
            let syncEnd = DispatchTime.now().uptimeNanoseconds
            condition.lock()
            lastSyncNanoseconds = syncEnd &- syncStart
            syncInProgress = false
            syncCount += 1
            if let syncError {
                failure = .io(syncError)
                failureIsRepairable = repairsFailedSyncs
                condition.broadcast()
                throw StorageError.io(syncError)
            }
            recentBatches = (recentBatches.1, targetLSN > durableLSN ? targetLSN - durableLSN : 0)
            durableLSN = max(durableLSN, targetLSN)
            durableEnd = max(durableEnd, targetEnd)
            condition.broadcast()
        }
    }

    /// Waits, with `condition` locked and as this sync's leader, for the commits it can expect to share the sync: as
    /// many as the larger of the last two syncs covered, and those of every writer on its way to append
    /// (``writerArrives()``). A lone committer expects only its own and never waits. The wait lasts at most as long
    /// as the last sync took, or 0.5 ms if that was less: a writer that holds the gate for long (a large transaction,
    /// a checkpoint inside a write), or committers that stopped, cost the leader at most that.
    private func gatherCommits() {
        let target = durableLSN &+ max(recentBatches.0, recentBatches.1)
        guard arriving > 0 || appendedLSN < target else { return }
        let deadline = Date(timeIntervalSinceNow: Double(max(lastSyncNanoseconds, 500_000)) / 1e9)
        gatherTarget = target
        while arriving > 0 || appendedLSN < target, condition.wait(until: deadline) {}
        gatherTarget = nil
    }

    /// Syncs everything appended so far.
    func syncAll() throws {
        let (lsn, epoch) = locked { (appendedLSN, self.epoch) }
        try waitUntilDurable(lsn, epoch: epoch)
    }

    /// After a failed sync: cuts the log back to the end of its last successful sync and syncs that.
    /// - Returns: the LSN of the last durable record, which the store's state must be rolled back to.
    /// - Throws: ``StorageError/storeFailed(reason:)`` (for good) when another process appended after that point:
    ///   its commits may have been acknowledged, and cutting them off would lose them.
    func repair() throws -> UInt64 {
        try locked {
            precondition(failure != nil && failureIsRepairable && !syncInProgress)
            guard durableEnd >= followedEnd else {
                failureIsRepairable = false
                failure = .storeFailed(
                    reason: "a log sync failed and another process has appended since; reopen the store to recover")
                throw failure!
            }
            do throws(IOError) {
                try handle.truncate(to: durableEnd)
                try handle.sync()
            } catch { throw StorageError.io(error) }
            endOffset = durableEnd
            reservedEnd = durableEnd
            appendedLSN = durableLSN
            failure = nil
            epoch += 1
            return durableLSN
        }
    }

    /// Takes back the records of a commit appended at `offset` that must not stay (its commit notice could not be
    /// posted, FORMAT.md §11.2): cuts them off and rolls the writer back to `lastLSN`. It waits for a sync in flight
    /// (which may cover the records) and cuts under the lock, so that no sync counts them as durable.
    ///
    /// - Throws: ``StorageError/io(_:)`` when the cut fails; the writer is failed for good then.
    func takeBack(to offset: UInt64, lastLSN: UInt64) throws {
        condition.lock()
        defer { condition.unlock() }
        while syncInProgress { condition.wait() }
        do throws(IOError) { try handle.truncate(to: offset) } catch {
            failure = .storeFailed(reason: "a commit could not be taken back (\(error)); reopen the store")
            failureIsRepairable = false
            condition.broadcast()
            throw StorageError.io(error)
        }
        endOffset = offset
        reservedEnd = offset
        appendedLSN = lastLSN
        durableEnd = min(durableEnd, offset)
        durableLSN = min(durableLSN, lastLSN)
    }

    /// Cuts the log back to `offset` (recovery drops a torn tail before appending after it).
    func truncate(to offset: UInt64) throws {
        let file = locked { handle }
        do {
            try file.truncate(to: offset)
            try file.sync()
        } catch { throw StorageError.io(error) }
        locked {
            // Only what follows the last commit is cut: every record appended or followed lies below, synced now.
            endOffset = offset
            reservedEnd = offset
            durableEnd = offset
            durableLSN = appendedLSN
        }
    }

    /// Takes in records another process appended to the current file, up to `end` (the end of its last commit),
    /// the last with LSN `lastLSN`: this writer appends after them. Their durability is their writer's to ensure,
    /// but a later sync here covers them too. `fileSize`: the file's size when they were read (reserved space).
    func follow(endOffset end: UInt64, lastLSN: UInt64, fileSize: UInt64) {
        locked {
            endOffset = end
            reservedEnd = max(end, fileSize)
            appendedLSN = lastLSN
            followedEnd = end
        }
    }

    /// Switches to a new log file another process started with its checkpoint, which covers every record of the
    /// old file (that checkpoint synced them first: commits of ours waiting for a sync are durable). Records in the
    /// new file up to `end`, the last with LSN `lastLSN`, are another process's.
    func adopt(
        _ newHandle: any StrataIO.FileHandle, salt newSalt: UInt32, startLSN: UInt64, endOffset end: UInt64,
        fileSize: UInt64, lastLSN: UInt64
    ) {
        let old: any StrataIO.FileHandle = locked {
            while syncInProgress { condition.wait() }
            let old = handle
            handle = newHandle
            salt = newSalt
            endOffset = end
            reservedEnd = max(end, fileSize)
            durableEnd = UInt64(WALFormat.fileHeaderSize)
            followedEnd = end
            durableLSN = max(durableLSN, startLSN - 1)
            appendedLSN = lastLSN
            condition.broadcast()
            return old
        }
        try? old.close()
    }

    /// Switches to a new, empty log file (after a checkpoint) whose first record will follow `lastLSN` (past the
    /// old log's last record when a large transaction committed in the checkpoint). Everything appended must be
    /// durable.
    func replace(
        with newHandle: any StrataIO.FileHandle, salt newSalt: UInt32, endOffset newEnd: UInt64, lastLSN: UInt64
    ) {
        let old: any StrataIO.FileHandle = locked {
            while syncInProgress { condition.wait() }
            precondition(durableLSN == appendedLSN, "replacing a log that holds records not yet synced")
            precondition(lastLSN >= appendedLSN, "a new log cannot go back before the old one's records")
            let old = handle
            handle = newHandle
            salt = newSalt
            endOffset = newEnd
            reservedEnd = newEnd
            durableEnd = newEnd
            appendedLSN = lastLSN
            durableLSN = lastLSN
            followedEnd = 0
            return old
        }
        try? old.close()
    }

    /// Marks the writer failed for good: every later append and wait throws `error`.
    func fail(_ error: StorageError) {
        locked {
            if failure == nil || failureIsRepairable {
                failure = error
                failureIsRepairable = false
            }
            condition.broadcast()
        }
    }

    /// Closes the log file; later calls do nothing.
    func close() {
        let file: (any StrataIO.FileHandle)? = locked {
            if closed { return nil }
            closed = true
            if failure == nil { failure = .storeClosed }
            failureIsRepairable = false
            condition.broadcast()
            return handle
        }
        try? file?.close()
    }
}
