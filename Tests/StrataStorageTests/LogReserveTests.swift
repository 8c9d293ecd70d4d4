import Foundation
import Logging
import StrataFormat
import StrataIO
import StrataTestSupport
import Testing

@testable import StrataStorage

/// The log's reserved space (FORMAT.md §3.3): zeros written ahead of the records, which later commits write over, so
/// that their syncs do not also commit a new file size. The reserve never holds anything a reader takes for a record,
/// and whatever a writer or a crash leaves in it is cut off as a torn tail is.
@Suite struct LogReserveTests {
    private let walPath = TemporaryStore.wal()

    static func configuration(reserve: UInt64 = 1 << 20) -> StoreConfiguration {
        var configuration = StoreConfiguration.testing(pageSize: 512)
        configuration.logReserveBytes = reserve
        return configuration
    }

    /// A writer of a new log on an in-memory file system, reserving at most `maximum` bytes ahead.
    static func makeWriter(maximum: UInt64) throws -> (InMemoryFileSystem, WALWriter) {
        let memory = InMemoryFileSystem()
        let header = UInt64(WALFormat.fileHeaderSize)
        let handle = try memory.openFile(at: "/wal", mode: .createNew)
        try handle.write([UInt8](repeating: 7, count: Int(header)), at: 0)
        let writer = WALWriter(
            handle: handle, salt: 1, endOffset: header, reservedEnd: header, lastLSN: 0, maximumReserve: maximum,
            repairsFailedSyncs: true)
        return (memory, writer)
    }

    @Test func anAppendPastTheReserveWritesTheNextOneAndAppendsInsideItWriteOverIt() throws {
        let (memory, writer) = try Self.makeWriter(maximum: 256 << 10)
        _ = try writer.append([UInt8](repeating: 1, count: 100), lastLSN: 1)
        // 48 + 100 bytes of log, then at least 64 KiB of zeros, the file ending on a 4 KiB boundary.
        let first = try #require(memory.fileSize(of: "/wal"))
        #expect(first == 69_632, "148 + 64 KiB, rounded up to 4 KiB")
        #expect(writer.size == 148)
        _ = try writer.append([UInt8](repeating: 2, count: 1_000), lastLSN: 2)
        #expect(memory.fileSize(of: "/wal") == first, "written over the reserve: the file keeps its size")
        let bytes = try #require(memory.contents(of: "/wal"))
        #expect(bytes[148..<1_148].allSatisfy { $0 == 2 })
        #expect(bytes[1_148...].allSatisfy { $0 == 0 })
        // An append that passes the reserve reserves as much as the log holds, up to the maximum.
        _ = try writer.append([UInt8](repeating: 3, count: 100_000), lastLSN: 3)
        let end = writer.size
        let second = try #require(memory.fileSize(of: "/wal"))
        #expect(second >= end + end && second % 4_096 == 0)
        _ = try writer.append([UInt8](repeating: 4, count: 400_000), lastLSN: 4)
        let third = try #require(memory.fileSize(of: "/wal"))
        #expect(third - writer.size >= 256 << 10 && third - writer.size < (256 << 10) + 4_096, "at most the maximum")
    }

    @Test func noReserveWritesOnlyRecords() throws {
        let (memory, writer) = try Self.makeWriter(maximum: 0)
        _ = try writer.append([UInt8](repeating: 1, count: 100), lastLSN: 1)
        #expect(memory.fileSize(of: "/wal") == 148)
    }

    /// A failed write inside the reserve may have left part of its records there: the file is cut back to where the
    /// write began, and the next append writes a new reserve.
    @Test func aFailedWriteInsideTheReserveCutsTheFileBackToItsRecords() throws {
        let memory = InMemoryFileSystem()
        let faulty = FaultInjectingFileSystem(wrapping: memory)
        let header = UInt64(WALFormat.fileHeaderSize)
        let handle = try faulty.openFile(at: "/wal", mode: .createNew)
        try handle.write([UInt8](repeating: 7, count: Int(header)), at: 0)
        let writer = WALWriter(
            handle: handle, salt: 1, endOffset: header, reservedEnd: header, lastLSN: 0, maximumReserve: 1 << 20,
            repairsFailedSyncs: true)
        _ = try writer.append([UInt8](repeating: 1, count: 100), lastLSN: 1)
        faulty.inject(FaultInjectingFileSystem.Fault(on: [.write], pathContaining: "wal"))
        #expect(throws: StorageError.self) { _ = try writer.append([UInt8](repeating: 2, count: 50), lastLSN: 2) }
        faulty.clearFaults()
        #expect(memory.fileSize(of: "/wal") == 148)
        _ = try writer.append([UInt8](repeating: 3, count: 50), lastLSN: 2)
        let bytes = try #require(memory.contents(of: "/wal"))
        #expect(bytes.count > 198 && bytes[148..<198].allSatisfy { $0 == 3 } && bytes[198...].allSatisfy { $0 == 0 })
    }

