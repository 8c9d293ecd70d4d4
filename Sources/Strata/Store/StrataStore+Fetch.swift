import Foundation
import StrataFormat
import StrataQuery
import StrataStorage

/// Reads encoded rows of one engine snapshot for predicates and sort keys: one field at a time
/// (`RowRecord.field(at:in:)`), related rows on demand (kept for the rest of the query, as many rows name
/// the same few related rows), to-manys through the relationship indexes.
final class StrataRowReader: StoreQueryReader {
    /// A row in the scan's buffer (valid only while the scan visits it) or copied out.
    enum Row {
        case buffer(UnsafeRawBufferPointer)
        case bytes([UInt8])

        func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
            switch self {
            case .buffer(let buffer): try body(buffer)
            case .bytes(let bytes): try bytes.withUnsafeBytes(body)
            }
        }
    }

    let store: StrataStore
    let snapshot: Snapshot
    private var related: [StoredReference: [UInt8]] = [:]

    let storeIdentity: StoreIdentity

    init(store: StrataStore, snapshot: Snapshot) {
        self.store = store
        self.snapshot = snapshot
        storeIdentity = StoreIdentity.interned(store.identifier)
    }

    func row(_ reference: StoredReference) throws -> Row? {
        if let bytes = related[reference] { return .bytes(bytes) }
        guard let bytes = try snapshot.row(RowID(reference.rowID), in: store.table(for: reference.entity)) else {
            return nil
        }
        // Bounded: a query over many distinct related rows keeps the most recent ones only.
        if related.count >= 4096 { related.removeAll(keepingCapacity: true) }
        related[reference] = bytes
        return .bytes(bytes)
    }

    func value(of attribute: AttributeDescription, in row: Row) throws -> AttributeValue? {
        let field = try row.withBytes { buffer in try RowRecord.field(at: attribute.fieldIndex!, in: buffer) }
        if case .blobReference(let blob) = field {
            // A large binary value kept outside the row: compared by its bytes.
            guard let bytes = try snapshot.readBlob(BlobID(blob)) else {
                throw StorageError.corruption(
                    file: "blobs", offset: blob, reason: "a row references missing blob \(blob)")
            }
            return try RowCoder.value(from: .bytes(bytes), of: attribute)
        }
        return try RowCoder.value(from: field, of: attribute)
    }

    func toOne(_ relationship: RelationshipDescription, in row: Row) throws -> StoredReference? {
        let position = relationship.fieldIndex!
        let (target, entityField) = try row.withBytes { buffer in
            (try RowRecord.field(at: position, in: buffer), try RowRecord.field(at: position + 1, in: buffer))
        }
        return reference(through: relationship, target: target, entityField: entityField)
    }

    /// The destination a to-one's fields name: its reference field and the entity field after it (nil when the
    /// reference field holds no reference).
    func reference(
        through relationship: RelationshipDescription, target: RowRecord.Field, entityField: RowRecord.Field
    ) -> StoredReference? {
        guard case .reference(let rowID) = target else { return nil }
        if case .int64(let entityID) = entityField, let id = UInt16(exactly: entityID),
            let concrete = store.entitiesByID[id], concrete.isKind(of: relationship.destinationEntity)
        {
            return StoredReference(entity: concrete, rowID: rowID)
        }
        return StoredReference(entity: relationship.destinationEntity, rowID: rowID)
    }

    func toMany(_ relationship: RelationshipDescription, of reference: StoredReference) throws -> [StoredReference] {
        switch relationship.storage {
        case .foreignKey:
            return []
        case .inverseForeignKey(let inverse):
            return try store.referencingRows(through: inverse, to: reference.rowID, in: snapshot)
        case .joinTable(let side):
            return try store.links(of: reference.rowID, side: side, in: snapshot).map(\.member)
        }
    }

    func rowFilter(
        for predicate: ObjectPredicate, entity: EntityDescription
    ) -> (StoredReference, Row) throws -> Bool {
        let compiled = CompiledRowPredicate(predicate, entity: entity)
        return { reference, row in
            try row.withBytes { bytes in
                try compiled.matches(bytes, header: try RowRecord.Header.decode(bytes)) { part in
                    try self.matches(part, reference, row: row)
                }
            }
        }
    }

    func valuesReader(
        for keyPaths: [QueryKeyPath], entity: EntityDescription
    ) -> (StoredReference, Row) throws -> [QueryValue] {
        /// How one path is read: a stored attribute's field, a to-one's reference (as the identity a view gives),
        /// or, for anything longer, by walking the row's view.
        enum Step {
            case attribute(AttributeDescription)
            case toOne(RelationshipDescription)
            case walk(SortKey)
        }
        let steps = keyPaths.map { path -> Step in
            if path.components.count == 1, case .key(let key) = path.components[0] {
                if let attribute = entity.attributesByName[key], attribute.storageIndex != nil {
                    return .attribute(attribute)
                }
                if let relationship = entity.relationshipsByName[key], !relationship.isToMany {
                    return .toOne(relationship)
                }
            }
            return .walk(SortKey(path))
        }
        return { reference, row in
            try steps.map { step in
                switch step {
                case .attribute(let attribute):
                    do {
                        return try self.value(of: attribute, in: row)?.queryValue ?? .null
                    } catch {
                        throw PredicateEvaluationError.evaluable(key: attribute.name, underlying: error)
                    }
                case .toOne(let relationship):
                    let target: StoredReference?
                    do {
                        target = try self.toOne(relationship, in: row)
                    } catch {
                        throw PredicateEvaluationError.evaluable(key: relationship.name, underlying: error)
                    }
                    guard let target else { return .null }
                    return StoredObjectView(reader: self, reference: target, row: nil).predicateIdentity
                case .walk(let key):
                    return try key.value(of: StoredObjectView(reader: self, reference: reference, row: row))
                }
            }
        }
    }

    func version(of row: Row) throws -> UInt64 {
        try row.withBytes { try RowRecord.Header.decode($0).rowVersion }
    }

    func decode(_ row: Row, _ reference: StoredReference) throws -> StoredRow {
        // A row in the scan's buffer is read where it lies; one already in an array is kept as that array.
        let decoded: StoredRow?
        switch row {
        case .buffer(let bytes):
            decoded = try store.decode(bytes, rowID: reference.rowID, as: reference.entity)
        case .bytes(let bytes):
            decoded = try store.decode(bytes, rowID: reference.rowID, as: reference.entity)
        }
        guard let decoded else {
            throw StorageError.corruption(
                file: StrataStore.tableName(for: reference.entity.rootEntity), offset: reference.rowID,
                reason: "row is not a \(reference.entity.name)")
        }
        return decoded
    }
}

