import CPrefetch
import StrataFormat

/// A row as a persistent store returns it: the concrete entity, the version that optimistic locking
/// compares, and the values of the entity's persistent attributes in storage order.
///
/// A store that keeps rows as row records (FORMAT.md §6; ``StrataStore``) hands a row over as its bytes, checked
/// once, and each field is decoded when it is read (``value(atStorageIndex:)``): a fetched fault, and the row cache,
/// hold the row's few dozen bytes instead of an array of values, and an object decodes only the attributes it
/// reads. Other stores hand over the values. The properties below read the same either way.
public struct StoredRow: Sendable, Equatable {
    /// The row's concrete entity: the one it was inserted as, which may be a subentity of the entity asked for.
    public var entity: EntityDescription
    /// Incremented by every save that changes the row.
    public var version: UInt64
    /// The row's values: decoded, or the record's bytes. One word either way (both cases hold one reference).
    private var contents: Contents

    private enum Contents: Sendable {
        case values(DecodedContents)
        /// A row record of ``entity`` whose fields were checked (``RowCoder/checkRow(_:header:)``); its entity
        /// keeps rows as records (``EntityDescription/keepsRowsAsRecords``). No field references a blob: what the
        /// check found, kept so that loading the row does not search it again.
        case record([UInt8])
        /// As ``record``, with at least one field referencing a blob. (A case rather than a flag: the row stays three
        /// words, and so does the row cache's entry.)
        case recordReferencingBlobs([UInt8])
    }

    /// The decoded form, shared by copies of the row until one of them changes.
    private final class DecodedContents: Sendable {
        let values: [AttributeValue?]
        let references: [StoredReference?]
        let externalReferences: [Int: UInt64]

        init(values: [AttributeValue?], references: [StoredReference?], externalReferences: [Int: UInt64]) {
            self.values = values
            self.references = references
            self.externalReferences = externalReferences
        }
    }

    /// Creates a row as a store returns it.
    ///
    /// - Parameters:
    ///   - entity: the row's concrete entity.
    ///   - version: the row's version: 1 when inserted, one more after each save that changes it.
    ///   - values: the entity's persistent attribute values, in storage order.
    ///   - references: the to-ones' values, by ``RelationshipDescription/toOneIndex`` (nil: every to-one nil).
    public init(
        entity: EntityDescription, version: UInt64, values: [AttributeValue?], references: [StoredReference?]? = nil
    ) {
        self.entity = entity
        self.version = version
        contents = .values(
            DecodedContents(
                values: values,
                references: references ?? Array(repeating: nil, count: entity.toOneRelationships.count),
                externalReferences: [:]))
    }

    /// A decoded row with values kept outside it (``externalReferences``).
    init(
        entity: EntityDescription, version: UInt64, values: [AttributeValue?], references: [StoredReference?],
        externalReferences: [Int: UInt64]
    ) {
        self.entity = entity
        self.version = version
        contents = .values(
            DecodedContents(values: values, references: references, externalReferences: externalReferences))
    }

    /// A row of `entity` with no values, version 0: what stands in for a row the row cache forgot (one shared
    /// empty contents, nothing allocated).
    init(placeholderFor entity: EntityDescription) {
        self.entity = entity
        version = 0
        contents = .values(Self.noContents)
    }

    private static let noContents = DecodedContents(values: [], references: [], externalReferences: [:])

    /// A row kept as its record: `record` is a row record of `entity` whose every field `RowCoder.checkRow` accepted,
    /// and `referencesBlobs` what that check returned.
    init(entity: EntityDescription, version: UInt64, checkedRecord record: [UInt8], referencesBlobs: Bool) {
        precondition(entity.keepsRowsAsRecords, "\(entity.name)'s rows are not kept as records")
        self.entity = entity
        self.version = version
        contents = referencesBlobs ? .recordReferencingBlobs(record) : .record(record)
    }

