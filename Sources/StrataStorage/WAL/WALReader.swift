import StrataFormat
import StrataIO

/// Reads a log file record by record, verifying each, and reports where and why the valid prefix ends.
///
/// The reader never decides what an invalid record means: a torn tail after a crash and damage in the
/// middle look the same to it. It stops at the first record that fails (bad header, length past the end
/// of the file, checksum, or an LSN out of sequence) and says so in the ``Summary``; recovery decides.
/// Zero bytes where a record is due are the log's reserved space (FORMAT.md §3.3), not a record that fails.
struct WALReader {
    struct Summary {
        var header: WALFileHeader
        var fileSize: UInt64
        /// The end of the last valid record.
        var validEnd: UInt64
        /// The LSN of the last valid record (startLSN - 1 when there is none).
        var lastLSN: UInt64
        var recordCount: Int
        /// Why reading stopped before the end of the file (or of its reserved space), if it did.
        var stopReason: String?
        /// The zero bytes after the last valid record that end the file: space written ahead of appends.
        var reservedBytes: UInt64 = 0

        /// Where the file's content ends: its size, less the reserved space at its end.
        var contentEnd: UInt64 { fileSize - reservedBytes }
    }

    /// How a read tells reserved space (FORMAT.md §3.3) from a tail that must be cut.
    enum ReserveCheck {
        /// Zero bytes where a record header is due end the log. Enough while every writer that might have left
        /// something is a process that died, not a machine: a write fills the file in order, so whatever a killed
        /// writer left starts with a record header (catching up with other processes).
        case header
        /// Every byte up to the end of the file must be zero: after a power loss, pages written later may have reached
        /// the disk while earlier ones did not (recovery, verification).
        case wholeTail
    }

    let file: any FileHandle
    private static let chunkSize = 1 << 20

    /// Reads and verifies the file header.
    func readHeader() throws -> WALFileHeader {
        let bytes: [UInt8]
        do { bytes = try file.read(count: WALFormat.fileHeaderSize, at: 0) } catch { throw StorageError.io(error) }
        do {
            return try bytes.withUnsafeBytes { (buffer) throws(FormatError) in try WALFileHeader.decode(buffer) }
        } catch { throw StorageError.corrupt(file.path, at: 0, "WAL header: \(error)") }
    }

    /// Calls `body` with every valid record in order (its header, its payload and its offset).
    func read(
        reserve: ReserveCheck = .wholeTail, _ body: (WALRecord.Header, UnsafeRawBufferPointer, UInt64) throws -> Void
    ) throws -> Summary {
        let header = try readHeader()
        return try read(
            from: UInt64(WALFormat.fileHeaderSize), header: header, previousLSN: header.startLSN - 1, reserve: reserve,
            body)
    }

    /// Calls `body` with every valid record from `offset` on (where a record of LSN `previousLSN + 1` must start):
    /// how a store catches up with records another process appended since it last looked. The file may grow or
    /// shrink meanwhile (another writer appending, or cutting back a torn tail): reading stops at whatever it finds
    /// incomplete, and says why.
    func read(
        from offset: UInt64, header: WALFileHeader, previousLSN: UInt64, reserve: ReserveCheck,
        _ body: (WALRecord.Header, UnsafeRawBufferPointer, UInt64) throws -> Void
    ) throws -> Summary {
        let fileSize: UInt64
        do { fileSize = try file.size() } catch { throw StorageError.io(error) }
        var summary = Summary(
            header: header, fileSize: fileSize, validEnd: offset, lastLSN: previousLSN, recordCount: 0,
            stopReason: nil)
        var buffer = ReadBuffer(file: file)
        var offset = offset
        let headerSize = UInt64(WALFormat.recordHeaderSize)
        while offset < fileSize {
            if try buffer.isReserved(from: offset, fileSize: fileSize, check: reserve) {
                summary.reservedBytes = fileSize - offset
                break
            }
            guard fileSize - offset >= headerSize else {
                summary.stopReason = "\(fileSize - offset) bytes too short for a record header"
                break
            }
            let decoded: WALRecord.Header?
            do {
                decoded = try buffer.withBytes(at: offset, count: WALFormat.recordHeaderSize) {
                    try WALRecord.decodeHeader($0)
                }
            } catch let error as FormatError {
                summary.stopReason = "record header: \(error)"
                break
            }
            guard let recordHeader = decoded else {
                summary.stopReason = "the file shrank while being read"
                break
            }
            let total = headerSize + UInt64(recordHeader.payloadLength)
            guard total <= fileSize - offset else {
                summary.stopReason = "record of \(total) bytes runs past the end of the file"
                break
            }
            guard recordHeader.lsn == summary.lastLSN + 1 else {
                summary.stopReason = "record LSN \(recordHeader.lsn) where \(summary.lastLSN + 1) was due"
                break
            }
            let valid: Bool? = try buffer.withBytes(at: offset, count: Int(total)) { record in
                do {
                    try WALRecord.verify(header: recordHeader, recordBytes: record, salt: header.salt)
                } catch {
                    summary.stopReason = "record LSN \(recordHeader.lsn): \(error)"
                    return false
                }
                try body(recordHeader, UnsafeRawBufferPointer(rebasing: record[WALFormat.recordHeaderSize...]), offset)
                return true
            }
            guard let valid else {
                summary.stopReason = "the file shrank while being read"
                break
            }
            guard valid else { break }
            offset += total
            summary.validEnd = offset
            summary.lastLSN = recordHeader.lsn
            summary.recordCount += 1
        }
        return summary
    }

