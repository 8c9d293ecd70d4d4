import StrataFormat
import StrataIO
import StrataStorage
import StrataTestSupport
import Testing

/// Every single-byte flip in a log holding commits not yet checkpointed: the log header is checked (a
/// typed error), and a damaged record ends the log there, so the store comes back as exactly the state
/// before the transaction the damaged record belongs to: never a mix of transactions.
@Suite struct WALCorruptionTests {
    private let walPath = TemporaryStore.wal()
    private let pagePath = TemporaryStore.pageFile()

    /// A store with a checkpoint and then `transactions` more commits, crashed (nothing checkpointed after).
    private func makeStore(
        transactions: Int
    ) throws -> (image: InMemoryFileSystem, models: [ReferenceModel], ends: [UInt64]) {
        let fileSystem = TemporaryStore.makeFileSystem()
        let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
        var workload = RandomWorkload(seed: 0x3A1, pageSize: 512)
        workload.largeValueSize = 800
        for _ in 0..<15 { try workload.runTransaction(on: store) }
        try store.checkpoint()
        var models = [workload.model]
        var ends = [UInt64(WALFormat.fileHeaderSize)]
        while models.count <= transactions {
            if try workload.runTransaction(on: store) {
                models.append(workload.model)
                ends.append(store.statistics.walBytes)
            }
        }
        let image = fileSystem.crashImage()
        try store.close()
        return (image, models, ends)
    }

