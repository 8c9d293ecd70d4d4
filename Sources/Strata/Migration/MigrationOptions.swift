/// Whether and how a Strata store written with another model is migrated when it is opened (Core Data's
/// `NSPersistentStoreDescription.shouldMigrateStoreAutomatically` and `shouldInferMappingModelAutomatically`).
///
/// For example:
///
///     let bundle = try ModelBundle(path: "Library.xcdatamodeld")
///     var configuration = StrataStoreConfiguration()
///     configuration.migration = MigrationOptions(
///         shouldMigrateStoreAutomatically: true, shouldInferMappingModelAutomatically: true,
///         sourceModels: try bundle.versionNames.map { try bundle.model(named: $0) })
///     try coordinator.addPersistentStore(.strata(directory: path, configuration: configuration))
public struct MigrationOptions: Sendable {
    /// Whether a store of an earlier model is migrated when it is opened.
    public var shouldMigrateStoreAutomatically: Bool
    /// Whether the mapping is inferred (lightweight migration); Strata has no other kind yet.
    public var shouldInferMappingModelAutomatically: Bool
    /// The models the store may have been written with (e.g. every version of a ``ModelBundle``): the one whose
    /// version hash the store records is the source.
    public var sourceModels: [ManagedObjectModel]
    /// Custom mappings (``MappingModel/init(from:to:entityMappings:)``). Migration goes step by step from the
    /// store's model: a custom mapping that reads it is used when there is one (it may lead to an intermediate
    /// version), else the mapping to the current model is inferred, so a chain mixes custom and inferred steps.
    /// Each step is crash-safe on its own.
    public var mappingModels: [MappingModel]
    /// Called with the fraction of the migration done (0...1), from the thread that opens the store.
    public var progress: (@Sendable (Double) -> Void)?

    /// Options; the defaults migrate nothing.
    public init(
        shouldMigrateStoreAutomatically: Bool = false, shouldInferMappingModelAutomatically: Bool = false,
        sourceModels: [ManagedObjectModel] = [], mappingModels: [MappingModel] = [],
        progress: (@Sendable (Double) -> Void)? = nil
    ) {
        self.mappingModels = mappingModels
        self.shouldMigrateStoreAutomatically = shouldMigrateStoreAutomatically
        self.shouldInferMappingModelAutomatically = shouldInferMappingModelAutomatically
        self.sourceModels = sourceModels
        self.progress = progress
    }
}

extension MigrationOptions {
    /// Walks the migration steps from the model of hash `storeHash` to `model`, one version at a time, calling `step`
    /// with each step's source model and mapping (a custom mapping for that version, else an inferred one): what every
    /// store's migration follows.
    ///
    /// - Throws: ``MigrationError/unknownSourceModel(storeHash:)`` when a version is none of ``sourceModels`` (or the
    ///   custom mappings loop); ``MigrationError/migrationNotRequested(differences:)`` when migrating or inferring is
    ///   off; what inferring a mapping or `step` throws.
    package func forEachStep(
        from storeHash: String, to model: ManagedObjectModel,
        _ step: (_ source: ManagedObjectModel, _ mapping: MappingModel) throws -> Void
    ) throws {
        let known = sourceModels + [model]
        var current = storeHash
        // Each step moves to another version; more steps than versions means the custom mappings loop.
        for _ in 0...known.count where current != model.versionHash {
            guard let source = known.first(where: { $0.versionHash == current }) else {
                throw MigrationError.unknownSourceModel(storeHash: current)
            }
            let differences = MappingModel.differences(from: source, to: model)
            guard shouldMigrateStoreAutomatically else {
                throw MigrationError.migrationNotRequested(differences: differences)
            }
            let mapping: MappingModel
            if let custom = mappingModels.first(where: { $0.sourceVersionHash == current }) {
                mapping = custom
            } else {
                guard shouldInferMappingModelAutomatically else {
                    throw MigrationError.migrationNotRequested(differences: differences)
                }
                mapping = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: model)
            }
            try step(source, mapping)
            current = mapping.destinationVersionHash
        }
        guard current == model.versionHash else { throw MigrationError.unknownSourceModel(storeHash: current) }
    }
}
