import Foundation
import StrataFormat
import StrataStorage

/// Where a Strata store keeps each relationship, recorded in the store's metadata so that `strata fsck`
/// can check relationships without the application's model (FORMAT.md §6.7, "Relationship layout").
///
/// The layout lists every to-one (its foreign key field, the rows that have it, where it points, its
/// inverse and whether a dangling reference is legitimate) and every join table (what each of its two
/// columns names). ``StrataStore`` writes it when the store is opened and the recorded layout is missing
/// or differs; ``RelationshipVerifier`` reads it back.
///
/// It is JSON with sorted keys under the metadata key ``metadataKey``; a layout longer than a metadata value
/// can hold (65,535 UTF-8 bytes) is split at character boundaries into `RelationshipLayout#1`,
/// `RelationshipLayout#2`, ... whose values concatenate to the JSON.
///
/// ## Topics
/// - ``ToOne``
/// - ``Inverse``
/// - ``JoinTable``
/// - ``JoinColumn``
/// - ``init(model:)``
public struct RelationshipLayout: Codable, Sendable, Equatable {
    /// The metadata key of the layout: `RelationshipLayout`.
    public static let metadataKey = "RelationshipLayout"
    /// The layout's own version: 1. A reader refuses a layout of a version it does not know.
    public static let currentVersion = 1

    /// One to-one relationship: a foreign key field in the rows of its entity and of the entities below it.
    public struct ToOne: Codable, Sendable, Equatable {
        /// `Entity.relationship`, named after the entity that declares it.
        public var name: String
        /// The engine table of the rows that hold the foreign key (`entity.<Root>`).
        public var table: String
        /// The entity IDs of the rows that have the relationship (the declaring entity and those below it).
        public var entityIDs: [UInt16]
        /// The field holding the related row's ID (`reference` or `null`); the next field holds the related
        /// object's entity ID (`int64`), or `null` when the destination has no subentities.
        public var field: Int
        /// The engine table of the destination hierarchy.
        public var destinationTable: String
        /// The entity IDs a related row may have: the destination entity and those below it.
        public var destinationEntityIDs: [UInt16]
        /// The inverse relationship, nil when there is none.
        public var inverse: Inverse?
        /// Whether a reference to a missing row is legitimate: the relationship has no inverse, or its
        /// inverse's delete rule is "no action", so that deleting the destination leaves the reference.
        public var allowsDangling: Bool
    }

    /// How the inverse of a to-one is stored.
    public struct Inverse: Codable, Sendable, Equatable {
        /// How a relationship is stored.
        public enum Kind: String, Codable, Sendable {
            /// A to-one: a foreign key field of the destination's rows (a one-to-one pair).
            case toOne
            /// An unordered to-many read through this to-one's foreign key (and its index): nothing of its own.
            case foreignKey
            /// A to-many with links in a join table (an ordered one-to-many).
            case joinTable
        }
        /// `Entity.relationship` of the inverse.
        public var name: String
        public var kind: Kind
        /// For ``Kind/toOne``: the inverse's foreign key field in the destination's rows.
        public var field: Int?
        /// For ``Kind/joinTable``: the join table's name.
        public var joinTable: String?
    }

    /// One column of a join table's link rows: which rows it names.
    public struct JoinColumn: Codable, Sendable, Equatable {
        /// The link field holding the row ID (`reference`): 0 or 1.
        public var rowField: Int
        /// The link field holding that row's entity ID (`int64`): 2 or 3.
        public var entityField: Int
        /// The engine table of the rows this column names.
        public var table: String
        /// The entity IDs those rows may have.
        public var entityIDs: [UInt16]
        /// `Entity.relationship` whose sources this column holds; nil for the members of a to-many without
        /// inverse.
        public var relationship: String?
        /// When ``relationship`` is a to-one (the many side of an ordered one-to-many): its foreign key field
        /// in this column's rows, which must name the link's other row.
        public var toOneField: Int?
        /// Whether a link may legitimately name a missing row in this column: nothing removes the links of
        /// a deleted row here (no inverse, or an inverse to-one whose delete rule is "no action").
        public var allowsMissing: Bool
    }

    /// One join table: `join.<Entity>.<relationship>` of its owner side.
    public struct JoinTable: Codable, Sendable, Equatable {
        /// The engine table's name.
        public var table: String
        /// Column 0 (fields 0, 2, 4): the owner relationship's sources.
        public var source: JoinColumn
        /// Column 1 (fields 1, 3, 5): the owner relationship's members, the inverse's sources.
        public var member: JoinColumn
    }

    public var version: Int
    /// Every to-one of the model, in entity then relationship order.
    public var toOnes: [ToOne]
    /// Every join table, by name.
    public var joinTables: [JoinTable]

