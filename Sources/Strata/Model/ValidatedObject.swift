/// The object a ``ValidationError`` is about: its ID and entity when a save validated it, or only a
/// description when ``AttributeDescription/validate(_:objectDescription:)`` was given one.
///
/// Errors are `Sendable` and managed objects are not, so the object is named by ID: after a failed save the
/// object is still in its context (the save changed nothing), and ``ManagedObjectContext/existingObject(with:)``
/// returns it, an inserted object with a temporary ID included.
///
/// For example:
/// ```swift
/// do {
///     try context.save()
/// } catch let error as ValidationError {
///     for failure in error.errors {
///         let object = try context.existingObject(with: failure.objectID!)
///         print(failure.entityName!, failure.key!, object)
///     }
/// }
/// ```
///
/// Two values are equal when their descriptions are (an object ID's description is its URI, unique to the
/// object), so an error made from an ID equals one made from the ID's URI, and a string literal can stand for
/// one in comparisons.
public struct ValidatedObject: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The object's ID: permanent, or temporary for an object inserted and not yet saved; nil when only a
    /// description was given.
    public let objectID: ManagedObjectID?
    /// The object's entity name; nil when only a description was given.
    public let entityName: String?
    /// How messages name the object: its ID's URI, or the description given.
    public let description: String

    /// Names an object by ID (and its entity).
    ///
    /// - Parameter objectID: the object's ID.
    public init(_ objectID: ManagedObjectID) {
        self.objectID = objectID
        self.entityName = objectID.entity.name
        self.description = objectID.description
    }

    /// Names an object by a description only.
    ///
    /// - Parameter description: e.g. the URI of an object ID.
    public init(description: String) {
        self.objectID = nil
        self.entityName = nil
        self.description = description
    }

    /// Names an object by a description only (a string literal).
    public init(stringLiteral description: String) {
        self.init(description: description)
    }

    /// Whether both name the same object: their descriptions are equal.
    public static func == (lhs: ValidatedObject, rhs: ValidatedObject) -> Bool {
        lhs.description == rhs.description
    }

    /// Hashes the description, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }
}
