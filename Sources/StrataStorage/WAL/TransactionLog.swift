import StrataFormat

/// The log records of one write transaction, until they pass the store's large-transaction size
/// (``StoreConfiguration/largeTransactionBytes``): from then on the transaction is large, its records are
/// dropped and no more are encoded, and it commits by writing its pages instead (FORMAT.md, "Large transactions").
struct TransactionLog {
    private var builder: WALRecordBuilder
    private let largeBytes: UInt64
    /// Whether the records passed the limit: the commit writes pages, not records.
    private(set) var isLarge = false
    /// Whether any operation was appended (large or not): the transaction changed something.
    private(set) var hasChanges = false

    init(salt: UInt32, firstLSN: UInt64, largeBytes: UInt64) {
        self.builder = WALRecordBuilder(salt: salt, firstLSN: firstLSN)
        self.largeBytes = largeBytes
    }

    /// Whether the transaction changed nothing.
    var isEmpty: Bool { !hasChanges }

    /// Appends one operation; `encode` is not called once the transaction is large.
    mutating func appendOperation(_ encode: (inout ByteWriter) -> Void) {
        hasChanges = true
        guard !isLarge else { return }
        builder.appendOperation(encode)
        if UInt64(builder.writer.count) >= largeBytes { becomeLarge() }
    }

    /// Appends a put: one access to the log where a closure around ``appendOperation(_:)`` in a class's method took
    /// two (the dynamic exclusivity check of a class's stored property, about 80 instructions each).
    ///
    /// A put whose records would reach the limit makes the transaction large without being encoded, as
    /// ``appendOperation(_:)`` would right after encoding it (the same count, worked out from the put's size): the
    /// records then never need room past the limit. (Encoded, the put that crossed it grew the buffer by doubling to
    /// twice the limit, 16 MiB, held beside the 8 MiB it grew from and all of it written, to be dropped at once: W1.graph's
    /// largest transient allocation, left as a hole in the heap under the save's peak.)
    mutating func appendPut(tableID: UInt32, rowID: UInt64, value: [UInt8]) {
        guard !isLarge else {
            hasChanges = true
            return
        }
        if UInt64(builder.count(appending: WALOperation.putSize(valueLength: value.count))) >= largeBytes {
            // What encoding would have checked first.
            precondition(value.count <= WALFormat.maximumValueSize)
            hasChanges = true
            becomeLarge()
            return
        }
        value.withUnsafeBytes { bytes in
            appendOperation { WALOperation.encodePut(tableID: tableID, rowID: rowID, value: bytes, into: &$0) }
        }
    }

    /// From now on the transaction is large: its records go, and no more are encoded.
    private mutating func becomeLarge() {
        isLarge = true
        // Frees the records: a large transaction's memory is its changed nodes, not a copy of them.
        builder = WALRecordBuilder(salt: builder.salt, firstLSN: builder.nextLSN)
    }

    /// Seals the records of a transaction that is not large, with its commit record.
    mutating func finish() -> (bytes: [UInt8], commitLSN: UInt64) {
        precondition(!isLarge, "a large transaction commits by writing pages")
        return builder.finish()
    }
}