extension StrataStore {
    // MARK: - Attribute indexes

    /// The secondary indexes of attributes marked indexed in the model, as `(name, table name, fields,
    /// entity IDs)`: for each concrete entity and each of its indexed persistent attributes (inherited ones
    /// too), `attr.<Entity>.<attribute>` on the attribute's field, filtered to the entity's rows.
    static func attributeIndexes(
        of model: ManagedObjectModel
    ) -> [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] {
        var specs: [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] = []
        for entity in model.entities where !entity.isAbstract {
            for attribute in entity.persistentAttributes where attribute.isIndexed {
                specs.append(
                    (
                        attributeIndexName(attribute, of: entity), tableName(for: entity.rootEntity),
                        [attribute.fieldIndex!], [entity.entityID]
                    ))
            }
        }
        return specs
    }

    /// The secondary indexes of the model's fetch indexes (``EntityDescription/indexes``): for each concrete entity
    /// and each index covering it, `index.<Entity>.<index>` on its elements' fields in order, filtered to the
    /// entity's rows. The engine keeps keys in ascending order only; a descending element is read backwards.
    static func fetchIndexes(
        of model: ManagedObjectModel
    ) -> [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] {
        var specs: [(name: String, table: String, fields: [Int], entityIDs: Set<UInt16>?)] = []
        for entity in model.entities where !entity.isAbstract {
            for index in entity.indexes {
                specs.append(
                    (
                        fetchIndexName(index, of: entity), tableName(for: entity.rootEntity),
                        index.elements.map(\.fieldIndex), [entity.entityID]
                    ))
            }
        }
        return specs
    }