    /// The end of the last commit record of the log, found by walking the records' headers: only commit records are
    /// read whole and verified (a few bytes each), operation records are stepped over unread. Recovery's first pass
    /// (``Store/open(at:configuration:fileSystem:)``): reading and checksumming every record twice was a quarter of W10's open.
    ///
    /// An operation record is not verified here, so the end may lie past a damaged one; the replay that follows verifies
    /// every record and, should it stop inside a transaction it took for committed, replays again without this end
    /// (``LogReplay/appliedUncommittedInPlace``).
    func committedEnd() throws -> UInt64 {
        let header = try readHeader()
        let fileSize: UInt64
        do { fileSize = try file.size() } catch { throw StorageError.io(error) }
        var buffer = ReadBuffer(file: file)
        var offset = UInt64(WALFormat.fileHeaderSize)
        var lastLSN = header.startLSN - 1
        var end: UInt64 = 0
        let headerSize = UInt64(WALFormat.recordHeaderSize)
        /// Bytes read when a header is not in the window: little after a large record (only its successor's header and
        /// perhaps a commit record are wanted there), a whole chunk among small ones.
        var refill = Self.chunkSize
        while fileSize - offset >= headerSize {
            let decoded: WALRecord.Header?
            do {
                decoded = try buffer.withBytes(at: offset, count: WALFormat.recordHeaderSize, refill: refill) {
                    try WALRecord.decodeHeader($0)
                }
            } catch is FormatError { break }
            guard let record = decoded, record.lsn == lastLSN + 1 else { break }
            let total = headerSize + UInt64(record.payloadLength)
            guard total <= fileSize - offset else { break }
            if record.type == .commit {
                let valid: Bool? = try buffer.withBytes(at: offset, count: Int(total), refill: refill) { bytes in
                    (try? WALRecord.verify(header: record, recordBytes: bytes, salt: header.salt)) != nil
                }
                guard valid == true else { break }
                end = offset + total
            }
            refill = total > Self.chunkSize / 16 ? Self.smallRefill : Self.chunkSize
            offset += total
            lastLSN = record.lsn
        }
        return end
    }

    /// What ``committedEnd()`` reads past a large record: a header, and a commit record after it.
    private static let smallRefill = 4 << 10

    /// A window over the file, refilled in large reads so that small records cost no system call each. Its buffer is
    /// reused by every refill: a new megabyte per refill cost its zeroing and a page fault per 4 KiB (W10: about 5% of
    /// opening a store after a crash).
    private struct ReadBuffer {
        let file: any FileHandle
        var bytes: [UInt8] = []
        /// The file offset of `bytes[0]`.
        var start: UInt64 = 0
        /// How many bytes of `bytes` hold the file's.
        var filled = 0
        /// The most a refill reads: small at first, doubling to ``WALReader/chunkSize``, so that catching up with a
        /// few new records does not read the log's reserved space whole (FORMAT.md §3.3).
        private var growth = 64 << 10

        init(file: any FileHandle) { self.file = file }

        /// Whether the bytes from `offset` are reserved space: zeros where a record header is due and, with
        /// `.wholeTail`, up to `fileSize`.
        mutating func isReserved(from offset: UInt64, fileSize: UInt64, check: ReserveCheck) throws -> Bool {
            let headerBytes = Int(min(fileSize - offset, UInt64(WALFormat.recordHeaderSize)))
            guard try withBytes(at: offset, count: headerBytes, { Self.isZero($0) }) == true else { return false }
            guard check == .wholeTail else { return true }
            var position = offset
            while position < fileSize {
                let count = Int(min(fileSize - position, UInt64(WALReader.chunkSize)))
                guard try withBytes(at: position, count: count, refill: count, { Self.isZero($0) }) == true else {
                    return false
                }
                position += UInt64(count)
            }
            return true
        }

        private static func isZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
            var index = 0
            while index + 8 <= bytes.count {
                if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { return false }
                index += 8
            }
            while index < bytes.count {
                if bytes[index] != 0 { return false }
                index += 1
            }
            return true
        }

        /// Calls `body` with `count` bytes at `offset`; nil when the file no longer holds them. A refill reads
        /// `refill` bytes from `offset` (at least `count`).
        mutating func withBytes<R>(
            at offset: UInt64, count: Int, refill: Int = WALReader.chunkSize,
            _ body: (UnsafeRawBufferPointer) throws -> R
        ) throws -> R? {
            let end = offset + UInt64(count)
            if offset < start || end > start + UInt64(filled) {
                let wanted = max(count, min(refill, growth))
                growth = min(growth * 2, WALReader.chunkSize)
                if bytes.count < wanted { bytes = [UInt8](repeating: 0, count: wanted) }
                let file = file
                do {
                    filled = try bytes.withUnsafeMutableBytes { buffer in
                        Result { () throws(IOError) -> Int in
                            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset)
                        }
                    }.get()
                } catch {
                    filled = 0
                    throw StorageError.io(error)
                }
                start = offset
                // Fewer bytes than the size said: another writer cut the file back meanwhile.
                guard filled >= count else { return nil }
            }
            let from = Int(offset - start)
            return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[from..<(from + count)])) }
        }
    }
}