    /// The layout of `model`'s relationships in a Strata store (FORMAT.md §6.7).
    public init(model: ManagedObjectModel) {
        func ids(_ entity: EntityDescription) -> [UInt16] {
            entity.allEntitiesInHierarchyBelow.map(\.entityID).sorted()
        }
        func qualified(_ relationship: RelationshipDescription) -> String {
            relationship.entity.name + "." + relationship.name
        }
        var toOnes: [ToOne] = []
        var joinTables: [String: JoinTable] = [:]
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                let destination = relationship.destinationEntity
                let inverse = relationship.inverseRelationship
                switch relationship.storage {
                case .foreignKey:
                    var inverseLayout: Inverse?
                    if let inverse {
                        switch inverse.storage {
                        case .foreignKey:
                            inverseLayout = Inverse(
                                name: qualified(inverse), kind: .toOne, field: inverse.fieldIndex, joinTable: nil)
                        case .inverseForeignKey:
                            inverseLayout = Inverse(name: qualified(inverse), kind: .foreignKey)
                        case .joinTable(let side):
                            inverseLayout = Inverse(
                                name: qualified(inverse), kind: .joinTable, joinTable: side.tableName)
                        }
                    }
                    toOnes.append(
                        ToOne(
                            name: qualified(relationship), table: StrataStore.tableName(for: entity.rootEntity),
                            entityIDs: ids(entity), field: relationship.fieldIndex!,
                            destinationTable: StrataStore.tableName(for: destination.rootEntity),
                            destinationEntityIDs: ids(destination), inverse: inverseLayout,
                            allowsDangling: inverse == nil || inverse!.deleteRule == .noAction))
                case .inverseForeignKey:
                    continue
                case .joinTable(let side):
                    guard side.isOwnerSide else { continue }
                    // The members' column: the inverse's sources. Deleting a member removes its links when the
                    // inverse is a to-many (its join-table side) or a to-one with a delete rule that acts.
                    let memberAllowsMissing = inverse.map { !$0.isToMany && $0.deleteRule == .noAction } ?? true
                    joinTables[side.tableName] = JoinTable(
                        table: side.tableName,
                        source: JoinColumn(
                            rowField: 0, entityField: 2, table: StrataStore.tableName(for: entity.rootEntity),
                            entityIDs: ids(entity), relationship: qualified(relationship), toOneField: nil,
                            allowsMissing: false),
                        member: JoinColumn(
                            rowField: 1, entityField: 3, table: StrataStore.tableName(for: destination.rootEntity),
                            entityIDs: ids(destination), relationship: inverse.map(qualified),
                            toOneField: inverse.flatMap { $0.isToMany ? nil : $0.fieldIndex },
                            allowsMissing: memberAllowsMissing))
                }
            }
        }
        self.version = Self.currentVersion
        self.toOnes = toOnes
        self.joinTables = joinTables.keys.sorted().map { joinTables[$0]! }
    }

    // MARK: - In the store's metadata

    /// The largest UTF-8 length of one metadata value (its length is a `u16`).
    static let maximumValueLength = Int(UInt16.max)

    /// The layout as metadata entries: `RelationshipLayout`, or `RelationshipLayout#1...` when it is long.
    func metadataEntries() -> [String: String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain structs of strings and integers cannot fail.
        let json = String(decoding: try! encoder.encode(self), as: UTF8.self)
        if json.utf8.count <= Self.maximumValueLength { return [Self.metadataKey: json] }
        var entries: [String: String] = [:]
        var part = ""
        var partLength = 0
        for character in json {
            let length = character.utf8.count
            if partLength + length > Self.maximumValueLength {
                entries["\(Self.metadataKey)#\(entries.count + 1)"] = part
                part = ""
                partLength = 0
            }
            part.append(character)
            partLength += length
        }
        entries["\(Self.metadataKey)#\(entries.count + 1)"] = part
        return entries
    }

    /// Whether `key` is one of the layout's metadata keys.
    static func isLayoutKey(_ key: String) -> Bool {
        key == metadataKey || key.hasPrefix(metadataKey + "#")
    }

    /// Reads the layout from a store's metadata.
    ///
    /// - Returns: the layout, or nil when the metadata has none (a store written before layouts were
    ///   recorded).
    /// - Throws: ``RelationshipLayoutError`` when the recorded layout does not decode or has an unknown version.
    public static func decode(fromMetadata metadata: [String: String]) throws -> RelationshipLayout? {
        var json = metadata[metadataKey]
        if json == nil, metadata["\(metadataKey)#1"] != nil {
            var joined = ""
            var part = 1
            while let text = metadata["\(metadataKey)#\(part)"] {
                joined += text
                part += 1
            }
            json = joined
        }
        guard let json else { return nil }
        let layout: RelationshipLayout
        do {
            layout = try JSONDecoder().decode(RelationshipLayout.self, from: Data(json.utf8))
        } catch {
            throw RelationshipLayoutError(reason: "the relationship layout does not decode: \(error)")
        }
        guard layout.version == currentVersion else {
            throw RelationshipLayoutError(reason: "relationship layout version \(layout.version) is not known")
        }
        return layout
    }

    /// Reads a store's metadata (row 1 of `store.metadata`) from a snapshot of its engine.
    ///
    /// - Returns: the metadata, or nil when the store has no `store.metadata` table (it is not an object store).
    /// - Throws: `StorageError` when the row cannot be read or does not decode.
    public static func storeMetadata(in snapshot: Snapshot) throws -> [String: String]? {
        guard let table = snapshot.table(named: StrataStore.metadataTable) else { return nil }
        guard let bytes = try snapshot.row(RowID(1), in: table) else {
            throw StorageError.corruption(
                file: StrataStore.metadataTable, offset: 1, reason: "the store's metadata row is missing")
        }
        return try StrataStore.decodeMetadata(bytes)
    }
}

/// A recorded ``RelationshipLayout`` that cannot be used.
public struct RelationshipLayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

extension StrataStore {
    /// Puts the model's relationship layout into `metadata` and rewrites the metadata row, when the recorded
    /// layout is missing or differs (once per store and model, so opening stays cheap).
    static func recordRelationshipLayout(
        of model: ManagedObjectModel, in metadata: inout [String: String], txn: WriteTransaction
    ) throws {
        let entries = RelationshipLayout(model: model).metadataEntries()
        let recorded = metadata.filter { RelationshipLayout.isLayoutKey($0.key) }
        guard recorded != entries else { return }
        for key in recorded.keys { metadata[key] = nil }
        metadata.merge(entries) { _, new in new }
        guard let table = txn.table(named: metadataTable) else {
            throw StorageError.corruption(file: metadataTable, offset: 0, reason: "the metadata table is missing")
        }
        try txn.update(RowID(1), in: table, to: encodeMetadata(metadata))
    }
}
