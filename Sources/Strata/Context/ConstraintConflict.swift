/// One uniqueness-constraint violation of a failed save (Core Data's `NSConstraintConflict`): objects of the
/// save that share the values of a ``UniquenessConstraint`` with each other or with a row already in the store.
///
/// Like ``MergeConflict``, it names objects by ID (inserted objects by their temporary ID): right after the
/// failed save they are registered in the context, which returns them through
/// ``ManagedObjectContext/registeredObject(for:)``.
///
/// For example:
/// ```swift
/// do {
///     try context.save()
/// } catch ObjectGraphError.constraintConflicts(let conflicts) {
///     for conflict in conflicts {
///         print(conflict.constraint, conflict.values, conflict.objectIDs, conflict.databaseObjectID as Any)
///     }
/// }
/// ```
///
/// ## Topics
/// - ``constraint``
/// - ``values``
/// - ``objectIDs``
/// - ``databaseObjectID``
/// - ``databaseSnapshot``
public struct ConstraintConflict: Sendable, Hashable, CustomStringConvertible {
    /// The violated constraint's declaring entity and attributes, e.g. `Employee[email]`.
    public var constraint: UniquenessConstraint
    /// The shared values, by attribute name.
    public var values: [String: AttributeValue]
    /// The objects of the save that hold the values (inserted ones, and updated ones whose constrained
    /// values changed), in insertion order then by ID.
    public var objectIDs: [ManagedObjectID]
    /// The object whose row in the store already holds the values; nil for a conflict among the objects of
    /// the save only (Core Data's nil `databaseObject`).
    public var databaseObjectID: ManagedObjectID?
    /// The store's row of ``databaseObjectID``, nil with it.
    public var databaseSnapshot: ObjectSnapshot?

    /// Creates a conflict.
    ///
    /// - Parameters:
    ///   - constraint: the violated constraint.
    ///   - values: the shared values, by attribute name.
    ///   - objectIDs: the objects of the save that hold them.
    ///   - databaseObjectID: the object already in the store that holds them, if any.
    ///   - databaseSnapshot: that object's row.
    public init(
        constraint: UniquenessConstraint, values: [String: AttributeValue], objectIDs: [ManagedObjectID],
        databaseObjectID: ManagedObjectID?, databaseSnapshot: ObjectSnapshot?
    ) {
        self.constraint = constraint
        self.values = values
        self.objectIDs = objectIDs
        self.databaseObjectID = databaseObjectID
        self.databaseSnapshot = databaseSnapshot
    }

    /// E.g. `Employee[email] = {email="ada@example.com"}: x-strata:///Employee/t… and stored x-strata://…/p1`.
    public var description: String {
        let shared = values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        var text = "\(constraint) = {\(shared)}: " + objectIDs.map(\.description).joined(separator: ", ")
        if let databaseObjectID { text += " and stored \(databaseObjectID)" }
        return text
    }
}
