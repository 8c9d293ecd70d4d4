import Strata

/// The tables and columns Core Data's SQLite store gives a model, as the importer reads them.
///
/// What the layout follows (public descriptions of stores Core Data wrote, reconciled; see the import tests for
/// the files they describe):
///
/// 1. One table per entity hierarchy, `Z` + the root entity's name uppercased, holding every entity of the
///    hierarchy: `Z_PK` (the primary key, unique in the table), `Z_ENT` (the row's entity, numbered in
///    `Z_PRIMARYKEY`) and `Z_OPT` (the row's version, raised by every save).
/// 2. Each persistent attribute of any entity of the hierarchy: a column `Z` + its name uppercased.
/// 3. Each to-one: a column `Z` + its name uppercased holding the related row's `Z_PK`; when the destination has
///    subentities, Core Data may add `Z<n>_<NAME>` holding the related row's `Z_ENT` (optional here, checked when
///    present).
/// 4. An ordered to-many whose inverse is a to-one: the destination's table has `Z_FOK_<INVERSE>`, the member's
///    position (the order is by that value, ties by `Z_PK`).
/// 5. A many-to-many: a join table `Z_<n><RELATIONSHIP>` named after one side (n is the number of the entity that
///    declares it), with a column `Z_<d><NAME>` per side holding the `Z_PK`s of the objects that side's
///    relationship `NAME` leads to (d: its destination's number), and for an ordered side `Z_FOK_<d><NAME>`.
///
/// Not handled, refused with ``ImportError/unsupportedModel(reason:)``: a to-many without an inverse, and two
/// entities of one hierarchy declaring properties of the same name (Core Data then numbers the columns).
struct CoreDataLayout {
    /// What a column of an entity table holds.
    enum ColumnRole {
        case primaryKey, entity, version
        case attribute(AttributeDescription)
        case toOne(RelationshipDescription)
        /// `Z<n>_<NAME>`: the related row's `Z_ENT`.
        case toOneEntity(RelationshipDescription)
        /// `Z_FOK_<NAME>`: the position of the row in the ordered to-many whose inverse is the to-one.
        case position(orderedToMany: RelationshipDescription)
    }

    /// One hierarchy's table.
    struct EntityTable {
        var name: String
        var root: EntityDescription
        /// Every column the model gives the table, by name (`Z<n>_` columns are added when the file has them).
        var columns: [String: ColumnRole]
    }

    /// One many-to-many's table, as `relationship` reads it.
    struct JoinTable {
        var name: String
        /// The side the importer writes links for (the other side is written from the same rows).
        var relationship: RelationshipDescription
        var inverse: RelationshipDescription
        /// Holds the `Z_PK`s of `relationship`'s members.
        var memberColumn: String
        /// Holds the `Z_PK`s of the objects whose `relationship` it is.
        var sourceColumn: String
        /// `Z_FOK_` columns: the member's position in `relationship` and the source's in `inverse` (ordered sides).
        var memberPositionColumn: String?
        var sourcePositionColumn: String?
    }

    let model: ManagedObjectModel
    /// Core Data's number of each entity.
    let numbers: [ObjectIdentifier: Int64]
    /// Entities by Core Data's number.
    let entitiesByNumber: [Int64: EntityDescription]
    var tables: [EntityTable] = []
    var joinTables: [JoinTable] = []
    /// Core Data's own tables in the file, skipped (history, CloudKit mirroring, the model cache).
    var skippedTables: [String] = []

    static func tableName(of root: EntityDescription) -> String { "Z" + root.name.uppercased() }
    static func columnName(of name: String) -> String { "Z" + name.uppercased() }

    /// Whether a table is one Core Data keeps for itself, never the model's.
    static func isCoreDataTable(_ name: String) -> Bool {
        ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"].contains(name)
            || name.hasPrefix("sqlite_") || name.hasPrefix("ANSCK")
    }

