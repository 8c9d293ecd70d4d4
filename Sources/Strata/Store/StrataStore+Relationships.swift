import StrataFormat
import StrataStorage
import Synchronization

/// Reads what the object store needs from the engine, from a snapshot or inside a write transaction.
protocol EngineReader {
    func rowIDs(in index: IndexID, matching key: [RowRecord.Field]) throws -> [RowID]
    func forEachIndexEntry(
        in index: IndexID, from lower: IndexBound?, through upper: IndexBound?, reverse: Bool,
        _ body: (IndexEntry) throws -> Bool
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

    /// The secondary indexes relationships are read through, as `(name, table name, fields, entity IDs)`:
    /// for each to-one that is the inverse of an unordered to-many, one index per concrete entity that has
    /// it on the foreign key field (the entity ID filter tells the members' entity without reading their
    /// rows); for each join table, one index per side on `[source, position, member, member entity]`.
    static func relationshipIndexes(
        of model: ManagedObjectModel
    ) -> [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] {
        var specs: [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] = []
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                switch relationship.storage {
                case .foreignKey:
                    guard let inverse = relationship.inverseRelationship,
                        case .inverseForeignKey = inverse.storage
                    else { continue }
                    for concrete in entity.allEntitiesInHierarchyBelow where !concrete.isAbstract {
                        specs.append(
                            (
                                foreignKeyIndexName(relationship, of: concrete), tableName(for: entity.rootEntity),
                                [relationship.fieldIndex!], [concrete.entityID]
                            ))
                    }
                case .inverseForeignKey:
                    continue
                case .joinTable(let side):
                    specs.append(
                        (
                            joinIndexName(side), side.tableName,
                            [side.sourceField, side.positionField, side.memberField, side.memberEntityField], nil
                        ))
                }
            }
        }
        return specs
    }

    /// `fk.<Entity>.<relationship>`: the foreign keys of `relationship` in the rows of `concrete`.
    static func foreignKeyIndexName(_ relationship: RelationshipDescription, of concrete: EntityDescription) -> String {
        "fk.\(concrete.name).\(relationship.name)"
    }

    /// `join.<Entity>.<relationship>.<owner|inverse>`: one side of a join table.
    static func joinIndexName(_ side: JoinTableSide) -> String {
        side.tableName + (side.isOwnerSide ? ".owner" : ".inverse")
    }

    // MARK: - Reading relationships

    /// The objects `source` relates to through a to-many, read from the relationship's index entries (a
    /// foreign-key index or a join-table side), never from the related rows.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` when the engine cannot read the index or it is missing.
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

    /// The rows whose to-one `relationship` names row `target`, by row ID within each concrete entity.
    func referencingRows(
        through relationship: RelationshipDescription, to target: UInt64, in reader: some EngineReader
    ) throws -> [StoredReference] {
        var result: [StoredReference] = []
        for concrete in relationship.entity.allEntitiesInHierarchyBelow where !concrete.isAbstract {
            let name = Self.foreignKeyIndexName(relationship, of: concrete)
            guard let index = indexes[name] else {
                throw StorageError.corruption(file: name, offset: 0, reason: "the relationship's index is missing")
            }
            for row in try reader.rowIDs(in: index, matching: [.reference(target)]) {
                result.append(StoredReference(entity: concrete, rowID: row.rawValue))
            }
        }
        return result
    }

    /// The links of row `source` on one side of a join table, in position order for an ordered
    /// relationship (then by member row ID), else by member row ID: one index range, no row read.
    func links(of source: UInt64, side: JoinTableSide, in reader: some EngineReader) throws -> [JoinLink] {
        let name = Self.joinIndexName(side)
        guard let index = indexes[name] else {
            throw StorageError.corruption(file: name, offset: 0, reason: "the join table's index is missing")
        }
        var result: [JoinLink] = []
        let bound = IndexBound([.reference(source)])
        try reader.forEachIndexEntry(in: index, from: bound, through: bound, reverse: false) { entry in
            guard entry.key.count == 4, case .reference(let member) = entry.key[2],
                case .int64(let entityID) = entry.key[3],
                let entity = UInt16(exactly: entityID).flatMap({ entitiesByID[$0] }),
                entity.isKind(of: side.relationship.destinationEntity)
            else {
                throw StorageError.corruption(
                    file: side.tableName, offset: entry.row.rawValue, reason: "link row does not name a member")
            }
            var position: Int64?
            if case .int64(let value) = entry.key[1] { position = value }
            result.append(
                JoinLink(row: entry.row, member: StoredReference(entity: entity, rowID: member), position: position))
            return true
        }
        return result
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
                // Rewrite this side's position, keeping the other side's (one search of the join table).
                try txn.update(link.row, in: table) { old, new in
                    var fields = try RowRecord.decodeAll(old).fields
                    fields[side.positionField] = .int64(position)
                    new = RowRecord.encode(entityID: 0, rowVersion: 0, fields: fields)
                }
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
