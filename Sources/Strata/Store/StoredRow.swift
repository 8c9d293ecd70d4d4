/// A row as a persistent store returns it: the concrete entity, the version that optimistic locking
/// compares, and the values of the entity's persistent attributes in storage order.
public struct StoredRow: Sendable, Equatable {
    public var entity: EntityDescription
    /// Incremented by every save that changes the row.
    public var version: UInt64
    public var values: [AttributeValue?]

    public init(entity: EntityDescription, version: UInt64, values: [AttributeValue?]) {
        self.entity = entity
        self.version = version
        self.values = values
    }

    public static func == (lhs: StoredRow, rhs: StoredRow) -> Bool {
        lhs.entity === rhs.entity && lhs.version == rhs.version && lhs.values == rhs.values
    }
}

/// One store's part of a save: applied as one atomic transaction.
public struct StoreChanges: Sendable {
    /// A new object: its entity and persistent values. The store allocates its row ID.
    public struct Insert: Sendable {
        public var entity: EntityDescription
        public var values: [AttributeValue?]
        /// A row ID obtained earlier (``PersistentStore/allocateRowIDs(for:count:)``), or nil.
        public var rowID: UInt64?
    }

    /// A changed object: the values it now has, and the version it was read at.
    public struct Update: Sendable {
        public var entity: EntityDescription
        public var rowID: UInt64
        public var values: [AttributeValue?]
        public var expectedVersion: UInt64
    }

    /// A deleted object.
    public struct Delete: Sendable {
        public var entity: EntityDescription
        public var rowID: UInt64
        public var expectedVersion: UInt64?
    }

    public var inserts: [Insert] = []
    public var updates: [Update] = []
    public var deletes: [Delete] = []

    public init() {}

    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// What a store did in a save: the row IDs of the inserts (in order) and every written row's new version.
public struct StoreSaveResult: Sendable {
    public var insertedRowIDs: [UInt64]
    public var insertedVersions: [UInt64]
    public var updatedVersions: [UInt64]
}
