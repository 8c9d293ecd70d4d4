#if Postgres
import Foundation
import Strata

/// How a model is laid out in a PostgreSQL schema, and the statements that create it.
///
/// - A table per inheritance hierarchy (`e_<RootEntity>`), as the Strata store keeps one: `strata_row_id`
///   (primary key, from the sequence `e_<RootEntity>_seq`), `strata_entity` (the concrete entity's ID),
///   `strata_version` (optimistic locking), a column per persistent attribute of every entity of the hierarchy,
///   and two per to-one (`<name>_id`, a foreign key to the destination's table, and `<name>_entity`).
/// - Attribute types and their columns, each of which round-trips exactly: Integer 16/32/64 → smallint,
///   integer, bigint; Decimal → numeric (any precision, read back as text); Double → double precision; Float →
///   real; String → text `COLLATE "C"` (code-point order, as Swift compares); Boolean → boolean; Date →
///   double precision seconds since 2001-01-01 (`timestamptz` keeps microseconds only, a `Date` more); Binary →
///   bytea; UUID → uuid; URI → text (the absolute string); Transformable → bytea (the transformer's output).
///   A binary attribute that allows external storage holds a key of `strata_external` (bigint).
/// - A join table per many-to-many, ordered or inverse-less to-many (`j_<Entity>_<relationship>` of the owner
///   side): owner and member row IDs and entity IDs and a position per side, foreign keys to both tables
///   (`ON DELETE CASCADE`).
/// - A unique index per uniqueness constraint, checked at commit (for a subentity's constraint, a deferred
///   exclusion constraint with `=` on the rows of that entity and its subentities), an index per indexed attribute
///   and per fetch index (compound ones too), and one per to-one's column.
/// - `strata_metadata` (key, value: the store's UUID, type and the model's version hash), `strata_external`
///   (external binary values) and `strata_history` (persistent history, when recorded).
///
/// Identifiers longer than PostgreSQL's 63 bytes are shortened with a hash suffix so they stay unique.
struct PostgresSchema: Sendable {
    /// The schema's name, unquoted.
    let name: String
    private let tables: [ObjectIdentifier: String]
    private let columns: [ObjectIdentifier: String]
    private let toOneColumns: [ObjectIdentifier: (id: String, entity: String)]
    private let joinTables: [String: String]
    let model: ManagedObjectModel

