import StrataFormat
import StrataStorage
import Synchronization

/// Reads what the object store needs from the engine, from a snapshot or inside a write transaction.
protocol EngineReader {
    func row(_ row: RowID, in table: TableID) throws -> [UInt8]?
    func forEachRow(
        in table: TableID, from lower: RowID?, through upper: RowID?, reverse: Bool,
        _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool
    ) throws
}

extension Snapshot: EngineReader {}
extension WriteTransaction: EngineReader {}

/// One link of a join table as one side sees it.
struct JoinLink {
    /// The link's row in the join table.
    var row: RowID
    /// The member at this side's far end.
    var member: StoredReference
    /// This side's position (ordered relationships).
    var position: Int64?
}

/// The rows of join tables: `[ownerSource, ownerMember, ownerSourceEntity, ownerMemberEntity,
/// ownerPosition, inversePosition]` (FORMAT.md, "Object store tables").
enum JoinRow {
    static let fieldCount = 6

    static func encode(
        source: StoredReference, member: StoredReference, side: JoinTableSide, position: Int64?,
        otherPosition: Int64?
    ) -> [UInt8] {
        let (owner, other) = side.isOwnerSide ? (source, member) : (member, source)
        let (ownerPosition, otherSidePosition) =
            side.isOwnerSide ? (position, otherPosition) : (otherPosition, position)
        return RowRecord.encode(
            entityID: 0, rowVersion: 0,
            fields: [
                .reference(owner.rowID), .reference(other.rowID), .int64(Int64(owner.entity.entityID)),
                .int64(Int64(other.entity.entityID)), ownerPosition.map { .int64($0) } ?? .null,
                otherSidePosition.map { .int64($0) } ?? .null,
            ])
    }
}

