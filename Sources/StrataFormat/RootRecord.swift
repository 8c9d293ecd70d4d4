/// The record a checkpoint appends last: every table's root and the WAL position it covers
/// (FORMAT.md, "Root record").
///
/// ```
/// payload      := walLSN:u64 nextTableID:u32 previousRootPage:u64 tableCount:u32 table[tableCount] [indexSection]
/// table        := tableID:u32 nextRowID:u64 rowCount:u64 rootPage:u64 height:u8 nameLength:u16 name[nameLength]
/// indexSection := nextIndexID:u32 indexCount:u32 index[indexCount]      (absent while no index was ever created)
/// index        := descriptor entryCount:u64 rootPage:u64 height:u8      (descriptor: see IndexDescriptor)
/// ```
/// The payload is cut into consecutive pages of type `rootRecord`; part i of n has `extra = i << 16 | n`.
/// The newest root record whose parts all verify is the store's durable state.
public struct RootRecord: Sendable, Equatable {
    /// One table's entry in a root record: its identity, row-ID counter and B+tree.
    public struct Table: Sendable, Equatable {
        /// The table's ID, below the record's ``RootRecord/nextTableID`` and unique in the record.
        public var tableID: UInt32
        /// The table's name: 1 to ``WALFormat/maximumTableNameLength`` UTF-8 bytes, unique in the record.
        public var name: String
        /// The row ID the next insert gets; row IDs are never reused.
        public var nextRowID: UInt64
        /// The number of rows in the table: 0 exactly when the tree is empty, and below ``nextRowID`` otherwise.
        public var rowCount: UInt64
        /// The root page of the table's B+tree, or `noPage` when empty.
        public var rootPage: UInt64
        /// Levels in the tree: 0 when empty, 1 when the root is a leaf.
        public var height: Int

        /// Creates a table entry from its fields; ``RootRecord/decode(_:firstPage:)`` checks them when read back.
        public init(tableID: UInt32, name: String, nextRowID: UInt64, rowCount: UInt64, rootPage: UInt64, height: Int) {
            self.tableID = tableID
            self.name = name
            self.nextRowID = nextRowID
            self.rowCount = rowCount
            self.rootPage = rootPage
            self.height = height
        }
    }

    /// One secondary index's entry in a root record: its definition and tree.
    public struct Index: Sendable, Equatable {
        /// The index's ID, name, table, fields and entity filter.
        public var descriptor: IndexDescriptor
        /// The number of entries in the tree: 0 exactly when it is empty.
        public var entryCount: UInt64
        /// The root page of the index's tree, or `noPage` when empty.
        public var rootPage: UInt64
        /// Levels in the tree: 0 when empty, 1 when the root is a leaf.
        public var height: Int

        /// Creates an index entry from its fields; ``RootRecord/decode(_:firstPage:)`` checks them when read back.
        public init(descriptor: IndexDescriptor, entryCount: UInt64, rootPage: UInt64, height: Int) {
            self.descriptor = descriptor
            self.entryCount = entryCount
            self.rootPage = rootPage
            self.height = height
        }
    }

    /// Every WAL record with an LSN up to this one is contained in the trees.
    public var walLSN: UInt64
    /// The table ID the next created table gets; table IDs are never reused.
    public var nextTableID: UInt32
    /// The first page of the previous root record, or `noPage`.
    public var previousRootPage: UInt64
    /// Every table of the store, each with a unique ID and name.
    public var tables: [Table]
    /// The index ID the next created index gets (IDs are never reused); 1 while no index was ever created,
    /// and then the payload has no index section.
    public var nextIndexID: UInt32
    /// Every secondary index of the store, each with a unique ID and name, over a table of ``tables``.
    public var indexes: [Index]

    /// Creates a root record from its fields.
    ///
    /// - Parameters:
    ///   - walLSN: the last WAL LSN whose changes the trees contain.
    ///   - nextTableID: the ID the next created table gets.
    ///   - previousRootPage: the first page of the previous root record, or ``PageFormat/noPage``.
    ///   - tables: every table of the store.
    ///   - nextIndexID: the ID the next created index gets.
    ///   - indexes: every secondary index of the store.
    public init(
        walLSN: UInt64, nextTableID: UInt32, previousRootPage: UInt64, tables: [Table], nextIndexID: UInt32 = 1,
        indexes: [Index] = []
    ) {
        self.walLSN = walLSN
        self.nextTableID = nextTableID
        self.previousRootPage = previousRootPage
        self.tables = tables
        self.nextIndexID = nextIndexID
        self.indexes = indexes
    }