    @Test func everyByteFlipInTheLogIsAnErrorOrDropsTheTailFromItsTransaction() throws {
        let (image, models, ends) = try makeStore(transactions: 12)
        let log = try image.contentsOfFile(at: walPath)
        let pages = try image.contentsOfFile(at: pagePath)
        let recordsEnd = Int(ends.last!)
        #expect(try WALLayout(log).recordsEnd == ends.last)
        #expect(try WALLayout.endsInReservedSpace(log), "zeros follow the records")
        var errors = 0
        var prefixLengths: [Int: Int] = [:]
        var failures = 0
        // Every byte of the records, and bytes of the reserved space after them: its first, the last of a record
        // header's worth, the first after that, its last.
        let reserved = [
            recordsEnd, recordsEnd + WALFormat.recordHeaderSize - 1, recordsEnd + WALFormat.recordHeaderSize,
        ]
        let offsets = Array(0..<recordsEnd) + (reserved + [log.count - 1]).filter { $0 < log.count }
        for offset in offsets where failures < 10 {
            var damaged = log
            damaged[offset] ^= 1 << UInt8(offset % 8)
            let fileSystem = TemporaryStore.makeFileSystem()
            try fileSystem.setContents(pages, of: pagePath)
            try fileSystem.setContents(damaged, of: walPath)
            // The transaction whose records hold the byte: everything before it must survive (all of them, when the
            // byte is in the reserved space: a damaged reserve is a tail to cut, never a reason to drop commits).
            let transaction = ends.firstIndex { UInt64(offset) < $0 } ?? ends.count
            let context = "flip of log byte \(offset) (transaction \(transaction))"
            let store: Store
            do { store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512)) } catch let error
                as StorageError
            {
                guard case .corruption = error, offset < WALFormat.fileHeaderSize else {
                    Issue.record("\(context): open failed with \(error)")
                    failures += 1
                    continue
                }
                errors += 1
                continue
            }
            if offset < WALFormat.fileHeaderSize {
                Issue.record("\(context): a damaged log header was accepted")
                failures += 1
            }
            let state = try ReferenceModel.capture(store.snapshot())
            guard let survived = models.firstIndex(where: { $0.tables == state.tables }) else {
                Issue.record("\(context): the recovered state is no prefix of the commits (a mix, or wrong data)")
                failures += 1
                try store.close()
                continue
            }
            if survived != transaction - 1 {
                Issue.record("\(context): recovered \(survived) transactions, expected \(transaction - 1)")
                failures += 1
            }
            if store.recoveryReport.logStopReason == nil {
                Issue.record("\(context): recovery did not report where the log stopped")
                failures += 1
            }
            if !(try store.verify().isClean) {
                Issue.record("\(context): verify after recovery is not clean")
                failures += 1
            }
            prefixLengths[survived, default: 0] += 1
            try store.close()
        }
        print(
            "WALCorruptionTests: \(log.count) flips: \(errors) typed errors (log header), "
                + "\(prefixLengths.values.reduce(0, +)) recovered a prefix; "
                + "transactions kept -> flips: \(prefixLengths.sorted { $0.key < $1.key })"
        )
        #expect(errors == WALFormat.fileHeaderSize)
    }

    /// Records whose checksums are right but whose contents cannot be: recovery reports corruption
    /// rather than applying them or dropping them silently.
    @Test func recordsWithValidChecksumsButImpossibleContentsAreCorruption() throws {
        let (image, _, _) = try makeStore(transactions: 3)
        let log = try image.contentsOfFile(at: walPath)
        let layout = try WALLayout(log)
        let salt = layout.header.salt
        let nextLSN = layout.records.last!.lsn + 1

        /// The log with one more transaction made of `operations`, its commit record saying `commit`.
        func withTransaction(_ operations: [[UInt8]], commit: WALCommit? = nil) -> [UInt8] {
            var writer = ByteWriter()
            var lsn = nextLSN
            for payload in operations {
                payload.withUnsafeBytes {
                    WALRecord.append(type: .operations, lsn: lsn, payload: $0, salt: salt, to: &writer)
                }
                lsn += 1
            }
            let counts = commit ?? WALCommit(operationRecordCount: UInt32(operations.count), operationCount: 1)
            counts.encoded().withUnsafeBytes {
                WALRecord.append(type: .commit, lsn: lsn, payload: $0, salt: salt, to: &writer)
            }
            // Written where the writer writes: over the reserved space after the records.
            var result = log
            let start = Int(layout.recordsEnd)
            result.replaceSubrange(start..<min(result.count, start + writer.count), with: writer.bytes)
            return result
        }
        func encoded(_ operation: WALOperation) -> [UInt8] {
            var writer = ByteWriter()
            operation.encode(into: &writer)
            return writer.bytes
        }
        let existing = try Store.openForTesting(image.crashImage(), configuration: .testing(pageSize: 512))
        let table = existing.snapshot().table(named: existing.snapshot().tableNames[0])!
        try existing.close()
        var cases: [(String, [UInt8])] = [
            (
                "a put into a table that does not exist",
                withTransaction([encoded(.put(tableID: 999, rowID: 1, value: [1]))])
            ),
            ("a delete in a table that does not exist", withTransaction([encoded(.delete(tableID: 999, rowID: 1))])),
            ("a drop of a table that does not exist", withTransaction([encoded(.dropTable(tableID: 999))])),
            ("an unknown operation tag", withTransaction([[9, 1, 0, 0, 0]])),
            (
                "an operation cut short",
                withTransaction([Array(encoded(.put(tableID: table.rawValue, rowID: 1, value: [1, 2, 3])).dropLast())])
            ),
            (
                "a commit naming more records than the log has",
                withTransaction(
                    [encoded(.delete(tableID: table.rawValue, rowID: 1))],
                    commit: WALCommit(operationRecordCount: 2, operationCount: 1)
                )
            ),
            (
                "a commit naming more operations than the log has",
                withTransaction(
                    [encoded(.delete(tableID: table.rawValue, rowID: 1))],
                    commit: WALCommit(operationRecordCount: 1, operationCount: 5)
                )
            ),
            (
                "a second table of an existing name",
                withTransaction([encoded(.createTable(tableID: 500, name: existingName(image)))])
            ),
            (
                "a table created over an existing ID",
                withTransaction([encoded(.createTable(tableID: table.rawValue, name: "new"))])
            ),
        ]
        // An existing commit record edited in place, its checksum fixed: it names one operation too many.
        var edited = log
        let lastCommit = layout.commitRecords.last!
        let countOffset = Int(lastCommit.offset) + WALFormat.recordHeaderSize + 4
        edited[countOffset] &+= 1
        WALLayout.recomputeChecksum(ofRecordAt: Int(lastCommit.offset), in: &edited, salt: salt)
        #expect(try WALLayout(edited).records.count == layout.records.count, "the edited record verifies")
        cases.append(("an existing commit record whose operation count was changed", edited))
        for (what, bytes) in cases {
            let fileSystem = image.crashImage()
            try fileSystem.replaceContentsOfFile(at: walPath, with: bytes)
            do {
                let store = try Store.openForTesting(fileSystem, configuration: .testing(pageSize: 512))
                Issue.record("\(what): the log was accepted")
                try store.close()
            } catch let error as StorageError {
                guard case .corruption(let file, _, _) = error, file == walPath else {
                    Issue.record("\(what): \(error)")
                    continue
                }
            }
        }
    }

    private func existingName(_ image: InMemoryFileSystem) -> String {
        guard let store = try? Store.openForTesting(image.crashImage(), configuration: .testing(pageSize: 512)) else {
            return "?"
        }
        defer { try? store.close() }
        return store.snapshot().tableNames[0]
    }
}