    /// `index.<Entity>.<index>[<fields>]`: the keys of fetch index `index` in the rows of `concrete`. The row
    /// fields are part of the name, so that a model whose index changed under the same name gets a new engine
    /// index (the store drops the old one when it opens; indexes are not part of the version hash).
    static func fetchIndexName(_ index: FetchIndexDescription, of concrete: EntityDescription) -> String {
        "\(fetchIndexPrefix)\(concrete.name).\(index.name)[\(index.elements.map { String($0.fieldIndex) }.joined(separator: ","))]"
    }

    /// What the name of every fetch index's engine index starts with.
    static let fetchIndexPrefix = "index."

    /// `attr.<Entity>.<attribute>`: the values of `attribute` in the rows of `concrete`.
    static func attributeIndexName(_ attribute: AttributeDescription, of concrete: EntityDescription) -> String {
        "attr.\(concrete.name).\(attribute.name)"
    }

    // MARK: - Fetching

    /// Answers a query in one engine snapshot, without making objects: candidate rows come from row IDs the
    /// predicate names (`SELF IN %@`), from a range of an attribute index (a comparison of an indexed
    /// attribute with a constant, `BETWEEN`, `IN`, `BEGINSWITH`), from the relationship index of a to-one
    /// whose destination matches (`department.name == %@`), or else from a scan of the hierarchy's table
    /// that skips other entities' rows by their header. Each candidate is then filtered by the whole
    /// predicate on its encoded bytes; only matching rows are decoded, and only when rows are asked for.
    ///
    /// - Throws: ``ObjectGraphError/storage(_:)`` for an engine failure or an undecodable row;
    ///   `PredicateEvaluationError` when the predicate cannot be evaluated on a row (a transient attribute,
    ///   operands an operator cannot compare); `CancellationError`.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        do {
            let snapshot = engine.snapshot()
            return try fetch(request, in: snapshot)
        } catch let error as StorageError {
            throw ObjectGraphError.storage(error)
        } catch let error as FormatError {
            throw ObjectGraphError.storage(
                .corruption(file: Self.tableName(for: request.entity.rootEntity), offset: 0, reason: "\(error)"))
        } catch let error as RowCodingError {
            throw ObjectGraphError.storage(
                .corruption(file: Self.tableName(for: request.entity.rootEntity), offset: 0, reason: "\(error)"))
        }
    }

    func fetch(_ request: StoreFetchRequest, in snapshot: Snapshot) throws -> StoreFetchResult {
        let table = table(for: request.entity)
        let wanted = request.entityIDs
        var plan = try candidates(for: request, in: snapshot)
        if request.resultKind == .count, request.predicate == nil, request.rowIDs == nil,
            Set(request.entity.rootEntity.allEntitiesInHierarchyBelow.map(\.entityID)).isSubset(of: wanted)
        {
            // Every row of the table counts: the engine keeps the count.
            var result = StoreFetchResult()
            var count = max(0, try snapshot.rowCount(in: table) - request.fetchOffset)
            if request.fetchLimit > 0 { count = min(count, request.fetchLimit) }
            result.count = count
            return result
        }
        // The entities whose rows are candidates, by entity ID: arrays, not a set, on the path of every row; the
        // entity itself (a reference, retained when read) only for rows that match.
        var candidateEntities = [EntityDescription?](repeating: nil, count: Int(wanted.max() ?? 0) + 1)
        for id in wanted { candidateEntities[Int(id)] = entitiesByID[id] }
        let isCandidate = candidateEntities.map { $0 != nil }
        // A predicate that compiles whole is decided on each row's bytes before anything is made for the row;
        // StoreQuery then has nothing left to filter.
        // (Not an optional: unwrapping one on every row copied it, a retain and a release a row.)
        let compiled = request.predicate.map { CompiledRowPredicate($0, entity: request.entity) }
        let prefilter =
            compiled.flatMap { $0.isComplete ? $0 : nil }
            ?? CompiledRowPredicate(.constant(true), entity: request.entity)
        // Counted through a pointer: a variable the row loop captured would be checked for exclusive access on
        // every row (dynamically, 76 instructions a row under callgrind).
        var examinedHere = 0
        defer { examined.add(examinedHere, ordering: .relaxed) }
        /// Visits the plan's candidate rows of the wanted entities that the prefilter keeps, until `body` says stop.
        func forEachCandidate(
            _ body: (RowID, UnsafeRawBufferPointer, RowRecord.Header) throws -> Bool
        ) throws {
            try withUnsafeMutablePointer(to: &examinedHere) { counter in
                // Inlined into each walk's row closure: a scan's row then costs the walk one call.
                @inline(__always)
                func visit(_ id: RowID, _ bytes: UnsafeRawBufferPointer) throws -> Bool {
                    let header = try RowRecord.Header.decode(bytes)
                    let entityID = Int(header.entityID)
                    guard entityID < isCandidate.count, isCandidate[entityID] else { return true }
                    counter.pointee &+= 1
                    let holds = try prefilter.matches(bytes, header: header) { _ in
                        preconditionFailure("a predicate compiled whole interprets nothing")
                    }
                    guard holds else { return true }
                    return try body(id, bytes, header)
                }
                switch plan {
                case .scan:
                    try snapshot.forEachRow(in: table) { id, bytes in try visit(id, bytes) }
                case .rows(let rowIDs):
                    // In increasing order: one walk of the tree, no descent for a row in the leaf of the one before.
                    try snapshot.forEachRow(rowIDs.map(RowID.init), in: table) { id, bytes in
                        guard let bytes else { return true }
                        return try visit(id, bytes)
                    }
                }
            }
        }
        let reader = StrataRowReader(store: self, snapshot: snapshot)
        // Groups of fields and aggregates of fields are folded on the row bytes: no values per row, no object IDs.
        if case .groups(let keys, let aggregates) = request.resultKind, compiled?.isComplete ?? true,
            var grouping = RowGrouping(keys: keys, aggregates: aggregates, entity: request.entity)
        {
            var visited = 0
            try forEachCandidate { _, bytes, header in
                visited &+= 1
                if visited & 255 == 0 { try request.checkCancellation() }
                try grouping.add(bytes, header: header)
                return true
            }
            try request.checkCancellation()
            var result = StoreFetchResult()
            result.groups = grouping.groups(reader)
            result.count = result.groups.count
            return result
        }
        if case .scan = plan,
            let prefix = try sortedPrefix(
                request, snapshot, table, prefilter: compiled?.isComplete ?? true ? prefilter : nil)
        {
            plan = .rows(prefix)
        }
        var filtered = request
        if compiled?.isComplete == true { filtered.predicate = nil }
        let query = StoreQuery(reader: reader, request: filtered)
        let result = try query.run { body in
            try forEachCandidate { id, bytes, header in
                let reference = StoredReference(entity: candidateEntities[Int(header.entityID)]!, rowID: id.rawValue)
                return try body(reference, .buffer(bytes))
            }
        }
        if request.resultKind == .rows { reads.add(result.rows.count, ordering: .relaxed) }
        return result
    }

    // MARK: - Planning

    /// Where a query's candidate rows come from.
    enum CandidatePlan {
        /// Every row of the hierarchy's table.
        case scan
        /// These rows, in increasing row-ID order without duplicates.
        case rows([UInt64])
    }

    /// The narrowest candidate set one term of the predicate's top-level `AND` gives: row IDs named by the
    /// request or by `SELF`, an attribute index range, a to-one's index; else a scan.
    func candidates(for request: StoreFetchRequest, in snapshot: Snapshot) throws -> CandidatePlan {
        if let rowIDs = request.rowIDs { return .rows(Self.increasingWithoutDuplicates(rowIDs)) }
        guard let predicate = request.predicate else { return .scan }
        let terms: [ObjectPredicate]
        if case .and(let all) = predicate { terms = all } else { terms = [predicate] }
        var best: [UInt64]?
        for term in terms {
            guard case .comparison(let comparison) = term else {
                if case .constant(false) = term { return .rows([]) }
                continue
            }
            var rows = selfRows(comparison, request)
            if rows == nil { rows = try indexedRows(comparison, request, snapshot) }
            if rows == nil { rows = try relatedRows(comparison, request, snapshot) }
            if let rows, best == nil || rows.count < best!.count { best = rows }
        }
        if let rows = try compoundRows(terms, request, snapshot), best == nil || rows.count < best!.count {
            best = rows
        }
        guard let best else { return .scan }
        return .rows(Self.increasingWithoutDuplicates(best))
    }

    /// Row IDs sorted, each once: sorted in place, then adjacent duplicates dropped (a set first cost as much as
    /// the sort).
    static func increasingWithoutDuplicates(_ rows: [UInt64]) -> [UInt64] {
        var rows = rows
        rows.sort()
        var kept = 0
        for index in rows.indices where kept == 0 || rows[index] != rows[kept - 1] {
            rows[kept] = rows[index]
            kept += 1
        }
        rows.removeLast(rows.count - kept)
        return rows
    }

    /// The rows that can be in the window of a request sorted first by an indexed integer attribute with a limit,
    /// read from the front of the index (its back for a descending key) instead of a scan: entries in order until
    /// `fetchOffset + fetchLimit` of them are rows that match, then the rest of the last one's key (rows equal by
    /// the first key are ordered by the others, or by row ID). The query then sorts just these rows. Nil when it
    /// does not apply: no limit, a first key that is not such an attribute (strings and doubles are left out:
    /// the index's byte order is not the sort's), several concrete entities, or a predicate not compiled whole
    /// (`prefilter` nil), which could not be tested on the entries' rows.
    private func sortedPrefix(
        _ request: StoreFetchRequest, _ snapshot: Snapshot, _ table: TableID, prefilter: CompiledRowPredicate?
    ) throws -> [UInt64]? {
        guard request.fetchLimit > 0, let prefilter, let first = request.sortKeys.first,
            first.comparison == .standard, let key = first.keyPath.singleKey,
            let attribute = request.entity.attributesByName[key], attribute.storageIndex != nil,
            [.integer16, .integer32, .integer64].contains(attribute.type)
        else { return nil }
        switch request.resultKind {
        case .rows, .objectIDs, .values: break
        case .count, .groups: return nil
        }
        let concretes = request.entity.allEntitiesInHierarchyBelow.filter { request.includes($0) && !$0.isAbstract }
        guard concretes.count == 1, let concrete = concretes.first else { return nil }
        let name: String
        if attribute.isIndexed {
            name = Self.attributeIndexName(attribute, of: concrete)
        } else if let fetchIndex = request.entity.indexes.first(where: { $0.elements.first?.attribute === attribute }) {
            // The engine keeps every element's keys ascending (a descending element is read backwards).
            name = Self.fetchIndexName(fetchIndex, of: concrete)
        } else {
            return nil
        }
        guard let index = indexes[name] else { return nil }
        let wanted = request.fetchOffset + request.fetchLimit
        var rows: [UInt64] = []
        var matched = 0
        var cutoff: RowRecord.Field?
        try snapshot.forEachIndexEntry(in: index, from: nil, through: nil, reverse: !first.ascending) { entry in
            if let cutoff { guard entry.key.first == cutoff else { return false } }
            let holds = try snapshot.withRow(entry.row, in: table) { bytes in
                let header = try RowRecord.Header.decode(bytes)
                guard header.entityID == concrete.entityID else { return false }
                return try prefilter.matches(bytes, header: header) { _ in
                    preconditionFailure("a predicate compiled whole interprets nothing")
                }
            }
            guard holds == true else { return true }
            rows.append(entry.row.rawValue)
            matched += 1
            if matched == wanted { cutoff = entry.key.first }
            return true
        }
        return rows.sorted()
    }

    /// `SELF == id`, `SELF IN {ids}`: the rows of this store's hierarchy those IDs name.
    private func selfRows(_ comparison: PredicateComparison, _ request: StoreFetchRequest) -> [UInt64]? {
        guard comparison.modifier == .direct, case .evaluatedObject = comparison.left,
            case .constant(let value) = comparison.right
        else { return nil }
        let values: [QueryValue]
        switch (comparison.operator, value) {
        case (.equal, _): values = [value]
        case (.in, .array(let elements)): values = elements
        default: return nil
        }
        return values.compactMap { value in
            guard case .identity(let identity) = value, let id = identity.base as? ManagedObjectID,
                id.storeIdentifier == identifier, id.entity.rootEntity === request.entity.rootEntity
            else { return nil }
            return id.rowID
        }
    }

    /// The index key of a constant compared with an attribute, when the index orders it as the predicate
    /// does: a value of the attribute's own kind (integers, doubles, dates, strings compared without
    /// options, Booleans, UUIDs).
    private func indexField(_ value: QueryValue, for attribute: AttributeDescription) -> RowRecord.Field? {
        switch (attribute.type, value) {
        case (.integer16, .int(let number)), (.integer32, .int(let number)), (.integer64, .int(let number)):
            return .int64(number)
        case (.double, .double(let number)) where !number.isNaN: return .double(number)
        case (.date, .date(let date)) where !date.timeIntervalSinceReferenceDate.isNaN:
            return .date(secondsSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        case (.string, .string(let string)): return .string(string)
        case (.boolean, .bool(let flag)): return .boolean(flag)
        case (.uuid, .uuid(let uuid)): return .uuid(uuid.bigEndianNumber)
        default: return nil
        }
    }

    /// `key op constant` of a top-level term, when the key is one attribute compared without options.
    private func simpleComparison(
        _ comparison: PredicateComparison
    ) -> (String, PredicateComparison.Operator, QueryValue)? {
        guard comparison.modifier == .direct else { return nil }
        if let simple = comparison.keyComparison {
            guard simple.options.isEmpty else { return nil }
            return (simple.key, simple.operator, simple.value)
        }
        if comparison.operator == .between, comparison.options.isEmpty,
            case .keyPath(let path, .evaluatedObject) = comparison.left, let single = path.singleKey,
            case .constant(let bounds) = comparison.right
        {
            return (single, .between, bounds)
        }
        return nil
    }

    /// The rows a compound fetch index gives for terms of the predicate's top-level `AND` that fix its leading
    /// elements (`a == x AND b == y`) and then, optionally, bound the next one (`AND c > z`, `<`, `<=`, `>=`,
    /// `BETWEEN`): one range of the index, on two parts of its key or more (a single part is
    /// ``indexedRows(_:_:_:)``'s). Nil when no index of the entity applies; the smallest range when several do.
    /// The whole predicate still filters the rows: the range only narrows the candidates.
    private func compoundRows(
        _ terms: [ObjectPredicate], _ request: StoreFetchRequest, _ snapshot: Snapshot
    ) throws -> [UInt64]? {
        let comparisons = terms.compactMap { term -> (String, PredicateComparison.Operator, QueryValue)? in
            guard case .comparison(let comparison) = term else { return nil }
            return simpleComparison(comparison)
        }
        guard comparisons.count >= 2 else { return nil }
        let concretes = request.entity.allEntitiesInHierarchyBelow.filter { request.includes($0) && !$0.isAbstract }
        var best: [UInt64]?
        indexes: for fetchIndex in request.entity.indexes where fetchIndex.elements.count >= 2 {
            var prefix: [RowRecord.Field] = []
            var range: (IndexBound, IndexBound)?
            for element in fetchIndex.elements {
                guard let attribute = element.attribute else { break }
                let mine = comparisons.filter { $0.0 == attribute.name }
                if let equal = mine.first(where: { $0.1 == .equal }), let field = indexField(equal.2, for: attribute) {
                    prefix.append(field)
                    continue
                }
                range = mine.lazy.compactMap { self.bounds(after: prefix, $0.1, $0.2, attribute) }.first
                break
            }
            guard prefix.count + (range == nil ? 0 : 1) >= 2 else { continue }
            let (lower, upper) = range ?? (IndexBound(prefix), IndexBound(prefix))
            var rows: [UInt64] = []
            for concrete in concretes {
                guard let index = indexes[Self.fetchIndexName(fetchIndex, of: concrete)] else { continue indexes }
                // The entries' row IDs only: each lent where it lies, no key decoded or copied.
                try snapshot.forEachIndexEntryView(in: index, from: lower, through: upper, reverse: false) { entry in
                    rows.append(entry.row.rawValue)
                    return true
                }
            }
            if best == nil || rows.count < best!.count { best = rows }
        }
        return best
    }

    /// The index bounds of `attribute op value` on the key part after `prefix` (nil values excluded, as the
    /// comparison excludes them), or nil when the operator is not a range or the value not of the attribute's kind.
    private func bounds(
        after prefix: [RowRecord.Field], _ op: PredicateComparison.Operator, _ value: QueryValue,
        _ attribute: AttributeDescription
    ) -> (IndexBound, IndexBound)? {
        let notNull = IndexBound(prefix + [.null], inclusive: false)
        switch op {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard let field = indexField(value, for: attribute) else { return nil }
            switch op {
            case .lessThan: return (notNull, IndexBound(prefix + [field], inclusive: false))
            case .lessThanOrEqual: return (notNull, IndexBound(prefix + [field]))
            case .greaterThan: return (IndexBound(prefix + [field], inclusive: false), IndexBound(prefix))
            default: return (IndexBound(prefix + [field]), IndexBound(prefix))
            }
        case .between:
            guard case .array(let ends) = value, ends.count == 2, let low = indexField(ends[0], for: attribute),
                let high = indexField(ends[1], for: attribute)
            else { return nil }
            return (IndexBound(prefix + [low]), IndexBound(prefix + [high]))
        default:
            return nil
        }
    }

    /// The rows an attribute index range gives for `attribute op constant`, or nil when no index applies.
    private func indexedRows(
        _ comparison: PredicateComparison, _ request: StoreFetchRequest, _ snapshot: Snapshot
    ) throws -> [UInt64]? {
        guard let (key, op, value) = simpleComparison(comparison) else { return nil }
        guard let attribute = request.entity.attributesByName[key], attribute.storageIndex != nil else { return nil }
        // An attribute index, or else a fetch index whose first element is the attribute (its keys start with
        // the attribute's value, so the same bounds select the same rows as prefixes).
        let fetchIndex = request.entity.indexes.first { $0.elements.first?.attribute === attribute }
        guard attribute.isIndexed || fetchIndex != nil else { return nil }
        func indexName(of concrete: EntityDescription) -> String {
            if let fetchIndex, !attribute.isIndexed { return Self.fetchIndexName(fetchIndex, of: concrete) }
            return Self.attributeIndexName(attribute, of: concrete)
        }
        var ranges: [(IndexBound?, IndexBound?)] = []
        let notNull = IndexBound([.null], inclusive: false)
        switch op {
        case .equal:
            guard let field = indexField(value, for: attribute) else { return nil }
            ranges = [(IndexBound([field]), IndexBound([field]))]
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard let field = indexField(value, for: attribute) else { return nil }
            switch op {
            case .lessThan: ranges = [(notNull, IndexBound([field], inclusive: false))]
            case .lessThanOrEqual: ranges = [(notNull, IndexBound([field]))]
            case .greaterThan: ranges = [(IndexBound([field], inclusive: false), nil)]
            default: ranges = [(IndexBound([field]), nil)]
            }
        case .between:
            guard case .array(let bounds) = value, bounds.count == 2, let low = indexField(bounds[0], for: attribute),
                let high = indexField(bounds[1], for: attribute)
            else { return nil }
            ranges = [(IndexBound([low]), IndexBound([high]))]
        case .in:
            guard case .array(let elements) = value else { return nil }
            for element in elements {
                guard let field = indexField(element, for: attribute) else { return nil }
                ranges.append((IndexBound([field]), IndexBound([field])))
            }
        case .beginsWith:
            guard attribute.type == .string, case .string(let prefix) = value, !prefix.isEmpty else { return nil }
            let upper = Self.successor(of: prefix).map { IndexBound([.string($0)], inclusive: false) }
            ranges = [(IndexBound([.string(prefix)]), upper)]
        default:
            return nil
        }
        var rows: [UInt64] = []
        for concrete in request.entity.allEntitiesInHierarchyBelow where request.includes(concrete) {
            guard !concrete.isAbstract else { continue }
            guard let index = indexes[indexName(of: concrete)] else { return nil }
            for (lower, upper) in ranges {
                // The entries' row IDs only: each lent where it lies, no key decoded or copied (decoding each entry
                // into an array was 870 instructions an entry of W4b.graph's range).
                try snapshot.forEachIndexEntryView(in: index, from: lower, through: upper, reverse: false) { entry in
                    rows.append(entry.row.rawValue)
                    return true
                }
            }
        }
        return rows
    }

    /// The least string greater than every string that starts with `prefix` (in Unicode scalar order, which
    /// is the UTF-8 byte order the index keeps), or nil when there is none.
    static func successor(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if (0xD800...0xDFFF).contains(next) { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var string = ""
                string.unicodeScalars.append(contentsOf: scalars)
                return string
            }
        }
        return nil
    }

    /// `toOne.key op constant` (e.g. `department.name == "Sales"`) when the to-one has relationship indexes:
    /// the destinations that match (a query of their own, through their indexes when they have them), then
    /// the rows that name them, one index lookup each. `toOne == object` looks up the object directly.
    private func relatedRows(
        _ comparison: PredicateComparison, _ request: StoreFetchRequest, _ snapshot: Snapshot
    ) throws -> [UInt64]? {
        guard comparison.modifier == .direct, case .keyPath(let path, .evaluatedObject) = comparison.left,
            case .constant = comparison.right, case .key(let first) = path.components[0],
            let relationship = request.entity.relationshipsByName[first], !relationship.isToMany
        else { return nil }
        let concretes = request.entity.allEntitiesInHierarchyBelow.filter { request.includes($0) && !$0.isAbstract }
        guard concretes.allSatisfy({ indexes[Self.foreignKeyIndexName(relationship, of: $0)] != nil }) else {
            return nil
        }
        // The rows without a destination are not candidates: only a comparison false for nil may use this.
        guard case .constant(let constant) = comparison.right, constant != .null else { return nil }
        switch comparison.operator {
        case .notEqual: return nil
        case .in:
            if case .array(let elements) = constant, elements.contains(.null) { return nil }
        default: break
        }
        var targets: [UInt64]
        if path.components.count == 1 {
            let identities: [QueryValue]
            if case .array(let elements) = constant { identities = elements } else { identities = [constant] }
            guard identities.allSatisfy({ if case .identity = $0 { true } else { false } }) else { return nil }
            // `department == %@`, `department IN %@`: the objects named.
            let rest = PredicateComparison(
                .evaluatedObject, comparison.operator, comparison.right, options: comparison.options)
            guard let rows = selfRows(rest, StoreFetchRequest(entity: relationship.destinationEntity)) else {
                return nil
            }
            targets = rows
        } else {
            var inner = StoreFetchRequest(entity: relationship.destinationEntity)
            inner.predicate = .comparison(
                PredicateComparison(
                    .keyPath(QueryKeyPath(components: Array(path.components.dropFirst())), of: .evaluatedObject),
                    comparison.operator, comparison.right, options: comparison.options))
            inner.resultKind = .objectIDs
            inner.isCancelled = request.isCancelled
            targets = try fetch(inner, in: snapshot).references.map(\.rowID)
        }
        var rows: [UInt64] = []
        for target in targets {
            rows += try referencingRows(through: relationship, to: target, in: snapshot).map(\.rowID)
        }
        return rows
    }
}
