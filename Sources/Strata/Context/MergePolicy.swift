/// How a save resolves optimistic-locking and uniqueness conflicts (Core Data's `NSMergePolicy`): set it as
/// ``ManagedObjectContext/mergePolicy``, one of the built-in policies or a subclass of your own (below).
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
/// ## Custom policies
///
/// Subclass `MergePolicy` and override ``resolve(optimisticLockingConflicts:in:)`` or
/// ``resolve(constraintConflicts:in:)`` (Core Data's `NSMergePolicy` subclasses), calling `super` for the
/// built-in behaviour of the ``type`` the policy was made with:
///
/// ```swift
/// final class HighestSalaryWins: MergePolicy, @unchecked Sendable {
///     override func resolve(optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext)
///         throws
///     {
///         for conflict in conflicts {
///             guard let employee = context.registeredObject(for: conflict.objectID) as? Employee,
///                 case .integer(let theirs)? = conflict.persistedSnapshot?["salary"]
///             else { continue }
///             employee.salary = max(employee.salary, theirs)
///         }
///         try super.resolve(optimisticLockingConflicts: conflicts, in: context)
///     }
/// }
/// context.mergePolicy = HighestSalaryWins(merge: .mergeByPropertyObjectTrump)
/// ```
///
/// A save calls the policy with every conflict it found; when the policy returns, the save starts over with
/// the objects as the policy left them (so a resolution that does not call `super` must bring the objects up to
/// date itself, e.g. with ``ManagedObjectContext/refresh(_:mergeChanges:)``, or they conflict again); when it
/// throws, the save throws that error and writes nothing. The built-in resolution throws
/// ``ObjectGraphError/mergeConflicts(_:)`` or ``ObjectGraphError/constraintConflicts(_:)`` for what its type
/// cannot resolve.
///
/// A policy is shared between contexts and threads (it is `Sendable`): a subclass restates
/// `@unchecked Sendable`, as Swift requires, and must keep any state of its own safe to share.
///
/// ## Topics
/// - ``error``
/// - ``mergeByPropertyStoreTrump``
/// - ``mergeByPropertyObjectTrump``
/// - ``overwrite``
/// - ``rollback``
/// - ``init(merge:)``
/// - ``type``
/// - ``resolve(optimisticLockingConflicts:in:)``
/// - ``resolve(constraintConflicts:in:)``
/// - ``MergePolicyType``
open class MergePolicy: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// Conflicts fail the save with ``ObjectGraphError/mergeConflicts(_:)`` (or
    /// ``ObjectGraphError/constraintConflicts(_:)``), leaving the context's changes as they were
    /// (Core Data's `NSErrorMergePolicy`, the default).
    public static let error = MergePolicy(merge: .error)
    /// Property by property, the store's changes win over the object's (Core Data's
    /// `NSMergeByPropertyStoreTrumpMergePolicy`).
    public static let mergeByPropertyStoreTrump = MergePolicy(merge: .mergeByPropertyStoreTrump)
    /// Property by property, the object's changes win over the store's (Core Data's
    /// `NSMergeByPropertyObjectTrumpMergePolicy`).
    public static let mergeByPropertyObjectTrump = MergePolicy(merge: .mergeByPropertyObjectTrump)
    /// The object's whole state is written over the row, whatever changed in the store (Core Data's
    /// `NSOverwriteMergePolicy`).
    public static let overwrite = MergePolicy(merge: .overwrite)
    /// The object's changes are discarded for the store's row (Core Data's `NSRollbackMergePolicy`).
    public static let rollback = MergePolicy(merge: .rollback)

    /// The built-in behaviour the policy falls back on (``resolve(optimisticLockingConflicts:in:)`` and
    /// ``resolve(constraintConflicts:in:)`` of this class).
    public let type: MergePolicyType

    /// Makes a policy with a built-in behaviour (Core Data's `init(merge:)`); subclasses call it.
    ///
    /// - Parameter type: the behaviour of the built-in resolution.
    public init(merge type: MergePolicyType) {
        self.type = type
    }

    /// Resolves the optimistic-locking conflicts of a save (Core Data's `resolve(optimisticLockingConflicts:)`):
    /// the built-in resolution merges each conflicting object with its row by ``type``.
    ///
    /// Override it to change objects before (or after) the built-in resolution, calling `super`.
    ///
    /// - Parameters:
    ///   - conflicts: one conflict per object, in the order the stores reported them; the objects are
    ///     registered in `context` (``ManagedObjectContext/registeredObject(for:)``).
    ///   - context: the saving context.
    /// - Throws: ``ObjectGraphError/mergeConflicts(_:)`` for conflicts ``type`` cannot resolve (all of them for
    ///   ``MergePolicyType/error``), before any object changes; ``ObjectGraphError/storage(_:)``.
    open func resolve(optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext) throws {
        try context.resolveVersionConflicts(conflicts, type: type)
    }

    /// Resolves the uniqueness-constraint conflicts of a save (Core Data's `resolve(constraintConflicts:)`):
    /// the built-in resolution keeps one object per shared values by ``type`` (see ``UniquenessConstraint``).
    ///
    /// Override it to change objects before (or after) the built-in resolution, calling `super`.
    ///
    /// - Parameters:
    ///   - conflicts: one conflict per constraint and shared values; the objects are registered in `context`.
    ///   - context: the saving context.
    /// - Throws: ``ObjectGraphError/constraintConflicts(_:)`` for conflicts ``type`` cannot resolve, before
    ///   any object changes; ``ObjectGraphError/storage(_:)``.
    open func resolve(constraintConflicts conflicts: [ConstraintConflict], in context: ManagedObjectContext) throws {
        try context.resolveConstraintConflicts(conflicts, type: type)
    }

    /// Two policies are equal when they are of the same class with the same ``type``.
    public static func == (lhs: MergePolicy, rhs: MergePolicy) -> Bool {
        lhs.type == rhs.type && ObjectIdentifier(Swift.type(of: lhs)) == ObjectIdentifier(Swift.type(of: rhs))
    }

    /// Hashes the class and the ``type``, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(ObjectIdentifier(Swift.type(of: self)))
    }

    /// The built-in policy's name, e.g. `mergeByPropertyObjectTrump`; a subclass's adds its class name.
    open var description: String {
        Swift.type(of: self) == MergePolicy.self ? type.description : "\(Swift.type(of: self))(\(type))"
    }
}

/// The built-in behaviours of a ``MergePolicy`` (Core Data's `NSMergePolicyType`).
public enum MergePolicyType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Conflicts fail the save (``MergePolicy/error``).
    case error
    /// Property by property, the store's changes win (``MergePolicy/mergeByPropertyStoreTrump``).
    case mergeByPropertyStoreTrump
    /// Property by property, the object's changes win (``MergePolicy/mergeByPropertyObjectTrump``).
    case mergeByPropertyObjectTrump
    /// The object's whole state is written (``MergePolicy/overwrite``).
    case overwrite
    /// The object's changes are discarded (``MergePolicy/rollback``).
    case rollback

    /// The name, e.g. `mergeByPropertyObjectTrump`.
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