    /// Whether the row is kept as its record's bytes, its fields decoded when read.
    var isRecord: Bool {
        // Told by the case alone: binding the record retained and released its bytes.
        if case .values = contents { return false }
        return true
    }

    /// Whether a value of the row may be kept outside it: false for a row kept as a record whose check found no blob
    /// reference, and for a decoded row without external references.
    var referencesBlobs: Bool {
        switch contents {
        case .values(let decoded): !decoded.externalReferences.isEmpty
        case .record: false
        case .recordReferencingBlobs: true
        }
    }

    /// Where the record's bytes lie, for a row kept as one: an address to hint the cache with later
    /// (``FaultBatch``), never to read from (the row may be gone by then).
    var recordAddress: UnsafeRawPointer? {
        switch contents {
        case .values: nil
        case .record(let record), .recordReferencingBlobs(let record): record.withUnsafeBytes { $0.baseAddress }
        }
    }

    /// The checked record, for a row kept as one.
    var record: [UInt8]? {
        switch contents {
        case .values: nil
        case .record(let record), .recordReferencingBlobs(let record): record
        }
    }

    /// The values of ``entity``'s persistent attributes, in storage order; nil is a null value, and the value of an
    /// attribute kept outside the row (``externalReferences``). A row kept as its record decodes every field.
    public var values: [AttributeValue?] {
        get {
            switch contents {
            case .values(let decoded): return decoded.values
            case .record(let record), .recordReferencingBlobs(let record):
                return entity.persistentAttributes.map { value(of: $0, inRecord: record) }
            }
        }
        set {
            contents = .values(
                DecodedContents(values: newValue, references: references, externalReferences: externalReferences))
        }
    }

    /// Binary values kept outside the row (in the engine's blob segments) and not loaded with it, by storage
    /// index: their slot in ``values`` is nil until the object reads them (``PersistentStore/externalData(_:)``).
    /// Keeping them out makes faults and the row cache cheap, however large the values.
    public var externalReferences: [Int: UInt64] {
        get {
            switch contents {
            case .values(let decoded): return decoded.externalReferences
            case .record:
                return [:]
            case .recordReferencingBlobs:
                // A checked record keeps only binary values outside it.
                var references: [Int: UInt64] = [:]
                for attribute in entity.binaryAttributes {
                    let storageIndex = attribute.storageIndex!
                    if let blob = blobReference(atStorageIndex: storageIndex) { references[storageIndex] = blob }
                }
                return references
            }
        }
        set {
            contents = .values(DecodedContents(values: values, references: references, externalReferences: newValue))
        }
    }

    /// The to-one relationships' values, by ``RelationshipDescription/toOneIndex`` (nil for none).
    public var references: [StoredReference?] {
        get {
            switch contents {
            case .values(let decoded): return decoded.references
            case .record(let record), .recordReferencingBlobs(let record):
                return entity.toOneRelationships.map { reference(of: $0, inRecord: record) }
            }
        }
        set {
            contents = .values(
                DecodedContents(values: values, references: newValue, externalReferences: externalReferences))
        }
    }

    /// The value of the persistent attribute at `storageIndex`, decoding only its field for a row kept as its record.
    func value(atStorageIndex storageIndex: Int) -> AttributeValue? {
        value(of: entity.persistentAttributes[storageIndex])
    }

    /// Whether `attribute`'s value (``value(of:)``) is nil, telling it by its field's tag alone for a row kept as its
    /// record: a null, or a value kept outside the row.
    func valueIsNil(of attribute: AttributeDescription) -> Bool {
        switch contents {
        case .values(let decoded): return decoded.values[attribute.storageIndex!] == nil
        case .record(let record), .recordReferencingBlobs(let record):
            return record.withUnsafeBytes { bytes in
                guard let header = try? RowRecord.Header.decode(bytes),
                    let span = try? header.span(ofField: attribute.fieldIndex!, in: bytes)
                else { preconditionFailure("a checked row of \(entity.name) no longer decodes \(attribute.name)") }
                // Safe: a span holds its field's tag, and lies within bytes.
                let tag = bytes[span.lowerBound]
                return tag == RowRecord.Tag.null.rawValue || tag == RowRecord.Tag.blobReference.rawValue
            }
        }
    }

