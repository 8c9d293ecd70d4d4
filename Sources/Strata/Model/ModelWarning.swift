/// Something a model allows but that is usually a mistake, reported by ``ManagedObjectModel/warnings``
/// when the model is built (Core Data logs the same at build time).
public enum ModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// A relationship has no inverse: nothing keeps the other side in step, and deleting a related object
    /// leaves the relationship pointing at it.
    case missingInverse(entity: String, relationship: String)

    /// A sentence naming the entity and relationship.
    public var description: String {
        switch self {
        case .missingInverse(let entity, let relationship):
            "\(entity).\(relationship) has no inverse; this is an advanced setting (no other side is maintained)"
        }
    }
}