    /// The layout of `model` with the entity numbers of `entityTable`, checked against the file's tables.
    ///
    /// - Parameter columnsOf: the columns of a table of the file (names only), nil when there is no such table.
    /// - Throws: ``ImportError/entityMismatch(reason:)``, ``ImportError/missingTable(_:)``,
    ///   ``ImportError/missingColumn(table:column:)``, ``ImportError/unknownTable(_:)``,
    ///   ``ImportError/unknownColumn(table:column:)``, ``ImportError/unsupportedModel(reason:)``.
    init(
        model: ManagedObjectModel, entityTable: CoreDataEntityTable, fileTables: [String],
        columnsOf: (String) throws(ImportError) -> [String]
    ) throws(ImportError) {
        self.model = model
        var numbers: [ObjectIdentifier: Int64] = [:]
        var byNumber: [Int64: EntityDescription] = [:]
        for entity in model.entities {
            guard let entry = entityTable.entries[entity.name] else {
                throw .entityMismatch(reason: "the model's entity \(entity.name) is not listed")
            }
            numbers[ObjectIdentifier(entity)] = entry.number
            byNumber[entry.number] = entity
        }
        for name in entityTable.entries.keys.sorted() where model.entity(named: name) == nil {
            throw .entityMismatch(reason: "\(name) is no entity of the model")
        }
        for entity in model.entities {
            let expected = entity.superentity.map { numbers[ObjectIdentifier($0)]! } ?? 0
            let found = entityTable.entries[entity.name]!.superNumber
            guard expected == found else {
                throw .entityMismatch(
                    reason: "\(entity.name) has Z_SUPER \(found) where the model's superentity "
                        + "\(entity.superentity?.name ?? "(none)") is \(expected)")
            }
        }
        self.numbers = numbers
        self.entitiesByNumber = byNumber

        let present = Set(fileTables)
        var accounted = Set<String>()
        // 1-4: the hierarchies' tables.
        var positionColumns: [ObjectIdentifier: [String: ColumnRole]] = [:]
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity && relationship.isToMany {
                guard let inverse = relationship.inverseRelationship else {
                    throw .unsupportedModel(
                        reason: "\(entity.name).\(relationship.name) is a to-many without an inverse")
                }
                if relationship.isOrdered, !inverse.isToMany {
                    let root = relationship.destinationEntity.rootEntity
                    positionColumns[ObjectIdentifier(root), default: [:]]["Z_FOK_" + inverse.name.uppercased()] =
                        .position(orderedToMany: relationship)
                }
            }
        }
        for root in model.entities where root.superentity == nil {
            let name = Self.tableName(of: root)
            guard present.contains(name) else { throw .missingTable(name) }
            accounted.insert(name)
            var columns: [String: ColumnRole] = ["Z_PK": .primaryKey, "Z_ENT": .entity, "Z_OPT": .version]
            var declaredBy: [String: String] = [:]
            func add(
                _ column: String, _ role: ColumnRole, declaredIn entity: EntityDescription, property: String
            )
                throws(ImportError)
            {
                if let other = declaredBy[column] {
                    throw .unsupportedModel(
                        reason: "\(other) and \(entity.name).\(property) both map to \(name).\(column) "
                            + "(Core Data numbers such columns; the importer does not)")
                }
                declaredBy[column] = "\(entity.name).\(property)"
                columns[column] = role
            }
            for entity in root.allEntitiesInHierarchyBelow {
                for attribute in entity.persistentAttributes where attribute.entity === entity {
                    try add(
                        Self.columnName(of: attribute.name), .attribute(attribute), declaredIn: entity,
                        property: attribute.name)
                }
                for relationship in entity.toOneRelationships where relationship.entity === entity {
                    try add(
                        Self.columnName(of: relationship.name), .toOne(relationship), declaredIn: entity,
                        property: relationship.name)
                }
            }
            for (column, role) in positionColumns[ObjectIdentifier(root)] ?? [:] {
                guard case .position(let relationship) = role else { continue }
                try add(
                    column, role, declaredIn: relationship.destinationEntity,
                    property: "(position in "
                        + "\(relationship.entity.name).\(relationship.name))")
            }
            let required = Set(columns.keys)
            for column in try columnsOf(name) where !required.contains(column) {
                if let relationship = Self.toOneEntityColumn(column, in: columns) {
                    columns[column] = .toOneEntity(relationship)
                    continue
                }
                throw .unknownColumn(table: name, column: column)
            }
            let found = Set(try columnsOf(name))
            for column in required.sorted() where !found.contains(column) {
                throw .missingColumn(table: name, column: column)
            }
            tables.append(EntityTable(name: name, root: root, columns: columns))
        }
        // 5: many-to-many join tables.
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity && relationship.isManyToMany {
                let inverse = relationship.inverseRelationship!
                // Each pair once: from the side Strata's join table is named after.
                guard case .joinTable(let side) = relationship.storage, side.isOwnerSide else { continue }
                let number = { (entity: EntityDescription) in numbers[ObjectIdentifier(entity)]! }
                let candidates = [
                    "Z_\(number(relationship.entity))\(relationship.name.uppercased())",
                    "Z_\(number(inverse.entity))\(inverse.name.uppercased())",
                ]
                guard let name = candidates.first(where: { present.contains($0) }) else {
                    throw .missingTable(candidates.joined(separator: " or "))
                }
                accounted.insert(name)
                let memberColumn = "Z_\(number(relationship.destinationEntity))\(relationship.name.uppercased())"
                let sourceColumn = "Z_\(number(inverse.destinationEntity))\(inverse.name.uppercased())"
                guard memberColumn != sourceColumn else {
                    throw .unsupportedModel(
                        reason: "\(entity.name).\(relationship.name) and its inverse map to one column \(memberColumn) "
                            + "(Core Data numbers such columns; the importer does not)")
                }
                var table = JoinTable(
                    name: name, relationship: relationship, inverse: inverse, memberColumn: memberColumn,
                    sourceColumn: sourceColumn)
                if relationship.isOrdered { table.memberPositionColumn = "Z_FOK_" + memberColumn.dropFirst(2) }
                if inverse.isOrdered { table.sourcePositionColumn = "Z_FOK_" + sourceColumn.dropFirst(2) }
                let required = Set(
                    [memberColumn, sourceColumn]
                        + [table.memberPositionColumn, table.sourcePositionColumn]
                        .compactMap { $0 })
                let found = try columnsOf(name)
                for column in found where !required.contains(column) {
                    throw .unknownColumn(table: name, column: column)
                }
                for column in required.sorted() where !found.contains(column) {
                    throw .missingColumn(table: name, column: column)
                }
                joinTables.append(table)
            }
        }
        for table in fileTables.sorted() where !accounted.contains(table) {
            guard Self.isCoreDataTable(table) else { throw .unknownTable(table) }
            if !["Z_PRIMARYKEY", "Z_METADATA"].contains(table), !table.hasPrefix("sqlite_") {
                skippedTables.append(table)
            }
        }
    }

    /// The to-one a `Z<n>_<NAME>` column belongs to, when `column` is one.
    private static func toOneEntityColumn(
        _ column: String, in columns: [String: ColumnRole]
    ) -> RelationshipDescription? {
        guard column.hasPrefix("Z"), let underscore = column.firstIndex(of: "_") else { return nil }
        let digits = column[column.index(after: column.startIndex)..<underscore]
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        let named = "Z" + column[column.index(after: underscore)...]
        if case .toOne(let relationship) = columns[named] { return relationship }
        return nil
    }

    /// Core Data's number of `entity`.
    func number(of entity: EntityDescription) -> Int64 { numbers[ObjectIdentifier(entity)]! }
}