    /// The value of `attribute`, one of ``entity``'s persistent attributes: ``value(atStorageIndex:)`` for a caller that
    /// holds the attribute already.
    func value(of attribute: AttributeDescription) -> AttributeValue? {
        switch contents {
        case .values(let decoded): return decoded.values[attribute.storageIndex!]
        case .record(let record), .recordReferencingBlobs(let record): return value(of: attribute, inRecord: record)
        }
    }

    /// The value of an integer or string field of a row kept as its record, read where it lies without a call; nil
    /// when this does not settle it (a row of values, a field of another type or holding a null or a blob reference,
    /// a record this inlined read does not take): ``value(of:)`` then reads it. Given the field's position and type
    /// rather than the attribute, and inlined in the reader (``ObjectState/value(at:)``): a call with the row loaded
    /// from the object's state retained and released its entity, its attribute and its bytes around it (about 130
    /// instructions of each read, W4c.graph), and inlined with nothing but the read, none need keeping alive.
    @inline(__always)
    func recordValue(ofField fieldIndex: Int, type: AttributeType) -> AttributeValue? {
        switch contents {
        case .values: return nil
        case .record(let record), .recordReferencingBlobs(let record):
            return record.withUnsafeBytes { bytes -> AttributeValue? in
                // A row of the common form, read with no call but a string's making: every other row, and anything
                // wrong, is left to value(of:), which reports it. With the header decoded and the span found through
                // their throwing forms, the error paths' calls kept the entity and the row's bytes retained around
                // each read (about 90 instructions a read, W4c.graph).
                guard let span = RowRecord.commonFieldSpan(ofField: fieldIndex, in: bytes) else { return nil }
                // Safe: a span holds its field's tag, and lies within bytes.
                let tag = bytes[span.lowerBound]
                let payload = (span.lowerBound &+ 1)..<span.upperBound
                switch type {
                case .integer16, .integer32, .integer64:
                    guard tag == RowRecord.Tag.int64.rawValue,
                        let number = RowRecord.shortestInteger(payload: payload, in: bytes)
                    else { return nil }
                    return .integer(number)
                case .string:
                    guard tag == RowRecord.Tag.string.rawValue else { return nil }
                    return .string(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[payload]), as: UTF8.self))
                default:
                    return nil
                }
            }
        }
    }

    /// An integer or string field's value taken from its payload where it lies: the row's check proved an integer
    /// field in its attribute's range and a string field valid UTF-8, which the general road (a `RowRecord.Field`, then
    /// `RowCoder.value`) would check again (about 400 instructions a read). Nil for a field of another type, or holding
    /// a null or a blob reference. ``value(of:)``'s fast read (``recordValue(ofField:type:)`` reads the same fields of
    /// a row of the common form without a call, and leaves the rest here).
    @inline(__always)
    private static func payloadValue(
        ofField fieldIndex: Int, type: AttributeType, in bytes: UnsafeRawBufferPointer, header: RowRecord.Header
    ) throws -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            guard let number = try RowRecord.integerField(at: fieldIndex, in: bytes, header: header) else { return nil }
            return .integer(number)
        case .string:
            let span = try header.span(ofField: fieldIndex, in: bytes)
            // Safe: a span holds its field's tag, and lies within bytes.
            guard bytes[span.lowerBound] == RowRecord.Tag.string.rawValue else { return nil }
            return .string(
                String(
                    decoding: UnsafeRawBufferPointer(rebasing: bytes[(span.lowerBound &+ 1)..<span.upperBound]),
                    as: UTF8.self))
        default:
            return nil
        }
    }

    /// The blob that the value of the persistent attribute at `storageIndex` is kept in, if it is kept outside the
    /// row; only its field's tag (and a blob's ID) is read for a row kept as its record, and nothing for a record whose
    /// check found no blob reference.
    func blobReference(atStorageIndex storageIndex: Int) -> UInt64? {
        switch contents {
        case .values(let decoded): return decoded.externalReferences[storageIndex]
        case .record: return nil
        case .recordReferencingBlobs(let record):
            let attribute = entity.persistentAttributes[storageIndex]
            do {
                return try record.withUnsafeBytes { bytes in
                    let header = try RowRecord.Header.decode(bytes)
                    let span = try header.span(ofField: attribute.fieldIndex!, in: bytes)
                    guard bytes[span.lowerBound] == RowRecord.Tag.blobReference.rawValue else { return nil }
                    guard
                        case .blobReference(let blob) = try RowRecord.field(
                            at: attribute.fieldIndex!, in: bytes, header: header)
                    else { return nil }
                    return blob
                }
            } catch {
                preconditionFailure("a checked row of \(entity.name) no longer decodes \(attribute.name): \(error)")
            }
        }
    }

    /// The value of a to-one, by ``RelationshipDescription/toOneIndex``, decoding only its fields for a row kept as
    /// its record.
    func reference(atToOneIndex toOneIndex: Int) -> StoredReference? {
        switch contents {
        case .values(let decoded): return decoded.references[toOneIndex]
        case .record(let record), .recordReferencingBlobs(let record):
            return reference(of: entity.toOneRelationships[toOneIndex], inRecord: record)
        }
    }

    /// One attribute's value from the checked record (nil for a value kept outside the row).
    private func value(of attribute: AttributeDescription, inRecord record: [UInt8]) -> AttributeValue? {
        do {
            return try record.withUnsafeBytes { bytes in
                let header = try RowRecord.Header.decode(bytes)
                // Integers and strings, the usual reads, from their payloads; the rest through the general road.
                if let value = try Self.payloadValue(
                    ofField: attribute.fieldIndex!, type: attribute.type, in: bytes, header: header)
                {
                    return value
                }
                let field = try RowRecord.field(at: attribute.fieldIndex!, in: bytes, header: header)
                if case .blobReference = field { return nil }
                return try RowCoder.value(from: field, of: attribute)
            }
        } catch {
            preconditionFailure("a checked row of \(entity.name) no longer decodes \(attribute.name): \(error)")
        }
    }

    /// One to-one's reference from the checked record.
    private func reference(of relationship: RelationshipDescription, inRecord record: [UInt8]) -> StoredReference? {
        do {
            return try record.withUnsafeBytes { bytes in
                let header = try RowRecord.Header.decode(bytes)
                let position = relationship.fieldIndex!
                return try RowCoder.reference(
                    try RowRecord.field(at: position, in: bytes, header: header),
                    try RowRecord.field(at: position + 1, in: bytes, header: header), of: relationship)
            }
        } catch {
            preconditionFailure("a checked row of \(entity.name) no longer decodes \(relationship.name): \(error)")
        }
    }

    /// Two rows are equal when they have the same entity (by identity), version and values.
    public static func == (lhs: StoredRow, rhs: StoredRow) -> Bool {
        guard lhs.entity === rhs.entity, lhs.version == rhs.version else { return false }
        if let left = lhs.record, let right = rhs.record { return left == right }
        return lhs.values == rhs.values && lhs.externalReferences == rhs.externalReferences
            && lhs.references == rhs.references
    }
}

