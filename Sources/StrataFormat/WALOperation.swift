/// One change inside a transaction, as logged in an `operations` record (FORMAT.md, "Operations").
///
/// ```
/// operation   := tag:u8 body
/// createTable := 1 tableID:u32 nameLength:u16 name[nameLength]          (UTF-8)
/// dropTable   := 2 tableID:u32
/// put         := 3 tableID:u32 rowID:u64 valueLength:u32 value[valueLength]
/// delete      := 4 tableID:u32 rowID:u64
/// reserveRows := 5 tableID:u32 nextRowID:u64          (raises the table's next row ID: reserved IDs)
/// createIndex := 6 descriptor                          (see IndexDescriptor; replay fills it from the table)
/// dropIndex   := 7 indexID:u32
/// ```
public enum WALOperation: Sendable, Equatable {
    /// Creates table `tableID` named `name` (1 to ``WALFormat/maximumTableNameLength`` UTF-8 bytes).
    case createTable(tableID: UInt32, name: String)
    /// Drops table `tableID` and all its rows.
    case dropTable(tableID: UInt32)
    /// Inserts or replaces row `rowID` of table `tableID` with `value` (at most ``WALFormat/maximumValueSize`` bytes).
    case put(tableID: UInt32, rowID: UInt64, value: [UInt8])
    /// Deletes row `rowID` of table `tableID`.
    case delete(tableID: UInt32, rowID: UInt64)
    /// Raises table `tableID`'s next row ID to `nextRowID`, reserving the IDs below it.
    case reserveRows(tableID: UInt32, nextRowID: UInt64)
    /// Creates a secondary index over a table, filled from the table's rows as they are at that point.
    case createIndex(IndexDescriptor)
    /// Drops secondary index `indexID` and all its entries.
    case dropIndex(indexID: UInt32)

    enum Tag: UInt8 {
        case createTable = 1, dropTable = 2, put = 3, delete = 4, reserveRows = 5, createIndex = 6, dropIndex = 7
    }

    /// Appends the encoded operation.
    public func encode(into writer: inout ByteWriter) {
        switch self {
        case .createTable(let tableID, let name):
            Self.encodeCreateTable(tableID: tableID, name: name, into: &writer)
        case .dropTable(let tableID):
            Self.encodeDropTable(tableID: tableID, into: &writer)
        case .put(let tableID, let rowID, let value):
            value.withUnsafeBytes { Self.encodePut(tableID: tableID, rowID: rowID, value: $0, into: &writer) }
        case .delete(let tableID, let rowID):
            Self.encodeDelete(tableID: tableID, rowID: rowID, into: &writer)
        case .reserveRows(let tableID, let nextRowID):
            Self.encodeReserveRows(tableID: tableID, nextRowID: nextRowID, into: &writer)
        case .createIndex(let descriptor):
            Self.encodeCreateIndex(descriptor, into: &writer)
        case .dropIndex(let indexID):
            Self.encodeDropIndex(indexID: indexID, into: &writer)
        }
    }

    /// Encodes a ``createIndex(_:)`` operation; the descriptor's bounds are preconditions.
    public static func encodeCreateIndex(_ descriptor: IndexDescriptor, into writer: inout ByteWriter) {
        writer.writeUInt8(Tag.createIndex.rawValue)
        descriptor.encode(into: &writer)
    }

    /// Encodes a ``dropIndex(indexID:)`` operation.
    public static func encodeDropIndex(indexID: UInt32, into writer: inout ByteWriter) {
        writer.writeUInt8(Tag.dropIndex.rawValue)
        writer.writeUInt32LE(indexID)
    }

    /// Encodes a ``createTable(tableID:name:)`` operation without building an enum value first.
    ///
    /// A name longer than ``WALFormat/maximumTableNameLength`` UTF-8 bytes is a precondition failure;
    /// the caller must also reject an empty name, which a reader refuses.
    public static func encodeCreateTable(tableID: UInt32, name: String, into writer: inout ByteWriter) {
        let utf8 = Array(name.utf8)
        precondition(utf8.count <= WALFormat.maximumTableNameLength)
        writer.writeUInt8(Tag.createTable.rawValue)
        writer.writeUInt32LE(tableID)
        writer.writeUInt16LE(UInt16(utf8.count))
        writer.writeBytes(utf8)
    }

