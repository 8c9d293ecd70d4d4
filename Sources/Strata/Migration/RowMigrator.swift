import Foundation
import StrataFormat
import StrataIO
import StrataStorage

/// The data step of a Strata store's migration when the mapping needs no objects (every lightweight one whose
/// relationships keep their storage): rows are read where they lie, rewritten field by field and written bottom-up
/// into the new store's page file, as compaction writes it (FORMAT.md §8.1), with every index built from the new
/// rows. No object, context, log record or in-memory tree is made per row.
///
/// 1. Plan (``init(mapping:)``, nil when the mapping needs the object path, ``ObjectCopier``): for each source
///    entity, its destination entity and, for each destination field (FORMAT.md §6.7), where its bytes come from:
///    a source field copied byte for byte (an attribute, renamed or not, or a widened integer), converted (an
///    integer or float to a double or decimal), or null replaced by the attribute's default; a default; a to-one's
///    reference with its entity ID renumbered. Each source root table feeds one destination root table and keeps
///    its row IDs, so references and join-table links stay valid; a join table is copied link by link (sides
///    swapped when the owner side changed). Validation rules the source did not have are checked row by row.
/// 2. Copy (``copy(from:into:configuration:fileSystem:progress:)``): write the new store with ``StoreBuilder``:
///    the metadata row (the source's UUID and application keys, the destination's version hash, the history of
///    version hashes), each entity table and join table in row-ID order with its next row ID, then every index
///    the destination model declares, loaded bottom-up from the rows written.
/// 3. Blobs: rows whose binary values were blobs are written with a null there first; one write transaction per
///    batch of them then stores each value again in the new store and sets the row's field.
///
/// Not on this path (``init(mapping:)`` returns nil): custom values or policies, a source entity removed while a
/// kept relationship may name its rows, a relationship whose storage changes (a to-one made to-many, an unordered
/// one-to-many made ordered), a derived attribute that is new or derived otherwise, a new uniqueness constraint.
struct RowMigrator {
    /// Where the bytes of one destination field come from. Every payload is a number (encoded constants and
    /// attributes are named by their position in ``constants`` and ``attributes``), so that walking a row's plan
    /// retains nothing: the profile of a 1,000,000-row migration showed the copies of an enum with array and class
    /// payloads as a tenth of the row loop.
    enum FieldSource {
        /// The source field, byte for byte.
        case copy(Int)
        /// The source field; a null takes the encoded default (``constants``[constant]).
        case copyOrDefault(Int, constant: Int)
        /// The source field decoded as ``attributes``[from], converted to the type of ``attributes``[to], checked
        /// against its validation rules, encoded; a null takes the destination's default when it has one.
        case convert(Int, from: Int, to: Int)
        /// An encoded field (a default, or null): ``constants``[constant].
        case constant(Int)
        /// A to-one: the reference (source field `field`) and the entity-ID field after it. `fixedEntity` is the
        /// source entity of the related row when the source field after the reference holds none.
        case reference(field: Int, fixedEntity: UInt16?, writesEntity: Bool)
        /// A binary attribute's source field, which may be a blob reference (stored again in step 3); the
        /// destination attribute is ``attributes``[attribute].
        case binary(Int, attribute: Int)
    }

    /// How the rows of one source entity become rows of a destination entity.
    struct EntityPlan {
        let destination: EntityDescription
        let fields: [FieldSource]

        /// Destination field position -> where its bytes come from (a reference fills two positions; the
        /// entity-ID field after it is not named here).
        var sourceOfField: [Int: FieldSource] {
            var sources: [Int: FieldSource] = [:]
            var position = 0
            for source in fields {
                sources[position] = source
                position += 1
                if case .reference = source { position += 1 }
            }
            return sources
        }
    }

    /// One destination table and where its rows come from.
    struct TablePlan {
        let name: String
        /// The source table read (nil: the table starts empty).
        let source: String?
        /// For a join table: whether the link's two sides swap.
        let swapsSides: Bool
        let isJoinTable: Bool
    }