    init(name: String, model: ManagedObjectModel) {
        self.name = name
        self.model = model
        var tables: [ObjectIdentifier: String] = [:]
        var columns: [ObjectIdentifier: String] = [:]
        var toOneColumns: [ObjectIdentifier: (id: String, entity: String)] = [:]
        var joinTables: [String: String] = [:]
        for root in model.entities where root.superentity == nil {
            tables[ObjectIdentifier(root)] = Self.identifier("e_" + root.name)
            let hierarchy = root.allEntitiesInHierarchyBelow
            var declared: [AttributeDescription] = []
            var relationships: [RelationshipDescription] = []
            for entity in hierarchy {
                for attribute in entity.persistentAttributes where attribute.entity === entity {
                    declared.append(attribute)
                }
                for relationship in entity.toOneRelationships where relationship.entity === entity {
                    relationships.append(relationship)
                }
            }
            var counts: [String: Int] = [:]
            for attribute in declared { counts[attribute.name, default: 0] += 1 }
            for relationship in relationships { counts[relationship.name, default: 0] += 1 }
            for attribute in declared {
                let raw = counts[attribute.name]! > 1 ? "\(attribute.entity.name)_\(attribute.name)" : attribute.name
                columns[ObjectIdentifier(attribute)] = Self.identifier(raw)
            }
            for relationship in relationships {
                let raw =
                    counts[relationship.name]! > 1
                    ? "\(relationship.entity.name)_\(relationship.name)" : relationship.name
                toOneColumns[ObjectIdentifier(relationship)] = (
                    Self.identifier(raw + "_id"), Self.identifier(raw + "_entity")
                )
            }
        }
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                if case .joinTable(let side) = relationship.storage {
                    let owner = side.ownerRelationship
                    joinTables[side.tableName] = Self.identifier("j_\(owner.entity.name)_\(owner.name)")
                }
            }
        }
        self.tables = tables
        self.columns = columns
        self.toOneColumns = toOneColumns
        self.joinTables = joinTables
    }

    // MARK: - Names

    /// A PostgreSQL identifier of at most 63 bytes: longer names keep a prefix and get a hash of the whole.
    static func identifier(_ raw: String) -> String {
        guard raw.utf8.count > 63 else { return raw }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in raw.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var prefix = ""
        for character in raw {
            guard prefix.utf8.count + character.utf8.count <= 46 else { break }
            prefix.append(character)
        }
        return prefix + "_" + String(hash, radix: 16)
    }

    /// An identifier in double quotes, with its quotes doubled.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A table or sequence of the schema, quoted and qualified.
    func qualified(_ table: String) -> String { Self.quote(name) + "." + Self.quote(table) }

    /// The table of an entity's hierarchy, quoted and qualified.
    func table(of entity: EntityDescription) -> String { qualified(tables[ObjectIdentifier(entity.rootEntity)]!) }

    /// The unquoted table name of an entity's hierarchy.
    func tableName(of entity: EntityDescription) -> String { tables[ObjectIdentifier(entity.rootEntity)]! }

    /// The row-ID sequence of an entity's hierarchy, quoted and qualified.
    func sequence(of entity: EntityDescription) -> String {
        qualified(Self.identifier(tables[ObjectIdentifier(entity.rootEntity)]! + "_seq"))
    }

    /// The sequence's name as a string literal for `nextval`.
    func sequenceLiteral(of entity: EntityDescription) -> String {
        "'" + sequence(of: entity).replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// An attribute's column, quoted.
    func column(_ attribute: AttributeDescription) -> String { Self.quote(columns[ObjectIdentifier(attribute)]!) }

    /// A to-one's two columns (row ID, entity ID), quoted.
    func columns(_ relationship: RelationshipDescription) -> (id: String, entity: String) {
        let pair = toOneColumns[ObjectIdentifier(relationship)]!
        return (Self.quote(pair.id), Self.quote(pair.entity))
    }

    /// A join table, quoted and qualified.
    func joinTable(_ side: JoinTableSide) -> String { qualified(joinTables[side.tableName]!) }

    /// The columns of a join table that one side reads: its sources, members, members' entities and positions.
    static func joinColumns(
        _ side: JoinTableSide
    ) -> (source: String, member: String, memberEntity: String, position: String) {
        side.isOwnerSide
            ? ("owner_id", "member_id", "member_entity", "owner_position")
            : ("member_id", "owner_id", "owner_entity", "member_position")
    }

    var metadataTable: String { qualified("strata_metadata") }
    var externalTable: String { qualified("strata_external") }
    var historyTable: String { qualified("strata_history") }

    /// The channel of `NOTIFY` for saves to this schema.
    var channel: String { Self.identifier("strata_" + name) }

    /// Whether an attribute's values live in `strata_external`.
    static func isExternal(_ attribute: AttributeDescription) -> Bool {
        attribute.type == .binaryData && attribute.allowsExternalBinaryDataStorage
    }

    /// The column type of an attribute.
    static func columnType(_ attribute: AttributeDescription) -> String {
        if isExternal(attribute) { return "bigint" }
        switch attribute.type {
        case .integer16: return "smallint"
        case .integer32: return "integer"
        case .integer64: return "bigint"
        case .decimal: return "numeric"
        case .double, .date: return "double precision"
        case .float: return "real"
        case .string, .uri: return "text COLLATE \"C\""
        case .boolean: return "boolean"
        case .binaryData, .transformable: return "bytea"
        case .uuid: return "uuid"
        case .undefined: return "bytea"
        }
    }

    // MARK: - Creation

    /// The statements that create the schema's tables, sequences and indexes (each `IF NOT EXISTS`).
    func creationStatements(recordsHistory: Bool) -> [String] {
        var statements = [
            "CREATE SCHEMA IF NOT EXISTS \(Self.quote(name))",
            "CREATE TABLE IF NOT EXISTS \(metadataTable) (key text COLLATE \"C\" PRIMARY KEY, value text NOT NULL)",
            "CREATE SEQUENCE IF NOT EXISTS \(qualified("strata_external_seq"))",
            """
            CREATE TABLE IF NOT EXISTS \(externalTable) (id bigint PRIMARY KEY \
            DEFAULT nextval('\(qualified("strata_external_seq").replacingOccurrences(of: "'", with: "''"))'), \
            bytes bytea NOT NULL)
            """,
        ]
        if recordsHistory {
            statements.append(
                "CREATE TABLE IF NOT EXISTS \(historyTable) (number bigserial PRIMARY KEY, record bytea NOT NULL)")
        }
        let roots = model.entities.filter { $0.superentity == nil }
        for root in roots {
            var definitions = [
                "strata_row_id bigint PRIMARY KEY", "strata_entity smallint NOT NULL",
                "strata_version bigint NOT NULL",
            ]
            for entity in root.allEntitiesInHierarchyBelow {
                for attribute in entity.persistentAttributes where attribute.entity === entity {
                    definitions.append("\(column(attribute)) \(Self.columnType(attribute))")
                }
                for relationship in entity.toOneRelationships where relationship.entity === entity {
                    let (id, entityColumn) = columns(relationship)
                    definitions.append("\(id) bigint")
                    definitions.append("\(entityColumn) smallint")
                }
            }
            statements.append("CREATE SEQUENCE IF NOT EXISTS \(sequence(of: root))")
            statements.append("CREATE TABLE IF NOT EXISTS \(table(of: root)) (\(definitions.joined(separator: ", ")))")
        }
        // Foreign keys once every table exists (a to-one may point at a table created later). Deferred: a save
        // inserts and deletes in any order; the context has applied the delete rules, so a to-one that still
        // names a deleted row (delete rule "no action") is set to null, as reading a dangling one gives nil.
        for root in roots {
            for entity in root.allEntitiesInHierarchyBelow {
                for relationship in entity.toOneRelationships where relationship.entity === entity {
                    let (id, _) = columns(relationship)
                    let constraint = Self.identifier(
                        "fk_\(tableName(of: root))_\(relationship.entity.name)_\(relationship.name)")
                    statements.append(
                        """
                        DO $$ BEGIN ALTER TABLE \(table(of: root)) ADD CONSTRAINT \(Self.quote(constraint)) \
                        FOREIGN KEY (\(id)) REFERENCES \(table(of: relationship.destinationEntity)) (strata_row_id) \
                        ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED; \
                        EXCEPTION WHEN duplicate_object THEN NULL; END $$
                        """)
                    statements.append(
                        "CREATE INDEX IF NOT EXISTS \(Self.quote(Self.identifier("ix_" + constraint))) ON \(table(of: root)) (\(id))"
                    )
                }
            }
        }
        var seenJoinTables = Set<String>()
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                guard case .joinTable(let side) = relationship.storage, seenJoinTables.insert(side.tableName).inserted
                else { continue }
                let owner = side.ownerRelationship
                let table = joinTable(side)
                statements.append(
                    """
                    CREATE TABLE IF NOT EXISTS \(table) (\
                    owner_id bigint NOT NULL REFERENCES \(self.table(of: owner.entity)) (strata_row_id) ON DELETE CASCADE, \
                    member_id bigint NOT NULL REFERENCES \(self.table(of: owner.destinationEntity)) (strata_row_id) \
                    ON DELETE CASCADE, \
                    owner_entity smallint NOT NULL, member_entity smallint NOT NULL, \
                    owner_position bigint NOT NULL DEFAULT 0, member_position bigint NOT NULL DEFAULT 0, \
                    PRIMARY KEY (owner_id, member_id))
                    """)
                let base = joinTables[side.tableName]!
                statements.append(
                    "CREATE INDEX IF NOT EXISTS \(Self.quote(Self.identifier(base + "_member"))) ON \(table) (member_id)"
                )
            }
        }
        for entity in model.entities {
            let table = table(of: entity)
            let kinds = entity.allEntitiesInHierarchyBelow.map { String($0.entityID) }.joined(separator: ", ")
            let isRoot = entity.superentity == nil && entity.subentities.isEmpty
            for constraint in entity.uniquenessConstraints where constraint.entity === entity {
                // Checked at commit (deferred), as the Strata store checks a save's final state: a save may swap
                // two rows' values. A constraint of the whole table is a unique index; one of a subentity covers
                // that entity's rows only, which a unique constraint cannot say and an exclusion constraint with
                // `=` (a unique index in all but name) can.
                let name = Self.quote(
                    Self.identifier("uq_\(entity.name)_" + constraint.attributeNames.joined(separator: "_")))
                let definition =
                    isRoot
                    ? "UNIQUE (\(constraint.attributes.map { column($0) }.joined(separator: ", ")))"
                    : "EXCLUDE USING btree (\(constraint.attributes.map { column($0) + " WITH =" }.joined(separator: ", "))) "
                        + "WHERE (strata_entity IN (\(kinds)))"
                statements.append(
                    """
                    DO $$ BEGIN ALTER TABLE \(table) ADD CONSTRAINT \(name) \(definition) DEFERRABLE INITIALLY DEFERRED; \
                    EXCEPTION WHEN duplicate_object OR duplicate_table THEN NULL; END $$
                    """)
            }
            for attribute in entity.persistentAttributes where attribute.entity === entity && attribute.isIndexed {
                let name = Self.identifier("ix_\(entity.name)_\(attribute.name)")
                statements.append(
                    "CREATE INDEX IF NOT EXISTS \(Self.quote(name)) ON \(table) (\(column(attribute)))")
            }
            for index in entity.indexes where index.entity === entity {
                let parts = index.elements.compactMap { element -> String? in
                    let direction = element.isAscending ? "" : " DESC"
                    if let attribute = element.attribute {
                        return attribute.storageIndex == nil ? nil : column(attribute) + direction
                    }
                    // A to-one's element: its row-ID column.
                    guard let relationship = entity.relationshipsByName[element.propertyName], !relationship.isToMany
                    else { return nil }
                    return columns(relationship).id + direction
                }
                guard !parts.isEmpty else { continue }
                let name = Self.identifier("fx_\(entity.name)_\(index.name)")
                statements.append(
                    "CREATE INDEX IF NOT EXISTS \(Self.quote(name)) ON \(table) (\(parts.joined(separator: ", ")))")
            }
        }
        return statements
    }
}
#endif
