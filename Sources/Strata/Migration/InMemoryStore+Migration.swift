extension InMemoryStore {
    /// A new in-memory store for `destination` holding this store's objects (written with `source`), mapped by
    /// `mapping` or by the inferred mapping: lightweight migration for in-memory stores, which are not opened
    /// from a directory. This store is not changed.
    ///
    /// For example:
    ///
    ///     let migrated = try store.migrated(from: v1, to: v2)
    ///     PersistentStoreCoordinator(model: v2).addPersistentStore(migrated)
    ///
    /// - Parameters:
    ///   - source: the model this store's objects follow.
    ///   - destination: the model of the new store.
    ///   - mapping: the mapping; nil infers it.
    ///   - progress: called with the fraction done.
    /// - Returns: the new store.
    /// - Throws: ``MigrationError`` (before anything is copied when the mapping cannot be inferred); what a
    ///   save throws for an object the destination model refuses.
    public func migrated(
        from source: ManagedObjectModel, to destination: ManagedObjectModel, mapping: MappingModel? = nil,
        progress: ((Double) -> Void)? = nil
    ) throws -> InMemoryStore {
        let mapping =
            try mapping ?? MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        let old = PersistentStoreCoordinator(model: source)
        old.addPersistentStore(self)
        defer { try? old.removePersistentStore(self) }
        let store = InMemoryStore(model: destination)
        let new = PersistentStoreCoordinator(model: destination)
        new.addPersistentStore(store)
        try ObjectCopier(from: old, to: new, mapping: mapping).copy(progress: progress)
        try new.removePersistentStore(store)
        progress?(1)
        return store
    }
}