/// One store's part of a save: applied as one atomic transaction.
public struct StoreChanges: Sendable {
    /// A new object: its entity and persistent values. The store allocates its row ID.
    public struct Insert: Sendable {
        /// The new object's concrete entity.
        public var entity: EntityDescription
        /// The values of the entity's persistent attributes, in storage order.
        public var values: [AttributeValue?]
        /// A row ID obtained earlier (``PersistentStore/allocateRowIDs(for:count:)``), or nil.
        public var rowID: UInt64?
        /// The to-ones' values, by ``RelationshipDescription/toOneIndex``.
        public var references: [ObjectReference?] = []
        /// The version the row is written with: 1 for a new object; an import keeps the version the row had in
        /// the store it comes from (Core Data's `Z_OPT`), so that optimistic locking goes on from there.
        public var version: UInt64 = 1

        /// An insert.
        ///
        /// - Parameters:
        ///   - entity: the new object's concrete entity.
        ///   - values: the entity's persistent attribute values, in storage order.
        ///   - rowID: a row ID obtained earlier, or any row ID the table does not hold; nil to let the store
        ///     allocate one.
        ///   - references: the to-ones' values, by ``RelationshipDescription/toOneIndex``.
        ///   - version: the row's version, at least 1.
        public init(
            entity: EntityDescription, values: [AttributeValue?], rowID: UInt64?, references: [ObjectReference?] = [],
            version: UInt64 = 1
        ) {
            precondition(version >= 1, "row versions start at 1")
            self.entity = entity
            self.values = values
            self.rowID = rowID
            self.references = references
            self.version = version
        }
    }

