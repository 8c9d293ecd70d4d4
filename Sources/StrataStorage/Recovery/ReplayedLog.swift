import StrataFormat
import StrataIO

/// The log a recovery at open replayed, kept open on a handle of its own: the tables the recovery leaves pending
/// (``PendingTables``) read their puts from it again when they are built, instead of open copying every row it read.
/// Copying them into fresh memory was most of W10's open (a page fault per 4 KiB of log); the store's writer may move
/// on to a new log meanwhile (closing its own handle), and this handle still reads the file recovery read.
///
/// A record is verified again when it is read back (its header, its LSN and its checksum): a log another process cut
/// back since (FORMAT.md §11.5) is reported, never misread.
final class ReplayedLog: Sendable {
    let path: String
    private let file: any FileHandle
    private let salt: UInt32

    init(file: any FileHandle, path: String, salt: UInt32) {
        self.file = file
        self.path = path
        self.salt = salt
    }

    deinit { try? file.close() }

    /// Reads the operation record at `offset` back into `buffer` (reused from call to call), checks that it is the
    /// record recovery read there (LSN `lsn`, a payload of `length` bytes, a valid checksum), and calls `body` with
    /// its payload.
    ///
    /// - Throws: ``StorageError/io(_:)``; ``StorageError/corruption(file:offset:reason:)`` when the record reads back
    ///   otherwise; or what `body` throws.
    func withPayload<R>(
        at offset: UInt64, lsn: UInt64, length: Int, buffer: inout [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        let total = WALFormat.recordHeaderSize + length
        if buffer.count < total { buffer = [UInt8](repeating: 0, count: total) }
        let file = file
        let read: Int
        do {
            read = try buffer.withUnsafeMutableBytes { bytes in
                try Result { () throws(IOError) -> Int in
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<total]), at: offset)
                }.get()
            }
        } catch let error as IOError { throw StorageError.io(error) }
        let salt = salt
        let changed = { (reason: String) in
            StorageError.corrupt(
                self.path, at: offset, "operation record LSN \(lsn), replayed at open, reads back otherwise: \(reason)")
        }
        guard read == total else { throw changed("the log is shorter now") }
        return try buffer.withUnsafeBytes { bytes in
            let record = UnsafeRawBufferPointer(rebasing: bytes[..<total])
            do {
                let header = try WALRecord.decodeHeader(record)
                guard header.lsn == lsn, header.payloadLength == length, header.type == .operations else {
                    throw changed("another record lies there")
                }
                try WALRecord.verify(header: header, recordBytes: record, salt: salt)
            } catch let error as FormatError { throw changed("\(error)") }
            return try body(UnsafeRawBufferPointer(rebasing: record[WALFormat.recordHeaderSize...]))
        }
    }
}
