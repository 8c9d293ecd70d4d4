/// A secondary index's definition as the log (`createIndex`) and the root record store it (FORMAT.md,
/// "Index definitions").
///
/// ```
/// descriptor := indexID:u32 tableID:u32 nameLength:u16 name[nameLength] fieldCount:u8 field:u16[fieldCount]
///               filter:u8 ( 0 | 1 entityCount:u16 entityID:u16[entityCount] )
/// ```
/// `name` is UTF-8, 1 ... 1024 bytes; `fieldCount` 1 ... 16 (positions may repeat); filter 0 indexes every row,
/// 1 only rows whose row-record entity ID is listed (strictly increasing).
public struct IndexDescriptor: Sendable, Equatable {
    /// The index's ID, unique in the store and never reused.
    public var indexID: UInt32
    /// The table whose rows it indexes.
    public var tableID: UInt32
    /// The index's name: 1 to ``WALFormat/maximumTableNameLength`` UTF-8 bytes.
    public var name: String
    /// The row-record field positions whose values make the key, in key order: 1 ... 16 of them.
    public var fields: [Int]
    /// Only rows of these entity IDs are indexed, strictly increasing; nil: every row.
    public var entityIDs: [UInt16]?

    /// A descriptor from its parts; ``encode(into:)`` checks them with preconditions.
    public init(indexID: UInt32, tableID: UInt32, name: String, fields: [Int], entityIDs: [UInt16]?) {
        self.indexID = indexID
        self.tableID = tableID
        self.name = name
        self.fields = fields
        self.entityIDs = entityIDs
    }

    /// Appends the encoded descriptor. A name, field list or entity list outside its bounds is a precondition failure.
    public func encode(into writer: inout ByteWriter) {
        let utf8 = Array(name.utf8)
        precondition(!utf8.isEmpty && utf8.count <= WALFormat.maximumTableNameLength)
        precondition(!fields.isEmpty && fields.count <= IndexKey.maximumParts)
        writer.writeUInt32LE(indexID)
        writer.writeUInt32LE(tableID)
        writer.writeUInt16LE(UInt16(utf8.count))
        writer.writeBytes(utf8)
        writer.writeUInt8(UInt8(fields.count))
        for field in fields {
            precondition(field >= 0 && field < Int(UInt16.max))
            writer.writeUInt16LE(UInt16(field))
        }
        if let entityIDs {
            precondition(entityIDs.count <= Int(UInt16.max))
            writer.writeUInt8(1)
            writer.writeUInt16LE(UInt16(entityIDs.count))
            for id in entityIDs { writer.writeUInt16LE(id) }
        } else {
            writer.writeUInt8(0)
        }
    }

    /// Decodes a descriptor and advances `reader` past it.
    ///
    /// - Throws: ``FormatError/truncated(needed:available:)``; ``FormatError/invalidField(_:)`` for a name
    ///   that is empty, too long or not UTF-8, a field count outside 1...16, a position of 65535, an unknown
    ///   filter byte or entity IDs not strictly increasing.
    public static func decode(from reader: inout ByteReader) throws(FormatError) -> IndexDescriptor {
        let indexID = try reader.readUInt32LE()
        let tableID = try reader.readUInt32LE()
        let nameLength = Int(try reader.readUInt16LE())
        guard nameLength > 0, nameLength <= WALFormat.maximumTableNameLength else {
            throw .invalid("index name length \(nameLength) outside 1...\(WALFormat.maximumTableNameLength)")
        }
        let name = try reader.readUTF8(nameLength)
        let fieldCount = Int(try reader.readUInt8())
        guard fieldCount >= 1, fieldCount <= IndexKey.maximumParts else {
            throw .invalid("index field count \(fieldCount) outside 1...\(IndexKey.maximumParts)")
        }
        var fields: [Int] = []
        for _ in 0..<fieldCount {
            let field = try reader.readUInt16LE()
            guard field < UInt16.max else { throw .invalid("index field position \(field)") }
            fields.append(Int(field))
        }
        var entityIDs: [UInt16]?
        switch try reader.readUInt8() {
        case 0: break
        case 1:
            let count = Int(try reader.readUInt16LE())
            guard count <= reader.remaining / 2 else {
                throw .truncated(needed: count * 2, available: reader.remaining)
            }
            var ids: [UInt16] = []
            ids.reserveCapacity(count)
            for _ in 0..<count {
                let id = try reader.readUInt16LE()
                if let last = ids.last, id <= last { throw .invalid("index entity IDs not strictly increasing") }
                ids.append(id)
            }
            entityIDs = ids
        case let filter: throw .invalid("unknown index filter \(filter)")
        }
        return IndexDescriptor(indexID: indexID, tableID: tableID, name: name, fields: fields, entityIDs: entityIDs)
    }
}