    /// A changed object: the values it now has, and the version it was read at.
    ///
    /// A context makes the update of an object read from a row record (the Strata store's rows, ``StoredRow``) from
    /// that record and what changed since (``changedFields``): ``values`` and ``references`` still read whole (the
    /// record's values, decoded at each read, where nothing changed them), so that a store may ignore the difference;
    /// the Strata store encodes the changed fields alone and copies the bytes of the others.
    public struct Update: Sendable {
        /// The object's concrete entity.
        public var entity: EntityDescription
        /// The row to replace, in the entity hierarchy's table.
        public var rowID: UInt64
        /// The values of the entity's persistent attributes after the change, in storage order. Setting them makes
        /// the update a whole one (without ``changedFields``).
        public var values: [AttributeValue?] {
            get {
                guard let changedFields else { return valueSlots }
                var values = changedFields.record.values
                for storageIndex in changedFields.values { values[storageIndex] = valueSlots[storageIndex] }
                return values
            }
            set {
                let references = self.references
                changedFields = nil
                storedReferences = references
                valueSlots = newValue
            }
        }
        /// The row version the object was read at: the save conflicts when the stored row has another version
        /// (or no longer exists), and otherwise writes version `expectedVersion + 1`.
        public var expectedVersion: UInt64
        /// The to-ones' values, by ``RelationshipDescription/toOneIndex``. Setting them makes the update a whole one
        /// (without ``changedFields``).
        public var references: [ObjectReference?] {
            get {
                guard let changedFields, !changedFields.references else { return storedReferences }
                return changedFields.record.references.map { $0.map(ObjectReference.stored) }
            }
            set {
                let values = self.values
                changedFields = nil
                valueSlots = values
                storedReferences = newValue
            }
        }
        /// The names of the properties that changed, for persistent history (a context leaves them out for a store
        /// that records none).
        public var changedKeys: [String] = []
        /// The values in storage order: all of them, or for an update with ``changedFields`` those its
        /// ``ChangedFields/values`` names (the other slots hold nothing meaningful).
        private(set) var valueSlots: [AttributeValue?]
        /// The to-ones, unless ``changedFields`` says they are the record's.
        private var storedReferences: [ObjectReference?]
        /// What changed since the row the object was read from, for an update made from that row: nil for a whole
        /// update.
        private(set) var changedFields: ChangedFields?

        /// What an update of a row record changed: the record, the values that changed, whether the to-ones did. The
        /// values not named, and the to-ones unless changed, are the record's.
        struct ChangedFields: Sendable {
            /// The row the object was read from (a checked row record, without blob references), at the update's
            /// expected version.
            var record: StoredRow
            /// The storage indexes of the values that changed.
            var values: PropertyIndexSet
            /// Whether the to-ones changed (``Update/references`` then holds them all).
            var references: Bool
        }

