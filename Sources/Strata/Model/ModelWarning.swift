/// Something a model allows but that is usually a mistake, reported by ``ManagedObjectModel/warnings``
/// when the model is built (Core Data logs the same at build time).
public enum ModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// A relationship has no inverse: nothing keeps the other side in step, and deleting a related object
    /// leaves the relationship pointing at it.
    case missingInverse(entity: String, relationship: String)
    /// A model file holds something Strata reads but does not act on (layout, Spotlight or CloudKit
    /// settings, `preserveAfterDeletion`, an R-tree index built as a binary one): the element or attribute, its
    /// line in the file, and what Strata does instead.
    case modelFile(element: String, line: Int, note: String)

    /// A sentence naming the entity and relationship.
    public var description: String {
        switch self {
        case .missingInverse(let entity, let relationship):
            "\(entity).\(relationship) has no inverse; this is an advanced setting (no other side is maintained)"
        case .modelFile(let element, let line, let note): "line \(line): <\(element)>: \(note)"
        }
    }
}
