/// A row as a persistent store returns it: the concrete entity, the version that optimistic locking
/// compares, and the values of the entity's persistent attributes in storage order.
public struct StoredRow: Sendable, Equatable {
    /// The row's concrete entity: the one it was inserted as, which may be a subentity of the entity asked for.
    public var entity: EntityDescription
    /// Incremented by every save that changes the row.
    public var version: UInt64
    /// The values of ``entity``'s persistent attributes, in storage order; nil is a null value.
    public var values: [AttributeValue?]
    /// Binary values kept outside the row (in the engine's blob segments) and not loaded with it, by storage
    /// index: their slot in ``values`` is nil until the object reads them (``PersistentStore/externalData(_:)``).
    /// Keeping them out makes faults and the row cache cheap, however large the values.
    public var externalReferences: [Int: UInt64] = [:]
    /// The to-one relationships' values, by ``RelationshipDescription/toOneIndex`` (nil for none).
    public var references: [StoredReference?]

    /// Creates a row as a store returns it.
    ///
    /// - Parameters:
    ///   - entity: the row's concrete entity.
    ///   - version: the row's version: 1 when inserted, one more after each save that changes it.
    ///   - values: the entity's persistent attribute values, in storage order.
    public init(
        entity: EntityDescription, version: UInt64, values: [AttributeValue?], references: [StoredReference?]? = nil
    ) {
        self.entity = entity
        self.version = version
        self.values = values
        self.references = references ?? Array(repeating: nil, count: entity.toOneRelationships.count)
    }

    /// Two rows are equal when they have the same entity (by identity), version and values.
    public static func == (lhs: StoredRow, rhs: StoredRow) -> Bool {
        lhs.entity === rhs.entity && lhs.version == rhs.version && lhs.values == rhs.values
            && lhs.externalReferences == rhs.externalReferences && lhs.references == rhs.references
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
    public struct Update: Sendable {
        /// The object's concrete entity.
        public var entity: EntityDescription
        /// The row to replace, in the entity hierarchy's table.
        public var rowID: UInt64
        /// The values of the entity's persistent attributes after the change, in storage order.
        public var values: [AttributeValue?]
        /// The row version the object was read at: the save conflicts when the stored row has another version
        /// (or no longer exists), and otherwise writes version `expectedVersion + 1`.
        public var expectedVersion: UInt64
        /// The to-ones' values, by ``RelationshipDescription/toOneIndex``.
        public var references: [ObjectReference?] = []
        /// The names of the properties that changed, for persistent history.
        public var changedKeys: [String] = []
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
    }

    /// New objects, in insertion order; ``StoreSaveResult/insertedRowIDs`` follows the same order.
    public var inserts: [Insert] = []
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

/// What a store did in a save: the row IDs of the inserts (in order) and every written row's new version.
public struct StoreSaveResult: Sendable {
    /// The row ID of each insert, in the order of ``StoreChanges/inserts``.
    public var insertedRowIDs: [UInt64]
    /// The version of each inserted row (``StoreChanges/Insert/version``: 1 unless an import says otherwise), in
    /// the order of ``StoreChanges/inserts``.
    public var insertedVersions: [UInt64]
    /// The new version of each updated row (its expected version plus one), in the order of ``StoreChanges/updates``.
    public var updatedVersions: [UInt64]
    /// For each insert and update, the values the store wrote outside the row, by storage index (empty for a
    /// store that keeps everything in its rows): the row cache keeps only these references, not the bytes.
    public var insertedExternalReferences: [[Int: UInt64]] = []
    /// As ``insertedExternalReferences``, for each update in the order of ``StoreChanges/updates``.
    public var updatedExternalReferences: [[Int: UInt64]] = []

    /// What a store did in a save (a store of another module returns one from ``PersistentStore/save(_:)``).
    ///
    /// - Parameters:
    ///   - insertedRowIDs: the row ID of each insert, in order.
    ///   - insertedVersions: the version of each inserted row, in order.
    ///   - updatedVersions: the new version of each updated row, in order.
    public init(insertedRowIDs: [UInt64], insertedVersions: [UInt64], updatedVersions: [UInt64]) {
        self.insertedRowIDs = insertedRowIDs
        self.insertedVersions = insertedVersions
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
    public func resolved(in changes: StoreChanges, insertedRowIDs: [UInt64]) -> StoredReference {
        switch self {
        case .stored(let reference): reference
        case .inserted(let index):
            StoredReference(entity: changes.inserts[index].entity, rowID: insertedRowIDs[index])
        }
    }
}