        /// A whole update: every value and to-one given.
        init(
            entity: EntityDescription, rowID: UInt64, values: [AttributeValue?], expectedVersion: UInt64,
            references: [ObjectReference?] = [], changedKeys: [String] = []
        ) {
            self.entity = entity
            self.rowID = rowID
            valueSlots = values
            self.expectedVersion = expectedVersion
            storedReferences = references
            self.changedKeys = changedKeys
        }

        /// An update of `changed.record`'s row: `valueSlots` in storage order, meaningful where `changed.values`
        /// names them; `references` every to-one when `changed.references`, else ignored.
        init(
            entity: EntityDescription, rowID: UInt64, changed: ChangedFields, valueSlots: [AttributeValue?],
            references: [ObjectReference?], changedKeys: [String]
        ) {
            precondition(changed.record.isRecord && !changed.record.referencesBlobs, "a partial update needs a record")
            self.entity = entity
            self.rowID = rowID
            self.valueSlots = valueSlots
            expectedVersion = changed.record.version
            storedReferences = changed.references ? references : []
            self.changedKeys = changedKeys
            changedFields = changed
        }

        /// Whether a to-one names an object the same save inserts (whose row ID the store assigns): never for an
        /// update whose to-ones are its record's.
        var namesInsertedObjects: Bool {
            if let changedFields, !changedFields.references { return false }
            return storedReferences.contains { if case .inserted = $0 { true } else { false } }
        }

        /// The value the update writes anew at `storageIndex`: any of a whole update's values; for an update with
        /// ``changedFields``, a changed value only (nil for the others, whose bytes the row keeps).
        func writtenValue(atStorageIndex storageIndex: Int) -> AttributeValue? {
            if let changedFields, !changedFields.values.contains(storageIndex) { return nil }
            return valueSlots[storageIndex]
        }
    }

    /// The complete new membership of a to-many kept in a join table (many-to-many, ordered, or without
    /// inverse). The store writes only the difference: links added, links removed, and for an ordered
    /// relationship the positions of the members that moved.
    public struct Links: Sendable {
        /// The to-many relationship.
        public var relationship: RelationshipDescription
        /// The object whose relationship it is.
        public var source: ObjectReference
        /// Every member, in order for an ordered relationship.
        public var members: [ObjectReference]

        /// The membership of `source`'s `relationship`.
        ///
        /// - Parameters:
        ///   - relationship: a to-many kept in a join table.
        ///   - source: the object whose relationship it is.
        ///   - members: every member, in order for an ordered relationship.
        public init(relationship: RelationshipDescription, source: ObjectReference, members: [ObjectReference]) {
            self.relationship = relationship
            self.source = source
            self.members = members
        }
    }

    /// A deleted object.
    public struct Delete: Sendable {
        /// The object's concrete entity.
        public var entity: EntityDescription
        /// The row to delete, in the entity hierarchy's table.
        public var rowID: UInt64
        /// The row version the object was read at, or nil to delete without a conflict check (the object was
        /// deleted as a fault, never read).
        public var expectedVersion: UInt64?

        /// The deletion of `rowID`.
        ///
        /// - Parameters:
        ///   - entity: the object's concrete entity.
        ///   - rowID: the row to delete, in the entity hierarchy's table.
        ///   - expectedVersion: the version the object was read at; nil to delete without a conflict check.
        public init(entity: EntityDescription, rowID: UInt64, expectedVersion: UInt64?) {
            self.entity = entity
            self.rowID = rowID
            self.expectedVersion = expectedVersion
        }
    }

    /// New objects, in insertion order; ``StoreSaveResult/insertedRowIDs`` follows the same order. A context's save
    /// makes each entry from its object when the store reads it (``Inserts``).
    public var inserts: Inserts = []
    /// Changed objects; ``StoreSaveResult/updatedVersions`` follows the same order.
    public var updates: [Update] = []
    /// Deleted objects. Their links in join tables are removed with them.
    public var deletes: [Delete] = []
    /// Join-table memberships that changed.
    public var links: [Links] = []
    /// The saving context's ``ManagedObjectContext/transactionAuthor``, for persistent history.
    public var transactionAuthor: String?
    /// The saving context's ``ManagedObjectContext/name``, for persistent history.
    public var contextName: String?