    let mapping: MappingModel
    /// Source entity ID -> plan; nil for entities whose rows are dropped.
    let entities: [EntityPlan?]
    /// Encoded fields the plans name.
    let constants: [[UInt8]]
    /// Attributes the plans name.
    let attributes: [AttributeDescription]
    /// Source entity ID -> destination entity ID.
    let entityIDs: [UInt16: UInt16]
    let tables: [TablePlan]

    /// Rows written per progress report.
    static let progressStride = 4096
    /// Blob values stored per write transaction in step 3.
    static let blobBatch = 4096

    // MARK: - 1. Plan

    /// The plan of step 1, or nil when the mapping needs objects.
    init?(mapping: MappingModel) {
        let source = mapping.sourceModel
        let destination = mapping.destinationModel
        self.mapping = mapping
        var byDestination: [String: EntityMapping] = [:]
        for entityMapping in mapping.entityMappings {
            guard entityMapping.policy == nil else { return nil }
            for (_, value) in entityMapping.attributeMappings {
                if case .computed = value { return nil }
            }
            byDestination[entityMapping.destinationEntityName] = entityMapping
        }
        // Source entity -> destination entity, one to one; source root -> destination root, one to one.
        var sourceOf: [String: EntityDescription] = [:]
        var entityIDs: [UInt16: UInt16] = [:]
        var roots: [String: String] = [:]
        var rootsBack: [String: String] = [:]
        for entity in destination.entities where !entity.isAbstract {
            guard let name = byDestination[entity.name]?.sourceEntityName else { continue }
            guard let from = source.entity(named: name), !from.isAbstract, entityIDs[from.entityID] == nil else {
                return nil
            }
            sourceOf[entity.name] = from
            entityIDs[from.entityID] = entity.entityID
            let (sourceRoot, destinationRoot) = (from.rootEntity.name, entity.rootEntity.name)
            guard roots[sourceRoot, default: destinationRoot] == destinationRoot,
                rootsBack[destinationRoot, default: sourceRoot] == sourceRoot
            else { return nil }
            roots[sourceRoot] = destinationRoot
            rootsBack[destinationRoot] = sourceRoot
        }
        let removed = Set(source.entities.filter { !$0.isAbstract && entityIDs[$0.entityID] == nil }.map(\.name))

        /// The source relationship a destination relationship is filled from (nil: none); `.none` when
        /// the entities sharing it disagree.
        func sourceRelationship(of relationship: RelationshipDescription) -> RelationshipDescription?? {
            var found: RelationshipDescription??
            for entity in relationship.entity.allEntitiesInHierarchyBelow where !entity.isAbstract {
                guard let entityMapping = byDestination[entity.name], let from = sourceOf[entity.name] else { continue }
                let key = entityMapping.relationshipMappings.first { $0.destination == relationship.name }?.source
                let candidate = key.flatMap { from.relationshipsByName[$0] }
                if let found,
                    found?.name != candidate?.name || found?.entity.rootEntity !== candidate?.entity.rootEntity
                {
                    return .none
                }
                found = .some(candidate)
            }
            return .some(found ?? nil)
        }

        // Relationships: the same storage on both sides, targets that map into the destination's targets.
        var joinTables: [String: TablePlan] = [:]
        for entity in destination.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                guard case .some(let from) = sourceRelationship(of: relationship) else { return nil }
                let inverseFrom: RelationshipDescription?
                if let inverse = relationship.inverseRelationship {
                    guard case .some(let found) = sourceRelationship(of: inverse) else { return nil }
                    inverseFrom = found
                } else {
                    inverseFrom = nil
                }
                guard let from else {
                    // A new relationship stays empty only when its inverse is new too.
                    if inverseFrom != nil { return nil }
                    if case .joinTable(let side) = relationship.storage, side.isOwnerSide {
                        joinTables[side.tableName] = TablePlan(
                            name: side.tableName, source: nil, swapsSides: false, isJoinTable: true)
                    }
                    continue
                }
                guard from.isToMany == relationship.isToMany, from.isOrdered == relationship.isOrdered,
                    from.inverseRelationship?.name == inverseFrom?.name,
                    from.inverseRelationship?.isOrdered == inverseFrom?.isOrdered,
                    from.inverseRelationship?.isToMany == relationship.inverseRelationship?.isToMany
                else { return nil }
                // Every object the source relationship may name becomes an object the destination's may name.
                for target in from.destinationEntity.allEntitiesInHierarchyBelow where !target.isAbstract {
                    if removed.contains(target.name) { return nil }
                    guard let mapped = entityIDs[target.entityID],
                        destination.entities.first(where: { $0.entityID == mapped })?.isKind(
                            of: relationship.destinationEntity) == true
                    else { return nil }
                }
                switch (relationship.storage, from.storage) {
                case (.foreignKey, .foreignKey), (.inverseForeignKey, .inverseForeignKey):
                    continue
                case (.joinTable(let side), .joinTable(let sourceSide)):
                    guard side.isOwnerSide else { continue }
                    joinTables[side.tableName] = TablePlan(
                        name: side.tableName, source: sourceSide.tableName, swapsSides: !sourceSide.isOwnerSide,
                        isJoinTable: true)
                default:
                    return nil
                }
            }
        }

        // Fields.
        var entities = [EntityPlan?](repeating: nil, count: Int(source.entities.map(\.entityID).max() ?? 0) + 1)
        var constants: [[UInt8]] = [[RowRecord.Tag.null.rawValue]]
        var attributes: [AttributeDescription] = []
        for entity in destination.entities where !entity.isAbstract {
            guard let from = sourceOf[entity.name], let entityMapping = byDestination[entity.name] else { continue }
            // A constraint the source did not have may be broken by its rows.
            let sourceConstraints = Set(from.uniquenessConstraints.map(\.attributeNames))
            for constraint in entity.uniquenessConstraints {
                let names = constraint.attributes.map { attribute in
                    entityMapping.attributeMappings.first { $0.destination == attribute.name }.flatMap {
                        if case .source(let key) = $0.value { key } else { nil }
                    } ?? ""
                }
                guard sourceConstraints.contains(names) else { return nil }
            }
            var fields: [FieldSource] = []
            var unfilledToOnes = Set<Int>()
            for stored in entity.storedFields {
                switch stored {
                case .attribute(let index):
                    let attribute = entity.persistentAttributes[index]
                    guard
                        let field = Self.fieldSource(
                            of: attribute, from: from, mapping: entityMapping, constants: &constants,
                            attributes: &attributes)
                    else {
                        return nil
                    }
                    fields.append(field)
                case .reference(let index):
                    let relationship = entity.toOneRelationships[index]
                    guard case .some(let fromRelationship) = sourceRelationship(of: relationship) else { return nil }
                    let writesEntity = !relationship.destinationEntity.subentities.isEmpty
                    guard let fromRelationship, let field = fromRelationship.fieldIndex else {
                        fields.append(.constant(0))
                        unfilledToOnes.insert(index)
                        continue
                    }
                    let fixed =
                        fromRelationship.destinationEntity.subentities.isEmpty
                        ? fromRelationship.destinationEntity.entityID : nil
                    fields.append(.reference(field: field, fixedEntity: fixed, writesEntity: writesEntity))
                case .referenceEntity(let index):
                    // Written with its reference, unless that one is a constant null.
                    if unfilledToOnes.contains(index) { fields.append(.constant(0)) }
                }
            }
            entities[Int(from.entityID)] = EntityPlan(destination: entity, fields: fields)
        }

        var tables: [TablePlan] = []
        for root in destination.entities where root.superentity == nil {
            tables.append(
                TablePlan(
                    name: StrataStore.tableName(for: root),
                    source: rootsBack[root.name].flatMap { source.entity(named: $0) }.map(StrataStore.tableName(for:)),
                    swapsSides: false, isJoinTable: false))
        }
        for name in StrataStore.joinTableNames(of: destination) {
            tables.append(
                joinTables[name] ?? TablePlan(name: name, source: nil, swapsSides: false, isJoinTable: true))
        }
        self.entities = entities
        self.constants = constants
        self.attributes = attributes
        self.entityIDs = entityIDs
        self.tables = tables
    }

    /// Where a destination attribute's field comes from, or nil when only the object path can fill it.
    private static func fieldSource(
        of attribute: AttributeDescription, from: EntityDescription, mapping: EntityMapping,
        constants: inout [[UInt8]], attributes: inout [AttributeDescription]
    ) -> FieldSource? {
        func constant(_ bytes: [UInt8]) -> Int {
            constants.append(bytes)
            return constants.count - 1
        }
        func named(_ attribute: AttributeDescription) -> Int {
            attributes.append(attribute)
            return attributes.count - 1
        }
        let encodedDefault: [UInt8]?
        do {
            encodedDefault = try attribute.defaultValue.map { try encode(RowCoder.field(for: $0, of: attribute)) }
        } catch { return nil }
        let found: AttributeDescription?
        if attribute.isDerived {
            // Copied only when the source derives it the same way (its relationships keep their data).
            guard let same = from.attributesByName[attribute.name], same.derivation == attribute.derivation,
                same.type == attribute.type
            else { return nil }
            found = same
        } else {
            switch mapping.attributeMappings.first(where: { $0.destination == attribute.name })?.value {
            case .source(let key): found = from.attributesByName[key]
            case .computed: return nil
            case .defaultValue, nil: found = nil
            }
        }
        guard let found, let field = found.fieldIndex else { return .constant(encodedDefault.map(constant) ?? 0) }
        guard MappingModel.convertsLosslessly(from: found.type, to: attribute.type),
            found.valueTransformerName == attribute.valueTransformerName
        else { return nil }
        // A source value may be a blob only where the source allowed external storage.
        if found.allowsExternalBinaryDataStorage || attribute.allowsExternalBinaryDataStorage {
            let keepsValidity =
                attribute.validationRules == found.validationRules && (attribute.isOptional || !found.isOptional)
            return keepsValidity ? .binary(field, attribute: named(attribute)) : nil
        }
        let sameStorage =
            found.type == attribute.type
            || [AttributeType.integer16, .integer32, .integer64].contains(found.type)
                && [AttributeType.integer16, .integer32, .integer64].contains(attribute.type)
        let nullsNeedDefault = found.isOptional && !attribute.isOptional
        if sameStorage, attribute.validationRules == found.validationRules {
            if nullsNeedDefault {
                guard let encodedDefault else { return .convert(field, from: named(found), to: named(attribute)) }
                return .copyOrDefault(field, constant: constant(encodedDefault))
            }
            return .copy(field)
        }
        return .convert(field, from: named(found), to: named(attribute))
    }

    private static func encode(_ field: RowRecord.Field) -> [UInt8] {
        var writer = RowRecord.Writer(entityID: 0, rowVersion: 0, fieldCount: 1)
        writer.append(field)
        let row = writer.finish()
        return row.withUnsafeBytes { bytes in
            let header = try! RowRecord.Header.decode(bytes)
            return Array(bytes[try! header.span(ofField: 0, in: bytes)])
        }
    }

    // MARK: - 2. Copy

    /// A row whose binary values were blobs in the source (step 3).
    private struct PendingBlob {
        let table: String
        let row: UInt64
        let field: Int
        let blob: UInt64
        let attribute: AttributeDescription
    }

    /// Writes the migrated store in `migration` (a directory that must not exist) from the store `source`.
    ///
    /// - Parameters:
    ///   - source: the old store's engine, open.
    ///   - migration: the new store's directory.
    ///   - configuration: the engine settings of the new store (page size, blob threshold).
    ///   - fileSystem: the file-system seam.
    ///   - progress: the fraction done, up to 0.99.
    /// - Returns: the names of the new store's indexes that were copied from the old store's rather than sorted.
    /// - Throws: ``ValidationError`` for a value the destination refuses; ``ObjectGraphError/storage(_:)``.
    @discardableResult
    func copy(
        from source: Store, into migration: String, configuration: StoreConfiguration, fileSystem: any FileSystem,
        progress: ((Double) -> Void)?
    ) throws -> [String] {
        let snapshot = source.snapshot()
        var pending: [PendingBlob] = []
        var copied: [String] = []
        do {
            var total = 0
            for table in tables {
                if let name = table.source, let id = snapshot.table(named: name) {
                    total += try snapshot.rowCount(in: id)
                }
            }
            var done = 0
            var builder = try StoreBuilder(
                directory: migration, pageSize: source.pageSize, fileSystem: fileSystem)
            do {
                let indexes = Self.indexes(of: mapping.destinationModel)
                let sourceIndexes = Self.indexes(of: mapping.sourceModel)
                builder.beginTable(named: StrataStore.metadataTable)
                try builder.append(1, StrataStore.encodeMetadata(try metadata(of: snapshot)))
                try builder.endTable(nextRowID: 2)
                for table in tables {
                    let tableIndexes = try indexes.filter { $0.table == table.name }.map {
                        StoreBuilder.Index(
                            name: $0.name, fields: $0.fields, entityIDs: $0.entityIDs,
                            copiedFrom: try sameIndex(as: $0, of: table, among: sourceIndexes, in: snapshot))
                    }
                    copied += tableIndexes.filter { $0.copiedFrom != nil }.map(\.name)
                    builder.beginTable(named: table.name, indexes: tableIndexes)
                    var nextRowID: UInt64 = 1
                    if let name = table.source, let id = snapshot.table(named: name) {
                        nextRowID = try snapshot.nextRowID(in: id).rawValue
                        try snapshot.forEachRow(in: id) { row, bytes in
                            let rewritten =
                                table.isJoinTable
                                ? try link(bytes, swapping: table.swapsSides)
                                : try self.row(bytes, rowID: row.rawValue, table: table.name, pending: &pending)
                            if let rewritten { try builder.append(row.rawValue, rewritten) }
                            done += 1
                            if done % Self.progressStride == 0 { progress?(0.99 * Double(done) / Double(total)) }
                            return true
                        }
                    }
                    try builder.endTable(nextRowID: nextRowID)
                }
                try builder.finish()
            } catch {
                builder.abandon()
                throw error
            }
            if !pending.isEmpty { try storeBlobs(pending, from: snapshot, into: migration, configuration, fileSystem) }
        } catch let error as FormatError {
            throw ObjectGraphError.storage(.corruption(file: "store", offset: 0, reason: "\(error)"))
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        } catch let error as RowCodingError {
            throw ObjectGraphError.transformationFailed(key: "", reason: "\(error)")
        }
        return copied
    }

    /// Every engine index a model's store has.
    private static func indexes(of model: ManagedObjectModel) -> [IndexSpec] {
        StrataStore.relationshipIndexes(of: model) + StrataStore.attributeIndexes(of: model)
            + StrataStore.uniquenessIndexes(of: model) + StrataStore.fetchIndexes(of: model)
    }

    typealias IndexSpec = (name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)

    /// The index of the source store that holds exactly the entries `index` gets from the rewritten rows, when
    /// there is one: every row it covers keeps its row ID and the bytes of each key field (a field copied as it is,
    /// or a reference, whose row ID is copied), and it covers the rows of the same entities. Copying it in order
    /// spares the sort that is most of building an index (``StoreBuilder`` checks the copy against the rows).
    private func sameIndex(
        as index: IndexSpec, of table: TablePlan, among sourceIndexes: [IndexSpec], in snapshot: Snapshot
    ) throws -> (snapshot: Snapshot, index: IndexID)? {
        guard !table.isJoinTable, let sourceTable = table.source, let covered = index.entityIDs else { return nil }
        candidates: for candidate in sourceIndexes where candidate.table == sourceTable {
            guard let sourceCovered = candidate.entityIDs, candidate.fields.count == index.fields.count,
                Set(sourceCovered.compactMap { entityIDs[$0] }) == covered
            else { continue }
            for entity in sourceCovered {
                guard entityIDs[entity] != nil, Int(entity) < entities.count, let plan = entities[Int(entity)] else {
                    continue candidates
                }
                let sources = plan.sourceOfField
                for (field, sourceField) in zip(index.fields, candidate.fields) {
                    switch sources[field] {
                    case .copy(let copied) where copied == sourceField: continue
                    case .reference(let copied, _, _) where copied == sourceField: continue
                    default: continue candidates
                    }
                }
            }
            guard let id = snapshot.index(named: candidate.name) else { continue }
            let definition = try snapshot.indexDefinition(id)
            guard definition.fields == candidate.fields, definition.entityIDs == sourceCovered else { continue }
            return (snapshot, id)
        }
        return nil
    }

    /// The new store's metadata: the old one's keys (its UUID and the application's), the destination's version
    /// hash, and the hashes of every model the store was written with before.
    private func metadata(of snapshot: Snapshot) throws -> [String: String] {
        var metadata: [String: String] = [:]
        if let table = snapshot.table(named: StrataStore.metadataTable),
            let bytes = try snapshot.row(RowID(1), in: table)
        {
            metadata = try StrataStore.decodeMetadata(bytes)
        }
        // Rewritten for the new model when the store opens.
        for key in metadata.keys where key.hasPrefix("RelationshipLayout") {
            metadata[key] = nil
        }
        metadata[PersistentStoreMetadataKey.storeType] = PersistentStoreType.strata.description
        if metadata[PersistentStoreMetadataKey.storeUUID] == nil {
            metadata[PersistentStoreMetadataKey.storeUUID] = UUID().uuidString
        }
        metadata[PersistentStoreMetadataKey.modelVersionHash] = mapping.destinationVersionHash
        metadata[PersistentStoreMetadataKey.modelVersionHistory] =
            (metadata[PersistentStoreMetadataKey.modelVersionHistory].map { [$0] } ?? [])
            .appending(mapping.sourceVersionHash).joined(separator: ",")
        return metadata
    }

    /// A destination entity row from a source row; nil for a row of a removed entity.
    private func row(
        _ bytes: UnsafeRawBufferPointer, rowID: UInt64, table: String, pending: inout [PendingBlob]
    ) throws -> [UInt8]? {
        let header = try RowRecord.Header.decode(bytes)
        guard Int(header.entityID) < entities.count, let plan = entities[Int(header.entityID)] else { return nil }
        let destination = plan.destination
        var writer = RowRecord.Writer(
            entityID: destination.entityID, rowVersion: header.rowVersion, fieldCount: destination.storedFields.count,
            capacity: bytes.count)
        // The destination field the next append writes.
        var position = 0
        for source in plan.fields {
            position += 1
            switch source {
            case .copy(let field):
                writer.appendEncoded(
                    UnsafeRawBufferPointer(rebasing: bytes[try header.span(ofField: field, in: bytes)]))
            case .copyOrDefault(let field, let constant):
                let span = try header.span(ofField: field, in: bytes)
                if bytes[span.lowerBound] == RowRecord.Tag.null.rawValue {
                    constants[constant].withUnsafeBytes { writer.appendEncoded($0) }
                } else {
                    writer.appendEncoded(UnsafeRawBufferPointer(rebasing: bytes[span]))
                }
            case .constant(let constant):
                constants[constant].withUnsafeBytes { writer.appendEncoded($0) }
            case .convert(let field, let from, let to):
                let (from, to) = (attributes[from], attributes[to])
                let defaultValue = to.defaultValue
                var value = try RowCoder.value(from: RowRecord.field(at: field, in: bytes), of: from)
                    .map { ObjectCopier.convert($0, to: to.type) }
                if value == nil { value = defaultValue }
                try to.validate(value, objectDescription: "\(destination.name) row \(rowID)")
                writer.append(try RowCoder.field(for: value, of: to))
            case .reference(let field, let fixedEntity, let writesEntity):
                // The row ID is copied as it is (row IDs are kept); only an entity ID is renumbered.
                position += 1
                let span = try header.span(ofField: field, in: bytes)
                switch bytes[span.lowerBound] {
                case RowRecord.Tag.null.rawValue:
                    constants[0].withUnsafeBytes {
                        writer.appendEncoded($0)
                        writer.appendEncoded($0)
                    }
                    continue
                case RowRecord.Tag.reference.rawValue:
                    writer.appendEncoded(UnsafeRawBufferPointer(rebasing: bytes[span]))
                default:
                    throw FormatError.invalidField("row \(rowID) of \(table): field \(field) is not a reference")
                }
                guard writesEntity else {
                    constants[0].withUnsafeBytes { writer.appendEncoded($0) }
                    continue
                }
                var sourceEntity = fixedEntity
                if sourceEntity == nil, case .int64(let id) = try RowRecord.field(at: field + 1, in: bytes) {
                    sourceEntity = UInt16(exactly: id)
                }
                guard let sourceEntity, let mapped = entityIDs[sourceEntity] else {
                    throw FormatError.invalidField("row \(rowID) of \(table): field \(field) names no entity")
                }
                writer.append(.int64(Int64(mapped)))
            case .binary(let field, let attribute):
                let span = try header.span(ofField: field, in: bytes)
                if bytes[span.lowerBound] == RowRecord.Tag.blobReference.rawValue,
                    case .blobReference(let blob) = try RowRecord.field(at: field, in: bytes)
                {
                    pending.append(
                        PendingBlob(
                            table: table, row: rowID, field: position - 1, blob: blob, attribute: attributes[attribute])
                    )
                    writer.append(.null)
                } else {
                    writer.appendEncoded(UnsafeRawBufferPointer(rebasing: bytes[span]))
                }
            }
        }
        return writer.finish()
    }

    /// A join-table link with its entity IDs renumbered (and its sides swapped when the owner side changed).
    private func link(_ bytes: UnsafeRawBufferPointer, swapping: Bool) throws -> [UInt8] {
        let (_, fields) = try RowRecord.decodeAll(bytes)
        guard fields.count == 6 else { throw FormatError.invalidField("a link has \(fields.count) fields, not 6") }
        var out = swapping ? [fields[1], fields[0], fields[3], fields[2], fields[5], fields[4]] : fields
        for position in [2, 3] {
            guard case .int64(let id) = out[position], let source = UInt16(exactly: id), let mapped = entityIDs[source]
            else { throw FormatError.invalidField("a link's field \(position) names no entity of the source model") }
            out[position] = .int64(Int64(mapped))
        }
        return RowRecord.encode(entityID: 0, rowVersion: 0, fields: out)
    }

    // MARK: - 3. Blobs

    /// Stores the binary values the source kept as blobs in the new store and sets their rows' fields.
    private func storeBlobs(
        _ pending: [PendingBlob], from snapshot: Snapshot, into migration: String, _ configuration: StoreConfiguration,
        _ fileSystem: any FileSystem
    ) throws {
        var configuration = configuration
        configuration.createIfMissing = false
        let store = try Store.open(at: migration, configuration: configuration, fileSystem: fileSystem)
        do {
            for start in stride(from: 0, to: pending.count, by: Self.blobBatch) {
                try store.write { txn in
                    for blob in pending[start..<min(start + Self.blobBatch, pending.count)] {
                        guard let bytes = try snapshot.readBlob(BlobID(blob.blob)) else {
                            throw StorageError.corruption(
                                file: blob.table, offset: blob.row, reason: "blob \(blob.blob) is missing")
                        }
                        guard let table = txn.table(named: blob.table),
                            let row = try txn.row(RowID(blob.row), in: table)
                        else { throw StorageError.rowNotFound(table: TableID(0), row: RowID(blob.row)) }
                        let (header, decoded) = try RowRecord.decodeAll(row)
                        var fields = decoded
                        fields[blob.field] =
                            blob.attribute.allowsExternalBinaryDataStorage
                                && configuration.shouldStoreAsBlob(length: bytes.count)
                            ? .blobReference(try txn.storeBlob(bytes).rawValue) : .bytes(bytes)
                        try txn.update(
                            RowID(blob.row), in: table,
                            to: RowRecord.encode(
                                entityID: header.entityID, rowVersion: header.rowVersion, fields: fields))
                    }
                }
            }
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
    }
}

extension Array {
    fileprivate func appending(_ element: Element) -> [Element] { self + [element] }
}
