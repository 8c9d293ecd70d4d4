import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// The log as the store writes and replays it (WAL/WALWriter.swift, WAL/WALReader.swift): records cut
/// at about 1 MiB, values of several MiB, replay after a crash.
@Suite struct WALTests {
    private let walPath = TemporaryStore.wal()

    @Test func transactionLargerThanTheRecordCutReplaysExactly() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        var model = ReferenceModel()
        var random = RepeatableRandomNumberGenerator(seed: 0x1A1)
        let table = try store.write { try $0.createTable(named: "t") }
        model.createTable(named: "t")
        // 2.6 MiB in one transaction: three operations records.
        let values = (0..<2_600).map { _ in random.bytes(Int.random(in: 900...1_100, using: &random)) }
        try store.write { txn in
            for value in values { try txn.insert(value, into: table) }
            try txn.update(RowID(1), in: table, to: [1])
            try txn.delete(RowID(2), from: table)
        }
        for value in values { model.insert(value, into: "t") }
        model.update(RowID(1), in: "t", to: [1])
        model.delete(RowID(2), from: "t")
        let layout = try WALLayout(fileSystem.contentsOfFile(at: walPath))
        let types = layout.records.map(\.type)
        #expect(types.filter { $0 == .operations }.count == 4, "\(types)")
        #expect(types.last == .commit)
        // The table's transaction (operations, commit), then the big one's: two full records, the rest, commit.
        #expect(layout.records.count == 6)
        for record in layout.records[2..<4] {
            #expect(record.size >= UInt64(WALFormat.recordHeaderSize + WALFormat.targetPayloadSize))
        }
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(crashed.recoveryReport.replayedTransactions == 2)
        model.assertMatches(crashed.snapshot(), "replayed")
        #expect(try crashed.verify().isClean)
        try crashed.close()
        // The same transaction cut anywhere inside its records is dropped whole.
        for record in layout.records[2...] {
            let torn = fileSystem.crashImage()
            try torn.truncate(path: walPath, to: record.offset + record.size / 2)
            let recovered = try Store.openForTesting(torn)
            #expect(try recovered.snapshot().rowCount(in: table) == 0, "cut in record \(record.lsn)")
            try recovered.close()
        }
        try store.close()
    }

    @Test func valuesOfSeveralMebibytesSurviveReplayAndCheckpoint() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        var random = RepeatableRandomNumberGenerator(seed: 0x1A2)
        let big = random.bytes(5 << 20)
        let medium = random.bytes(3 << 20 + 17)
        let (table, first, second) = try store.write { txn in
            let table = try txn.createTable(named: "big")
            return (table, try txn.insert(big, into: table), try txn.insert(medium, into: table))
        }
        // Replayed from the log.
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(try crashed.snapshot().row(first, in: table) == big)
        #expect(try crashed.snapshot().row(second, in: table) == medium)
        try crashed.close()
        // Read back from overflow chains.
        try store.close()
        let reopened = try Store.openForTesting(fileSystem)
        #expect(try reopened.snapshot().row(first, in: table) == big)
        #expect(try reopened.snapshot().row(second, in: table) == medium)
        let report = try reopened.verify()
        #expect(report.isClean)
        #expect(report.overflowPages >= (8 << 20) / 4_096)
        try reopened.write { try $0.update(first, in: table, to: [1]) }
        #expect(try reopened.snapshot().row(first, in: table) == [1])
        try reopened.close()
    }

    @Test func largestAllowedValueRoundTrips() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 65_536))
        let value = [UInt8](repeating: 0xAB, count: WALFormat.maximumValueSize)
        let (table, row) = try store.write { txn in
            let table = try txn.createTable(named: "t")
            return (table, try txn.insert(value, into: table))
        }
        let crashed = try Store.openForTesting(fileSystem.crashImage())
        #expect(
            try crashed.snapshot().withRow(row, in: table) { $0.count == value.count && $0.allSatisfy { $0 == 0xAB } }
                == true
        )
        try crashed.close()
        try store.close()
    }

    @Test func recordsFollowEachOtherWithConsecutiveLSNs() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        var workload = RandomWorkload(seed: 0x1A3, pageSize: 4096)
        for _ in 0..<50 { try workload.runTransaction(on: store) }
        let layout = try WALLayout(fileSystem.contentsOfFile(at: walPath))
        #expect(layout.header.storeID == store.storeID)
        #expect(layout.records.first?.lsn == layout.header.startLSN)
        #expect(layout.records.last?.lsn == store.statistics.lastLSN)
        #expect(layout.recordsEnd == store.statistics.walBytes)
        #expect(try WALLayout.endsInReservedSpace(fileSystem.contentsOfFile(at: walPath)), "zeros follow the records")
        #expect(layout.commitRecords.count == store.statistics.commitCount)
        try store.close()
    }

    /// After recovery drops a torn tail, new records are appended where the valid log ends, and the log
    /// reads through them on the next open.
    @Test func commitsAfterATornTailAreReadOnTheNextOpen() throws {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem)
        var workload = RandomWorkload(seed: 0x1A4, pageSize: 4096)
        for _ in 0..<10 { try workload.runTransaction(on: store) }
        try store.checkpoint()
        let checkpointed = workload.model
        try workload.runTransaction(on: store)
        let crashed = fileSystem.crashImage()
        try store.close()
        // Tear the last transaction (the file cut 3 bytes into its records), then append garbage beyond.
        var log = try crashed.contentsOfFile(at: walPath)
        log = Array(log[..<(Int(try WALLayout(log).recordsEnd) - 3)])
        log += [UInt8](repeating: 0xEE, count: 100)
        try crashed.replaceContentsOfFile(at: walPath, with: log)
        let recovered = try Store.openForTesting(crashed)
        checkpointed.assertMatches(recovered.snapshot(), "torn")
        #expect(recovered.recoveryReport.discardedLogBytes > 100)
        #expect(recovered.recoveryReport.logStopReason != nil)
        // New commits on the recovered state.
        let base = try ReferenceModel.capture(recovered.snapshot())
        let table = try recovered.write { try $0.createTable(named: "fresh") }
        let row = try recovered.write { try $0.insert([42], into: table) }
        let reopenedImage = crashed.crashImage()
        try recovered.close()
        let reopened = try Store.openForTesting(reopenedImage)
        var expected = base
        expected.tables["fresh"] = ReferenceModel.Table(id: table, rows: [row.rawValue: [42]], nextRowID: 2)
        #expect(try ReferenceModel.capture(reopened.snapshot()).tables == expected.tables)
        #expect(try reopened.verify().isClean)
        try reopened.close()
    }
}
