import Foundation
import Strata

/// Step 3 of ``CoreDataImporter/importStore(at:into:)``: reads every row of a Core Data store and writes it to a
/// Strata store, then the relationships kept outside the rows.
///
/// 1. For each hierarchy table, `Z_PK` and `Z_ENT` of every row: the concrete entity of every primary key, so
///    that a foreign key is resolved to its object's entity (and a dangling one refused) before anything is
///    written for it.
/// 2. Each table's rows in `Z_PK` order: the attribute values, the to-ones and `Z_OPT`, saved in batches; the
///    positions of ordered to-manys whose inverse is a to-one are collected.
/// 3. The ordered to-manys, each source's members in position order (ties by `Z_PK`).
/// 4. Each many-to-many's join table: the links of each source, in position order for an ordered side.
struct RowWriter {
    let reader: CoreDataStoreReader
    let layout: CoreDataLayout
    let store: StrataStore
    let batchSize: Int
    let progress: ((ImportProgress) -> Void)?

    private(set) var objectsByEntity: [String: Int] = [:]
    private(set) var links = 0
    private(set) var externalValues = 0
    /// The concrete entity of every row, by table name and `Z_PK`.
    private var entities: [String: [Int64: EntityDescription]] = [:]
    /// The to-ones of one-to-one pairs as read: relationship -> source `Z_PK` -> target `Z_PK` (nil for NULL).
    private var oneToOnes: [ObjectIdentifier: (RelationshipDescription, [Int64: Int64?])] = [:]
    /// Ordered to-manys whose inverse is a to-one: relationship -> source `Z_PK` -> members with positions.
    private var ordered: [ObjectIdentifier: (RelationshipDescription, [Int64: [(Int64, Int64, EntityDescription)]])] =
        [:]

    init(
        reader: CoreDataStoreReader, layout: CoreDataLayout, store: StrataStore, batchSize: Int,
        progress: ((ImportProgress) -> Void)?
    ) {
        self.reader = reader
        self.layout = layout
        self.store = store
        self.batchSize = batchSize
        self.progress = progress
    }

    mutating func run() throws(ImportError) {
        var total = 0
        for table in layout.tables { total += try reader.rowCount(of: table.name) }
        for table in layout.tables { try readEntities(of: table) }
        var done = 0
        progress?(ImportProgress(phase: "reading rows", completed: 0, total: total))
        for table in layout.tables { try writeRows(of: table, done: &done, total: total) }
        try checkOneToOnes()
        try writeOrderedRelationships()
        for table in layout.joinTables { try writeJoinTable(table) }
    }

    // MARK: - 1. Entities

    private mutating func readEntities(of table: CoreDataLayout.EntityTable) throws(ImportError) {
        var byKey: [Int64: EntityDescription] = [:]
        let sql = "SELECT Z_PK, Z_ENT FROM \(SQLiteConnection.quote(table.name))"
        try reader.connection.query(sql) { row throws(ImportError) in
            guard case .integer(let key) = row[0] else {
                throw .wrongType(
                    table: table.name, column: "Z_PK", row: 0, expected: "INTEGER", found: row[0].storageClass)
            }
            guard key >= 1 else {
                throw .invalidValue(table: table.name, column: "Z_PK", row: key, reason: "primary keys start at 1")
            }
            guard case .integer(let number) = row[1] else {
                throw .wrongType(
                    table: table.name, column: "Z_ENT", row: key, expected: "INTEGER", found: row[1].storageClass)
            }
            guard let entity = layout.entitiesByNumber[number], entity.rootEntity === table.root, !entity.isAbstract
            else { throw .unknownEntity(table: table.name, row: key, entityNumber: number) }
            byKey[key] = entity
        }
        entities[table.name] = byKey
    }

    /// The object a foreign key names, checked to be of `relationship`'s destination.
    private func reference(
        _ value: SQLiteValue, through relationship: RelationshipDescription, table: String, column: String, row: Int64
    ) throws(ImportError) -> StoredReference? {
        switch value {
        case .null: return nil
        case .integer(let key):
            let destination = CoreDataLayout.tableName(of: relationship.destinationEntity.rootEntity)
            guard let entity = entities[destination]?[key], entity.isKind(of: relationship.destinationEntity) else {
                throw .danglingReference(table: table, column: column, row: row, value: key)
            }
            return StoredReference(entity: entity, rowID: UInt64(key))
        default:
            throw .wrongType(table: table, column: column, row: row, expected: "INTEGER", found: value.storageClass)
        }
    }

    // MARK: - 2. Rows

