import StrataFormat
import StrataIO

/// Checks the write-ahead log and works out what recovery would do with it, without changing it.
///
/// 1. The file exists and its header verifies, names this store and starts no later than the LSN after
///    the newest checkpoint (otherwise records the checkpoint does not cover are missing).
/// 2. Every record is read in order (``WALReader``). Records the checkpoint covers are counted; after
///    them, committed transactions are what recovery replays, and operation records after the last
///    commit record are a transaction it discards.
/// 3. If reading stops before the end of the file, the rest is searched for a record that verifies (its
///    checksum, with this log's salt, and an LSN after the last valid one). None: a **torn tail**, which
///    recovery cuts (remedy ``VerificationReport/Remedy/recovery``). One: **damage in the middle** of the
///    log: recovery would silently drop that record and every one after it, so nothing repairs it without
///    losing committed data.
/// 4. Optionally each record is applied to a replay of the checkpointed state (``LogReplay``), which also
///    checks that committed records make sense (counts, tables that exist); a record that does not apply
///    is a problem and ends the replay: recovery would refuse to open the store there.
struct LogVerifier {
    let path: String
    let fileSystem: any FileSystem
    let storeID: [UInt8]
    let coveredLSN: UInt64
    /// The largest tail searched for valid records after the first invalid one.
    static let maximumScan: UInt64 = 256 << 20

    /// Verifies the log; `replay` (if given) is advanced through every committed transaction after the
    /// checkpoint. Problems go into `report`, with the log's summary.
    func verify(into report: inout VerificationReport, replay: inout LogReplay?) {
        func problem(_ offset: UInt64?, _ message: String, _ remedy: VerificationReport.Remedy? = nil) {
            report.problems.append(.init(file: path, offset: offset, message: message, remedy: remedy))
        }
        let file: any FileHandle
        do { file = try fileSystem.openFileForReading(at: path) } catch {
            problem(nil, error.code == .noSuchFile ? "the write-ahead log is missing" : "\(error)")
            return
        }
        defer { try? file.close() }
        let reader = WALReader(file: file)
        var summary = VerificationReport.LogSummary()
        let walHeader: WALFileHeader
        do { walHeader = try reader.readHeader() } catch {
            problem(0, "\(error)")
            return
        }
        summary.startLSN = walHeader.startLSN
        guard walHeader.storeID == storeID else {
            problem(16, "the write-ahead log belongs to another store")
            return
        }
        guard walHeader.startLSN <= coveredLSN + 1 else {
            problem(
                32,
                "the log starts at LSN \(walHeader.startLSN) but the newest valid checkpoint covers only up to \(coveredLSN): "
                    + "the checkpoint that emptied the log is damaged or missing")
            return
        }

        var pendingRecords = 0
        var replayFailed = false
        let read: WALReader.Summary
        do {
            read = try reader.read { header, payload, offset in
                summary.records += 1
                if header.lsn <= coveredLSN {
                    summary.coveredRecords += 1
                    if header.type == .commit {
                        summary.committedEnd = offset + UInt64(WALFormat.recordHeaderSize + payload.count)
                    }
                } else if header.type == .operations {
                    pendingRecords += 1
                } else {
                    summary.transactionsToReplay += 1
                    // A hostile count (up to UInt64.max) must not trap: clamp it and saturate the sum.
                    let count = Int(clamping: (try? WALCommit.decode(payload))?.operationCount ?? 0)
                    let (sum, overflow) = summary.operationsToReplay.addingReportingOverflow(count)
                    summary.operationsToReplay = overflow ? Int.max : sum
                    pendingRecords = 0
                    summary.committedEnd = offset + UInt64(WALFormat.recordHeaderSize + payload.count)
                }
                guard !replayFailed, replay != nil else { return }
                do { try replay!.consume(header, payload: payload, offset: offset) } catch {
                    replayFailed = true
                    problem(offset, "recovery would stop here: \(error)")
                }
            }
        } catch {
            problem(nil, "\(error)")
            return
        }
        if summary.committedEnd == 0 { summary.committedEnd = UInt64(WALFormat.fileHeaderSize) }
        summary.fileBytes = read.fileSize
        summary.reservedBytes = read.reservedBytes
        summary.lastLSN = read.lastLSN
        summary.validEnd = read.validEnd
        summary.uncommittedRecords = pendingRecords
        summary.stopReason = read.stopReason
        report.walRecords = read.recordCount
        report.walBytes = read.fileSize

        if let reason = read.stopReason {
            if let (offset, lsn) = validRecord(
                in: file, after: read.validEnd, fileSize: read.fileSize, lastLSN: read.lastLSN, salt: walHeader.salt)
            {
                summary.validRecordAfterDamage = offset
                problem(
                    read.validEnd,
                    "damage in the middle of the log (\(reason)): a valid record (LSN \(lsn)) follows at offset \(offset); "
                        + "recovery would drop it and everything after the damage")
            } else {
                problem(
                    read.validEnd,
                    "torn tail: \(read.contentEnd - read.validEnd) bytes after the last valid record do not read (\(reason)); "
                        + "recovery discards them", .recovery)
            }
        }
        if pendingRecords > 0 {
            problem(
                summary.committedEnd,
                "a transaction without its commit record (\(pendingRecords) operation records): recovery discards it",
                .recovery)
        }
        report.log = summary
    }

    /// The offset and LSN of the first record after `start` that verifies with this log's salt and has an
    /// LSN past `lastLSN`, if any.
    private func validRecord(
        in file: any FileHandle, after start: UInt64, fileSize: UInt64, lastLSN: UInt64, salt: UInt32
    ) -> (offset: UInt64, lsn: UInt64)? {
        let end = min(fileSize, start + Self.maximumScan)
        guard end > start, let bytes = try? file.read(count: Int(end - start), at: start) else { return nil }
        let headerSize = WALFormat.recordHeaderSize
        return bytes.withUnsafeBytes { all -> (UInt64, UInt64)? in
            var index = 1
            while index + headerSize <= all.count {
                defer { index += 1 }
                let slice = UnsafeRawBufferPointer(rebasing: all[index..<(index + headerSize)])
                guard let header = try? WALRecord.decodeHeader(slice), header.lsn > lastLSN,
                    header.payloadLength <= all.count - index - headerSize
                else { continue }
                let record = UnsafeRawBufferPointer(rebasing: all[index..<(index + headerSize + header.payloadLength)])
                if (try? WALRecord.verify(header: header, recordBytes: record, salt: salt)) != nil {
                    return (start + UInt64(index), header.lsn)
                }
            }
            return nil
        }
    }
}