    /// Encodes a ``dropTable(tableID:)`` operation without building an enum value first.
    public static func encodeDropTable(tableID: UInt32, into writer: inout ByteWriter) {
        writer.writeUInt8(Tag.dropTable.rawValue)
        writer.writeUInt32LE(tableID)
    }

    /// Encodes a put without building an enum value first (the hot path of every write).
    ///
    /// - Parameters:
    ///   - tableID: the table written.
    ///   - rowID: the row written.
    ///   - value: the row's new bytes, at most ``WALFormat/maximumValueSize`` (a precondition).
    ///   - writer: where the operation is appended.
    public static func encodePut(
        tableID: UInt32, rowID: UInt64, value: UnsafeRawBufferPointer, into writer: inout ByteWriter
    ) {
        precondition(value.count <= WALFormat.maximumValueSize)
        writer.write(putSize(valueLength: value.count)) { out in
            out.storeBytes(of: Tag.put.rawValue, toByteOffset: 0, as: UInt8.self)
            out.storeLE(tableID, at: 1)
            out.storeLE(rowID, at: 5)
            out.storeLE(UInt32(value.count), at: 13)
            if !value.isEmpty { UnsafeMutableRawBufferPointer(rebasing: out[17...]).copyMemory(from: value) }
        }
    }

    /// Encodes a ``delete(tableID:rowID:)`` operation without building an enum value first.
    public static func encodeDelete(tableID: UInt32, rowID: UInt64, into writer: inout ByteWriter) {
        writer.writeUInt8(Tag.delete.rawValue)
        writer.writeUInt32LE(tableID)
        writer.writeUInt64LE(rowID)
    }

    /// Encodes a ``reserveRows(tableID:nextRowID:)`` operation without building an enum value first.
    public static func encodeReserveRows(tableID: UInt32, nextRowID: UInt64, into writer: inout ByteWriter) {
        writer.writeUInt8(Tag.reserveRows.rawValue)
        writer.writeUInt32LE(tableID)
        writer.writeUInt64LE(nextRowID)
    }

    /// The encoded size of a put of `valueLength` bytes.
    public static func putSize(valueLength: Int) -> Int { 17 + valueLength }

    /// Decodes every operation of an `operations` record payload, calling `body` for each in order.
    ///
    /// - Throws: the ``FormatError`` of the first operation that does not decode (the operations before it
    ///   have been passed to `body`), or whatever `body` throws.
    public static func decodeAll(
        _ payload: UnsafeRawBufferPointer, _ body: (WALOperation) throws -> Void
    ) throws {
        var reader = ByteReader(payload)
        while reader.remaining > 0 {
            try body(try decode(from: &reader))
        }
    }

    /// Decodes every operation of an `operations` record payload as ``decodeAll(_:_:)`` does, but offers each put to
    /// `put` first with its value lent where it lies in `payload` (valid only during the call): a put that `put` takes
    /// (returns true for) is never copied into an array of its own. Recovery gathers most of the log's rows this way,
    /// and an array per row was a malloc, a copy and a free per row of W10's replay.
    ///
    /// - Throws: what ``decodeAll(_:_:)`` throws for the same payload, or whatever `put` or `body` throws.
    public static func decodeAll(
        _ payload: UnsafeRawBufferPointer,
        lendingPuts put: (_ tableID: UInt32, _ rowID: UInt64, _ value: UnsafeRawBufferPointer) throws -> Bool,
        _ body: (WALOperation) throws -> Void
    ) throws {
        var reader = ByteReader(payload)
        while reader.remaining > 0 { try decodeNext(from: &reader, lendingPuts: put, body) }
    }