    private mutating func writeRows(
        of table: CoreDataLayout.EntityTable, done: inout Int, total: Int
    ) throws(ImportError) {
        let columns = table.columns.keys.sorted()
        var index: [String: Int] = [:]
        for (position, column) in columns.enumerated() { index[column] = position }
        var attributeColumns: [ObjectIdentifier: String] = [:]
        var toOneColumns: [ObjectIdentifier: String] = [:]
        var toOneEntityColumns: [ObjectIdentifier: String] = [:]
        var positionColumns: [(column: String, relationship: RelationshipDescription)] = []
        for (column, role) in table.columns {
            switch role {
            case .attribute(let attribute): attributeColumns[ObjectIdentifier(attribute)] = column
            case .toOne(let relationship): toOneColumns[ObjectIdentifier(relationship)] = column
            case .toOneEntity(let relationship): toOneEntityColumns[ObjectIdentifier(relationship)] = column
            case .position(let relationship): positionColumns.append((column, relationship))
            case .primaryKey, .entity, .version: continue
            }
        }
        let sql =
            "SELECT \(columns.map(SQLiteConnection.quote).joined(separator: ", ")) FROM "
            + "\(SQLiteConnection.quote(table.name)) ORDER BY Z_PK"
        var changes = StoreChanges()
        let name = table.name
        let entitiesByKey = entities[name] ?? [:]
        try reader.connection.query(sql) { row throws(ImportError) in
            guard case .integer(let key) = row[index["Z_PK"]!], let entity = entitiesByKey[key] else { return }
            guard case .integer(let version) = row[index["Z_OPT"]!] else {
                throw .wrongType(
                    table: name, column: "Z_OPT", row: key, expected: "INTEGER",
                    found: row[index["Z_OPT"]!].storageClass)
            }
            guard version >= 1 else {
                throw .invalidValue(table: name, column: "Z_OPT", row: key, reason: "row versions start at 1")
            }
            var values: [AttributeValue?] = []
            values.reserveCapacity(entity.persistentAttributes.count)
            for attribute in entity.persistentAttributes {
                let column = attributeColumns[ObjectIdentifier(attribute)]!
                let raw = row[index[column]!]
                if attribute.allowsExternalBinaryDataStorage, case .blob(let bytes) = raw, bytes.first == 0x02 {
                    externalValues += 1
                }
                values.append(
                    try CoreDataValueDecoder.value(
                        raw, of: attribute, at: .init(table: name, column: column, row: key),
                        externalData: reader.externalDataDirectory))
            }
            var references: [ObjectReference?] = Array(repeating: nil, count: entity.toOneRelationships.count)
            for relationship in entity.toOneRelationships {
                let column = toOneColumns[ObjectIdentifier(relationship)]!
                let target = try reference(
                    row[index[column]!], through: relationship, table: name, column: column, row: key)
                if let target, let entityColumn = toOneEntityColumns[ObjectIdentifier(relationship)],
                    case .integer(let number) = row[index[entityColumn]!],
                    number != layout.number(of: target.entity)
                {
                    throw .invalidValue(
                        table: name, column: entityColumn, row: key,
                        reason: "Z_ENT \(number) where the row it names is \(target.entity.name) "
                            + "(\(layout.number(of: target.entity)))")
                }
                references[relationship.toOneIndex!] = target.map { .stored($0) }
                if let inverse = relationship.inverseRelationship, !inverse.isToMany {
                    let id = ObjectIdentifier(relationship)
                    var entry = oneToOnes[id] ?? (relationship, [:])
                    entry.1[key] = target.map { Int64($0.rowID) }
                    oneToOnes[id] = entry
                }
            }
            for (column, relationship) in positionColumns {
                // The position belongs to the rows that have the inverse to-one, when it is set.
                guard let inverse = relationship.inverseRelationship, entity.isKind(of: inverse.entity),
                    case .stored(let source)? = references[inverse.toOneIndex!]
                else { continue }
                var position: Int64 = 0
                switch row[index[column]!] {
                case .integer(let value): position = value
                case .null: position = 0
                default:
                    throw .wrongType(
                        table: name, column: column, row: key, expected: "INTEGER",
                        found: row[index[column]!].storageClass)
                }
                let id = ObjectIdentifier(relationship)
                var entry = ordered[id] ?? (relationship, [:])
                entry.1[Int64(source.rowID), default: []].append((position, key, entity))
                ordered[id] = entry
            }
            changes.inserts.append(
                StoreChanges.Insert(
                    entity: entity, values: values, rowID: UInt64(key), references: references,
                    version: UInt64(version)))
            objectsByEntity[entity.name, default: 0] += 1
            if changes.inserts.count >= batchSize {
                try save(changes)
                done += changes.inserts.count
                progress?(ImportProgress(phase: "reading rows", completed: done, total: total))
                changes = StoreChanges()
            }
        }
        if !changes.inserts.isEmpty {
            try save(changes)
            done += changes.inserts.count
            progress?(ImportProgress(phase: "reading rows", completed: done, total: total))
        }
    }

    private func save(_ changes: StoreChanges) throws(ImportError) {
        do { _ = try store.save(changes) } catch { throw .writeFailed(reason: "\(error)") }
    }

