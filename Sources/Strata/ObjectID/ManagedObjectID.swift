import Foundation
import Synchronization

/// The identity of a managed object: the store it lives in, its entity and its row.
///
/// An object inserted into a context has a *temporary* ID until it is saved (or given a permanent ID by
/// ``ManagedObjectContext/obtainPermanentIDs(for:)``); its permanent ID names the store's UUID, the
/// entity and the row ID the engine allocated. IDs are values: compare them, use them as keys, pass
/// them between threads and contexts. ``uriRepresentation()`` gives a URL form that
/// ``PersistentStoreCoordinator/managedObjectID(forURIRepresentation:)`` turns back into the ID.
///
/// For example: `x-strata://6F1E.../Employee/p42` (permanent), `x-strata:///Employee/t2C5B...` (temporary).
///
/// An ID is a value of three words (its entity, its store and its row), held inline by its object: no allocation
/// per object or fault, and no pointer to follow to hash or compare it. Two IDs name the same object when they are
/// equal (``==(_:_:)``); there is no identity beyond that.
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The entity of the object.
    ///
    /// A strong reference, unlike ``store``: an entity lives as long as its model, and an ID, being `Sendable`, may
    /// be kept after both are gone. An object's ID costs one retain and one release of it, as when IDs were objects
    /// (each retained its entity once); registry and row cache lookups borrow the ID and retain nothing.
    public let entity: EntityDescription
    /// The UUID of the store that holds the row; nil while the ID is temporary.
    public var storeIdentifier: UUID? { isTemporaryID ? nil : store.uuid }
    /// The row ID within the entity hierarchy's table; nil while the ID is temporary.
    public var rowID: UInt64? { isTemporaryID ? nil : number }
    /// Whether the ID is temporary (the object has not been saved yet).
    public var isTemporaryID: Bool { store.isTemporary }
    /// The store's UUID, interned (``StoreIdentity/temporary`` for a temporary ID): eight bytes instead of the
    /// UUID's sixteen and a flag, in every object and fault. Unowned and unsafe: interned identities are never
    /// freed, so they need no reference counting.
    unowned(unsafe) let store: StoreIdentity
    /// The row ID, or the temporary ID's number.
    let number: UInt64

    /// Temporary IDs are numbered within the process; the process's random identifier keeps their URIs unique
    /// across processes. (A counter, not a UUID per object: on Linux every UUID() reads /dev/urandom.)
    private static let temporaryCounter = Atomic<UInt64>(0)
    private static let processIdentifier = UUID()

    /// The permanent ID of row `rowID` of `entity` in the store `storeIdentifier`: what a store reports, for
    /// example in ``ObjectGraphError/optimisticLockingConflict(_:)`` (a store of another module needs it).
    ///
    /// - Parameters:
    ///   - entity: the row's entity.
    ///   - storeIdentifier: the store's ``PersistentStore/identifier``.
    ///   - rowID: the row's ID in the entity hierarchy's table.
    public init(entity: EntityDescription, storeIdentifier: UUID, rowID: UInt64) {
        self.init(entity: entity, store: StoreIdentity.interned(storeIdentifier), rowID: rowID)
    }

    /// The permanent ID of row `rowID` of `entity` in the store whose identity is `store` (no interning).
    package init(entity: EntityDescription, store: StoreIdentity, rowID: UInt64) {
        precondition(!store.isTemporary, "a permanent ID names a store")
        self.entity = entity
        self.store = store
        self.number = rowID
    }

    init(temporaryFor entity: EntityDescription) {
        self.entity = entity
        self.store = StoreIdentity.temporary
        self.number = Self.temporaryCounter.add(1, ordering: .relaxed).newValue
    }

    /// A stable order for objects given as a set: saved ones by row ID, then new ones in creation order.
    func precedes(_ other: ManagedObjectID) -> Bool {
        switch (rowID, other.rowID) {
        case (let left?, let right?): left < right
        case (.some, nil): true
        case (nil, .some): false
        case (nil, nil): number < other.number
        }
    }

    /// A URL that names this object; see the type's documentation for the forms.
    public func uriRepresentation() -> URL {
        if isTemporaryID {
            return URL(string: "x-strata:///\(entity.name)/t\(Self.processIdentifier.uuidString)-\(number)")!
        }
        return URL(string: "x-strata://\(store.uuid.uuidString)/\(entity.name)/p\(number)")!
    }

    /// Two IDs are equal when they name the same object: the same temporary ID, or the same row of the same
    /// store's hierarchy table (whichever entity of the hierarchy each names). A temporary ID never equals a
    /// permanent one, even for the same object after its save.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        if lhs.isTemporaryID { return rhs.isTemporaryID && lhs.number == rhs.number }
        // A row belongs to its hierarchy's table: the same row is the same object whatever entity names it.
        return !rhs.isTemporaryID && lhs.number == rhs.number && lhs.store === rhs.store
            && lhs.entity.rootIdentifier == rhs.entity.rootIdentifier
    }

    /// Hashes part of what ``==(_:_:)`` compares: the temporary identifier, or the row and root entity. The
    /// store is left out (IDs equal by row and table but of different stores are rare, and equality tells them
    /// apart): hashing its 16 bytes was a third of the cost of every registry and row cache lookup.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number)
        if !isTemporaryID { hasher.combine(entity.rootIdentifier) }
    }

    /// The ID's URI as a string, e.g. `x-strata://6F1E.../Employee/p42`.
    public var description: String { uriRepresentation().absoluteString }
}