    /// Creates an empty set of changes.
    public init() {}

    /// Creates an empty set of changes made by a context, for persistent history.
    ///
    /// - Parameters:
    ///   - transactionAuthor: the context's ``ManagedObjectContext/transactionAuthor``.
    ///   - contextName: the context's ``ManagedObjectContext/name``.
    public init(transactionAuthor: String?, contextName: String?) {
        self.transactionAuthor = transactionAuthor
        self.contextName = contextName
    }

    /// Whether there is nothing to insert, update or delete.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && links.isEmpty }
}

/// What a store did in a save: the row IDs of the inserts (in order) and every updated row's new version.
///
/// An inserted row's version is the one its insert asked for (``StoreChanges/Insert/version``): the saving context
/// knows it, and the result does not repeat it.
public struct StoreSaveResult: Sendable {
    /// The row ID of each insert, in the order of ``StoreChanges/inserts``, as runs of consecutive IDs.
    public var insertedRowIDs: InsertedRowIDs
    /// The new version of each updated row (its expected version plus one), in the order of ``StoreChanges/updates``.
    public var updatedVersions: [UInt64]
    /// The values each insert wrote outside its row, by storage index, keyed by the insert's position in
    /// ``StoreChanges/inserts``; an insert that kept everything in its row has no entry (a store that keeps
    /// everything in its rows returns none). The row cache keeps only these references, not the bytes.
    public var insertedExternalReferences: [Int: [Int: UInt64]] = [:]
    /// For each update in the order of ``StoreChanges/updates``, the values the store wrote outside the row, by
    /// storage index (empty for a store that keeps everything in its rows).
    public var updatedExternalReferences: [[Int: UInt64]] = []
    /// For each update in the order of ``StoreChanges/updates``, the row as the store wrote it, when the store made
    /// it as a fetch returns it (the Strata store's row records, for the updates it wrote from their changed fields);
    /// nil, or no entry, otherwise. The context settles an updated object onto its row, as a fetched object reads
    /// from its record, rather than onto its values.
    package var updatedRows: [StoredRow?] = []

    /// What a store did in a save (a store of another module returns one from ``PersistentStore/save(_:)``).
    ///
    /// - Parameters:
    ///   - insertedRowIDs: the row ID of each insert, in order.
    ///   - updatedVersions: the new version of each updated row, in order.
    public init(insertedRowIDs: InsertedRowIDs = [], updatedVersions: [UInt64] = []) {
        self.insertedRowIDs = insertedRowIDs
        self.updatedVersions = updatedVersions
    }
}

/// A to-one's value as a store keeps it: the related object's concrete entity and row ID (in the same
/// store as the source: relationships never cross stores).
public struct StoredReference: Sendable, Hashable, CustomStringConvertible {
    /// The related object's entity (the concrete one, which may be a subentity of the destination).
    public var entity: EntityDescription
    /// The related object's row ID.
    public var rowID: UInt64

    /// A reference to row `rowID` of `entity`.
    public init(entity: EntityDescription, rowID: UInt64) {
        self.entity = entity
        self.rowID = rowID
    }

    /// E.g. `Department/p3`.
    public var description: String { "\(entity.name)/p\(rowID)" }
}

/// An object named in a save: one already in the store, or one the same save inserts (whose row ID the
/// store assigns).
public enum ObjectReference: Sendable, Hashable {
    /// A saved object.
    case stored(StoredReference)
    /// The object of ``StoreChanges/inserts``[i].
    case inserted(Int)

    /// The reference once the inserts have row IDs.
    public func resolved(in changes: StoreChanges, insertedRowIDs: InsertedRowIDs) -> StoredReference {
        switch self {
        case .stored(let reference): reference
        case .inserted(let index):
            StoredReference(entity: changes.inserts.entity(at: index), rowID: insertedRowIDs[index])
        }
    }
}