    /// Encodes the record's payload, which ``pageCount(payloadLength:pageSize:)`` and
    /// ``encodePart(_:index:count:into:pageNumber:generation:salt:)`` then cut into pages.
    ///
    /// A table name longer than ``WALFormat/maximumTableNameLength`` bytes or a height above 255 is a
    /// precondition failure.
    public func encodedPayload() -> [UInt8] {
        var writer = ByteWriter(capacity: 24 + tables.count * 48)
        writer.writeUInt64LE(walLSN)
        writer.writeUInt32LE(nextTableID)
        writer.writeUInt64LE(previousRootPage)
        writer.writeUInt32LE(UInt32(tables.count))
        for table in tables {
            let name = Array(table.name.utf8)
            precondition(name.count <= WALFormat.maximumTableNameLength)
            writer.writeUInt32LE(table.tableID)
            writer.writeUInt64LE(table.nextRowID)
            writer.writeUInt64LE(table.rowCount)
            writer.writeUInt64LE(table.rootPage)
            writer.writeUInt8(UInt8(table.height))
            writer.writeUInt16LE(UInt16(name.count))
            writer.writeBytes(name)
        }
        if nextIndexID > 1 || !indexes.isEmpty {
            writer.writeUInt32LE(nextIndexID)
            writer.writeUInt32LE(UInt32(indexes.count))
            for index in indexes {
                index.descriptor.encode(into: &writer)
                writer.writeUInt64LE(index.entryCount)
                writer.writeUInt64LE(index.rootPage)
                writer.writeUInt8(UInt8(index.height))
            }
        }
        return writer.take()
    }

    /// Decodes a root record payload whose pages lie before `firstPage`.
    ///
    /// - Parameters:
    ///   - payload: the parts' bodies, concatenated in order.
    ///   - firstPage: the page number of the record's first part: every tree root and the previous
    ///     record must lie before it.
    /// - Returns: the record, every table checked.
    ///
    /// - Throws: ``FormatError`` for truncation, a WAL LSN of `UInt64.max` (no LSN left for a next record),
    ///   a root at or after the record, a height outside
    ///   the tree limit or disagreeing with emptiness, duplicate table IDs or names, or trailing bytes.
    public static func decode(_ payload: UnsafeRawBufferPointer, firstPage: UInt64) throws(FormatError) -> RootRecord {
        var reader = ByteReader(payload)
        let walLSN = try reader.readUInt64LE()
        guard walLSN < WALFormat.maximumLSN else {
            throw .invalid("root record WAL LSN \(walLSN) beyond the largest LSN \(WALFormat.maximumLSN)")
        }
        let nextTableID = try reader.readUInt32LE()
        let previous = try reader.readUInt64LE()
        guard previous == PageFormat.noPage || previous < firstPage else {
            throw .invalid("previous root record \(previous) does not precede \(firstPage)")
        }
        let count = Int(try reader.readUInt32LE())
        // Each table takes at least 31 bytes: bound the count before allocating.
        guard count <= reader.remaining / 31 else { throw .invalid("root record claims \(count) tables") }
        var tables: [Table] = []
        tables.reserveCapacity(count)
        var ids = Set<UInt32>()
        var names = Set<String>()
        for _ in 0..<count {
            let id = try reader.readUInt32LE()
            let nextRowID = try reader.readUInt64LE()
            let rowCount = try reader.readUInt64LE()
            let root = try reader.readUInt64LE()
            let height = Int(try reader.readUInt8())
            let nameLength = Int(try reader.readUInt16LE())
            guard nameLength > 0, nameLength <= WALFormat.maximumTableNameLength else {
                throw .invalid("table name length \(nameLength)")
            }
            let name = try reader.readUTF8(nameLength)
            guard id < nextTableID else { throw .invalid("table ID \(id) not below next table ID \(nextTableID)") }
            guard ids.insert(id).inserted, names.insert(name).inserted else {
                throw .invalid("table \(id) '\(name)' appears twice")
            }
            guard height <= PageFormat.maximumTreeHeight else { throw .invalid("tree height \(height)") }
            // Row IDs are 0 ..< nextRowID (insert(_:into:at:) may use row 0), so at most nextRowID rows.
            guard rowCount <= UInt64(Int.max), rowCount <= nextRowID else {
                throw .invalid("table \(id) claims \(rowCount) rows below row ID \(nextRowID)")
            }
            if root == PageFormat.noPage {
                guard height == 0, rowCount == 0 else { throw .invalid("empty table \(id) has height or rows") }
            } else {
                guard root >= 1, root < firstPage, height >= 1, rowCount >= 1 else {
                    throw .invalid("table \(id) root page \(root) height \(height) rows \(rowCount) invalid")
                }
            }
            tables.append(
                Table(tableID: id, name: name, nextRowID: nextRowID, rowCount: rowCount, rootPage: root, height: height)
            )
        }
        var record = RootRecord(walLSN: walLSN, nextTableID: nextTableID, previousRootPage: previous, tables: tables)
        if reader.remaining > 0 {
            guard reader.remaining >= 8 else {
                throw .invalid("\(reader.remaining) stray bytes after the root record's tables")
            }
            try decodeIndexes(&reader, into: &record, tableIDs: ids, firstPage: firstPage)
        }
        guard reader.remaining == 0 else { throw .invalid("\(reader.remaining) stray bytes after the root record") }
        return record
    }