extension StrataStore {
    /// The join tables the model needs, by name: one per relationship pair kept in a join table.
    static func joinTableNames(of model: ManagedObjectModel) -> [String] {
        var names = Set<String>()
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                if case .joinTable(let side) = relationship.storage { names.insert(side.tableName) }
            }
        }
        return names.sorted()
    }

    // MARK: - Reading relationships

    public func relatedObjects(
        through relationship: RelationshipDescription, of source: StoredReference
    ) throws -> [StoredReference] {
        do {
            let snapshot = engine.snapshot()
            switch relationship.storage {
            case .foreignKey:
                return []
            case .inverseForeignKey(let inverse):
                return try referencingRows(through: inverse, to: source.rowID, in: snapshot)
            case .joinTable(let side):
                return try links(of: source.rowID, side: side, in: snapshot).map(\.member)
            }
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        } catch let error as FormatError {
            throw ObjectGraphError.storage(.corruption(file: "store", offset: source.rowID, reason: "\(error)"))
        }
    }

    /// The rows whose to-one `relationship` names row `target`, by row ID.
    func referencingRows(
        through relationship: RelationshipDescription, to target: UInt64, in reader: some EngineReader
    ) throws -> [StoredReference] {
        let field = relationship.fieldIndex!
        let wanted = Set(relationship.entity.allEntitiesInHierarchyBelow.map(\.entityID))
        var result: [StoredReference] = []
        try reader.forEachRow(in: table(for: relationship.entity), from: nil, through: nil, reverse: false) {
            id, bytes in
            let header = try RowRecord.Header.decode(bytes)
            guard wanted.contains(header.entityID),
                case .reference(let row) = try RowRecord.field(at: field, in: bytes),
                row == target
            else { return true }
            result.append(StoredReference(entity: entitiesByID[header.entityID]!, rowID: id.rawValue))
            return true
        }
        return result
    }

    /// The links of row `source` on one side of a join table, in position order for an ordered
    /// relationship, else by member row ID.
    func links(of source: UInt64, side: JoinTableSide, in reader: some EngineReader) throws -> [JoinLink] {
        guard let table = joinTables[side.tableName] else { return [] }
        var result: [JoinLink] = []
        try reader.forEachRow(in: table, from: nil, through: nil, reverse: false) { id, bytes in
            guard case .reference(let row) = try RowRecord.field(at: side.sourceField, in: bytes), row == source else {
                return true
            }
            result.append(try link(id, bytes, side: side))
            return true
        }
        if side.relationship.isOrdered {
            result.sort { ($0.position ?? .min, $0.member.rowID) < ($1.position ?? .min, $1.member.rowID) }
        } else {
            result.sort { $0.member.rowID < $1.member.rowID }
        }
        return result
    }

    /// Decodes one link row as `side` sees it.
    private func link(_ id: RowID, _ bytes: UnsafeRawBufferPointer, side: JoinTableSide) throws -> JoinLink {
        guard case .reference(let member) = try RowRecord.field(at: side.memberField, in: bytes),
            case .int64(let entityID) = try RowRecord.field(at: side.memberEntityField, in: bytes),
            let entity = UInt16(exactly: entityID).flatMap({ entitiesByID[$0] }),
            entity.isKind(of: side.relationship.destinationEntity)
        else {
            throw StorageError.corruption(
                file: side.tableName, offset: id.rawValue, reason: "link row does not name a member")
        }
        var position: Int64?
        if case .int64(let value) = try RowRecord.field(at: side.positionField, in: bytes) { position = value }
        return JoinLink(row: id, member: StoredReference(entity: entity, rowID: member), position: position)
    }

    // MARK: - Writing relationships

    /// Makes the links of `source` on one side of a join table what `members` says: links of members no
    /// longer there are deleted, new members get links, and for an ordered relationship only the members
    /// that moved get new positions (``OrderedPositions``).
    func writeLinks(
        of source: StoredReference, side: JoinTableSide, members: [StoredReference], txn: WriteTransaction
    ) throws {
        guard let table = joinTables[side.tableName] else {
            throw StorageError.corruption(file: side.tableName, offset: 0, reason: "the join table is missing")
        }
        // Both sides of a many-to-many read the same link rows: what the other side wrote earlier in this
        // transaction is seen here, so a link is never written twice.
        let existing = try links(of: source.rowID, side: side, in: txn)
        var byMember: [StoredReference: JoinLink] = [:]
        for link in existing { byMember[link.member] = link }
        let wanted = Set(members)
        for link in existing where !wanted.contains(link.member) {
            try txn.delete(link.row, from: table)
            writes.add(1, ordering: .relaxed)
        }

        var positions: [StoredReference: Int64] = [:]
        if side.relationship.isOrdered {
            var stored: [StoredReference: Int64] = [:]
            for link in existing { if let position = link.position { stored[link.member] = position } }
            for change in OrderedPositions.assign(order: members, stored: stored) {
                positions[members[change.index]] = change.position
            }
        }
        for member in members {
            let position = positions[member]
            if let link = byMember[member] {
                guard let position else { continue }
                // Rewrite this side's position, keeping the other side's.
                let bytes = try txn.row(link.row, in: table)!
                var fields = try RowRecord.decodeAll(bytes).fields
                fields[side.positionField] = .int64(position)
                try txn.update(link.row, in: table, to: RowRecord.encode(entityID: 0, rowVersion: 0, fields: fields))
                writes.add(1, ordering: .relaxed)
                continue
            }
            try txn.insert(
                JoinRow.encode(source: source, member: member, side: side, position: position, otherPosition: nil),
                into: table)
            writes.add(1, ordering: .relaxed)
        }
    }

    /// Deletes every link of a deleted row, on each join-table side of its entity.
    func deleteLinks(of row: StoredReference, txn: WriteTransaction) throws {
        for relationship in row.entity.relationships where relationship.isToMany {
            guard case .joinTable(let side) = relationship.storage, let table = joinTables[side.tableName] else {
                continue
            }
            for link in try links(of: row.rowID, side: side, in: txn) {
                try txn.delete(link.row, from: table)
                writes.add(1, ordering: .relaxed)
            }
        }
    }
}
