/// Layout constants of the write-ahead log (FORMAT.md, "Write-ahead log"), shared by its writer and reader.
///
/// ```
/// wal        := fileHeader record*
/// fileHeader := magic[8] version:u32 headerLength:u32 storeID[16] startLSN:u64 salt:u32 checksum:u32   (48 bytes)
/// record     := checksum:u32 payloadLength:u32 type:u8 flags:u8 reserved:u16 lsn:u64 payload[payloadLength]
/// ```
/// All integers are little-endian. A record's checksum is the masked CRC-32C of the file's salt (u32 LE)
/// followed by the record's bytes from offset 4 to its end.
public enum WALFormat {
    /// `0x89 'S' 'W' 'A' 'L' '\r' '\n' 0x1A`.
    public static let magic: [UInt8] = [0x89, 0x53, 0x57, 0x41, 0x4C, 0x0D, 0x0A, 0x1A]
    /// The WAL format version this code writes and reads.
    public static let version: UInt32 = 1
    /// The size of the file header in bytes; the first record starts at this offset.
    public static let fileHeaderSize = 48
    /// The size of a record header in bytes, before its payload.
    public static let recordHeaderSize = 20
    /// The largest payload a record may have; a reader rejects larger lengths before allocating.
    public static let maximumPayloadSize = 1 << 27
    /// Writers cut a transaction's operations into records of about this size.
    public static let targetPayloadSize = 1 << 20
    /// The largest row value: it must fit in one record with its operation header.
    public static let maximumValueSize = (1 << 26)
    /// The longest table name, in UTF-8 bytes; names are also at least 1 byte long.
    public static let maximumTableNameLength = 1024
    /// The largest LSN a reader accepts: far beyond any real log (2^62 records), low enough that a writer
    /// continuing after it can never overflow. A larger LSN in a header or root record is corruption.
    public static let maximumLSN: UInt64 = 1 << 62
}

/// The kind of a WAL record.
public enum WALRecordType: UInt8, Sendable {
    /// Operations of the transaction whose commit record follows.
    case operations = 1
    /// Ends a transaction: it is durable once this record is synced.
    case commit = 2
}