    /// Core Data keeps a one-to-one in both rows: the two must name each other (or both nothing), or the file
    /// holds no one graph to import.
    private func checkOneToOnes() throws(ImportError) {
        for (relationship, targets) in oneToOnes.values.sorted(by: { $0.0.name < $1.0.name }) {
            let inverse = relationship.inverseRelationship!
            let back = oneToOnes[ObjectIdentifier(inverse)]?.1 ?? [:]
            for (source, target) in targets.sorted(by: { $0.key < $1.key }) {
                guard let target else { continue }
                let named = back[target] ?? nil
                guard named == source else {
                    let table = CoreDataLayout.tableName(of: relationship.entity.rootEntity)
                    throw .invalidValue(
                        table: table, column: CoreDataLayout.columnName(of: relationship.name), row: source,
                        reason: "names \(relationship.destinationEntity.name) \(target), whose \(inverse.name) names "
                            + (named.map { "Z_PK \($0)" } ?? "nothing") + ": a one-to-one's two sides disagree")
                }
            }
        }
    }

    // MARK: - 3. Ordered to-manys

    private mutating func writeOrderedRelationships() throws(ImportError) {
        let total = ordered.values.reduce(0) { $0 + $1.1.count }
        var done = 0
        var changes = StoreChanges()
        for (relationship, sources) in ordered.values.sorted(by: { $0.0.name < $1.0.name }) {
            let sourceTable = CoreDataLayout.tableName(of: relationship.entity.rootEntity)
            for (key, members) in sources.sorted(by: { $0.key < $1.key }) {
                guard let entity = entities[sourceTable]?[key] else { continue }
                let sorted = members.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
                changes.links.append(
                    StoreChanges.Links(
                        relationship: relationship,
                        source: .stored(StoredReference(entity: entity, rowID: UInt64(key))),
                        members: sorted.map { .stored(StoredReference(entity: $0.2, rowID: UInt64($0.1))) }))
                links += sorted.count
                if changes.links.count >= batchSize {
                    try save(changes)
                    done += changes.links.count
                    progress?(ImportProgress(phase: "linking", completed: done, total: total))
                    changes = StoreChanges()
                }
            }
        }
        if !changes.links.isEmpty { try save(changes) }
    }

    // MARK: - 4. Many-to-manys

    private mutating func writeJoinTable(_ table: CoreDataLayout.JoinTable) throws(ImportError) {
        let columns =
            [table.sourceColumn, table.memberColumn]
            + [table.sourcePositionColumn, table.memberPositionColumn].compactMap { $0 }
        let sql =
            "SELECT \(columns.map(SQLiteConnection.quote).joined(separator: ", ")) FROM \(SQLiteConnection.quote(table.name))"
        // source -> (member position, member), member -> (source position, source)
        var forward: [StoredReference: [(Int64, StoredReference)]] = [:]
        var backward: [StoredReference: [(Int64, StoredReference)]] = [:]
        var count: Int64 = 0
        let name = table.name
        try reader.connection.query(sql) { row throws(ImportError) in
            count += 1
            let source = try reference(
                row[0], through: table.inverse, table: name, column: table.sourceColumn, row: count)
            let member = try reference(
                row[1], through: table.relationship, table: name, column: table.memberColumn, row: count)
            guard let source, let member else {
                throw .invalidValue(
                    table: name, column: source == nil ? table.sourceColumn : table.memberColumn, row: count,
                    reason: "a link without an object (NULL)")
            }
            var next = 2
            func position(_ column: String?) throws(ImportError) -> Int64 {
                guard let column else { return 0 }
                defer { next += 1 }
                switch row[next] {
                case .integer(let value): return value
                case .null: return 0
                default:
                    throw .wrongType(
                        table: name, column: column, row: count, expected: "INTEGER", found: row[next].storageClass)
                }
            }
            let sourcePosition = try position(table.sourcePositionColumn)
            let memberPosition = try position(table.memberPositionColumn)
            forward[source, default: []].append((memberPosition, member))
            backward[member, default: []].append((sourcePosition, source))
        }
        func ordered(_ list: [(Int64, StoredReference)]) -> [ObjectReference] {
            list.sorted { ($0.0, $0.1.rowID) < ($1.0, $1.1.rowID) }.map { .stored($0.1) }
        }
        var changes = StoreChanges()
        let total = forward.count + (table.inverse.isOrdered ? backward.count : 0)
        var done = 0
        func flush(_ force: Bool) throws(ImportError) {
            guard !changes.links.isEmpty, force || changes.links.count >= batchSize else { return }
            try save(changes)
            done += changes.links.count
            progress?(ImportProgress(phase: "linking \(table.relationship.name)", completed: done, total: total))
            changes = StoreChanges()
        }
        for (source, members) in forward.sorted(by: { $0.key.rowID < $1.key.rowID }) {
            changes.links.append(
                StoreChanges.Links(relationship: table.relationship, source: .stored(source), members: ordered(members))
            )
            links += members.count
            try flush(false)
        }
        // The same link rows serve the inverse; it is written again only to record its own order.
        if table.inverse.isOrdered {
            for (member, sources) in backward.sorted(by: { $0.key.rowID < $1.key.rowID }) {
                changes.links.append(
                    StoreChanges.Links(relationship: table.inverse, source: .stored(member), members: ordered(sources)))
                try flush(false)
            }
        }
        try flush(true)
    }
}
