/// Why a store could not be migrated to a model, or why a mapping could not be inferred. Every case is thrown
/// before anything is written.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A lightweight mapping cannot cover a change: the destination entity (and property) and why.
    case cannotInferMapping(entity: String, property: String?, reason: String)
    /// The store was written with a model none of the given source models has (by version hash).
    case unknownSourceModel(storeHash: String)
    /// The store needs migrating and the options do not ask for it; `differences` names what changed.
    case migrationNotRequested(differences: [String])
    /// Stored data does not fit the destination model (a to-many with several objects mapped to a to-one).
    case dataDoesNotFit(entity: String, property: String, reason: String)

    /// A sentence naming what differs or does not fit.
    public var description: String {
        switch self {
        case .cannotInferMapping(let entity, let property, let reason):
            "cannot infer a mapping for \(entity)\(property.map { "." + $0 } ?? ""): \(reason)"
        case .unknownSourceModel(let hash):
            "the store was written with model version \(hash), which none of the source models has"
        case .migrationNotRequested(let differences):
            "the store's model differs (\(differences.joined(separator: "; "))) and migration was not requested "
                + "(shouldMigrateStoreAutomatically and shouldInferMappingModelAutomatically)"
        case .dataDoesNotFit(let entity, let property, let reason): "\(entity).\(property): \(reason)"
        }
    }
}