    /// Decodes the operation at `reader`'s position (there must be one) as ``decodeAll(_:lendingPuts:_:)`` decodes
    /// each, and advances `reader` past it.
    ///
    /// - Throws: the ``FormatError`` of an operation that does not decode, or whatever `put` or `body` throws.
    public static func decodeNext(
        from reader: inout ByteReader,
        lendingPuts put: (_ tableID: UInt32, _ rowID: UInt64, _ value: UnsafeRawBufferPointer) throws -> Bool,
        _ body: (WALOperation) throws -> Void
    ) throws {
        guard reader.bytes[reader.readerIndex] == Tag.put.rawValue else {
            try body(try decode(from: &reader))
            return
        }
        _ = try reader.readUInt8()
        let tableID = try reader.readUInt32LE()
        let (rowID, value) = try decodePutFields(from: &reader)
        if try put(tableID, rowID, value) { return }
        try body(.put(tableID: tableID, rowID: rowID, value: Array(value)))
    }

    /// The table of the put at `reader`'s position, if a put begins there (its other fields unread).
    public static func putTableID(at reader: ByteReader) -> UInt32? {
        let at = reader.readerIndex
        guard reader.bytes.count - at >= 5, reader.bytes[at] == Tag.put.rawValue else { return nil }
        return reader.bytes.loadUnaligned(fromByteOffset: at + 1, as: UInt32.self).littleEndian
    }

    /// Puts into one table whose row IDs strictly increase, found together by ``scanPutRun(_:table:after:)``.
    public struct PutRun: Equatable, Sendable {
        /// The puts in the run.
        public var count: Int
        public var firstRowID: UInt64
        public var lastRowID: UInt64
        /// Where the first put's value starts in the payload, and the last put's.
        public var firstValueStart: Int
        public var lastValueStart: Int

        public init(count: Int, firstRowID: UInt64, lastRowID: UInt64, firstValueStart: Int, lastValueStart: Int) {
            self.count = count
            self.firstRowID = firstRowID
            self.lastRowID = lastRowID
            self.firstValueStart = firstValueStart
            self.lastValueStart = lastValueStart
        }
    }

    /// Steps over the puts from `reader`'s position on that go into table `tableID` with strictly increasing row IDs,
    /// the first above `after` when given: the run of a bulk load, read with nothing decoded but where each put
    /// ends. It stops before anything else: another operation, another table's put, a row ID not above the one before,
    /// or a put that does not decode (left for ``decodeNext(from:lendingPuts:_:)`` to report as it would).
    ///
    /// - Returns: the run, with `reader` advanced past it; nil when no such put begins at the position (`reader` is
    ///   then unmoved).
    public static func scanPutRun(_ reader: inout ByteReader, table tableID: UInt32, after: UInt64?) -> PutRun? {
        let bytes = reader.bytes
        let fieldsSize = putSize(valueLength: 0)
        var at = reader.readerIndex
        var run: PutRun?
        var previous = after
        while bytes.count - at >= fieldsSize, bytes[at] == Tag.put.rawValue,
            bytes.loadUnaligned(fromByteOffset: at + 1, as: UInt32.self).littleEndian == tableID
        {
            let row = bytes.loadUnaligned(fromByteOffset: at + 5, as: UInt64.self).littleEndian
            let length = Int(bytes.loadUnaligned(fromByteOffset: at + 13, as: UInt32.self).littleEndian)
            guard previous.map({ row > $0 }) ?? true, length <= WALFormat.maximumValueSize,
                length <= bytes.count - at - fieldsSize
            else { break }
            let valueStart = at + fieldsSize
            if run == nil {
                run = PutRun(
                    count: 1, firstRowID: row, lastRowID: row, firstValueStart: valueStart, lastValueStart: valueStart)
            } else {
                run!.count += 1
                run!.lastRowID = row
                run!.lastValueStart = valueStart
            }
            previous = row
            at = valueStart + length
        }
        if run != nil { reader = ByteReader(bytes, readerIndex: at) }
        return run
    }

    /// Decodes a put's fields after its table ID and advances `reader` past them; the value is lent from `reader`'s
    /// buffer.
    private static func decodePutFields(
        from reader: inout ByteReader
    ) throws(FormatError) -> (rowID: UInt64, value: UnsafeRawBufferPointer) {
        let rowID = try reader.readUInt64LE()
        let length = Int(try reader.readUInt32LE())
        guard length <= WALFormat.maximumValueSize else { throw .invalid("row value length \(length) too large") }
        return (rowID, try reader.readSlice(length))
    }