    /// Commits write over the reserve, a crash keeps them, and neither verification nor recovery takes the reserve for
    /// a torn tail.
    @Test func commitsInTheReserveSurviveACrashAndRecoveryKeepsTheReserve() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: Self.configuration())
        let table = try store.write { try $0.createTable(named: "t") }
        var rows: [RowID: [UInt8]] = [:]
        for index in 0..<200 {
            let value = Array("row \(index)".utf8)
            rows[try store.write { try $0.insert(value, into: table) }] = value
        }
        let sizeBefore = try #require(fileSystem.fileSize(of: walPath))
        let recordsEnd = store.statistics.walBytes
        #expect(sizeBefore > recordsEnd, "the log holds a reserve")
        let crashed = fileSystem.crashImage()
        store.closeWithoutCheckpoint()

        // Verification (fsck) of the crashed store: the reserve is no torn tail.
        let reader = try ReadOnlyStore.open(at: TemporaryStore.directory, fileSystem: crashed)
        let verification = reader.verify()
        reader.close()
        #expect(verification.isClean, "\(verification)")
        #expect(verification.log?.reservedBytes == sizeBefore - recordsEnd)
        #expect(verification.log?.discardedBytes == 0)
        #expect(verification.log?.transactionsToReplay == 201)

        let recovered = try Store.openForTesting(crashed, configuration: Self.configuration())
        #expect(recovered.recoveryReport.discardedLogBytes == 0)
        #expect(recovered.recoveryReport.logStopReason == nil)
        #expect(recovered.recoveryReport.replayedTransactions == 201)
        for (row, value) in rows { #expect(try recovered.snapshot().row(row, in: table) == value) }
        try recovered.close()
    }

    /// A writer killed in the middle of its write leaves records without a commit record at the start of the reserve.
    /// The next writer, even of the same open, finds them (a record header where zeros were due) and cuts them off
    /// before it appends; nothing of them is ever read as committed.
    @Test func recordsADeadWriterLeftInTheReserveAreCutByTheNextWriter() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: Self.configuration())
        let table = try store.write { try $0.createTable(named: "t") }
        let kept = try store.write { try $0.insert([1], into: table) }
        let end = store.statistics.walBytes
        let lsn = store.statistics.lastLSN
        // An operations record of the next LSN, as a killed writer's first record, where the reserve begins.
        let layout = try WALLayout(try fileSystem.contentsOfFile(at: walPath))
        var writer = ByteWriter()
        var operation = ByteWriter()
        WALOperation.put(tableID: table.rawValue, rowID: 99, value: [9, 9]).encode(into: &operation)
        operation.bytes.withUnsafeBytes {
            WALRecord.append(type: .operations, lsn: lsn + 1, payload: $0, salt: layout.header.salt, to: &writer)
        }
        let handle = try fileSystem.openFile(at: walPath, mode: .existing)
        try handle.write(writer.bytes, at: end)
        try handle.close()

        let next = try store.write { try $0.insert([2], into: table) }
        let crashed = fileSystem.crashImage()
        store.closeWithoutCheckpoint()
        let reopened = try Store.openForTesting(crashed, configuration: Self.configuration())
        defer { try? reopened.close() }
        #expect(try reopened.snapshot().row(kept, in: table) == [1])
        #expect(try reopened.snapshot().row(next, in: table) == [2])
        #expect(try reopened.snapshot().row(RowID(99), in: table) == nil, "the dead writer's put was cut off")
        #expect(reopened.recoveryReport.discardedLogBytes == 0)
    }

    /// After a power loss, a page written later may be on disk while an earlier one is not: non-zero bytes past a
    /// record header's worth of zeros. Recovery reads the whole tail, cuts it, and commits after it read back.
    @Test func bytesAPowerLossLeftPastZerosAreCutByRecovery() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: Self.configuration())
        let table = try store.write { try $0.createTable(named: "t") }
        let kept = try store.write { try $0.insert([1], into: table) }
        let end = Int(store.statistics.walBytes)
        let crashed = fileSystem.crashImage()
        store.closeWithoutCheckpoint()
        var log = try crashed.contentsOfFile(at: walPath)
        #expect(log.count > end + 4_096)
        log[end + 4_096] = 0xAB
        try crashed.replaceContentsOfFile(at: walPath, with: log)

        let recovered = try Store.openForTesting(crashed, configuration: Self.configuration())
        #expect(recovered.recoveryReport.logStopReason != nil)
        #expect(recovered.recoveryReport.discardedLogBytes == UInt64(log.count - end))
        #expect(try recovered.snapshot().row(kept, in: table) == [1])
        let after = try recovered.write { try $0.insert([2], into: table) }
        let again = crashed.crashImage()
        recovered.closeWithoutCheckpoint()
        let reopened = try Store.openForTesting(again, configuration: Self.configuration())
        defer { try? reopened.close() }
        #expect(try reopened.snapshot().row(after, in: table) == [2])
        #expect(try WALLayout.endsInReservedSpace(again.contentsOfFile(at: walPath)))
        #expect(try reopened.verify().isClean)
    }

    /// Two opens of one store (as two processes) take turns committing: each writes over the reserve the other wrote,
    /// and each reads the other's commits.
    @Test func twoOpensCommitInTurnOverOneReserve() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let a = try Store.openForTesting(fileSystem, configuration: Self.configuration())
        let b = try Store.openForTesting(fileSystem, configuration: Self.configuration())
        let table = try a.write { try $0.createTable(named: "t") }
        let reserved = try #require(fileSystem.fileSize(of: walPath))
        var rows: [(RowID, [UInt8])] = []
        for index in 0..<50 {
            let store = index % 2 == 0 ? a : b
            let value = Array("turn \(index)".utf8)
            rows.append((try store.write { try $0.insert(value, into: table) }, value))
        }
        #expect(fileSystem.fileSize(of: walPath) == reserved, "the first commit's reserve, written over by both")
        #expect(reserved > a.statistics.walBytes)
        for (row, value) in rows {
            #expect(try a.snapshot().row(row, in: table) == value)
            #expect(try b.snapshot().row(row, in: table) == value)
        }
        let crashed = fileSystem.crashImage()
        a.closeWithoutCheckpoint()
        b.closeWithoutCheckpoint()
        let reopened = try Store.openForTesting(crashed, configuration: Self.configuration())
        defer { try? reopened.close() }
        for (row, value) in rows { #expect(try reopened.snapshot().row(row, in: table) == value) }
    }
}
