import StrataFormat

/// What a secondary index indexes: a table, the row-record fields that make its key, and which rows.
///
/// The rows of an indexed table are row records (FORMAT.md, "Row records"). A row's key is the list of its
/// fields at ``fields``, in that order (a position at or past the row's field count is null); only rows
/// whose entity ID is in ``entityIDs`` are indexed, or every row when it is nil. The engine keeps the index
/// in step with the table in every transaction and after every crash: an index is derived data.
public struct IndexDefinition: Sendable, Hashable {
    /// The index's name, unique among the store's indexes.
    public let name: String
    /// The table whose rows it indexes.
    public let table: TableID
    /// Row-record field positions, 1 to 16 of them: the key's parts in order.
    public let fields: [Int]
    /// Only rows whose row-record entity ID is in the set are indexed; nil: every row.
    public let entityIDs: Set<UInt16>?

    /// A definition from its parts.
    public init(name: String, table: TableID, fields: [Int], entityIDs: Set<UInt16>?) {
        self.name = name
        self.table = table
        self.fields = fields
        self.entityIDs = entityIDs
    }

    func descriptor(id: IndexID) -> IndexDescriptor {
        IndexDescriptor(
            indexID: id.rawValue, tableID: table.rawValue, name: name, fields: fields, entityIDs: entityIDs?.sorted())
    }

    init(_ descriptor: IndexDescriptor) {
        self.init(
            name: descriptor.name, table: TableID(descriptor.tableID), fields: descriptor.fields,
            entityIDs: descriptor.entityIDs.map(Set.init))
    }
}

extension IndexDefinition {
    /// The index's entry for a row (encoded key ++ row ID), or nil when the row's entity is filtered out.
    ///
    /// - Throws: the ``FormatError`` of a row that is not a row record, or whose indexed fields do not decode.
    func entry(forRow row: UInt64, _ bytes: UnsafeRawBufferPointer) throws(FormatError) -> [UInt8]? {
        var entry: [UInt8] = []
        entry.reserveCapacity(16 * fields.count + IndexKey.rowIDSize)
        return try appendEntry(forRow: row, bytes, to: &entry) ? entry : nil
    }

    /// Appends the index's entry for a row to `entry` (a buffer a caller reuses for every row of a table), or
    /// nothing when the row's entity is filtered out.
    ///
    /// - Returns: whether the row has an entry.
    /// - Throws: as ``entry(forRow:_:)``.
    func appendEntry(
        forRow row: UInt64, _ bytes: UnsafeRawBufferPointer, to entry: inout [UInt8]
    ) throws(FormatError) -> Bool {
        let header = try RowRecord.Header.decode(bytes)
        if let filter = entityIDs, !filter.contains(header.entityID) { return false }
        try IndexKey.appendKey(fields: fields, of: bytes, header: header, to: &entry)
        // As typed bytes, the append is one copy (a raw buffer's went byte by byte: 110 instructions).
        withUnsafeBytes(of: row.bigEndian) { entry.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
        return true
    }
}