    private static func decodeIndexes(
        _ reader: inout ByteReader, into record: inout RootRecord, tableIDs: Set<UInt32>, firstPage: UInt64
    ) throws(FormatError) {
        record.nextIndexID = try reader.readUInt32LE()
        guard record.nextIndexID > 1 else { throw .invalid("index section with next index ID \(record.nextIndexID)") }
        let count = Int(try reader.readUInt32LE())
        // Each index takes at least 32 bytes: bound the count before allocating.
        guard count <= reader.remaining / 32 else { throw .invalid("root record claims \(count) indexes") }
        var ids = Set<UInt32>()
        var names = Set<String>()
        record.indexes.reserveCapacity(count)
        for _ in 0..<count {
            let descriptor = try IndexDescriptor.decode(from: &reader)
            let entryCount = try reader.readUInt64LE()
            let root = try reader.readUInt64LE()
            let height = Int(try reader.readUInt8())
            let id = descriptor.indexID
            guard id >= 1, id < record.nextIndexID else {
                throw .invalid("index ID \(id) not in 1..<\(record.nextIndexID)")
            }
            guard ids.insert(id).inserted, names.insert(descriptor.name).inserted else {
                throw .invalid("index \(id) '\(descriptor.name)' appears twice")
            }
            guard tableIDs.contains(descriptor.tableID) else {
                throw .invalid("index \(id) is over table \(descriptor.tableID), which the record lacks")
            }
            guard height <= PageFormat.maximumTreeHeight, entryCount <= UInt64(Int.max) else {
                throw .invalid("index \(id) tree height \(height) entries \(entryCount)")
            }
            if root == PageFormat.noPage {
                guard height == 0, entryCount == 0 else { throw .invalid("empty index \(id) has height or entries") }
            } else {
                guard root >= 1, root < firstPage, height >= 1, entryCount >= 1 else {
                    throw .invalid("index \(id) root page \(root) height \(height) entries \(entryCount) invalid")
                }
            }
            record.indexes.append(Index(descriptor: descriptor, entryCount: entryCount, rootPage: root, height: height))
        }
    }

    /// How many pages a payload of `payloadLength` bytes takes: at least 1, even for an empty payload.
    public static func pageCount(payloadLength: Int, pageSize: Int) -> Int {
        max(
            1,
            (payloadLength + PageFormat.bodyCapacity(pageSize: pageSize) - 1)
                / PageFormat.bodyCapacity(pageSize: pageSize))
    }

    /// Encodes part `index` of `count` of a payload into `page` and seals it.
    ///
    /// - Parameters:
    ///   - payload: the whole payload (``encodedPayload()``).
    ///   - index: the part to encode, from 0.
    ///   - count: the number of parts, ``pageCount(payloadLength:pageSize:)``; at most
    ///     ``PageFormat/maximumRootRecordPages`` (a precondition).
    ///   - page: the whole page buffer (page-size bytes, zeroed).
    ///   - pageNumber: the page's number in the page file.
    ///   - generation: the checkpoint that writes the page.
    ///   - salt: the store's checksum salt (``StoreHeader/checksumSalt``).
    public static func encodePart(
        _ payload: [UInt8], index: Int, count: Int, into page: UnsafeMutableRawBufferPointer,
        pageNumber: UInt64, generation: UInt64, salt: UInt64
    ) {
        let capacity = PageFormat.bodyCapacity(pageSize: page.count)
        let start = index * capacity
        let end = min(payload.count, start + capacity)
        precondition(start <= end && count <= PageFormat.maximumRootRecordPages)
        payload.withUnsafeBytes { source in
            if end > start {
                UnsafeMutableRawBufferPointer(
                    rebasing: page[PageFormat.headerSize..<(PageFormat.headerSize + end - start)]
                )
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<end]))
            }
        }
        PageHeader(
            type: .rootRecord, itemCount: 0, pageNumber: pageNumber, generation: generation,
            bodyLength: end - start, extra: UInt32(index) << 16 | UInt32(count)
        ).seal(page, salt: salt)
    }

    /// The part index and part count of a root-record page.
    ///
    /// - Throws: ``FormatError/invalidField(_:)`` when the page is not a root-record page, or its count is 0 or
    ///   above ``PageFormat/maximumRootRecordPages``, or its index is not below its count.
    public static func part(of header: PageHeader) throws(FormatError) -> (index: Int, count: Int) {
        let index = Int(header.extra >> 16)
        let count = Int(header.extra & 0xFFFF)
        guard header.type == .rootRecord, count >= 1, count <= PageFormat.maximumRootRecordPages, index < count else {
            throw .invalid("root record part \(index) of \(count)")
        }
        return (index, count)
    }
}