    /// Decodes one operation and advances `reader` past it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)`` when the operation runs past the payload;
    ///   ``FormatError/invalidField(_:)`` for an unknown tag, a table name that is empty, too long or not
    ///   UTF-8, a value longer than ``WALFormat/maximumValueSize``, or an index descriptor that does not
    ///   decode (``IndexDescriptor/decode(from:)``).
    public static func decode(from reader: inout ByteReader) throws(FormatError) -> WALOperation {
        let rawTag = try reader.readUInt8()
        guard let tag = Tag(rawValue: rawTag) else { throw .invalid("unknown operation tag \(rawTag)") }
        switch tag {
        case .createIndex: return .createIndex(try IndexDescriptor.decode(from: &reader))
        case .dropIndex: return .dropIndex(indexID: try reader.readUInt32LE())
        default: break
        }
        let tableID = try reader.readUInt32LE()
        switch tag {
        case .createTable:
            let length = Int(try reader.readUInt16LE())
            guard length > 0, length <= WALFormat.maximumTableNameLength else {
                throw .invalid("table name length \(length) outside 1...\(WALFormat.maximumTableNameLength)")
            }
            return .createTable(tableID: tableID, name: try reader.readUTF8(length))
        case .dropTable:
            return .dropTable(tableID: tableID)
        case .put:
            let (rowID, value) = try decodePutFields(from: &reader)
            return .put(tableID: tableID, rowID: rowID, value: Array(value))
        case .delete:
            return .delete(tableID: tableID, rowID: try reader.readUInt64LE())
        case .reserveRows:
            return .reserveRows(tableID: tableID, nextRowID: try reader.readUInt64LE())
        case .createIndex, .dropIndex:
            throw .invalid("operation tag \(rawTag) has no table ID")  // unreachable: returned above
        }
    }
}

/// The payload of a commit record: how many operation records and operations the transaction has,
/// so that replay can tell a complete transaction from one that lost records.
///
/// ```
/// commit := operationRecordCount:u32 operationCount:u64
/// ```
public struct WALCommit: Sendable, Equatable {
    /// The number of `operations` records the transaction wrote before this commit record.
    public var operationRecordCount: UInt32
    /// The number of operations in those records, all together.
    public var operationCount: UInt64

    /// Creates a commit payload from the transaction's record and operation counts.
    public init(operationRecordCount: UInt32, operationCount: UInt64) {
        self.operationRecordCount = operationRecordCount
        self.operationCount = operationCount
    }

    /// The size of an encoded commit payload in bytes.
    public static let encodedSize = 12

    /// Encodes the commit payload (``encodedSize`` bytes, little-endian).
    public func encoded() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.encodedSize) { bytes, count in
            encode(into: UnsafeMutableRawBufferPointer(bytes))
            count = Self.encodedSize
        }
    }

    /// Writes ``encoded()``'s bytes into the first ``encodedSize`` bytes of `bytes`: every commit writes one, and
    /// the log's builder encodes it on its stack (an array for it was an allocation per commit).
    public func encode(into bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= Self.encodedSize, "a commit payload takes \(Self.encodedSize) bytes")
        bytes.storeLE(operationRecordCount, at: 0)
        bytes.storeLE(operationCount, at: 4)
    }

    /// Decodes a commit record's payload.
    ///
    /// - Parameter payload: the payload of a `commit` record.
    /// - Returns: the transaction's counts, which replay compares with the records it read.
    /// - Throws: ``FormatError/invalidField(_:)`` when the payload is not exactly ``encodedSize`` bytes.
    public static func decode(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> WALCommit {
        guard payload.count == encodedSize else {
            throw .invalid("commit payload of \(payload.count) bytes, expected 12")
        }
        var reader = ByteReader(payload)
        return WALCommit(operationRecordCount: try reader.readUInt32LE(), operationCount: try reader.readUInt64LE())
    }
}
