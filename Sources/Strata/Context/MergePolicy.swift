/// How a save resolves optimistic-locking and uniqueness conflicts (Core Data's `NSMergePolicy`): set it as
/// ``ManagedObjectContext/mergePolicy``.
///
/// A save conflicts when a row it updates or deletes changed (or was deleted) in the store since the
/// context last read it. With ``error`` (the default) the save throws ``ObjectGraphError/mergeConflicts(_:)``
/// and changes nothing; every other policy merges each conflicting object with the store's row and saves
/// again, against the row's new version.
///
/// For example:
/// ```swift
/// context.mergePolicy = .mergeByPropertyObjectTrump
/// employee.salary = 200     // another context saved a new last name meanwhile
/// try context.save()        // the row gets salary 200 and the other context's last name
/// ```
///
/// What each policy does with one conflicting object, property by property. *Changed here* is a property the
/// object changed since it was read; *changed in the store* is one whose stored value differs from the
/// value the context read (its cached snapshot). Attributes and to-one relationships (which live in the row)
/// are properties; to-many relationships kept in join tables merge member by member (below).
///
/// | Policy | Changed here only | Changed in the store only | Changed in both |
/// | --- | --- | --- | --- |
/// | ``mergeByPropertyStoreTrump`` | object's value | store's value | store's value |
/// | ``mergeByPropertyObjectTrump`` | object's value | store's value | object's value |
/// | ``overwrite`` | object's value | object's (cached) value | object's value |
/// | ``rollback`` | store's value | store's value | store's value |
///
/// Rows deleted in the store, and objects deleted in the context:
///
/// | Policy | Updated here, deleted in the store | Deleted here, updated in the store | Deleted in both |
/// | --- | --- | --- | --- |
/// | ``error`` | conflict | conflict | conflict |
/// | ``mergeByPropertyStoreTrump`` | object leaves the context | deletion dropped: the object takes the row | done |
/// | ``mergeByPropertyObjectTrump`` | conflict (thrown) | deleted | done |
/// | ``overwrite`` | conflict (thrown) | deleted | done |
/// | ``rollback`` | object leaves the context | deletion dropped: the object takes the row | done |
///
/// An object cannot be written back to a row that no longer exists (Core Data's overwrite policy fails there
/// too): recreating it would give it a new identity and lose the relationships the deleting save cut, so object
/// trumps and overwrite throw ``ObjectGraphError/mergeConflicts(_:)`` for those objects, before changing
/// anything. A dropped deletion does not undo the delete rules that already ran in the context.
///
/// To-many relationships kept in join tables (many-to-many, ordered, or without inverse): both trump policies
/// apply the object's added and removed members to the store's membership (such changes never contradict
/// each other); store trumps keeps the store's order and appends the object's additions, object trumps keeps
/// the object's order and appends the store's additions. ``overwrite`` writes the object's membership as it
/// is; ``rollback`` takes the store's. To-manys the object did not change are read from the store again.
///
/// Uniqueness conflicts (see ``UniquenessConstraint``) are resolved after version conflicts, with the same
/// policy: see ``ObjectGraphError/constraintConflicts(_:)``.
///
/// ## Topics
/// - ``error``
/// - ``mergeByPropertyStoreTrump``
/// - ``mergeByPropertyObjectTrump``
/// - ``overwrite``
/// - ``rollback``
public enum MergePolicy: Sendable, Hashable, CustomStringConvertible {
    /// Conflicts fail the save with ``ObjectGraphError/mergeConflicts(_:)`` (or
    /// ``ObjectGraphError/constraintConflicts(_:)``), leaving the context's changes as they were
    /// (Core Data's `NSErrorMergePolicy`, the default).
    case error
    /// Property by property, the store's changes win over the object's (Core Data's
    /// `NSMergeByPropertyStoreTrumpMergePolicy`).
    case mergeByPropertyStoreTrump
    /// Property by property, the object's changes win over the store's (Core Data's
    /// `NSMergeByPropertyObjectTrumpMergePolicy`).
    case mergeByPropertyObjectTrump
    /// The object's whole state is written over the row, whatever changed in the store (Core Data's
    /// `NSOverwriteMergePolicy`).
    case overwrite
    /// The object's changes are discarded for the store's row (Core Data's `NSRollbackMergePolicy`).
    case rollback

    /// The policy's name, e.g. `mergeByPropertyObjectTrump`.
    public var description: String {
        switch self {
        case .error: "error"
        case .mergeByPropertyStoreTrump: "mergeByPropertyStoreTrump"
        case .mergeByPropertyObjectTrump: "mergeByPropertyObjectTrump"
        case .overwrite: "overwrite"
        case .rollback: "rollback"
        }
    }
}
