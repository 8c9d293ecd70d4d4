/// The definition of a relationship in the model DSL: what ``RelationshipDescription`` is built from.
///
/// Declare both sides of a relationship and name each other's inverse; the object graph then keeps the
/// two sides in step. A relationship without an inverse is allowed (the model reports a
/// ``ModelWarning/missingInverse(entity:relationship:)``), as in Core Data, but nothing maintains the other side.
///
/// For example:
///
///     Entity("Department") {
///         Attribute("name", .string)
///         Relationship.toMany("employees", "Employee", inverse: "department", deleteRule: .cascade)
///     }
///     Entity("Employee") {
///         Relationship.toOne("department", "Department", inverse: "employees")
///         Relationship.toOne("manager", "Employee", inverse: "reports")
///         Relationship.toMany("reports", "Employee", inverse: "manager")
///     }
///
/// ## Topics
///
/// ### Creating a relationship
/// - ``toOne(_:_:inverse:deleteRule:optional:)``
/// - ``toMany(_:_:inverse:ordered:deleteRule:minCount:maxCount:)``
public struct Relationship: Sendable, Hashable, ModelElementMetadata {
    /// The relationship's name, unique among the entity's properties and its ancestors'.
    public var name: String
    /// The name of the entity at the other end.
    public var destinationName: String
    /// The name of the relationship of the destination that leads back, if any.
    public var inverseName: String?
    /// Whether the relationship holds many objects.
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its objects in an order of the user's choosing.
    public var isOrdered: Bool
    /// What deleting the source object does to the objects it relates to.
    public var deleteRule: DeleteRule
    /// Whether a to-one may be nil; a to-many's lower bound is ``minCount``.
    public var isOptional: Bool
    /// The fewest objects a to-many may hold (checked at save); 0 for none.
    public var minCount: Int
    /// The most objects a to-many may hold (checked at save); nil for no limit.
    public var maxCount: Int?
    /// Free-form key-value pairs for the application.
    public var userInfo: [String: String] = [:]
    /// The relationship's name in an earlier model version.
    public var renamingIdentifier: String?
    /// A string mixed into the entity's version hash.
    public var versionHashModifier: String?

    /// A to-one relationship: the source holds at most one object of `destination`.
    ///
    /// - Parameters:
    ///   - name: the relationship's name.
    ///   - destination: the name of the related entity.
    ///   - inverse: the name of the destination's relationship back, or nil for a unidirectional one.
    ///   - deleteRule: what deleting the source does to the related object (default ``DeleteRule/nullify``).
    ///   - optional: whether nil is valid (checked at save).
    public static func toOne(
        _ name: String, _ destination: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
        optional: Bool = true
    ) -> Relationship {
        Relationship(
            name: name, destinationName: destination, inverseName: inverse, isToMany: false, isOrdered: false,
            deleteRule: deleteRule, isOptional: optional, minCount: optional ? 0 : 1, maxCount: 1)
    }

    /// A to-many relationship: the source holds a set (or, when `ordered`, an ordered set) of objects of
    /// `destination`.
    ///
    /// - Parameters:
    ///   - name: the relationship's name.
    ///   - destination: the name of the related entity.
    ///   - inverse: the name of the destination's relationship back, or nil for a unidirectional one.
    ///   - ordered: whether the objects keep the order the user gives them.
    ///   - deleteRule: what deleting the source does to the related objects (default ``DeleteRule/nullify``).
    ///   - minCount: the fewest objects (checked at save).
    ///   - maxCount: the most objects (checked at save), nil for no limit.
    public static func toMany(
        _ name: String, _ destination: String, inverse: String? = nil, ordered: Bool = false,
        deleteRule: DeleteRule = .nullify, minCount: Int = 0, maxCount: Int? = nil
    ) -> Relationship {
        Relationship(
            name: name, destinationName: destination, inverseName: inverse, isToMany: true, isOrdered: ordered,
            deleteRule: deleteRule, isOptional: minCount == 0, minCount: minCount, maxCount: maxCount)
    }
}

/// What deleting an object does to the objects a relationship relates it to (Core Data's `NSDeleteRule`).
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    /// Deleting the source is refused (save throws a validation error) while the relationship is not empty.
    case deny
    /// The source is removed from the inverse relationship of each related object.
    case nullify
    /// The related objects are deleted too (recursively, following their own rules).
    case cascade
    /// Nothing is done: the related objects keep pointing at the deleted object, as in Core Data; keeping
    /// the graph consistent is then the application's job.
    case noAction
}
